//go:build linux

package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/progress"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/scale"
)

// The run's state while a workload point runs: the points done of all,
// the target's time of the points done and the running one's so far,
// its D, the ETA from the estimates scaled by the points so far, the
// points' health and the running one's; no lab needed.
func TestRunnerStatus(t *testing.T) {
	c, err := Parse([]byte(tiny), false)
	if err != nil {
		t.Fatal(err)
	}
	var got progress.State
	now := time.Now()
	x := &runner{c: c, o: RunOptions{Status: func(s progress.State) { got = s }}, n: 4, index: 1, point: c.Points()[1],
		total: 40 * time.Second, done: 10 * time.Second, t0: now.Add(-20 * time.Second), pointT0: now.Add(-5 * time.Second),
		valid: 1, target: 2 * time.Millisecond}
	m := scale.Model{Target: scale.Papers(), D: 5000}
	x.workloadStatus(lab.WorkloadProgress{Elapsed: 3 * time.Second, Flows: 9, Completed: 3, Running: 1, Duration: 8 * time.Second,
		Drain: 10 * time.Second, Health: &lab.Health{Valid: true}, Model: m})
	if got.Done != 1 || got.Total != 4 || got.Unit != "points" || got.Target != 2600*time.Microsecond || got.D != 5000 {
		t.Errorf("state %+v", got)
	}
	// 15 s of wall time for 10 s of estimates: 30 s x 1.5 for the
	// estimates left, less the 5 s of the running point.
	if want := 40 * time.Second; got.ETA < want-time.Second || got.ETA > want+time.Second {
		t.Errorf("ETA %v, want about %v", got.ETA, want)
	}
	if got.Health != "1 valid; this point's health valid so far" {
		t.Errorf("health %q", got.Health)
	}
	if !strings.HasPrefix(got.Detail, x.point.ID+": 3/9 flows, 1 running") {
		t.Errorf("detail %q", got.Detail)
	}
	if !strings.HasPrefix(got.Line, "  600µs in the target (3.0s of lab time): ") || !strings.Contains(got.Line, "(ETA 4") {
		t.Errorf("line %q", got.Line)
	}
	// Between points: the point's D, and the INVALID counted.
	x.invalid, x.pointD = 2, 200
	x.status(progress.State{Detail: "next"})
	if got.D != 200 || got.Health != "1 valid, 2 INVALID" || got.Target != 2*time.Millisecond || got.Line != "" {
		t.Errorf("between points: %+v", got)
	}
}
