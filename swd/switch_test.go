package swd

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
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/xdp"
)

const (
	rFrame  = 2048
	rRing   = 64
	rFrames = 4096
	// rBurst frames of rPayload bytes into one egress cross every
	// scheme's X_off below (BFC's Th is a one-hop BDP, 25 KB at D = 100).
	rBurst   = 32
	rPayload = 1024
)

// rig is switch s0.0 of BCube(4,1) under one flow-control scheme, on an
// engine whose clock runs but whose loop does not: the test hands it
// frames and takes its egresses itself, on the test goroutine.
type rig struct {
	s    *Switch
	e    *dataplane.Engine
	v    dataplane.Verdict
	data []byte // h1 -> h2: in by port 1, out by port 2
	sig  [2][]byte
}

// newRig is the rig of fc; set, if given, changes the switch's config
// first.
func newRig(tb testing.TB, fc string, set ...func(c *config.Node)) *rig {
	tb.Helper()
	tp := bcube.MustNew(4, 1)
	cfg := config.Node{Node: "s0.0", N: 4, K: 1, Control: "/x.sock", FC: fc, RateBps: 1e9,
		XoffA: 8000, XonA: 4000, XoffB: 8000, XonB: 4000, PFCXoff: 8000, PFCXon: 4000, CI: config.CI{CIDetect: 8000}}
	if fc == scheme.NameICI || fc == scheme.NameCI {
		// An isolation is signalled again a refresh later: a second,
		// so that the transcript does not depend on the machine's speed.
		cfg.FCRefresh, cfg.FCHold = config.Duration(time.Second), config.Duration(3*time.Second)
	}
	for _, f := range set {
		f(&cfg)
	}
	cfg.SetDefaults()
	_, n, err := cfg.Validate()
	if err != nil {
		tb.Fatal(err)
	}
	sw, qc := newSwitch(tb, &cfg, tp, n)
	mem := make([]byte, rFrames*rFrame)
	var specs []dataplane.PortSpec
	for p := 0; p < tp.N(); p++ {
		near, _ := pipe.New(mem, make([]byte, rRing*rFrame), rRing)
		specs = append(specs, dataplane.PortSpec{Name: bcube.SwitchPort(p), IO: near, Queues: qc})
	}
	e, err := dataplane.NewEngine(dataplane.Memory{Bytes: mem, FrameSize: rFrame, NumFrames: rFrames, RingSize: rRing},
		specs, sw, dataplane.Options{BufferBytes: 1 << 24})
	if err != nil {
		tb.Fatal(err)
	}
	sw.Bind(e)
	// Start the clock, then stop the loop.
	done := make(chan error)
	go func() { done <- e.Run(context.Background()) }()
	<-e.Ready()
	e.Stop()
	if err := <-done; err != nil {
		tb.Fatal(err)
	}
	r := &rig{s: sw, e: e}
	h1, sp1 := bcube.HostPortMAC(1, 0), bcube.SwitchPortMAC(0, 0, 1)
	f := roce.Flow{SrcMAC: [6]byte(h1), DstMAC: [6]byte(sp1), PCP: signaling.PCPData, VID: signaling.VID(0),
		SrcIP: bcube.ServerIP(1).As4(), DstIP: bcube.ServerIP(2).As4(), SrcPort: 50000, DestQP: 7}
	r.data = make([]byte, roce.DataFrameLen(roce.OpSendOnly, rPayload))
	roce.PutData(r.data, &f, &roce.Data{Opcode: roce.OpSendOnly, Payload: rPayload})
	// The signals the switch takes on port 1 from h1: a pause and a
	// resume of its scheme.
	for i, typ := range []uint8{signaling.TypePause, signaling.TypeResume} {
		b := make([]byte, signaling.FrameLen)
		switch fc {
		case scheme.NamePortFC: // relayed B for s1.0's port 3: pauses A queue 2 of port 1
			signaling.PutPortFC(b, sp1, h1, typ, signaling.FlagRelayed, uint32(i), signaling.ClassB, 3, 1, 0)
		case scheme.NameBFC:
			signaling.PutBFC(b, sp1, h1, typ, uint32(i), 0, 0, scheme.DefaultBFCQueues)
		case scheme.NameICI, scheme.NameCI: // an isolation of h2 -> h1 (out by port 1), then a pause of h1's P2
			if typ == signaling.TypePause {
				fl := bcube.FiveTuple{Src: bcube.ServerIP(2).As4(), Dst: bcube.ServerIP(1).As4(), Proto: 17, SPort: 50001, DPort: 4791}
				signaling.PutICI(b, sp1, h1, uint32(i), &fl, signaling.PCPData, 0)
				break
			}
			b = make([]byte, signaling.PFCLen)
			quanta := [8]uint16{signaling.PCPCongested: signaling.MaxQuanta}
			signaling.PutPFC(b, h1, 1<<signaling.PCPCongested, &quanta)
		case scheme.NamePFC, scheme.NamePFCStar:
			b = make([]byte, signaling.PFCLen)
			quanta := [8]uint16{signaling.PCPData: signaling.MaxQuanta}
			if typ == signaling.TypeResume {
				quanta[signaling.PCPData] = 0
			}
			signaling.PutPFC(b, h1, 1<<signaling.PCPData, &quanta)
		}
		r.sig[i] = b
	}
	return r
}

