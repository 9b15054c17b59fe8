package hostd

import (
	"context"
	"encoding/binary"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/internal/testkit/pipe"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/wire/transport"
	"github.com/bcfab/bcfab/xdp"
)

const (
	hFrame  = 2048
	hRing   = 64
	hFrames = 16384
)

// nic is one Host on an engine whose clock runs but whose loop does not:
// the test moves frames between NICs itself, so every step is on the
// test goroutine. Frames it takes out of an egress are not returned to
// the engine; the memory is sized for the tests' traffic.
type nic struct {
	h       *Host
	e       *dataplane.Engine
	scratch xdp.Desc // where frames from the other NIC are received
	v       dataplane.Verdict
}

func newNIC(t testing.TB, tp bcube.Topology, self int, p transport.Params) *nic {
	t.Helper()
	return newNICPolicy(t, tp, self, p, bcube.Policy{}, nil)
}

// newNICPolicy is newNIC routing by pol, with before run on the host
// before it is bound (nil: nothing).
func newNICPolicy(t testing.TB, tp bcube.Topology, self int, p transport.Params, pol bcube.Policy, before func(*Host) error) *nic {
	t.Helper()
	mem := make([]byte, hFrames*hFrame)
	var specs []dataplane.PortSpec
	fc := noFC(tp, self)
	qc := fc.Egress()
	for l := 0; l <= tp.Levels(); l++ {
		near, _ := pipe.New(mem, make([]byte, hRing*hFrame), hRing)
		s := dataplane.PortSpec{Name: "p", IO: near}
		if l < tp.Levels() {
			s.Queues = qc
		}
		specs = append(specs, s)
	}
	h := NewHost(tp, self, pol, fc)
	if err := h.SetTransport(p); err != nil {
		t.Fatal(err)
	}
	if before != nil {
		if err := before(h); err != nil {
			t.Fatal(err)
		}
	}
	e, err := dataplane.NewEngine(dataplane.Memory{Bytes: mem, FrameSize: hFrame, NumFrames: hFrames, RingSize: hRing},
		specs, h, dataplane.Options{BufferBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	h.Bind(e)
	// Start the clock, then stop the loop: Call then runs directly.
	done := make(chan error)
	go func() { done <- e.Run(context.Background()) }()
	<-e.Ready()
	e.Stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n := &nic{h: h, e: e}
	addr, ok := e.Alloc()
	if !ok {
		t.Fatal("no frame")
	}
	n.scratch = xdp.Desc{Addr: addr}
	return n
}

// deliver hands frame b to n as if it arrived on fabric port in and
// reports the verdict.
func (n *nic) deliver(in int, b []byte) *dataplane.Verdict {
	n.scratch.Len = uint32(len(b))
	copy(n.e.Frame(&n.scratch), b)
	d := n.scratch
	n.v = dataplane.Verdict{}
	n.h.Handle(in, &d, &n.v)
	return &n.v
}

// drain takes every frame out of port's egress (running the hooks and
// freeing the frames, as a transmission does) and passes each to fn.
func (n *nic) drain(port int, fn func(q int, b []byte)) { n.e.Take(port, fn) }

// pair is h0 -> h1 of BCube(2,1): one switch apart, port 0 at both ends.
type pair struct {
	a, b *nic
	seq  int
	// lose and mark pick data frames (by their order) to lose on the
	// way and to mark CE.
	lose, mark func(i int) bool
	data, ctl  int
	last       int64
	// toBFn and toAFn, if set, carry the frames instead of toB and toA
	// (which they may call).
	toBFn, toAFn func(q int, b []byte)
}

// stepTime is the least time between steps: about two packet times at
// 1 Gb/s.
const stepTime = int64(20 * time.Microsecond)

func newPair(t testing.TB, p transport.Params) *pair {
	tp := bcube.MustNew(2, 1)
	return &pair{a: newNIC(t, tp, 0, p), b: newNIC(t, tp, 1, p)}
}

// step runs one round, at least stepTime after the last: timers, the
// sender's packets to the receiver, the receiver's answers back.
func (pr *pair) step() {
	pr.wait()
	pr.work()
}

// wait spins until stepTime has passed since the last round.
func (pr *pair) wait() {
	for pr.a.e.Now() < pr.last+stepTime {
	}
}

func (pr *pair) work() {
	now := pr.a.e.Now()
	pr.last = now
	pr.a.h.r.NextTick()
	pr.b.h.r.NextTick()
	pr.a.h.r.Tick(now)
	pr.b.h.r.Tick(now)
	pr.a.h.r.Produce(now)
	toB, toA := pr.toB, pr.toA
	if pr.toBFn != nil {
		toB, toA = pr.toBFn, pr.toAFn
	}
	pr.a.drain(0, toB)
	pr.b.drain(0, toA)
}

func (pr *pair) toB(q int, b []byte) {
	i := pr.seq
	pr.seq++
	pr.data++
	if pr.lose != nil && pr.lose(i) {
		return
	}
	if pr.mark != nil && pr.mark(i) {
		header.IPv4(b[roce.EthLen+roce.VLANLen:]).SetCE()
	}
	pr.b.deliver(0, b)
}

func (pr *pair) toA(q int, b []byte) {
	pr.ctl++
	pr.a.deliver(0, b)
}

// fastParams are the papers' network at 1 Gb/s with its timers (RTOs,
// ACK delay, DCQCN) 10 times shorter than D = 100 makes them: quick tests.
func fastParams() transport.Params {
	p := TransportParams(scale.Model{Target: scale.Papers(), D: 10}, 1e9)
	p.LineRateBps, p.DCQCN.AIRateBps, p.DCQCN.HAIRateBps, p.DCQCN.MinRateBps = 1e9, 1e6, 10e6, 1e6
	return p
}

// The frames on the wire: data as RoCEv2 SEND with PCP 3, ECT(0), the
// flow's source port and QP, in its a/b queue; ACKs back with PCP 6 in
// the HQ; a flow of 10 KB completes with everything acknowledged.
func TestRDMAFrames(t *testing.T) {
	pr := newPair(t, fastParams())
	fs, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 10_000, MTU: 1024})
	if err != nil {
		t.Fatal(err)
	}
	f := fs[0]
	if f.Port != 0 || f.Queue != pr.a.e.Egress(0).Name(queueIndex(f, pr.a.h)) {
		t.Fatalf("flow: %+v", f)
	}
	var pkt roce.Packet
	var psns []uint32
	var ops []roce.Opcode
	acks := 0
	for range 1000 {
		now := pr.a.e.Now()
		pr.a.h.r.Tick(now)
		pr.b.h.r.Tick(now)
		pr.a.h.r.Produce(now)
		pr.a.drain(0, func(q int, b []byte) {
			if err := roce.Parse(b, &pkt); err != nil {
				t.Fatal(err)
			}
			if pkt.PCP != signaling.PCPData || pkt.ECN != ecnECT0 || pkt.SrcPort != f.SPort || pkt.DestQP() != f.QP ||
				pkt.DstIP != bcube.ServerIP(1).As4() || q != queueIndex(f, pr.a.h) {
				t.Errorf("data frame: %+v in queue %d", pkt, q)
			}
			psns = append(psns, pkt.PSN())
			ops = append(ops, pkt.Opcode())
			pr.b.deliver(0, b)
		})
		pr.b.drain(0, func(q int, b []byte) {
			if err := roce.Parse(b, &pkt); err != nil {
				t.Fatal(err)
			}
			if pkt.Opcode() != roce.OpAck || pkt.PCP != signaling.PCPControl || q != pr.b.h.t.ServerHQ() || pkt.DestQP() != f.QP ||
				pkt.AETH.Syndrome() != roce.SyndromeACK || pkt.SrcPort != f.SPort || pkt.ECN != 0 {
				t.Errorf("ack: %+v syndrome %v in queue %d", pkt, pkt.AETH.Syndrome(), q)
			}
			acks++
			pr.a.deliver(0, b)
		})
		if pr.a.h.RDMA([]int{1}).Flows[0].State != api.RDMARunning {
			break
		}
		time.Sleep(10 * time.Microsecond)
	}
	if len(ops) != 10 || ops[0] != roce.OpSendFirst || ops[1] != roce.OpSendMiddle || ops[9] != roce.OpSendLast ||
		psns[0] != f.StartPSN || psns[9] != roce.NextPSN(f.StartPSN, 9) {
		t.Fatalf("opcodes %v, PSNs %v", ops, psns)
	}
	rep := pr.a.h.RDMA(nil)
	got := rep.Flows[0]
	if acks == 0 || got.State != api.RDMADone || got.AckedBytes != 10_000 || got.FCTNs <= 0 || got.Packets != 10 {
		t.Fatalf("%d acks; flow %+v", acks, got)
	}
	r := pr.b.h.RDMA(nil).Receivers
	if len(r) != 1 || !r[0].Done || r[0].Stats["bytes"] != 10_000 || r[0].Src != 0 || r[0].Mode != transport.Lossless {
		t.Fatalf("receivers: %+v", r)
	}
}

