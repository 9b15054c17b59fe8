package testtool

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// lateScenario is set in the child test binary RetryLate's test runs: it
// names the sequence of attempt outcomes to play ("late", "ok", "fail").
const lateScenario = "TESTTOOL_LATE_SCENARIO"

// TestRetryLateChild plays one scenario in a child process (nothing when
// run on its own).
func TestRetryLateChild(t *testing.T) {
	plan := os.Getenv(lateScenario)
	if plan == "" {
		t.Skip("run by TestRetryLate")
	}
	backoff = 0 // the scenario's late attempts are played, not waited for
	steps := strings.Split(plan, ",")
	n := 0
	RetryLate(t, 3, func(t *testing.T) string {
		step := steps[n]
		n++
		t.Logf("playing %s", step)
		switch step {
		case "late":
			return "s0.0/p0 lost 31ms of link time: its daemon was not scheduled in time"
		case "fail":
			t.Fatal("3 frames dropped under a lossless scheme")
		}
		return ""
	})
}

// RetryLate passes on the first attempt that is not late, fails at once
// on a real failure (never running it again), and fails naming the
// lateness when every attempt was late; every late attempt is logged
// with its reason.
func TestRetryLate(t *testing.T) {
	for _, c := range []struct {
		plan     string
		pass     bool
		attempts int
		want     []string
	}{
		{"ok", true, 1, nil},
		{"late,late,ok", true, 3, []string{"attempt 1 of 3 was late, its run invalid: s0.0/p0 lost 31ms", "attempt 3 valid after 2 late"}},
		{"fail,ok", false, 1, []string{"3 frames dropped under a lossless scheme"}},
		{"late,fail,ok", false, 2, []string{"attempt 1 of 3 was late", "3 frames dropped"}},
		{"late,late,late", false, 3, []string{"the emulation was late in all 3 attempts", "attempt 3: s0.0/p0 lost 31ms of link time"}},
	} {
		t.Run(c.plan, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestRetryLateChild$", "-test.v")
			cmd.Env = append(os.Environ(), lateScenario+"="+c.plan)
			out, err := cmd.CombinedOutput()
			if (err == nil) != c.pass {
				t.Errorf("passed %v, want %v:\n%s", err == nil, c.pass, out)
			}
			if n := strings.Count(string(out), "playing "); n != c.attempts {
				t.Errorf("%d attempts, want %d:\n%s", n, c.attempts, out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("no %q in:\n%s", w, out)
				}
			}
		})
	}
}
