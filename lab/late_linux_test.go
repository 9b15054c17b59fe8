package lab

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// The health monitor reports lateness it did not cause. A lab's worker
// stopped (SIGSTOP) for 300 ms while two flows keep s0.0's port toward h0
// backlogged is what a late machine does to it: the run's health is
// INVALID, and late (Health.Late: a rerun may be valid), naming a port
// that lost link time because its daemon was not scheduled in time, at
// least the part of the stop past the shaper's catch-up bound. The
// lossless scheme dropped nothing for it, and the worker runs on.
func TestHealthReportsLateWorker(t *testing.T) {
	s := realSpec(t, 2, 1)
	s.FC, s.RateBps = "portfc", 50e6
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	st, err := LoadState(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	w, ok := st.Worker("w0")
	if !ok || w.Pid == 0 {
		t.Fatalf("no worker w0 with a pid in the lab's state: %+v", st.Workers)
	}
	for _, src := range []string{"h1", "h2"} {
		if _, err := StartFlow(s.RunRoot, s.Name, src, api.GenRequest{Dst: 0, Duration: int64(3 * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, "both flows to reach h0", func() bool {
		r, err := Flows(s.RunRoot, s.Name, "h0")
		if err != nil || len(r.Sink) != 2 {
			return false
		}
		for _, f := range r.Sink {
			if f.Packets == 0 {
				return false
			}
		}
		return true
	})
	before, err := SampleHealth(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	const stop = 300 * time.Millisecond
	if err := syscall.Kill(w.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(stop)
	if err := syscall.Kill(w.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	after, err := SampleHealth(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	h := after.Since(before, 0, HealthLimits{})
	t.Logf("worker stopped for %v: %s", stop, h.Short())
	why, late := h.Late()
	if h.Valid || !late || !strings.Contains(why, "was not scheduled in time") {
		t.Errorf("health across the stop: valid %v, late %v (%q), problems %q; want INVALID and late, a port's lost link time named", h.Valid, late, why, h.Problems)
	}
	if h.Lost < stop/2 {
		t.Errorf("the worst port (%s) lost %v of link time in a %v stop", h.WorstPort, h.Lost, stop)
	}
	waitFor(t, 10*time.Second, "the flows to end", func() bool {
		for _, src := range []string{"h1", "h2"} {
			r, err := Flows(s.RunRoot, s.Name, src)
			if err != nil || len(r.Flows) != 1 || !r.Flows[0].Done {
				return false
			}
		}
		return true
	})
	checkNoDrops(t, s, true)
}
