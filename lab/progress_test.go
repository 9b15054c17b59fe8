package lab

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/progress"
	"github.com/bcfab/bcfab/internal/testkit/clocktest"
	"github.com/bcfab/bcfab/model/scale"
)

// A run's progress as a bar's state: flows ended of all, the target's
// time of the window, D, the ETA and the health so far; its plain line
// says the health too, every time labelled.
func TestWorkloadProgressStateUnit(t *testing.T) {
	m := scale.Model{Target: scale.Papers(), D: 5000}
	p := WorkloadProgress{Elapsed: 3 * time.Second, Flows: 9, Started: 4, Running: 1, Completed: 3, Goodput: 41.2e6,
		Duration: 8 * time.Second, Drain: 10 * time.Second, Health: &Health{Valid: true}, Model: m}
	s := p.State()
	want := progress.State{Done: 3, Total: 9, Unit: "flows", Target: 600 * time.Microsecond, TargetTotal: 1600 * time.Microsecond, D: 5000,
		ETA: 6 * time.Second, Health: "health valid so far", Detail: "1 running, 206 Gbit/s in the target", Line: p.String()}
	if s != want {
		t.Errorf("state\n%+v, want\n%+v", s, want)
	}
	if got, want := p.String(), "600µs in the target (3.0s of lab time): 4/9 started, 1 running, 3 done, 0 failed, 206 Gbit/s in the target; emulation health valid so far"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	if bad := clocktest.Unlabelled(p.String()); len(bad) > 0 {
		t.Errorf("line: %q", bad)
	}
	bar := s.Bar(120)
	for _, w := range []string{"3/9 flows", "target 600µs of 1.6ms", "ETA 6s", "D = 5000", "health valid so far"} {
		if !strings.Contains(bar, w) {
			t.Errorf("bar %q lacks %q", bar, w)
		}
	}
	p.Health = &Health{Problems: []string{"XSK rings dropped 3 frames"}}
	if got := p.HealthText(); got != "health INVALID so far: XSK rings dropped 3 frames" {
		t.Errorf("invalid: %q", got)
	}
	if p.Health = nil; p.HealthText() != "" || strings.Contains(p.String(), "health") {
		t.Errorf("no sample yet: %q, %q", p.HealthText(), p.String())
	}
}

// The time left: the flows not ended at the pace of those ended, within
// the window left and the drain after it.
func TestWorkloadProgressLeftUnit(t *testing.T) {
	for _, c := range []struct {
		elapsed, duration, drain time.Duration
		ended, flows             int
		want                     time.Duration
	}{
		{3 * time.Second, 8 * time.Second, 10 * time.Second, 3, 9, 6 * time.Second},  // pace
		{3 * time.Second, 8 * time.Second, 10 * time.Second, 8, 9, 5 * time.Second},  // the window left
		{3 * time.Second, 8 * time.Second, 10 * time.Second, 0, 9, 15 * time.Second}, // nothing ended: the drain
		{9 * time.Second, 8 * time.Second, 10 * time.Second, 1, 9, 9 * time.Second},  // slow: the drain's end
		{20 * time.Second, 8 * time.Second, 10 * time.Second, 1, 9, 0},               // late flows
	} {
		p := WorkloadProgress{Elapsed: c.elapsed, Duration: c.duration, Drain: c.drain, Completed: c.ended, Flows: c.flows}
		if got := p.Left(); got != c.want {
			t.Errorf("%+v: left %v, want %v", c, got, c.want)
		}
	}
}

// The report's JSON gives the run's wall time and its cost per ms of the
// target, in snake_case.
func TestWorkloadCostJSONUnit(t *testing.T) {
	r := WorkloadReport{Elapsed: 10 * time.Second, TargetElapsed: 2 * time.Millisecond, Wall: 12 * time.Second}
	r.WallPerTargetMs = scale.WallPerTargetMs(r.Wall, r.TargetElapsed)
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"wall_ns":12000000000`, `"wall_s_per_target_ms":6`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("JSON lacks %s: %s", w, b)
		}
	}
	if got := (&WorkloadReport{Wall: time.Second}).CostText(); got != "" {
		t.Errorf("cost of a run with no model: %q", got)
	}
}
