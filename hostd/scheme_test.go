package hostd

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/internal/testkit/golden"
	"github.com/bcfab/bcfab/internal/testkit/pipe"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/xdp"
)

// relayBurst frames of 1 KB into one egress cross every scheme's X_off
// below (BFC's Th is a one-hop BDP, 25 KB at D = 100).
const relayBurst = 32

// relayRig is server h1 of BCube(4,1) under one flow-control scheme,
// relaying h0 -> h5 (in by eth0, out by eth1), on an engine whose clock
// runs but whose loop does not.
type relayRig struct {
	h    *Host
	e    *dataplane.Engine
	v    dataplane.Verdict
	data []byte
	sig  [2][]byte
}

func newRelayRig(tb testing.TB, fc string) *relayRig {
	tb.Helper()
	tp := bcube.MustNew(4, 1)
	cfg := config.Node{Node: "h1", N: 4, K: 1, Control: "/x.sock", FC: fc, RateBps: 1e9,
		XoffA: 8000, XonA: 4000, XoffB: 8000, XonB: 4000, PFCXoff: 8000, PFCXon: 4000, RelayQueue: scheme.RelayDRR}
	if fc != scheme.NamePortFC {
		cfg.RelayQueue = ""
	}
	if fc == scheme.NameICI || fc == scheme.NameCI {
		// Isolation at the relay's egress from 8 KB, its signal repeated
		// a second later: the transcript does not depend on the
		// machine's speed.
		cfg.CI.CIDetect = 8000
		cfg.FCRefresh, cfg.FCHold = config.Duration(time.Second), config.Duration(3*time.Second)
	}
	cfg.SetDefaults()
	_, n, err := cfg.Validate()
	if err != nil {
		tb.Fatal(err)
	}
	h, qc := newSchemeHost(tb, &cfg, tp, n)
	if err := h.SetTransport(fastParams()); err != nil {
		tb.Fatal(err)
	}
	mem := make([]byte, hFrames*hFrame)
	var specs []dataplane.PortSpec
	for l := 0; l <= tp.Levels(); l++ {
		near, _ := pipe.New(mem, make([]byte, hRing*hFrame), hRing)
		s := dataplane.PortSpec{Name: "p", IO: near}
		if l < tp.Levels() {
			s.Queues = qc
		}
		specs = append(specs, s)
	}
	e, err := dataplane.NewEngine(dataplane.Memory{Bytes: mem, FrameSize: hFrame, NumFrames: hFrames, RingSize: hRing},
		specs, h, dataplane.Options{BufferBytes: 1 << 24})
	if err != nil {
		tb.Fatal(err)
	}
	h.Bind(e)
	done := make(chan error)
	go func() { done <- e.Run(context.Background()) }()
	<-e.Ready()
	e.Stop()
	if err := <-done; err != nil {
		tb.Fatal(err)
	}
	r := &relayRig{h: h, e: e}
	sw, own := bcube.SwitchPortMAC(0, 0, 1), bcube.HostPortMAC(1, 0)
	f := roce.Flow{SrcMAC: [6]byte(sw), DstMAC: [6]byte(own), PCP: signaling.PCPData, VID: signaling.VID(0),
		SrcIP: bcube.ServerIP(0).As4(), DstIP: bcube.ServerIP(5).As4(), SrcPort: 50000, DestQP: 7}
	r.data = make([]byte, roce.DataFrameLen(roce.OpSendOnly, 1024))
	roce.PutData(r.data, &f, &roce.Data{Opcode: roce.OpSendOnly, Payload: 1024})
	// What s0.0 tells h1 on eth0: a pause and a resume of its scheme.
	for i, typ := range []uint8{signaling.TypePause, signaling.TypeResume} {
		b := make([]byte, signaling.FrameLen)
		switch fc {
		case scheme.NamePortFC: // B for s0.0's port 3: h1's b queue, relayed to s1.0
			signaling.PutPortFC(b, own, sw, typ, 0, uint32(i), signaling.ClassB, 3, 0, 0)
		case scheme.NameBFC:
			signaling.PutBFC(b, own, sw, typ, uint32(i), 0, 0, scheme.DefaultBFCQueues)
		case scheme.NameICI, scheme.NameCI: // isolations of h2 -> h0, then of h1's own h1 -> h0
			src := 2
			if typ == signaling.TypeResume {
				src = 1
			}
			fl := bcube.FiveTuple{Src: bcube.ServerIP(src).As4(), Dst: bcube.ServerIP(0).As4(), Proto: 17, SPort: 50001, DPort: 4791}
			signaling.PutICI(b, own, sw, uint32(i), &fl, signaling.PCPData, 0)
		case scheme.NamePFC, scheme.NamePFCStar:
			b = make([]byte, signaling.PFCLen)
			quanta := [8]uint16{signaling.PCPData: signaling.MaxQuanta}
			if typ == signaling.TypeResume {
				quanta[signaling.PCPData] = 0
			}
			signaling.PutPFC(b, sw, 1<<signaling.PCPData, &quanta)
		}
		r.sig[i] = b
	}
	return r
}

