package fabrictest

import (
	"slices"
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// pauseTiming checks class of port p's fc_timing after a run that has
// settled: it paused at X_off or above and resumed at X_on or below;
// each pause's frames (per of them) were all timed but perhaps the
// last pause's, still queued; its peak is the greatest charge seen. It
// returns the class, and logs its latencies.
func pauseTiming(t testing.TB, node string, p api.PortStats, class string, per uint64) api.FCClass {
	t.Helper()
	if p.FCTiming == nil {
		t.Errorf("%s %s: no fc_timing", node, p.Name)
		return api.FCClass{}
	}
	i := slices.IndexFunc(p.FCTiming.Classes, func(c api.FCClass) bool { return c.Class == class })
	if i < 0 {
		t.Errorf("%s %s: no class %s in %+v", node, p.Name, class, p.FCTiming.Classes)
		return api.FCClass{}
	}
	c := p.FCTiming.Classes[i]
	l := c.PauseLatNs
	t.Logf("%s %s %s: %d pauses at %d..%d B (X_off %d), %d refreshes, %d resumes at %d..%d B (X_on %d), peak %d B; "+
		"%d frames timed, mean %v, max %v, %d untimed",
		node, p.Name, class, c.Pauses, c.AtPauseMinBytes, c.AtPauseMaxBytes, c.XoffBytes, c.Refreshes,
		c.Resumes, c.AtResumeMinBytes, c.AtResumeMaxBytes, c.XonBytes, c.PeakBytes,
		l.Count, time.Duration(l.Mean()), time.Duration(l.Max), l.Untimed)
	switch {
	case c.Pauses > 0 && c.AtPauseMinBytes < c.XoffBytes:
		t.Errorf("%s %s %s: paused at %d B, below X_off %d", node, p.Name, class, c.AtPauseMinBytes, c.XoffBytes)
	case c.Resumes > 0 && c.AtResumeMaxBytes > c.XonBytes:
		t.Errorf("%s %s %s: resumed at %d B, above X_on %d", node, p.Name, class, c.AtResumeMaxBytes, c.XonBytes)
	case c.PeakBytes < c.AtPauseMaxBytes:
		t.Errorf("%s %s %s: peak %d B below a pause's %d", node, p.Name, class, c.PeakBytes, c.AtPauseMaxBytes)
	case l.Untimed != 0 || l.Count > c.Pauses*per || l.Count+per < c.Pauses*per:
		t.Errorf("%s %s %s: %d pauses of %d frames, %d timed, %d untimed", node, p.Name, class, c.Pauses, per, l.Count, l.Untimed)
	}
	return c
}