// queueIndex is the flow's queue at its port (test helper).
func queueIndex(f api.RDMAFlow, h *Host) int { return h.t.ServerQueue(h.self, f.Port, f.Dst, false) }

// A paused queue stops a flow without dropping anything, and it goes on
// when the queue resumes; the flow never holds more than RDMAQueueBytes
// in its queue.
func TestRDMAPauseAndQueueCap(t *testing.T) {
	pr := newPair(t, fastParams())
	fs, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	q := queueIndex(fs[0], pr.a.h)
	eg := pr.a.e.Egress(0)
	for range 5 {
		pr.step()
		time.Sleep(20 * time.Microsecond)
	}
	now := pr.a.e.Now()
	eg.Pause(q, now, now+int64(time.Hour))
	time.Sleep(time.Millisecond)
	if n := pr.a.h.r.Produce(pr.a.e.Now()); n != 0 {
		t.Fatalf("%d packets while paused", n)
	}
	if next := pr.a.h.r.NextTick(); next >= 0 && next <= pr.a.e.Now() {
		t.Fatalf("a paused flow wants to run at %d (now %d)", next, pr.a.e.Now())
	}
	eg.Resume(q, pr.a.e.Now())
	if next := pr.a.h.r.NextTick(); next < 0 || next > pr.a.e.Now() {
		t.Fatalf("resumed, next tick %d (now %d)", next, pr.a.e.Now())
	}
	time.Sleep(2 * time.Millisecond)
	n := pr.a.h.r.Produce(pr.a.e.Now())
	if n == 0 || eg.QueueBytes(q) > RDMAQueueBytes {
		t.Fatalf("%d packets, %d bytes queued", n, eg.QueueBytes(q))
	}
	if pr.a.h.r.flows[0].blocked != blockQueue {
		t.Fatalf("not held by its queue allowance: %d bytes queued", eg.QueueBytes(q))
	}
	for range 2000 {
		pr.step()
		if fl := pr.a.h.RDMA([]int{1}).Flows[0]; fl.State != api.RDMARunning {
			if fl.State != api.RDMADone || fl.RetxPackets != 0 {
				t.Fatalf("flow: %+v", fl)
			}
			return
		}
	}
	t.Fatal("flow did not complete")
}