// handle hands b to the host as a frame received on eth0 and queues it
// where the verdict says, as the engine does.
func (r *relayRig) handle(tb testing.TB, b []byte) {
	addr, ok := r.e.Alloc()
	if !ok {
		tb.Fatal("no frame")
	}
	d := xdp.Desc{Addr: addr, Len: uint32(len(b))}
	copy(r.e.Frame(&d), b)
	r.v = dataplane.Verdict{}
	r.h.Handle(0, &d, &r.v)
	if r.v.Port < 0 {
		// Consumed: freed through an HQ, by the engine's own accounting.
		d.Len = 64
		r.e.Send(0, r.e.Egress(0).HQ(), &d, 0, 0)
		r.takeAll()
		return
	}
	if !r.e.Send(r.v.Port, r.v.Queue, &d, r.v.L3, r.v.Meta) {
		tb.Fatalf("frame refused: %+v", r.v)
	}
}

func (r *relayRig) takeAll() {
	for p := 0; p <= r.h.AppPort(); p++ {
		r.e.Take(p, func(int, []byte) {})
	}
}

func (r *relayRig) forward(tb testing.TB) {
	r.handle(tb, r.data)
	r.takeAll()
}

func (r *relayRig) burst(tb testing.TB) {
	for range relayBurst {
		r.handle(tb, r.data)
	}
	r.takeAll()
}

func (r *relayRig) signal(tb testing.TB) {
	r.handle(tb, r.sig[0])
	r.handle(tb, r.sig[1])
}

// relaySchemes are every registered scheme.
var relaySchemes = scheme.Names()

// A relayed frame leaves by eth1 in the scheme's queue, with the
// scheme's rewrites: PFC* one priority up, BFC its queue in the VID.
func TestRelayClass(t *testing.T) {
	for _, fc := range relaySchemes {
		t.Run(fc, func(t *testing.T) {
			r := newRelayRig(t, fc)
			var got header.Frame
			var q int
			r.handle(t, r.data)
			if r.v.Port != 1 {
				t.Fatalf("verdict %+v", r.v)
			}
			r.e.Take(1, func(qq int, b []byte) {
				q = qq
				header.Parse(b, &got)
			})
			wantPCP, wantQ := uint8(signaling.PCPData), r.h.t.ServerRQ()
			switch fc {
			case scheme.NamePFC, scheme.NameICI, scheme.NameCI: // PFC's priorities; the flow is not isolated
				wantQ = signaling.PCPData
			case scheme.NamePFCStar:
				wantPCP, wantQ = signaling.PCPData+1, signaling.PCPData+1
			case scheme.NameBFC:
				wantQ = int(got.VID) - 1
			case scheme.NameIdealFQ, scheme.NameSFQ: // a data queue of the flow's
				if eg := r.e.Egress(1); q != eg.HQ() && q < eg.Queues() {
					wantQ = q
				}
			}
			if got.PCP != wantPCP || q != wantQ {
				t.Errorf("relayed with PCP %d in queue %d; want PCP %d, queue %d", got.PCP, q, wantPCP, wantQ)
			}
		})
	}
}

