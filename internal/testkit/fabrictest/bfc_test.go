package fabrictest

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/signaling"
)

// BFC on 100 Mb/s in-process links: 32 queues, a one-hop BDP of 250 us.
// The sticky time is long (50 ms, not 2 RTTs): chosen when the nodes ran
// on real time and went unscheduled for milliseconds, and kept, since a
// flow idle that long would rightly move to another queue, which this
// test does not look at.
var bfcCfg = signaling.BFCConfig{Queues: 32, TableSize: 3200, Sticky: 50_000_000, Refresh: 1_000_000, BDP: 3125}

// Incast 3 -> 1 under BFC: s0.0 gives each flow a queue of its own toward
// h0 and pauses the upstream queue of each source once its queue passes
// Th. Nothing is dropped or lost, although the sources offer three times
// what h0's link carries (without backpressure the 1 MiB buffer
// overflows within 50 ms).
func TestBFCIncast(t *testing.T) { validRun(t, bfcIncast) }

func bfcIncast(t testing.TB) {
	f, err := New(bcube.MustNew(4, 1), Options{RateBps: fcRate, FC: BFC(bfcCfg), Watchdog: watchdog})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	watch(t, f)
	bytes := incast(t, f, 500*time.Millisecond)
	if n, where := fabricDrops(f); n != 0 {
		t.Errorf("%d drops: %v", n, where)
	}
	sw := f.SwitchLogic[0].Scheme().(*scheme.BFC).State() // s0.0
	var pause, resume, rx uint64
	for p := 1; p < 4; p++ {
		pause += sw.B.C[p].TxPause
		resume += sw.B.C[p].TxResume
		rx += f.HostLogic[p].Scheme().(*scheme.BFC).State().B.C[0].RxPause
	}
	ps, _ := f.Sws[0].Snapshot()
	var used, maxq int
	for _, q := range ps[0].Queues[:bfcCfg.Queues-1] {
		if q.EnqPackets > 0 {
			used++
			maxq = max(maxq, q.MaxBytes)
		}
	}
	t.Logf("h0 received %.1f Mb/s over %d queues of s0.0 p0 (deepest %d bytes); s0.0 sent %d pauses and %d resumes, h1..h3 received %d",
		float64(bytes)*8/0.5/1e6, used, maxq, pause, resume, rx)
	// Each flow takes a queue of its own; one whose queue stayed empty
	// longer than the sticky time (its upstream paused, or a node served
	// late) gives it up and may get another, so more than 3 is BFC too.
	if used < 3 {
		t.Errorf("the three flows used %d queues of s0.0 p0, want one each", used)
	}
	if pause == 0 || resume == 0 || rx == 0 {
		t.Error("no pause went out and arrived: the incast was not flow-controlled")
	}
	if maxq > 512<<10 {
		t.Errorf("deepest queue %d bytes: backpressure did not hold it", maxq)
	}
	if rate := float64(bytes) * 8 / 0.5; rate < 0.7*fcRate {
		t.Errorf("h0 received %.1f Mb/s of %.0f", rate/1e6, fcRate/1e6)
	}
	if s := stalls(f); len(s) != 0 {
		t.Errorf("watchdog reports stalls after an incast: %v", s)
	}
}