// Lossless: a lost packet fails the flow (the receiver NAKs the gap);
// Go-Back-N and IRN recover from the same loss; CE marks draw CNPs that
// the sender counts.
func TestRDMAModes(t *testing.T) {
	for _, mode := range []string{"lossless", "gbn", "irn"} {
		t.Run(mode, func(t *testing.T) {
			pr := newPair(t, fastParams())
			pr.lose = func(i int) bool { return i == 20 }
			pr.mark = func(i int) bool { return i%50 == 0 }
			if _, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 200 << 10, Mode: mode}); err != nil {
				t.Fatal(err)
			}
			var fl api.RDMAFlow
			for range 20000 {
				pr.step()
				if fl = pr.a.h.RDMA([]int{1}).Flows[0]; fl.State != api.RDMARunning {
					break
				}
			}
			rx := pr.b.h.RDMA(nil).Receivers[0]
			t.Logf("%s: %+v; receiver %v", mode, fl, rx.Stats)
			if fl.CNPs == 0 || rx.Stats["cnps"] != fl.CNPs || rx.Stats["ce"] == 0 {
				t.Errorf("CNPs: sender %d, receiver sent %d for %d CE", fl.CNPs, rx.Stats["cnps"], rx.Stats["ce"])
			}
			if mode == "lossless" {
				if fl.State != api.RDMAFailed || fl.NAKs == 0 || !rx.Gap || rx.Stats["lost"] != 1 {
					t.Errorf("lossless: %+v, receiver gap %v", fl, rx.Gap)
				}
				return
			}
			if fl.State != api.RDMADone || fl.AckedBytes != 200<<10 || fl.RetxPackets == 0 || fl.NAKs == 0 {
				t.Errorf("%s: %+v", mode, fl)
			}
			if mode == "irn" && fl.Timeouts == 0 && fl.RetxPackets != 1 {
				t.Errorf("IRN retransmitted %d packets for one loss (%d timeouts)", fl.RetxPackets, fl.Timeouts)
			}
		})
	}
}

// Malformed RoCE frames for this server — truncated, a bad ICRC, an
// unknown opcode, an ACK for no flow — are dropped and counted, never
// taken.
func TestRDMAMalformed(t *testing.T) {
	pr := newPair(t, fastParams())
	b := make([]byte, 2048)
	fl := roce.Flow{SrcIP: bcube.ServerIP(0).As4(), DstIP: bcube.ServerIP(1).As4(), SrcPort: 50000, DestQP: rdmaQP(transport.IRN, 7), PCP: 3}
	n := roce.PutData(b, &fl, &roce.Data{Opcode: roce.OpSendFirst, Payload: 256})
	good := b[:n]
	cases := []struct {
		name  string
		frame func() []byte
		drop  dataplane.DropReason
		count func(c api.RDMACounters) uint64
	}{
		{"truncated", func() []byte {
			// A datagram whose BTH is cut short, with IPv4 and UDP
			// lengths that agree.
			c := clone(good)[:roce.HeadersLen-4]
			ip := c[roce.EthLen+roce.VLANLen:]
			binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
			binary.BigEndian.PutUint16(ip[10:], 0)
			binary.BigEndian.PutUint16(ip[10:], header.IPv4Checksum(ip[:20]))
			binary.BigEndian.PutUint16(ip[24:], uint16(len(ip)-20))
			return c
		}, dataplane.DropMalformed, func(c api.RDMACounters) uint64 { return c.Malformed }},
		{"bad icrc", func() []byte { c := clone(good); c[len(c)-1] ^= 1; return c }, dataplane.DropMalformed, func(c api.RDMACounters) uint64 { return c.BadICRC }},
		{"bad opcode", func() []byte {
			c := clone(good)
			roce.BTH(c[roce.HeadersLen-roce.BTHLen:]).SetOpcode(0x1d)
			return c
		}, dataplane.DropMalformed, func(c api.RDMACounters) uint64 { return c.Malformed }},
		{"no mode in QP", func() []byte {
			f := fl
			f.DestQP = 5
			c := make([]byte, 2048)
			return c[:roce.PutData(c, &f, &roce.Data{Opcode: roce.OpSendOnly, Payload: 8})]
		}, dataplane.DropUnsupported, func(c api.RDMACounters) uint64 { return c.UnknownQP }},
		{"ack for no flow", func() []byte {
			f := fl
			c := make([]byte, 2048)
			return c[:roce.PutAck(c, &f, roce.SyndromeACK, 1, 0)]
		}, dataplane.DropUnsupported, func(c api.RDMACounters) uint64 { return c.UnknownQP }},
		{"rnr nak", func() []byte {
			f := fl
			c := make([]byte, 2048)
			return c[:roce.PutAck(c, &f, roce.RNRSyndrome(3), 1, 0)]
		}, dataplane.DropUnsupported, func(c api.RDMACounters) uint64 { return c.Unsupported }},
	}
	for _, c := range cases {
		before := c.count(pr.b.h.RDMA(nil).Counters)
		v := pr.b.deliver(0, c.frame())
		if v.Port >= 0 || v.Drop != c.drop {
			t.Errorf("%s: verdict %+v", c.name, *v)
		}
		if after := c.count(pr.b.h.RDMA(nil).Counters); after != before+1 {
			t.Errorf("%s: counter %d -> %d", c.name, before, after)
		}
	}
	if v := pr.b.deliver(0, good); v.Port >= 0 || v.Drop != dataplane.DropNone {
		t.Errorf("good frame: %+v", *v)
	}
	if r := pr.b.h.RDMA(nil).Receivers; len(r) != 1 || r[0].Mode != transport.IRN {
		t.Errorf("receivers %+v", r)
	}
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// The per-packet paths allocate nothing: producing data, receiving it
// (with CE marks and losses: ACKs, selective NAKs, CNPs), receiving the
// answers, the timers (NextTick, Tick), and dropping malformed frames.
func TestRDMAAllocs(t *testing.T) {
	for _, mode := range []string{"gbn", "irn"} {
		t.Run(mode, func(t *testing.T) {
			pr := newPair(t, fastParams())
			pr.lose = func(i int) bool { return i%50 == 7 }
			pr.mark = func(i int) bool { return i%100 == 0 }
			if _, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Duration: int64(time.Hour), Mode: mode}); err != nil {
				t.Fatal(err)
			}
			for range 200 {
				pr.step()
			}
			data, ctl := pr.data, pr.ctl
			if n := testing.AllocsPerRun(500, pr.step); n != 0 {
				t.Errorf("%v allocations per step", n)
			}
			if pr.data-data < 200 || pr.ctl-ctl < 20 {
				t.Errorf("the loop moved %d data and %d control frames", pr.data-data, pr.ctl-ctl)
			}
			fl := pr.a.h.RDMA([]int{1}).Flows[0]
			if fl.RetxPackets == 0 || fl.CNPs == 0 || fl.NAKs == 0 {
				t.Errorf("the loop did not exercise it: %+v", fl)
			}
			bad := make([]byte, 200)
			fr := roce.Flow{SrcIP: bcube.ServerIP(0).As4(), DstIP: bcube.ServerIP(1).As4(), DestQP: 1}
			bad = bad[:roce.PutAck(bad, &fr, roce.SyndromeACK, 0, 0)]
			bad[len(bad)-1] ^= 0xff
			if n := testing.AllocsPerRun(100, func() { pr.b.deliver(0, bad) }); n != 0 {
				t.Errorf("%v allocations per malformed frame", n)
			}
		})
	}
}

