package testtool

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
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
	sleep = func(time.Duration) {}
	cpuTimes = func() (uint64, uint64, error) { return 0, 0, nil } // calm
	wakeProbe = func(time.Duration) time.Duration { return 0 }
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

// waitCalm waits out windows with steal above calmSteal or a wake-up
// later than calmWake, stops at the first calm one, gives up after its
// budget, and judges the wake-ups alone where /proc/stat cannot be read.
func TestWaitCalm(t *testing.T) {
	defer func(c func() (uint64, uint64, error), w func(time.Duration) time.Duration) {
		cpuTimes, wakeProbe = c, w
	}(cpuTimes, wakeProbe)
	// Readings of (steal, total) ticks: windows of 400 ticks, the first
	// two with 40 and 20 stolen (10%, 5%), the third and fourth with 2
	// (0.5%); the probe's wake-ups are late by 1 ms, but by 30 ms in the
	// third window.
	reads := [][2]uint64{{0, 0}, {40, 400}, {60, 800}, {62, 1200}, {64, 1600}}
	wakes := []time.Duration{time.Millisecond, time.Millisecond, 30 * time.Millisecond, time.Millisecond}
	var i, w int
	cpuTimes = func() (uint64, uint64, error) {
		r := reads[min(i, len(reads)-1)]
		i++
		return r[0], r[1], nil
	}
	wakeProbe = func(d time.Duration) time.Duration {
		if d != calmWindow {
			t.Errorf("probed %v, want %v", d, calmWindow)
		}
		l := wakes[min(w, len(wakes)-1)]
		w++
		return l
	}
	c := waitCalm(time.Minute)
	if !c.OK || c.Waited != 4*calmWindow || c.Steal != 0.005 || c.Wake != time.Millisecond {
		t.Errorf("got %+v; want calm after 4 windows, steal 0.005, wake-ups 1ms late", c)
	}
	// Steal every window: it gives up after the budget.
	i, w = 0, 0
	reads = [][2]uint64{{0, 0}, {40, 400}, {80, 800}, {120, 1200}, {160, 1600}}
	c = waitCalm(2 * calmWindow)
	if c.OK || c.Waited != 2*calmWindow || c.Steal != 0.1 {
		t.Errorf("busy: got %+v; want 2 windows, steal 0.1, not calm", c)
	}
	if !strings.Contains(c.String(), "steal 10.0% of the CPUs' time and wake-ups up to 1ms late") {
		t.Errorf("busy: says %q", c)
	}
	// No /proc/stat: the wake-ups decide.
	cpuTimes = func() (uint64, uint64, error) { return 0, 0, errors.New("no /proc/stat") }
	w = 2
	if c := waitCalm(time.Minute); !c.OK || c.Waited != 2*calmWindow {
		t.Errorf("without /proc/stat: got %+v; want calm after 2 windows", c)
	}
}

// The probe measures the machine: on this one its threads wake, and
// their lateness is a duration, not a window's worth.
func TestProbeWake(t *testing.T) {
	if late := probeWake(100 * time.Millisecond); late < 0 || late > 100*time.Millisecond {
		t.Errorf("probe: latest wake-up %v late in a 100ms window", late)
	}
}