// The relay's per-frame work under every scheme allocates nothing.
func TestRelayZeroAllocs(t *testing.T) {
	for _, fc := range relaySchemes {
		t.Run(fc, func(t *testing.T) {
			r := newRelayRig(t, fc)
			for range 10 {
				r.burst(t)
				r.signal(t)
			}
			if n := testing.AllocsPerRun(200, func() { r.forward(t) }); n != 0 {
				t.Errorf("%v allocations per relayed frame", n)
			}
			if n := testing.AllocsPerRun(50, func() { r.burst(t) }); n != 0 {
				t.Errorf("%v allocations per burst", n)
			}
			// The server's own frames: the queue the scheme fixed for
			// the flow, or one per frame (BFC).
			if _, err := r.h.StartFlow(api.GenRequest{Dst: 6, Duration: int64(time.Hour), FrameLen: 1000, Window: 8000}); err != nil {
				t.Fatal(err)
			}
			own := func() {
				if r.h.g.Produce(r.e.Now()) == 0 {
					t.Fatal("the generator made no frame")
				}
				r.takeAll()
			}
			own()
			if n := testing.AllocsPerRun(100, own); n != 0 {
				t.Errorf("%v allocations per round of own frames", n)
			}
			if fc == scheme.NameNone {
				return
			}
			if n := testing.AllocsPerRun(200, func() { r.signal(t) }); n != 0 {
				t.Errorf("%v allocations per signal", n)
			}
		})
	}
}

func BenchmarkRelayForward(b *testing.B) {
	for _, fc := range relaySchemes {
		b.Run(fc, func(b *testing.B) {
			r := newRelayRig(b, fc)
			b.ReportAllocs()
			for b.Loop() {
				r.forward(b)
			}
		})
	}
}

func BenchmarkRelayBurst(b *testing.B) {
	for _, fc := range relaySchemes {
		b.Run(fc, func(b *testing.B) {
			r := newRelayRig(b, fc)
			b.ReportAllocs()
			for b.Loop() {
				r.burst(b)
			}
		})
	}
}

func BenchmarkRelaySignal(b *testing.B) {
	for _, fc := range relaySchemes[1:] {
		b.Run(fc, func(b *testing.B) {
			r := newRelayRig(b, fc)
			b.ReportAllocs()
			for b.Loop() {
				r.signal(b)
			}
		})
	}
}

// newSchemeHost builds the host of cfg as NewNode does, and its fabric
// ports' queues with their DRR quanta.
func newSchemeHost(tb testing.TB, cfg *config.Node, tp bcube.Topology, n bcube.Node) (*Host, queues.EgressConfig) {
	tb.Helper()
	fc, err := scheme.New(cfg, scheme.Place{T: tp, Node: n})
	if err != nil {
		tb.Fatal(err)
	}
	qc, err := fc.Egress().Weighted(cfg.DRRWeights)
	if err != nil {
		tb.Fatal(err)
	}
	return NewHost(tp, n.Index, bcube.Policy{}, fc), qc
}

// noFC is server self of tp's scheme without flow control: PortFC's
// queues.
func noFC(tp bcube.Topology, self int) scheme.Scheme {
	return scheme.NewNone(scheme.Place{T: tp, Node: bcube.Node{Index: self}}, false, false)
}