// BenchmarkRDMA times a round of work (a couple of data packets at 1
// Gb/s, and their answers) on both NICs, not the wait between rounds.
func BenchmarkRDMA(b *testing.B) {
	pr := newPair(b, fastParams())
	if _, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Duration: int64(time.Hour), Mode: "irn"}); err != nil {
		b.Fatal(err)
	}
	for range 100 {
		pr.step()
	}
	b.ReportAllocs()
	start := pr.data
	for b.Loop() {
		b.StopTimer()
		pr.wait()
		b.StartTimer()
		pr.work()
	}
	b.ReportMetric(float64(pr.data-start)/float64(b.N), "packets/op")
}

// runFlow steps pr until flow id of a ends, and returns it.
func runFlow(t *testing.T, pr *pair, id int) api.RDMAFlow {
	t.Helper()
	var fl api.RDMAFlow
	for range 200000 {
		pr.step()
		if fl = pr.a.h.RDMA([]int{id}).Flows[0]; fl.State != api.RDMARunning {
			return fl
		}
	}
	t.Fatalf("flow %d still runs: %+v", id, fl)
	return fl
}

// Flows of messages: every message its own SEND (Only when it fits a
// packet, First..Last when it does not), all acknowledged, with a peak
// rate; a latency flow keeps one message outstanding and measures each
// round trip.
func TestRDMAMessages(t *testing.T) {
	for _, c := range []struct {
		name    string
		req     api.RDMARequest
		ops     map[roce.Opcode]int // data frames by opcode
		latency bool
	}{
		{"small", api.RDMARequest{Dst: 1, Bytes: 64 * 100, MsgBytes: 64}, map[roce.Opcode]int{roce.OpSendOnly: 100}, false},
		{"two packets", api.RDMARequest{Dst: 1, Bytes: 1500 * 20, MsgBytes: 1500, MTU: 1024},
			map[roce.Opcode]int{roce.OpSendFirst: 20, roce.OpSendLast: 20}, false},
		{"latency", api.RDMARequest{Dst: 1, Bytes: 2 * 200, MsgBytes: 2, Latency: true}, map[roce.Opcode]int{roce.OpSendOnly: 200}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr := newPair(t, fastParams())
			ops := map[roce.Opcode]int{}
			outstanding, most := 0, 0
			toB := pr.toB
			var pkt roce.Packet
			pr.toBFn = func(q int, b []byte) {
				if err := roce.Parse(b, &pkt); err == nil {
					ops[pkt.Opcode()]++
				}
				outstanding++
				most = max(most, outstanding)
				toB(q, b)
			}
			pr.toAFn = func(q int, b []byte) { outstanding = 0; pr.toA(q, b) }
			if _, err := pr.a.h.StartRDMA(c.req); err != nil {
				t.Fatal(err)
			}
			fl := runFlow(t, pr, 1)
			msgs := c.req.Bytes / c.req.MsgBytes
			if fl.State != api.RDMADone || fl.Messages != msgs || fl.AckedBytes != c.req.Bytes || fl.PeakBps <= 0 {
				t.Errorf("flow: %+v", fl)
			}
			for op, n := range c.ops {
				if ops[op] != n {
					t.Errorf("%d frames of %v, want %d (%v)", ops[op], op, n, ops)
				}
			}
			if c.latency {
				l := fl.Latency
				if l == nil || l.Samples != int(msgs) || l.MinNs <= 0 || l.MinNs > l.P50Ns || l.P50Ns > l.P99Ns || l.P99Ns > l.P999Ns || l.P999Ns > l.MaxNs {
					t.Fatalf("latency: %+v", l)
				}
				if most != 1 {
					t.Errorf("up to %d data frames outstanding, want 1", most)
				}
				t.Logf("round trips: %+v", *l)
			} else if fl.Latency != nil {
				t.Errorf("latency of a bandwidth flow: %+v", fl.Latency)
			}
		})
	}
	pr := newPair(t, fastParams())
	for _, bad := range []api.RDMARequest{
		{Dst: 1, Bytes: 100, MsgBytes: 30},
		{Dst: 1, Duration: 1e9, MsgBytes: 10},
		{Dst: 1, Bytes: 100, Latency: true},
		{Dst: 1, Bytes: 1 << 30, MsgBytes: 2},
		{Dst: 1, Bytes: 100, UntilStopped: true},
		{Dst: 1, Bytes: 100, RateBps: -1},
	} {
		if _, err := pr.a.h.StartRDMA(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// A flow until stopped runs until POST /rdma/stop, then ends done, every
// byte acknowledged; a capped flow is paced at its cap.
func TestRDMAStopAndCap(t *testing.T) {
	pr := newPair(t, fastParams())
	if _, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, UntilStopped: true, RateBps: 100e6, DCQCN: new(bool)}); err != nil {
		t.Fatal(err)
	}
	for range 500 {
		pr.step()
	}
	if n := pr.a.h.StopRDMA([]int{1}); n != 1 {
		t.Fatalf("stopped %d", n)
	}
	fl := runFlow(t, pr, 1)
	if fl.State != api.RDMADone || fl.AckedBytes == 0 || fl.AckedBytes != fl.Size || fl.RateLimitBps != 100e6 {
		t.Errorf("flow: %+v", fl)
	}
	// Paced at the cap: its payload over its time stays under it.
	if r := float64(fl.AckedBytes) * 8 / (float64(fl.FCTNs) / 1e9); r > 100e6 {
		t.Errorf("capped at 100 Mb/s, ran at %.1f Mb/s", r/1e6)
	}
	if n := pr.a.h.StopRDMA([]int{1}); n != 0 {
		t.Errorf("stopped an ended flow")
	}
}

