package fabrictest

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/signaling"
)

// PFC thresholds for 100 Mb/s in-process links, lossless priority 3.
var pfcTh = signaling.PFCThresholds{Xoff: 30000, Xon: 20000, Lossless: 1 << signaling.PCPData}

// PFC*'s on BCube(n,1): priorities 3 and 4.
var pfcStarTh = signaling.PFCThresholds{Xoff: 30000, Xon: 20000, Lossless: 1<<signaling.PCPData | 1<<(signaling.PCPData+1)}

var watchdog = config.Watchdog{Detect: 200 * time.Millisecond}

// nodeName names node i of fabricDrops' order: hosts, then switches.
func nodeName(f *Fabric, i int) string {
	if i < len(f.Hosts) {
		return bcube.HostName(i)
	}
	i -= len(f.Hosts)
	return bcube.SwitchName(i/f.T.SwitchesPerLevel(), i%f.T.SwitchesPerLevel())
}

// stalls lists "node port queue" of every queue the watchdog reports
// stalled now.
func stalls(f *Fabric) []string {
	var out []string
	eachQueue(f, func(node, port string, q api.QueueStats) {
		if q.Stalled {
			out = append(out, fmt.Sprintf("%s %s %s", node, port, q.Name))
		}
	})
	sort.Strings(out)
	return out
}

// Incast 3 -> 1 under PFC: s0.0 pauses the three sources' priority 3
// before its buffer overflows; nothing is dropped or lost.
func TestPFCIncast(t *testing.T) { validRun(t, pfcIncast) }

func pfcIncast(t testing.TB) {
	tp := bcube.MustNew(4, 1)
	f, err := New(tp, Options{RateBps: fcRate, FC: PFC(pfcTh, fcRate, false), Watchdog: watchdog})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	watch(t, f)
	bytes := incast(t, f, 500*time.Millisecond)
	if n, where := fabricDrops(f); n != 0 {
		t.Errorf("%d drops: %v", n, where)
	}
	sw := f.SwitchLogic[0].Scheme().(*scheme.PFC).State() // s0.0
	var xoff, xon uint64
	for p := 1; p < 4; p++ {
		xoff += sw.C[p].TxXoff[signaling.PCPData]
		xon += sw.C[p].TxXon[signaling.PCPData]
	}
	var rx uint64
	for h := 1; h < 4; h++ {
		rx += f.HostLogic[h].Scheme().(*scheme.PFC).State().C[0].RxXoff[signaling.PCPData]
	}
	t.Logf("h0 received %.1f Mb/s; s0.0 sent %d X_off and %d X_on to h1..h3, which received %d X_off", float64(bytes)*8/0.5/1e6, xoff, xon, rx)
	if xoff == 0 || xon == 0 || rx == 0 {
		t.Error("no pause frames went out and arrived: the incast was not flow-controlled")
	}
	// Each X_off is timed to its departure, charged at X_off, and the
	// count of decisions is the count of X_offs sent.
	ps, _ := f.Sws[0].Snapshot()
	var pauses uint64
	for p := 1; p < 4; p++ {
		pauses += pauseTiming(t, "s0.0", ps[p], "P3", 1, fcRate).Pauses
	}
	if pauses != xoff {
		t.Errorf("%d pauses decided, %d X_offs sent", pauses, xoff)
	}
	if rate := float64(bytes) * 8 / 0.5; rate < 0.7*fcRate {
		t.Errorf("h0 received %.1f Mb/s of %.0f", rate/1e6, fcRate/1e6)
	}
	if s := stalls(f); len(s) != 0 {
		t.Errorf("watchdog reports stalls after an incast: %v", s)
	}
}

// loopRun runs DESIGN §9's loop scenario on an in-process BCube(2,1):
// background 2-hop flows, one on each link of the cycle (h0->h1 over
// s0.0, h1->h3 over s1.1, h3->h2 over s0.1, h2->h0 over s1.0), and from
// 300 ms on the four 4-hop flows whose routes form that cycle. It returns the bytes each background flow moved
// in the window [start+500ms, start+1s] after the loop flows started.
func loopRun(t testing.TB, f *Fabric) map[string]uint64 {
	t.Helper()
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
	background := [][2]int{{0, 1}, {1, 3}, {3, 2}, {2, 0}}
	for _, fl := range background {
		start(fl[0], fl[1], "", 3*time.Second)
	}
	f.RunFor(300 * time.Millisecond)
	for _, l := range []struct {
		src, dst int
		order    string
	}{{0, 3, "0,1"}, {3, 0, "0,1"}, {1, 2, "1,0"}, {2, 1, "1,0"}} {
		start(l.src, l.dst, l.order, 3*time.Second)
	}
	bytesAt := func() map[string]uint64 {
		m := map[string]uint64{}
		for _, fl := range background {
			for _, s := range f.HostLogic[fl[1]].Flows().Sink {
				if s.Src == fl[0] {
					m[fmt.Sprintf("h%d->h%d", fl[0], fl[1])] = s.Bytes
				}
			}
		}
		return m
	}
	f.RunFor(500 * time.Millisecond)
	b1 := bytesAt()
	f.RunFor(500 * time.Millisecond)
	b2 := bytesAt()
	out := map[string]uint64{}
	for _, fl := range background {
		k := fmt.Sprintf("h%d->h%d", fl[0], fl[1])
		out[k] = b2[k] - b1[k]
	}
	return out
}

