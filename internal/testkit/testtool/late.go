package testtool

import (
	"fmt"
	"testing"
	"time"
)

// LateTries is how many times RetryLate runs a run the machine was late
// for before the test fails.
const LateTries = 4

// LateBackoff is how long RetryLate waits before its second attempt,
// twice that before its third, and so on: the bursts of lateness
// measured on the suite's machine lasted from seconds to minutes, and
// four attempts within one of them would fail the test for nothing.
const LateBackoff = 10 * time.Second

// backoff is LateBackoff but in RetryLate's own test.
var backoff = LateBackoff

// RetryLate runs attempt, a test of something the product promises on a
// lab (a recipe's output, a lossless scheme's delivery, a measured
// bound), until one attempt is not late, at most tries times (0:
// LateTries). Each attempt is a subtest of its own ("attempt1", ...), so
// its labs, temporary directories and other cleanups are gone before the
// next one starts.
//
// An attempt classifies its own run:
//
//   - it fails its t (Error, Fatal) for a real failure: a lossless scheme
//     dropped a frame, a command printed the wrong thing, a process died.
//     The test fails at once; the attempt is never run again.
//   - it returns the reason its run was invalid because the emulation
//     fell behind (a port lost link time to a late daemon or worker, a
//     kernel ring overflowed: lab.Health.Late, lab.Lateness). What such a
//     run measured is the machine, so the attempt checks nothing that
//     depends on timing; it is logged with its reason and run again.
//   - it returns "" after checking everything on a valid run.
//
// When every attempt was late the test fails naming the lateness: a run
// the machine was late for is never a pass.
func RetryLate(t *testing.T, tries int, attempt func(t *testing.T) (late string)) {
	t.Helper()
	if tries <= 0 {
		tries = LateTries
	}
	var late []string
	for try := 1; try <= tries; try++ {
		if try > 1 {
			// A machine's lateness comes in bursts (the host's load,
			// another process's compile): give it time to pass, and
			// then wait for the machine to be on time again.
			sleep(time.Duration(try-1) * backoff)
			c := waitCalm(calmBudget)
			switch {
			case !c.OK:
				t.Logf("attempt %d runs on a machine still busy after %v: %v", try, c.Waited, c)
			case c.Waited > calmWindow:
				t.Logf("attempt %d waited %v for the machine to calm down (%v)", try, c.Waited, c)
			}
		}
		var why string
		ok := t.Run(fmt.Sprintf("attempt%d", try), func(t *testing.T) {
			why = attempt(t)
			if why != "" && !t.Failed() {
				// Not a failure of the product, not a pass either: the
				// parent test goes on to the next attempt, or fails.
				t.Skipf("late (run again): %s", why)
			}
		})
		if !ok {
			t.FailNow() // a real failure: the subtest said what
		}
		if why == "" {
			if try > 1 {
				t.Logf("attempt %d valid after %d late", try, try-1)
			}
			return
		}
		late = append(late, why)
		t.Logf("attempt %d of %d was late, its run invalid: %s", try, tries, why)
	}
	msg := fmt.Sprintf("the emulation was late in all %d attempts, so nothing was shown either way; the machine is too busy for this test (or the lab too large for it):", tries)
	for i, why := range late {
		msg += fmt.Sprintf("\n  attempt %d: %s", i+1, why)
	}
	t.Fatal(msg)
}