// The per-packet paths of a message flow, of a latency flow and of a
// flow with injected losses allocate nothing either.
func TestRDMAMessageAllocs(t *testing.T) {
	lose := make([]int, api.MaxRDMALose)
	for i := range lose {
		lose[i] = 200 + 3*i // over the measured steps' packets
	}
	for _, req := range []api.RDMARequest{
		{Dst: 1, Bytes: 64 << 20, MsgBytes: 64},
		{Dst: 1, Bytes: 2 << 20, MsgBytes: 2, Latency: true},
		{Dst: 1, Bytes: 8 << 20, Mode: "irn", Lose: lose},
	} {
		pr := newPair(t, fastParams())
		if _, err := pr.a.h.StartRDMA(req); err != nil {
			t.Fatal(err)
		}
		for range 100 {
			pr.step()
		}
		data := pr.data
		if n := testing.AllocsPerRun(300, pr.step); n != 0 {
			t.Errorf("%+v: %v allocations per step", req, n)
		}
		if pr.data-data < 100 {
			t.Errorf("%+v: the loop moved %d data frames", req, pr.data-data)
		}
	}
}

// A request's Lose: the NIC drops the first transmission of each packet
// it names, before the wire, and counts it injected (the flow, the NIC,
// the port's injected drops); Go-Back-N and IRN recover, the last packet
// by the timeout. A lossless flow, a timed one and a bad list are
// refused, and start nothing.
func TestRDMALose(t *testing.T) {
	const n = 40
	for _, mode := range []string{"gbn", "irn"} {
		t.Run(mode, func(t *testing.T) {
			pr := newPair(t, fastParams())
			var pkt roce.Packet
			var seqs []int64 // the data packets on the wire, by index in the flow
			var start uint32
			pr.toBFn = func(q int, b []byte) {
				if err := roce.Parse(b, &pkt); err != nil {
					t.Fatal(err)
				}
				seqs = append(seqs, transport.PSNDiff(pkt.PSN(), start))
				pr.toB(q, b)
			}
			pr.toAFn = pr.toA
			fs, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: n * 1024, Mode: mode, Lose: []int{10, n - 1}})
			if err != nil {
				t.Fatal(err)
			}
			start = fs[0].StartPSN
			fl := runFlow(t, pr, fs[0].ID)
			rep := pr.a.h.RDMA(nil)
			ps, _ := pr.a.e.Snapshot()
			if fl.State != api.RDMADone || fl.AckedBytes != n*1024 || fl.Injected != 2 || fl.Timeouts == 0 || fl.RetxPackets < 2 {
				t.Fatalf("flow: %+v", fl)
			}
			if rep.Counters.Injected != 2 || ps[fl.Port].InjectedTx != 2 || ps[fl.Port].InjectedDrops() != 2 || ps[fl.Port].TotalDrops() != 0 {
				t.Errorf("NIC counted %d injected, its port %d (%d injected drops, %d drops)",
					rep.Counters.Injected, ps[fl.Port].InjectedTx, ps[fl.Port].InjectedDrops(), ps[fl.Port].TotalDrops())
			}
			// What the wire carried: every packet but the two dropped, whose
			// retransmissions come later.
			if uint64(len(seqs)) != fl.Packets-2 || slices.Index(seqs, 10) < slices.Index(seqs, 11) || slices.Index(seqs, n-1) < 0 {
				t.Errorf("%d data frames on the wire of %d sent: %v", len(seqs), fl.Packets, seqs)
			}
			if rx := pr.b.h.RDMA(nil).Receivers[0]; !rx.Done || rx.Stats["bytes"] != n*1024 {
				t.Errorf("receiver: %+v", rx)
			}
		})
	}
	pr := newPair(t, fastParams())
	for _, c := range []struct {
		req api.RDMARequest
		err string
	}{
		{api.RDMARequest{Dst: 1, Bytes: 10_240, Lose: []int{3}}, "gbn or irn"},
		{api.RDMARequest{Dst: 1, Bytes: 10_240, Mode: "lossless", Lose: []int{3}}, "gbn or irn"},
		{api.RDMARequest{Dst: 1, Duration: int64(time.Second), Mode: "gbn", Lose: []int{3}}, "sized flow"},
		{api.RDMARequest{Dst: 1, Bytes: 10_240, Mode: "irn", Lose: []int{10}}, "0..9"},
		{api.RDMARequest{Dst: 1, Bytes: 10_240, Mode: "irn", Lose: []int{3, 3}}, "twice"},
		{api.RDMARequest{Dst: 1, Bytes: 640, MsgBytes: 64, Mode: "gbn", Lose: []int{10}}, "0..9"},
	} {
		if _, err := pr.a.h.StartRDMA(c.req); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", c.req, err, c.err)
		}
	}
	if fs := pr.a.h.RDMA(nil).Flows; len(fs) != 0 {
		t.Errorf("refused requests started %d flows", len(fs))
	}
}