// Under plain PFC the loop deadlocks: every background flow stops within
// a second of the loop flows starting, and the watchdog reports stalled
// queues on all four switches and all four servers — the cycle.
func TestPFCLoopDeadlocks(t *testing.T) { validRun(t, pFCLoopDeadlocks) }

func pFCLoopDeadlocks(t testing.TB) {
	f, err := New(bcube.MustNew(2, 1), Options{RateBps: fcRate, FC: PFC(pfcTh, fcRate, false), Watchdog: watchdog})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	watch(t, f)
	moved := loopRun(t, f)
	for k, v := range moved {
		t.Logf("%s: %d bytes in 500 ms", k, v)
		if v != 0 {
			t.Errorf("%s still moves under PFC: no deadlock", k)
		}
	}
	s := stalls(f)
	t.Logf("stalled: %s", strings.Join(s, ", "))
	nodes := map[string]bool{}
	for _, x := range s {
		nodes[strings.Fields(x)[0]] = true
	}
	for i := range 4 {
		for _, n := range []string{bcube.HostName(i), bcube.SwitchName(i/2, i%2)} {
			if !nodes[n] {
				t.Errorf("watchdog reports no stall on %s: the cycle must span all eight nodes", n)
			}
		}
	}
	if n, where := fabricDrops(f); n != 0 {
		t.Errorf("%d drops: %v", n, where)
	}
}

// PFC* on the same scenario: relays raise the priority, nothing
// deadlocks, nothing is dropped.
func TestPFCStarLoopKeepsMoving(t *testing.T) { validRun(t, pFCStarLoopKeepsMoving) }

func pFCStarLoopKeepsMoving(t testing.TB) {
	f, err := New(bcube.MustNew(2, 1), Options{RateBps: fcRate, FC: PFC(pfcStarTh, fcRate, true), Watchdog: watchdog})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	watch(t, f)
	moved := loopRun(t, f)
	for k, v := range moved {
		t.Logf("%s: %d bytes in 500 ms", k, v)
		if v == 0 {
			t.Errorf("%s stopped under PFC*: deadlock", k)
		}
	}
	if s := stalls(f); len(s) != 0 {
		t.Errorf("watchdog reports stalls: %v", s)
	}
	if n, where := fabricDrops(f); n != 0 {
		t.Errorf("%d drops: %v", n, where)
	}
}

// With the watchdog's forward action on, a PFC deadlock does not last:
// stalled queues ignore pauses for the restoration time, the cycle
// drains, and the background flows move again.
func TestWatchdogRecoveryBreaksDeadlock(t *testing.T) { validRun(t, watchdogRecoveryBreaksDeadlock) }

func watchdogRecoveryBreaksDeadlock(t testing.TB) {
	wd := config.Watchdog{Detect: 100 * time.Millisecond, Restore: 200 * time.Millisecond, Action: config.WatchdogForward}
	f, err := New(bcube.MustNew(2, 1), Options{RateBps: fcRate, FC: PFC(pfcTh, fcRate, false), Watchdog: wd})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	watch(t, f)
	moved := loopRun(t, f)
	var total uint64
	for k, v := range moved {
		t.Logf("%s: %d bytes in 500 ms", k, v)
		total += v
	}
	var stalls, ignored uint64
	for _, e := range append(append([]*dataplane.Engine{}, f.Hosts...), f.Sws...) {
		ps, _ := e.Snapshot()
		for _, p := range ps {
			for _, q := range p.Queues {
				stalls += q.Stalls
				ignored += q.IgnoredPauses
			}
		}
	}
	t.Logf("background moved %d bytes in 500 ms; %d stalls found, %d pauses ignored", total, stalls, ignored)
	if stalls == 0 {
		t.Fatal("the watchdog found no stall: the loop did not deadlock, the test proves nothing")
	}
	if total < 500_000 {
		t.Errorf("background moved %d bytes in 500 ms (%.1f Mb/s): the watchdog did not break the deadlock", total, float64(total)*8/0.5/1e6)
	}
}