// handle hands b to the switch as a frame received on port in, in a frame
// of the engine's, and queues it where the verdict says, as the engine
// does.
func (r *rig) handle(tb testing.TB, in int, b []byte) {
	addr, ok := r.e.Alloc()
	if !ok {
		tb.Fatal("no frame")
	}
	d := xdp.Desc{Addr: addr, Len: uint32(len(b))}
	copy(r.e.Frame(&d), b)
	r.v = dataplane.Verdict{}
	r.s.Handle(in, &d, &r.v)
	if r.v.Port < 0 {
		r.free(addr)
		return
	}
	if !r.e.Send(r.v.Port, r.v.Queue, &d, r.v.L3, r.v.Meta) {
		tb.Fatalf("frame refused: %+v", r.v)
	}
}

// free returns a frame the switch consumed to the engine, as its receive
// path does: queued in an HQ and taken back, it is freed by the engine's
// own accounting.
func (r *rig) free(addr uint64) {
	d := xdp.Desc{Addr: addr, Len: 64}
	r.e.Send(0, r.e.Egress(0).HQ(), &d, 0, 0)
	r.e.Take(0, discard)
}

func discard(int, []byte) {}

// takeAll sends everything the switch queued, signals included.
func (r *rig) takeAll() {
	for p := range 4 {
		r.e.Take(p, discard)
	}
}

// forward is one data frame through the switch: classified, queued (the
// enqueue hooks) and sent (the dequeue hooks).
func (r *rig) forward(tb testing.TB) {
	r.handle(tb, 1, r.data)
	r.takeAll()
}

// burst queues rBurst frames into one egress before sending them: every
// scheme signals a pause on the way up and a resume on the way down.
func (r *rig) burst(tb testing.TB) {
	for range rBurst {
		r.handle(tb, 1, r.data)
	}
	r.takeAll()
}

// signal takes a pause and a resume from h1.
func (r *rig) signal(tb testing.TB) {
	r.handle(tb, 1, r.sig[0])
	r.handle(tb, 1, r.sig[1])
}

// schemes are every registered scheme.
var schemes = scheme.Names()