// Per-flow state does not grow with the flows a NIC has run: an ended
// flow keeps only its report (no transport state, no message times), and
// receivers are released once their flows are complete and the linger is
// over, leaving bounded summaries; no goroutine is left behind per flow.
func TestRDMAFlowStateReleased(t *testing.T) {
	pr := newPair(t, fastParams())
	rx := &pr.b.h.r
	rx.linger = int64(time.Millisecond)
	goroutines := runtime.NumGoroutine()
	const flows = 40
	for i := 1; i <= flows; i++ {
		fs, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 8_000, MTU: 1024, MsgBytes: 1_000})
		if err != nil {
			t.Fatal(err)
		}
		if fl := runFlow(t, pr, fs[0].ID); fl.State != api.RDMADone || fl.AckedBytes != 8_000 || fl.FCTNs <= 0 {
			t.Fatalf("flow %d: %+v", i, fl)
		}
		for range 50 { // the receiver's last ACK timer and the linger
			pr.step()
		}
	}
	tx := &pr.a.h.r
	if len(tx.active) != 0 || len(tx.flows) != flows || len(tx.ended) != flows {
		t.Fatalf("sender: %d active, %d flows, %d ended", len(tx.active), len(tx.flows), len(tx.ended))
	}
	for _, f := range tx.flows {
		if f.s != nil || f.msgSent != nil || f.msgDone != nil {
			t.Fatalf("flow %d ended but keeps its transport state or message times", f.ID)
		}
	}
	// The reports of ended flows survive the release.
	rep := pr.a.h.RDMA(nil)
	if len(rep.Flows) != flows || rep.Flows[0].State != api.RDMADone || rep.Flows[0].AckedBytes != 8_000 ||
		rep.Flows[0].Packets != 8 || rep.Flows[0].FirstNs == 0 || rep.Flows[0].EndNs == 0 {
		t.Fatalf("reports of ended flows: %d, first %+v", len(rep.Flows), rep.Flows[0])
	}
	// Receiving NIC: at most the last flow's receiver still lingers.
	got := pr.b.h.RDMA(nil)
	if len(rx.recvs) > 1 || len(rx.rlist) > 1 || len(rx.over) > 1 || len(rx.armed) > 1 {
		t.Fatalf("receiver: %d in the map, %d listed, %d ended, %d armed", len(rx.recvs), len(rx.rlist), len(rx.over), len(rx.armed))
	}
	if len(got.Receivers) != flows || !got.Receivers[0].Done || got.Receivers[0].Stats["bytes"] != 8_000 {
		t.Fatalf("%d receivers reported, first %+v", len(got.Receivers), got.Receivers[0])
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Fatalf("%d goroutines after %d flows, %d before", n, flows, goroutines)
	}
}