// What the relay sends and counts under every scheme — a burst that
// makes it signal, a pause and a resume it takes (PortFC relays them), a
// frame of its own, a signal of another scheme — is pinned byte for byte
// in testdata: a change of the scheme code must not change it.
func TestRelayWireGolden(t *testing.T) {
	for _, fc := range relaySchemes {
		t.Run(fc, func(t *testing.T) {
			r := newRelayRig(t, fc)
			var w strings.Builder
			sent := 0
			take := func() {
				for p := 0; p <= r.h.AppPort(); p++ {
					r.e.Take(p, func(q int, b []byte) {
						var f header.Frame
						if header.Parse(b, &f) == header.KindIPv4 && f.DPort == api.GenPort {
							b = clone(b)
							clear(b[genHeader+8 : genHeader+16]) // the time it was made
						}
						fmt.Fprintf(&w, "tx p%d q%d %x\n", p, q, b)
						sent++
					})
				}
			}
			for range relayBurst {
				r.handle(t, r.data)
				fmt.Fprintf(&w, "verdict %+v\n", r.v)
			}
			take()
			for _, b := range append(r.sig[:], foreignSignal(fc)) {
				r.handle(t, b)
				fmt.Fprintf(&w, "verdict %+v\n", r.v)
				take()
			}
			// Frames of its own: an RDMA flow's first packets, their
			// control queue, a generated flow's.
			fs, err := r.h.StartRDMA(api.RDMARequest{Dst: 2, Bytes: 4000, MTU: 1024})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&w, "rdma port %d queue %s\n", fs[0].Port, fs[0].Queue)
			fmt.Fprintf(&w, "control queue %d %d\n", r.h.controlQueue(0), r.h.controlQueue(1))
			// Until the flow's four packets are out, whatever the pacing.
			for sent = 0; sent < 4; {
				now := r.e.Now()
				r.h.r.Tick(now)
				r.h.r.Produce(now)
				take()
			}
			now := r.e.Now()
			g, err := r.h.StartFlow(api.GenRequest{Dst: 6, Bytes: 3000, FrameLen: 1000, Window: 100000})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&w, "gen port %d queue %s\n", g.Port, g.Queue)
			r.h.g.Produce(now)
			take()
			writeCounters(&w, r.e)
			golden.Check(t, "testdata/relay-"+fc+".golden", w.String())
		})
	}
}

// foreignSignal is a signal of another scheme than fc's, from s0.0.
func foreignSignal(fc string) []byte {
	b := make([]byte, signaling.FrameLen)
	sw, own := bcube.SwitchPortMAC(0, 0, 1), bcube.HostPortMAC(1, 0)
	if fc == scheme.NameBFC {
		signaling.PutPortFC(b, own, sw, signaling.TypePause, 0, 9, signaling.ClassB, 3, 0, 0)
		return b
	}
	signaling.PutBFC(b, own, sw, signaling.TypePause, 9, 0, 0, 32)
	return b
}

// writeCounters writes every port's counters that do not depend on time,
// sorted.
func writeCounters(w *strings.Builder, e *dataplane.Engine) {
	ps, fs := e.Snapshot()
	for _, p := range ps {
		for _, m := range []struct {
			what string
			m    map[string]uint64
		}{{"signals", p.Signals}, {"drops", p.Drops}} {
			for _, k := range slices.Sorted(maps.Keys(m.m)) {
				fmt.Fprintf(w, "%s %s %s %d\n", p.Name, m.what, k, m.m[k])
			}
		}
		fmt.Fprintf(w, "%s rx %d/%d tx %d/%d\n", p.Name, p.RxPackets, p.RxBytes, p.TxPackets, p.TxBytes)
		for _, q := range p.Queues {
			// Not its largest backlog: how much of the RDMA flow one
			// Produce makes depends on its pacing.
			fmt.Fprintf(w, "%s queue %d %s enq %d/%d deq %d/%d paused %v ecn %d drops %v\n", p.Name, q.Index, q.Name,
				q.EnqPackets, q.EnqBytes, q.DeqPackets, q.DeqBytes, q.Paused, q.ECNMarks, q.Drops)
		}
	}
	fmt.Fprintf(w, "frames %+v\n", fs)
}

// A relay's fabric ports mark as congestion isolation decides: their
// hooks are a queues.Marker under ici and ci, and under no other scheme.
func TestRelayMarker(t *testing.T) {
	for _, fc := range relaySchemes {
		r := newRelayRig(t, fc)
		_, marks := r.h.portHooks(0).(queues.Marker)
		if want := fc == scheme.NameICI || fc == scheme.NameCI; marks != want {
			t.Errorf("%s: eth0's hooks decide marks: %v, want %v", fc, marks, want)
		}
	}
}
