package fabrictest

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/signaling"
)

// Thresholds for 100 Mb/s in-process links.
var fcTh = signaling.Thresholds{XoffA: 30000, XonA: 20000, XoffB: 30000, XonB: 20000, Refresh: int64(time.Millisecond)}

const fcRate = 100e6

func startFlows(t testing.TB, f *Fabric, flows [][2]int, dur time.Duration) {
	t.Helper()
	for _, fl := range flows {
		if _, err := f.HostLogic[fl[0]].StartFlow(api.GenRequest{Dst: fl[1], Duration: int64(dur)}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitFlows runs the fabric until every source's flows are done and
// their frames have drained, then returns the sink reports by
// destination.
func waitFlows(t testing.TB, f *Fabric, flows [][2]int, limit time.Duration) map[int][]api.SinkReport {
	t.Helper()
	if !f.Poll(20*time.Millisecond, limit, func() bool {
		done := true
		for _, fl := range flows {
			for _, g := range f.HostLogic[fl[0]].Flows().Flows {
				done = done && g.Done
			}
		}
		return done
	}) {
		t.Fatalf("flows did not finish; queues holding frames: %v", heldQueues(f))
	}
	drained(t, f, 10*time.Second)
	out := map[int][]api.SinkReport{}
	for _, fl := range flows {
		if _, ok := out[fl[1]]; !ok {
			out[fl[1]] = f.HostLogic[fl[1]].Flows().Sink
		}
	}
	return out
}

// incast runs h1, h2, h3 -> h0 for d, waits for it to drain, checks that
// no flow lost a frame, and returns the bytes h0 received.
func incast(t testing.TB, f *Fabric, d time.Duration) uint64 {
	t.Helper()
	flows := [][2]int{{1, 0}, {2, 0}, {3, 0}}
	startFlows(t, f, flows, d)
	sinks := waitFlows(t, f, flows, 10*time.Second)
	var bytes uint64
	for _, s := range sinks[0] {
		if s.Gaps != 0 {
			t.Errorf("flow from h%d lost %d data frames", s.Src, s.Gaps)
		}
		bytes += s.Bytes
	}
	if len(sinks[0]) != 3 {
		t.Fatalf("h0 heard %d flows", len(sinks[0]))
	}
	return bytes
}

// heldQueues lists every node's queue that holds frames or is paused:
// what a stuck flow waits behind.
func heldQueues(f *Fabric) []string {
	var out []string
	eachQueue(f, func(node, port string, q api.QueueStats) {
		if q.Packets > 0 || q.Paused {
			out = append(out, fmt.Sprintf("%s %s %s: %d frames, paused %v", node, port, q.Name, q.Packets, q.Paused))
		}
	})
	return out
}

// eachQueue calls fn with every queue of every node, hosts first.
func eachQueue(f *Fabric, fn func(node, port string, q api.QueueStats)) {
	for i, e := range append(append([]*dataplane.Engine{}, f.Hosts...), f.Sws...) {
		ps, _ := e.Snapshot()
		for _, p := range ps {
			for _, q := range p.Queues {
				fn(nodeName(f, i), p.Name, q)
			}
		}
	}
}

// fabricDrops counts every drop of every node, and the in-memory cables'.
func fabricDrops(f *Fabric) (uint64, []string) {
	var n uint64
	var where []string
	for i, e := range append(append([]*dataplane.Engine{}, f.Hosts...), f.Sws...) {
		ps, _ := e.Snapshot()
		for _, p := range ps {
			if d := p.TotalDrops(); d > 0 {
				n += d
				where = append(where, fmt.Sprintf("node %d %s: %v", i, p.Name, p.Drops))
			}
		}
	}
	for i, c := range f.Cables {
		if d := c.Drops(); d > 0 {
			n += d
			where = append(where, fmt.Sprintf("cable end %d: %d receive-ring drops", i, d))
		}
	}
	return n, where
}

// Incast 3 -> 1 on BCube(4,1): h1, h2, h3 send to h0 at line rate through
// s0.0's port 0. PortFC pauses them before the B queue overflows: nothing
// is dropped, nothing is lost, and the B queue stays near X_off.
func TestPortFCIncast(t *testing.T) { validRun(t, portFCIncast) }

func portFCIncast(t testing.TB) {
	tp := bcube.MustNew(4, 1)
	f, err := New(tp, Options{RateBps: fcRate, FC: PortFC(fcTh, false)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	watch(t, f)
	bytes := incast(t, f, 400*time.Millisecond)
	if n, where := fabricDrops(f); n != 0 {
		t.Errorf("%d drops: %v", n, where)
	}
	ps, _ := f.Sws[0].Snapshot() // s0.0
	b := ps[0].Queues[tp.SwitchB()]
	sig := ps[1].Signals
	t.Logf("h0 received %d bytes; s0.0 p0 B queue max %d B (X_off %d); pauses to p1: %d, states %d, resumes %d",
		bytes, b.MaxBytes, fcTh.XoffB, sig["tx_pause_B"], sig["tx_state_B"], sig["tx_resume_B"])
	if sig["tx_pause_B"] == 0 {
		t.Fatal("no B pause was sent")
	}
	// The B class's counter is the B queue: its peak is the queue's
	// maximum; each pause is a frame to each other port, timed.
	if c := pauseTiming(t, "s0.0", ps[0], "B", uint64(tp.N()-1), fcRate); c.PeakBytes != b.MaxBytes || c.Pauses != sig["tx_pause_B"] {
		t.Errorf("B peak %d B, queue max %d; %d pauses decided, %d sent to p1", c.PeakBytes, b.MaxBytes, c.Pauses, sig["tx_pause_B"])
	}
	// Headroom: what arrives between crossing X_off and the sources
	// stopping — the signal's way out, a wake-up of each source, frames
	// already on their way. The bound dates from real time, when with 24
	// engines on two cores a reaction took up to a few milliseconds: three
	// sources at line rate for 5 ms, still a fifth of the 1 MiB buffer
	// that overflows without flow control. (On virtual time the reaction
	// is the model's alone: the queue peaked at 54,648 B.)
	headroom := int(3 * fcRate / 8 * 0.005)
	if b.MaxBytes > fcTh.XoffB+headroom {
		t.Errorf("B queue reached %d bytes, X_off %d plus headroom %d", b.MaxBytes, fcTh.XoffB, headroom)
	}
}

// The same incast without flow control overflows s0.0's buffer: what
// PortFC prevents is real.
func TestIncastWithoutFlowControlDrops(t *testing.T) {
	tp := bcube.MustNew(4, 1)
	f, err := New(tp, Options{RateBps: fcRate})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flows := [][2]int{{1, 0}, {2, 0}, {3, 0}}
	startFlows(t, f, flows, 400*time.Millisecond)
	sinks := waitFlows(t, f, flows, 10*time.Second)
	var gaps uint64
	for _, s := range sinks[0] {
		gaps += s.Gaps
	}
	n, _ := fabricDrops(f)
	t.Logf("without flow control: %d drops, %d frames missing at h0", n, gaps)
	if n == 0 || gaps == 0 {
		t.Fatalf("incast without flow control dropped %d and lost %d frames; want both > 0", n, gaps)
	}
	// The three sources send in step, so their frames reach s0.0 at the
	// same times: it takes them side by side, and the room a departure
	// frees goes to no one source every time (half its share at least).
	var total uint64
	for _, s := range sinks[0] {
		total += s.Packets
	}
	for _, s := range sinks[0] {
		if 6*s.Packets < total {
			t.Errorf("h%d got %d of the %d frames that reached h0, want a third", s.Src, s.Packets, total)
		}
	}
}

// The propagation bound of PortFC: B congestion at s0.0 port 0 (toward h0)
// pauses the b queues of h1..h3 toward h0 (hop 2), their relays pause the
// A queues of the level-1 switches behind them that lead to h0 (hop 3), and
// those switches' own A congestion pauses the a queues of their servers
// (still hop 3 of the A class, which servers never relay). Nothing else is
// ever paused.
func TestPortFCPropagationBound(t *testing.T) { validRun(t, portFCPropagationBound) }

func portFCPropagationBound(t testing.TB) {
	tp := bcube.MustNew(4, 1)
	order, _ := tp.ParsePolicy("1,0") // correct level 1 first: h5 -> h0 relays at h1
	f, err := New(tp, Options{RateBps: fcRate, FC: PortFC(fcTh, false), Policy: order})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	watch(t, f)
	// Incast into h0 from h1..h3 (2-hop), plus h5, h6, h7 -> h0 (4-hop,
	// relayed by h1, h2, h3 through s1.1, s1.2, s1.3).
	flows := [][2]int{{1, 0}, {2, 0}, {3, 0}, {5, 0}, {6, 0}, {7, 0}}
	startFlows(t, f, flows, 400*time.Millisecond)
	sinks := waitFlows(t, f, flows, 15*time.Second)
	for _, s := range sinks[0] {
		if s.Gaps != 0 {
			t.Errorf("flow from h%d lost %d frames", s.Src, s.Gaps)
		}
	}
	if n, where := fabricDrops(f); n != 0 {
		t.Errorf("%d drops: %v", n, where)
	}
	// Every queue that was ever paused, as "node port queue".
	paused := map[string]bool{}
	for i, e := range f.Hosts {
		ps, _ := e.Snapshot()
		for _, p := range ps {
			for _, q := range p.Queues {
				if q.PausedNs > 0 {
					paused[fmt.Sprintf("h%d %s %s", i, p.Name, q.Name)] = true
				}
			}
		}
	}
	for i, e := range f.Sws {
		ps, _ := e.Snapshot()
		l, w := i/tp.SwitchesPerLevel(), i%tp.SwitchesPerLevel()
		for _, p := range ps {
			for _, q := range p.Queues {
				if q.PausedNs > 0 {
					paused[fmt.Sprintf("%s %s %s", bcube.SwitchName(l, w), p.Name, q.Name)] = true
				}
			}
		}
	}
	// Allowed: hop 2, the b queue of h1..h3's port 0 toward h0 (b0: h0's
	// digit 0 is 0, compressed against theirs); hop 3, the A queue of the
	// level-1 switch port toward h1..h3 for their relaying to s0.0 port 0
	// (A0), and the a queue toward that port of the servers on those
	// level-1 switches (port 1, a0 for h0's digit 1 = 0).
	allowed := map[string]bool{}
	for y := 1; y <= 3; y++ {
		allowed[fmt.Sprintf("h%d eth0 b0", y)] = true
		w, p := tp.SwitchOf(y, 1)
		allowed[fmt.Sprintf("%s p%d A%d", bcube.SwitchName(1, w), p, bcube.Compress(0, tp.Digit(y, 0)))] = true
		for pp := 0; pp < tp.N(); pp++ {
			if x := tp.ServerAt(1, w, pp); x != y {
				allowed[fmt.Sprintf("h%d eth1 a%d", x, bcube.Compress(p, tp.Digit(x, 1)))] = true
			}
		}
	}
	var got []string
	for k := range paused {
		got = append(got, k)
		if !allowed[k] {
			t.Errorf("paused beyond the bound: %s", k)
		}
	}
	sort.Strings(got)
	t.Logf("paused: %v", got)
	for _, must := range []string{"h1 eth0 b0", "s1.1 p0 A0"} {
		if !paused[must] {
			t.Errorf("%s was never paused: B congestion did not propagate as PortFC says", must)
		}
	}
}

// The loop scenario of DESIGN §9 on BCube(2,1): background flows from the
// start, then four 4-hop flows whose routes form a cycle (h0->h3 via h1,
// h3->h0 via h2, h1->h2 via h3, h2->h1 via h0). Under PortFC every flow
// keeps moving — no deadlock — and nothing is dropped, with the relay
// queue served strictly (the default) or in the round with a and b, where
// only its guard keeps the relays from overflowing.
func TestPortFCLoopKeepsMoving(t *testing.T) {
	t.Run("strict", func(t *testing.T) { validRun(t, func(t testing.TB) { portFCLoop(t, false) }) })
	t.Run("drr", func(t *testing.T) { validRun(t, func(t testing.TB) { portFCLoop(t, true) }) })
}

func portFCLoop(t testing.TB, drr bool) {
	tp := bcube.MustNew(2, 1)
	f, err := New(tp, Options{RateBps: fcRate, FC: PortFC(fcTh, drr)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	watch(t, f)
	start := func(src, dst int, order string, dur time.Duration) {
		t.Helper()
		g, err := f.HostLogic[src].StartFlow(api.GenRequest{Dst: dst, Duration: int64(dur), Order: order})
		if err != nil {
			t.Fatal(err)
		}
		if order != "" && g.Order != order {
			t.Fatalf("h%d->h%d routed %s, want %s", src, dst, g.Order, order)
		}
	}
	// Background: 2-hop flows on every level.
	for _, fl := range [][2]int{{0, 1}, {2, 3}, {1, 3}, {2, 0}} {
		start(fl[0], fl[1], "", 1500*time.Millisecond)
	}
	f.RunFor(300 * time.Millisecond)
	loop := []struct {
		src, dst int
		order    string
	}{{0, 3, "0,1"}, {3, 0, "0,1"}, {1, 2, "1,0"}, {2, 1, "1,0"}}
	for _, l := range loop {
		start(l.src, l.dst, l.order, 1200*time.Millisecond)
	}
	bytesAt := func() map[string]uint64 {
		m := map[string]uint64{}
		for i := range f.HostLogic {
			for _, s := range f.HostLogic[i].Flows().Sink {
				m[fmt.Sprintf("h%d->h%d", s.Src, i)] = s.Bytes
			}
		}
		return m
	}
	f.RunFor(500 * time.Millisecond)
	b1 := bytesAt()
	f.RunFor(400 * time.Millisecond)
	b2 := bytesAt()
	if len(b2) != 8 {
		t.Fatalf("%d flows heard, want 8: %v", len(b2), b2)
	}
	for k, v := range b2 {
		moved := v - b1[k]
		t.Logf("%s moved %d bytes in 400 ms", k, moved)
		if moved == 0 {
			t.Errorf("%s stopped: deadlock", k)
		}
	}
	f.RunFor(700 * time.Millisecond)
	if n, where := fabricDrops(f); n != 0 {
		t.Errorf("%d drops: %v", n, where)
	}
}

// Lost signals never stall a queue. With the first transmission of every
// Resume and a third of all other signal frames lost on the cables, the
// incast still completes at line rate: the Resume's repetitions resume
// the sources within a refresh or two, and the repeated states hold them
// back, with nothing else lost. With every Resume lost (repetitions
// too), sources resume when their pause lapses at the hold (a short one
// here, 3 refreshes).
func TestPortFCLostSignals(t *testing.T) {
	short := fcTh
	short.Hold = 3 * short.Refresh
	for _, c := range []struct {
		name string
		th   signaling.Thresholds
		// all: lose every Resume; else only a Resume that follows
		// another type of signal of the same (receiver, class, port).
		all bool
	}{
		{"first resumes lost", fcTh, false},
		{"every resume lost, short hold", short, true},
	} {
		t.Run(c.name, func(t *testing.T) { validRun(t, func(t testing.TB) { portFCLostSignals(t, c.th, c.all) }) })
	}
}

func portFCLostSignals(t testing.TB, th signaling.Thresholds, all bool) {
	tp := bcube.MustNew(4, 1)
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(7, 7))
	var lostResume, lostOther int
	type key struct {
		dst         [6]byte
		class, port uint8
	}
	last := map[key]uint8{} // the last signal type sent to a receiver about (class, port)
	lose := func(b []byte) bool {
		if !signaling.IsSignal(b) {
			return false
		}
		sig, err := signaling.ParseSignal(b)
		if err != nil {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		k := key{[6]byte(sig.Dst()), sig.Class(), sig.Port()}
		prev := last[k]
		last[k] = sig.Type()
		if sig.Type() == signaling.TypeResume && (all || prev != signaling.TypeResume) {
			lostResume++
			return true
		}
		// A third of the other signals (pauses and states; not a
		// Resume's repetitions, whose job this case tests: losing all
		// of them is the other case) are lost too.
		if sig.Type() != signaling.TypeResume && rng.IntN(3) == 0 {
			lostOther++
			return true
		}
		return false
	}
	f, err := New(tp, Options{RateBps: fcRate, FC: PortFC(th, false), Lose: lose})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	watch(t, f)
	bytes := incast(t, f, 400*time.Millisecond)
	mu.Lock()
	t.Logf("lost %d resumes and %d other signals; h0 received %d bytes (%.1f Mb/s)", lostResume, lostOther, bytes, float64(bytes)*8/0.4/1e6)
	mu.Unlock()
	if lostResume == 0 {
		t.Fatal("no Resume was sent, so none was lost: the test proves nothing")
	}
	// The link into h0 stays busy: a stalled source would show here.
	if rate := float64(bytes) * 8 / 0.4; rate < 0.7*fcRate {
		t.Errorf("h0 received %.1f Mb/s of %.0f: sources stalled", rate/1e6, fcRate/1e6)
	}
	// And once the flows end, no queue is left paused: the repetitions
	// repaired every lost Resume, or the (short) hold ended the pause.
	wait := time.Duration(th.HoldNs())
	if !all {
		wait = time.Duration((signaling.ResumeRepeats + 1) * th.Refresh)
	}
	// Polled to a deadline of that time and a margin (the margin kept
	// from when the engines ran on real time and woke late): a queue
	// still paused with frames after it is stuck.
	var stuck []string
	if !f.Poll(10*time.Millisecond, wait+500*time.Millisecond, func() bool {
		stuck = nil
		for i, e := range f.Hosts {
			ps, _ := e.Snapshot()
			for _, p := range ps {
				for _, q := range p.Queues {
					if q.Paused && q.Packets > 0 {
						stuck = append(stuck, fmt.Sprintf("h%d %s %s still paused with %d frames", i, p.Name, q.Name, q.Packets))
					}
				}
			}
		}
		return len(stuck) == 0
	}) {
		t.Errorf("%v after the flows ended: %v", wait+500*time.Millisecond, stuck)
	}
}

// A relay between links of different rates (a Rail-only fabric, 160:100
// at 100 and 62.5 Mb/s): h0 -> h3 of BCube(2,1) in ascending level
// order enters its relay h1 on the fast level-0 link and leaves on the
// slow level-1 link. h1's guarded relay queue pauses s0.0's A queues
// toward it before its buffer overflows: nothing is dropped or lost.
// (Unguarded, the relay queue grows at 37.5 Mb/s: in a run with the
// guard turned off it reached 729 KB and h1 dropped 769 frames.)
func TestPortFCRelayAcrossUnequalLinks(t *testing.T) { validRun(t, portFCRelayAcrossUnequalLinks) }

func portFCRelayAcrossUnequalLinks(t testing.TB) {
	tp := bcube.MustNew(2, 1)
	pol, err := tp.ParsePolicy("ascending")
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(tp, Options{Rates: []uint64{100e6, 62.5e6}, FC: PortFC(fcTh, false), Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	watch(t, f)
	if h1 := f.HostLogic[1].Scheme().(*scheme.PortFCServer).State(); !h1.Guarded(1) || h1.Guarded(0) {
		t.Fatal("h1 guards the wrong relay queues: want its rail's (eth1) only")
	}
	flows := [][2]int{{0, 3}}
	startFlows(t, f, flows, 600*time.Millisecond)
	sinks := waitFlows(t, f, flows, 10*time.Second)
	if len(sinks[3]) != 1 || sinks[3][0].Gaps != 0 {
		t.Errorf("h3's sink: %+v", sinks[3])
	}
	if n, where := fabricDrops(f); n != 0 {
		t.Errorf("%d drops: %v", n, where)
	}
	ps, _ := f.Hosts[1].Snapshot()
	rq := ps[1].Queues[tp.ServerRQ()]
	sig := ps[0].Signals
	t.Logf("h3 received %d bytes; h1 eth1 RQ max %d B (X_off %d); h1 to s0.0: %d pauses, %d states, %d resumes",
		sinks[3][0].Bytes, rq.MaxBytes, fcTh.XoffB, sig["tx_pause_B"], sig["tx_state_B"], sig["tx_resume_B"])
	if sig["tx_pause_B"] == 0 {
		t.Fatal("the relay queue paused nothing")
	}
	// The guard's pauses leave by eth0, whose hooks time them; the
	// RQ class's peak is the relay queue's maximum.
	per := uint64(tp.N() - 1)
	if c := pauseTiming(t, "h1", ps[1], "RQ", per, fcRate); c.PeakBytes != rq.MaxBytes || c.Pauses*per != sig["tx_pause_B"] {
		t.Errorf("RQ peak %d B, queue max %d; %d pauses decided, %d frames sent", c.PeakBytes, rq.MaxBytes, c.Pauses, sig["tx_pause_B"])
	}
	// How far past X̂_off the queue goes was, on real time, the reaction
	// time of engines sharing two cores (TestPortFCIncast): logged, not
	// asserted; that nothing was dropped is the point.
}