// The switch's per-frame work under every scheme — classifying a data
// frame, its queue hooks, the signals it sends and those it takes —
// allocates nothing.
func TestSwitchZeroAllocs(t *testing.T) {
	for _, fc := range schemes {
		t.Run(fc, func(t *testing.T) {
			r := newRig(t, fc)
			for range 10 {
				r.burst(t)
				r.signal(t)
			}
			if n := testing.AllocsPerRun(200, func() { r.forward(t) }); n != 0 {
				t.Errorf("%v allocations per forwarded frame", n)
			}
			if n := testing.AllocsPerRun(50, func() { r.burst(t) }); n != 0 {
				t.Errorf("%v allocations per burst", n)
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

// The burst makes every scheme signal: the benchmark times the signals'
// path, not only the classification.
func TestSwitchBurstSignals(t *testing.T) {
	for _, fc := range schemes[1:] {
		t.Run(fc, func(t *testing.T) {
			if !scheme.Pauses(fc) {
				t.Skip("pauses nothing")
			}
			r := newRig(t, fc)
			sent := func() (n uint64) {
				ps, _ := r.e.Snapshot()
				for _, p := range ps {
					for k, v := range p.Signals {
						if k == "tx_pause_A" || k == "tx_pause_B" || k == "tx_xoff_P3" || k == "tx_pause" {
							n += v
						}
					}
				}
				return n
			}
			before := sent()
			r.burst(t)
			if sent() == before {
				t.Errorf("a burst of %d frames sent no pause", rBurst)
			}
		})
	}
}

// A burst's pauses are timed through the engine: the X_off (PFC, on the
// ingress port 1, P3) or the Pause{B} (PortFC, egress port 2, one frame
// to each other port) leaves the HQ when the rig takes it, so every frame
// is timed and none is left untimed; the charge at the pause is at X_off
// or above, at the resume at X_on or below, and its peak the greatest.
func TestSwitchPauseTiming(t *testing.T) {
	for _, c := range []struct {
		fc          string
		port        int
		class       string
		framesPause uint64
	}{
		{scheme.NamePFC, 1, "P3", 1},
		{scheme.NamePFCStar, 1, "P3", 1},
		{scheme.NameCI, 1, "P3", 1},
		{scheme.NamePortFC, 2, "B", 3},
	} {
		t.Run(c.fc, func(t *testing.T) {
			r := newRig(t, c.fc)
			for range 3 {
				r.burst(t)
			}
			ps, _ := r.e.Snapshot()
			ft := ps[c.port].FCTiming
			if ft == nil {
				t.Fatalf("port %d has no fc_timing", c.port)
			}
			i := slices.IndexFunc(ft.Classes, func(k api.FCClass) bool { return k.Class == c.class })
			if i < 0 {
				t.Fatalf("port %d: no class %s in %+v", c.port, c.class, ft.Classes)
			}
			k := ft.Classes[i]
			l := k.PauseLatNs
			var hist uint64
			for _, n := range l.Hist {
				hist += n
			}
			if k.XoffBytes != 8000 || k.XonBytes != 4000 || k.Pauses != 3 || k.Resumes != 3 ||
				k.AtPauseMinBytes < 8000 || k.AtResumeMaxBytes > 4000 || k.PeakBytes < k.AtPauseMaxBytes ||
				l.Count != 3*c.framesPause || hist != l.Count || l.Untimed != 0 || l.Max > l.Sum || l.Max < 0 {
				t.Errorf("port %d class %s: %+v", c.port, c.class, k)
			}
			if ft.BDPBytes <= 0 {
				t.Errorf("BDP %d", ft.BDPBytes)
			}
		})
	}
}

func BenchmarkSwitchForward(b *testing.B) {
	for _, fc := range schemes {
		b.Run(fc, func(b *testing.B) {
			r := newRig(b, fc)
			b.ReportAllocs()
			for b.Loop() {
				r.forward(b)
			}
		})
	}
}

func BenchmarkSwitchBurst(b *testing.B) {
	for _, fc := range schemes {
		b.Run(fc, func(b *testing.B) {
			r := newRig(b, fc)
			b.ReportAllocs()
			for b.Loop() {
				r.burst(b)
			}
		})
	}
}

func BenchmarkSwitchSignal(b *testing.B) {
	for _, fc := range schemes[1:] {
		b.Run(fc, func(b *testing.B) {
			r := newRig(b, fc)
			b.ReportAllocs()
			for b.Loop() {
				r.signal(b)
			}
		})
	}
}

// newSwitch builds the switch of cfg as NewNode does, and its ports'
// queues with their DRR quanta.
func newSwitch(tb testing.TB, cfg *config.Node, tp bcube.Topology, n bcube.Node) (*Switch, queues.EgressConfig) {
	tb.Helper()
	fc, err := scheme.New(cfg, scheme.Place{T: tp, Node: n})
	if err != nil {
		tb.Fatal(err)
	}
	qc, err := fc.Egress().Weighted(cfg.DRRWeights)
	if err != nil {
		tb.Fatal(err)
	}
	return NewSwitch(tp, n.Level, n.Index, fc), qc
}

// A PortFC switch with DRR weights 1,1,1,3 serves the egress toward h2
// as the weights say: h1's frames for h2 in its B queue (weight 3),
// h1's frames for h6, which h2 will relay by level 1, in A0 (weight 1),
// both backlogged, leave 3:1 in bytes; the port's stats give each
// queue's quantum.
func TestSwitchDRRWeights(t *testing.T) {
	r := newRig(t, scheme.NamePortFC, func(c *config.Node) { c.DRRWeights = []int{1, 1, 1, 3} })
	h1, sp1 := bcube.HostPortMAC(1, 0), bcube.SwitchPortMAC(0, 0, 1)
	payload := queues.DefaultQuantum - roce.DataFrameLen(roce.OpSendOnly, 0) // full frames
	frame := func(dst int) []byte {
		f := roce.Flow{SrcMAC: [6]byte(h1), DstMAC: [6]byte(sp1), PCP: signaling.PCPData, VID: signaling.VID(0),
			SrcIP: bcube.ServerIP(1).As4(), DstIP: bcube.ServerIP(dst).As4(), SrcPort: 50000 + uint16(dst), DestQP: 7}
		b := make([]byte, roce.DataFrameLen(roce.OpSendOnly, payload))
		roce.PutData(b, &f, &roce.Data{Opcode: roce.OpSendOnly, Payload: payload})
		return b
	}
	const perFlow = 200
	want := map[int]int{2: 3, 6: 0} // destination: queue (B, A0)
	for range perFlow {
		for _, dst := range []int{2, 6} {
			r.handle(t, 1, frame(dst))
			if r.v.Port != 2 || r.v.Queue != want[dst] {
				t.Fatalf("h1 -> h%d: port %d queue %d, want port 2 queue %d", dst, r.v.Port, r.v.Queue, want[dst])
			}
		}
	}
	var sent [5]int
	n := 0
	r.e.Take(2, func(q int, b []byte) {
		if n++; n <= perFlow { // both backlogged: 50 rounds of one A0 frame and three B frames
			sent[q] += len(b)
		}
	})
	if got := float64(sent[3]) / float64(sent[0]); sent[0] == 0 || got < 3*0.99 || got > 3*1.01 {
		t.Fatalf("bytes by queue %v: B:A0 %.3f, want 3 within 1%%", sent, got)
	}
	ps, _ := r.e.Snapshot()
	for _, p := range ps {
		var got []int
		for _, q := range p.Queues {
			got = append(got, q.Quantum)
		}
		if w := []int{1518, 1518, 1518, 3 * 1518, 0}; !slices.Equal(got, w) {
			t.Errorf("port %s: quanta %v, want %v", p.Name, got, w)
		}
	}
}

// What the switch sends and counts under every scheme — a burst that
// makes it signal a pause and a resume, a pause and a resume it takes, a
// frame it cannot take (another scheme's signal) — is pinned byte for
// byte in testdata: a change of the scheme code must not change it.
func TestSwitchWireGolden(t *testing.T) {
	for _, fc := range schemes {
		t.Run(fc, func(t *testing.T) {
			r := newRig(t, fc)
			var w strings.Builder
			take := func() {
				for p := range 4 {
					r.e.Take(p, func(q int, b []byte) { fmt.Fprintf(&w, "tx p%d q%d %x\n", p, q, b) })
				}
			}
			for range rBurst {
				r.handle(t, 1, r.data)
				fmt.Fprintf(&w, "verdict %+v\n", r.v)
			}
			take()
			for _, b := range append(r.sig[:], foreignSignal(fc)) {
				r.handle(t, 1, b)
				fmt.Fprintf(&w, "verdict %+v\n", r.v)
				take()
			}
			if fc == scheme.NameICI || fc == scheme.NameCI {
				// The flow the burst isolated, its frames gone from the
				// normal queue: the next one leaves by the congested
				// queue, retagged with its priority.
				r.handle(t, 1, r.data)
				fmt.Fprintf(&w, "verdict %+v\n", r.v)
				take()
			}
			writeCounters(&w, r.e)
			golden.Check(t, "testdata/wire-"+fc+".golden", w.String())
		})
	}
}

// foreignSignal is a signal of another scheme than fc's, which a node
// running fc counts and drops.
func foreignSignal(fc string) []byte {
	b := make([]byte, signaling.FrameLen)
	h1, sp1 := bcube.HostPortMAC(1, 0), bcube.SwitchPortMAC(0, 0, 1)
	if fc == scheme.NameBFC {
		signaling.PutPortFC(b, sp1, h1, signaling.TypePause, signaling.FlagRelayed, 9, signaling.ClassB, 3, 1, 0)
		return b
	}
	signaling.PutBFC(b, sp1, h1, signaling.TypePause, 9, 0, 0, 32)
	return b
}

// writeCounters writes every port's signal and drop counters, sorted.
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
			fmt.Fprintf(w, "%s queue %d %s enq %d/%d deq %d/%d max %d paused %v ecn %d drops %v\n", p.Name, q.Index, q.Name,
				q.EnqPackets, q.EnqBytes, q.DeqPackets, q.DeqBytes, q.MaxBytes, q.Paused, q.ECNMarks, q.Drops)
		}
	}
	fmt.Fprintf(w, "frames %+v\n", fs)
}