// An ended flow's report is kept until a client has asked for it by id,
// then among the last maxRDMAFetched only: a NIC that runs flows for hours
// keeps the reports nobody has read, not every report.
func TestRDMAFetchedReportsForgotten(t *testing.T) {
	pr := newPair(t, fastParams())
	r := &pr.a.h.r
	const n = maxRDMAFetched + 50
	for id := 1; id <= n; id++ {
		f := &rdmaFlow{}
		f.ID, f.State = id, api.RDMADone
		r.flows = append(r.flows, f)
		r.ended = append(r.ended, id)
	}
	// Nobody asked by id (a listing of all is not a read of each): every
	// report stays.
	if rep := pr.a.h.RDMA(nil); len(rep.Flows) != n {
		t.Fatalf("%d reports of %d ended flows", len(rep.Flows), n)
	}
	// The workload reads each flow once it ended.
	for id := 1; id <= n; id++ {
		pr.a.h.RDMA([]int{id})
	}
	kept := 0
	for _, f := range r.flows {
		if f != nil {
			kept++
		}
	}
	if kept != maxRDMAFetched || len(r.fetched) != maxRDMAFetched {
		t.Fatalf("%d reports kept, %d fetched listed; want %d", kept, len(r.fetched), maxRDMAFetched)
	}
	if r.flow(n) == nil || r.flow(1) != nil {
		t.Fatal("kept the oldest fetched report and forgot the newest")
	}
	// The released records are gone from the table too, not left as
	// an entry per flow ever started.
	if len(r.flows) != maxRDMAFetched || r.base != n-maxRDMAFetched {
		t.Fatalf("table of %d entries from id %d, want %d from %d", len(r.flows), r.base+1, maxRDMAFetched, n-maxRDMAFetched+1)
	}
	// New flows take the ids after the last.
	if fs, err := r.start([]api.RDMARequest{{Dst: 1, Bytes: 1 << 10}}, clockOffsets{}); err != nil || fs[0].ID != n+1 || r.flow(n+1) != fs[0] {
		t.Fatalf("next flow: %v, %v; want id %d", fs, err, n+1)
	}
}

func TestPastRing(t *testing.T) {
	var p pastRing
	n := maxRDMAPastReceivers + maxRDMAPastReceivers/2
	for i := range n {
		p.add(pastRecv{src: i})
	}
	if p.len() != maxRDMAPastReceivers {
		t.Fatalf("kept %d, want %d", p.len(), maxRDMAPastReceivers)
	}
	want := n - maxRDMAPastReceivers
	p.each(func(x *pastRecv) {
		if x.src != want {
			t.Fatalf("got receiver %d, want %d (oldest first)", x.src, want)
		}
		want++
	})
	if allocs := testing.AllocsPerRun(100, func() { p.add(pastRecv{src: -1}) }); allocs != 0 {
		t.Errorf("add to a full ring: %v allocations, want 0", allocs)
	}
}

// A generated flow whose queue's pause lapses (its Resume lost, the
// queue empty, so nothing dequeues it) sends again once the pause's
// expiry has passed, and the engine is told to wake then; a flow whose
// time is up ends even while its queue stays paused.
func TestGenPauseLapses(t *testing.T) {
	n := newNIC(t, bcube.MustNew(2, 1), 0, fastParams())
	g := n.h.g
	f, err := g.start(api.GenRequest{Dst: 1, Duration: int64(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	eg := n.e.Egress(f.Port)
	now := n.e.Now()
	eg.Pause(f.queue, now, now+1000)
	if made := g.Produce(now); made != 0 {
		t.Fatalf("a paused flow made %d frames", made)
	}
	if next := g.NextTick(); next != now+1000 {
		t.Errorf("NextTick %d, want the pause's expiry %d", next, now+1000)
	}
	if made := g.Produce(now + 1000); made == 0 || eg.Paused(f.queue) {
		t.Fatalf("after the pause lapsed the flow made %d frames (queue paused %v)", made, eg.Paused(f.queue))
	}
	n.e.Take(f.Port, func(int, []byte) {})
	f.queued = 0

	// Paused until a Resume that never comes; the flow's deadline passes.
	eg.Pause(f.queue, now+2000, 0)
	f.deadline = now + 3000
	g.Produce(now + 3000)
	if !f.Done {
		t.Error("a flow past its deadline did not end while its queue was paused")
	}
}

// peak is never below the average: large messages, each completing
// every 16.7 ms (1 MiB at 500 Mb/s), used to read a sixth low, a window
// of 100 ms holding five whole messages and part of a sixth.
func TestPeakNotBelowAverage(t *testing.T) {
	for _, c := range []struct {
		name  string
		bytes int64
		every int64 // ns between completions
		n     int
	}{
		{"1MiB at 500M", 1 << 20, 16_777_216, 60},
		{"128KiB at 500M", 128 << 10, 2_097_152, 476},
		{"2B bunched", 2, 1_000_000, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &rdmaFlow{RDMAFlow: api.RDMAFlow{MsgBytes: c.bytes}, msgSent: make([]int64, c.n), msgDone: make([]int64, c.n), seenMsgs: int64(c.n)}
			for i := range c.n {
				f.msgSent[i] = 0
				f.msgDone[i] = int64(i+1) * c.every
			}
			avg := float64(int64(c.n)*c.bytes*8) * 1e9 / float64(f.msgDone[c.n-1])
			if p := f.peak(); p < avg || p > avg*1.01 {
				t.Errorf("peak %.1f Mb/s, average %.1f: want the average (completions evenly spaced)", p/1e6, avg/1e6)
			}
		})
	}
}

// SetNICQueue bounds what each flow may hold in the NIC's egress queue:
// two flows at the line rate each hold at most one packet under a bound
// below a packet (the NIC serves them a packet each in turn), at most the
// bound above it, and both complete; a negative bound is refused.
func TestRDMANICQueue(t *testing.T) {
	for _, bound := range []int{1, 4 << 10} {
		pr := newPair(t, fastParams())
		if err := pr.a.h.SetNICQueue(bound); err != nil {
			t.Fatal(err)
		}
		fs, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 1 << 20, Flows: 2})
		if err != nil {
			t.Fatal(err)
		}
		q := queueIndex(fs[0], pr.a.h)
		eg := pr.a.e.Egress(0)
		// Made without sending: a flow's first packet, then (its pacer
		// letting it catch up) as many as its share holds.
		for range 2 {
			time.Sleep(2 * time.Millisecond)
			pr.a.h.r.Produce(pr.a.e.Now())
		}
		frame := pr.a.h.r.flows[0].maxFrame
		want := 2 * max(bound/frame, 1) * frame
		if got := eg.QueueBytes(q); got == 0 || got > want {
			t.Fatalf("bound %d: %d bytes queued by two flows, want at most %d", bound, got, want)
		}
		for i, f := range pr.a.h.r.flows {
			if f.queued == 0 || f.queued > max(bound, frame) || f.blocked != blockQueue {
				t.Fatalf("bound %d: flow %d holds %d bytes (blocked %d)", bound, i, f.queued, f.blocked)
			}
		}
		done := 0
		for range 5000 {
			pr.step()
			done = 0
			for _, fl := range pr.a.h.RDMA(nil).Flows {
				if fl.State == api.RDMADone {
					done++
				}
			}
			if done == 2 {
				break
			}
		}
		if done != 2 {
			t.Fatalf("bound %d: %d of 2 flows completed", bound, done)
		}
	}
	if err := newPair(t, fastParams()).a.h.SetNICQueue(-1); err == nil {
		t.Fatal("a negative NIC queue accepted")
	}
}

