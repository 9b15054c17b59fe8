package fabrictest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/node/api"
)

// attempt is the testing.TB of one run of a measured scenario: it keeps
// the run's failures and cleanups to itself, so that a run found invalid
// afterwards (Fabric.Health) can be thrown away whole.
type attempt struct {
	*testing.T
	failures []string
	cleanups []func()
	fabric   *Fabric
}

// errAbort ends an attempt at Fatal or FailNow.
var errAbort = fmt.Errorf("fabrictest: attempt aborted")

func (a *attempt) Error(args ...any) { a.failures = append(a.failures, fmt.Sprint(args...)) }
func (a *attempt) Errorf(format string, args ...any) {
	a.failures = append(a.failures, fmt.Sprintf(format, args...))
}
func (a *attempt) Fail()        { a.failures = append(a.failures, "failed") }
func (a *attempt) Failed() bool { return len(a.failures) > 0 }
func (a *attempt) FailNow()     { panic(errAbort) }
func (a *attempt) Fatal(args ...any) {
	a.Error(args...)
	panic(errAbort)
}
func (a *attempt) Fatalf(format string, args ...any) {
	a.Errorf(format, args...)
	panic(errAbort)
}
func (a *attempt) Cleanup(f func()) { a.cleanups = append(a.cleanups, f) }

// watch names the fabric whose health judges the run.
func watch(t testing.TB, f *Fabric) {
	if a, ok := t.(*attempt); ok {
		a.fabric = f
	}
}

// maxRuns bounds the runs of a measured scenario: as many as a lab
// test's late attempts (testtool.LateTries).
const maxRuns = testtool.LateTries

// validRun runs body, a scenario whose results depend on every node
// keeping up with its links, until one run is valid (its fabric, the one
// body passed to watch, lost no frame in a cable's receive ring and no
// port lost more than its share of link time), at most maxRuns times. A
// valid run counts whatever its checks said. An invalid run measured the
// machine, not the fabric, as a lab drops an invalid run's numbers: it
// never passes, whatever its checks said; it is logged with its lateness
// and, after a pause for a burst of lateness to pass (testtool's
// LateBackoff, then twice that), the scenario runs again on a fresh
// fabric. maxRuns invalid runs fail the test, naming each run's lateness
// (docs/TESTING.md says why the in-process fabrics are so often
// invalid).
func validRun(t *testing.T, body func(t testing.TB)) {
	t.Helper()
	var late []string
	for run := 1; ; run++ {
		a := &attempt{T: t}
		aborted := func() (aborted bool) {
			defer func() {
				if r := recover(); r != nil {
					if r != errAbort {
						panic(r)
					}
					aborted = true
				}
			}()
			body(a)
			return false
		}()
		var h Health
		if a.fabric != nil {
			h = a.fabric.Health()
		}
		for _, c := range slices.Backward(a.cleanups) {
			c()
		}
		if a.fabric == nil {
			t.Fatal("fabrictest: the scenario watched no fabric")
		}
		if h.Valid() {
			if len(a.failures) == 0 && !aborted {
				t.Logf("run %d valid, passed: %s", run, h)
				return
			}
			t.Logf("run %d valid: %s", run, h)
			for _, f := range a.failures {
				t.Error(f)
			}
			if aborted {
				t.FailNow()
			}
			return
		}
		t.Logf("run %d of %d invalid, its checks not counted (they said %q): %s", run, maxRuns, a.failures, h)
		late = append(late, fmt.Sprintf("run %d: %s", run, h))
		if run == maxRuns {
			t.Fatalf("all %d runs were invalid, so nothing was shown either way; the machine was late for this test:\n  %s", run, strings.Join(late, "\n  "))
		}
		time.Sleep(time.Duration(run) * testtool.LateBackoff)
	}
}

// drained waits until no queue of any node holds a frame and h's sinks
// stop growing, or fails t after limit.
func drained(t testing.TB, f *Fabric, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last uint64
	quiet := 0
	for quiet < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the fabric did not drain in %v; queues holding frames: %v", limit, heldQueues(f))
		}
		time.Sleep(20 * time.Millisecond)
		held := false
		eachQueue(f, func(_, _ string, q api.QueueStats) { held = held || q.Packets > 0 })
		var got uint64
		for _, h := range f.HostLogic {
			for _, s := range h.Flows().Sink {
				got += s.Packets
			}
		}
		if held || got != last {
			quiet = 0
		} else {
			quiet++
		}
		last = got
	}
}