// A flow done reports its FCT to when its last ACK arrived in the model
// (settle's acked): a worker that got to the ACK late does not lengthen
// it. A flow that failed, or whose ACK came on time, keeps the
// transport's own end.
func TestRDMAFCTEndsAtACKArrival(t *testing.T) {
	s, err := transport.NewSender(transport.Lossless, fastParams(), 0, 10_000, 1024)
	if err != nil {
		t.Fatal(err)
	}
	s.S.Start, s.S.End = 100, 900
	for _, c := range []struct {
		state  string
		endEng int64
		want   int64
	}{
		{api.RDMADone, 700, 600}, // the ACK arrived at 700, taken at 900
		{api.RDMADone, 900, 800},
		{api.RDMAFailed, 700, 800},
	} {
		f := &rdmaFlow{s: s, endEng: c.endEng}
		f.State = c.state
		var out api.RDMAFlow
		f.counters(&out)
		if out.FCTNs != c.want {
			t.Errorf("%s, end at %d: FCT %d, want %d", c.state, c.endEng, out.FCTNs, c.want)
		}
	}
}

// release lets receivers go an eighth of a linger's flows at a time, and
// only looks at those: a receiver whose flow ended is kept for a linger
// at least and a linger and an eighth at most, one whose ACK timer is
// still armed until it is done, and a NIC with thousands of lingering
// receivers does no work for them when it creates one more.
func TestRDMAReleaseBatched(t *testing.T) {
	const linger, n = 8_000, 64
	var r rdma
	r.linger = linger
	r.recvs = map[recvKey]*rdmaRecv{}
	for i := range n {
		tr, err := transport.NewReceiver(transport.Lossless, fastParams(), 0, 1024)
		if err != nil {
			t.Fatal(err)
		}
		rc := &rdmaRecv{key: recvKey{qp: uint32(i)}, src: i, r: tr, endAt: int64(1_000 + 100*i)}
		r.recvs[rc.key] = rc
		r.rlist = append(r.rlist, rc)
		r.over = append(r.over, rc)
	}
	r.over[1].armed = true
	kept := func() int { return len(r.recvs) }
	// The first ended at 1,000: none goes before 10,000 (linger and an
	// eighth), and nothing is looked at: over and the list stay as
	// they were.
	r.release(1_000)
	if kept() != n || len(r.over) != n || r.releaseAt != 1_000+linger+linger/8 {
		t.Fatalf("at the linger: %d kept, %d over, next at %d", kept(), len(r.over), r.releaseAt)
	}
	for now := int64(1_000 + linger); now < r.releaseAt; now += 100 {
		r.release(now)
		if kept() != n {
			t.Fatalf("at %d: released before a batch was due", now)
		}
	}
	// At 10,000 the flows that ended by 2,000 go, but the armed one.
	r.release(10_000)
	if kept() != n-10 || len(r.over) != n-10 || r.over[0] != r.recvs[recvKey{qp: 1}] || len(r.rlist) != n-10 || r.past.len() != 10 {
		t.Fatalf("at 10,000: %d kept, %d over, %d listed, %d past", kept(), len(r.over), len(r.rlist), r.past.len())
	}
	for i, rc := range r.over[1:] {
		if rc.src != 11+i {
			t.Fatalf("over[%d] is receiver %d, want %d (the order the flows ended)", i+1, rc.src, 11+i)
		}
	}
	// The armed one makes release look again an eighth later; once its
	// timer is done it goes with the next batch.
	if r.releaseAt != 10_000+linger/8 {
		t.Fatalf("next at %d, want %d", r.releaseAt, 10_000+linger/8)
	}
	r.over[0].armed = false
	r.release(r.releaseAt)
	if _, ok := r.recvs[recvKey{qp: 1}]; ok || kept() != n-21 {
		t.Fatalf("at 11,000: %d kept, receiver 1 kept: %v", kept(), ok)
	}
	// Long after, all go, and nothing is due until a flow ends again.
	r.release(1 << 40)
	if kept() != 0 || len(r.over) != 0 || len(r.rlist) != 0 || r.releaseAt != 0 {
		t.Fatalf("at the end: %d kept, %d over, %d listed, next at %d", kept(), len(r.over), len(r.rlist), r.releaseAt)
	}
}
