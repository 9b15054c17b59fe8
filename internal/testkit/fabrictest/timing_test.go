package fabrictest

import (
	"slices"
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/queues"
)

// maxTrip is a pause's longest round trip on a link without delay, in
// bytes of the link: the frame on the wire ahead of the pause frame (at
// most 1514 bytes and queues.WireOverhead), the pause frame (a minimum
// frame), and the frame the sender had started.
const maxTrip = 2*(1514+queues.WireOverhead) + 60 + queues.WireOverhead

// pauseTiming checks class of port p's fc_timing after a run that has
// settled: it paused at X_off or above and resumed at X_on or below;
// each pause's frames (per of them) were all timed but perhaps the
// last pause's, still queued; its peak is the greatest charge seen; and
// on the links of rateBps, without delay, on virtual time, every pause's
// round trip (its frame out behind the one on the wire, the senders'
// frame on the wire) ended within maxTrip of rateBps. The overshoot is
// logged, not bounded: a node takes the frames that reached it since its
// last pass at one instant, and those after the crossing count (a
// PortFC switch's B queue grows 8 frames at the instant of its pause in
// TestPortFCIncast). It returns the class, and logs its latencies.
func pauseTiming(t testing.TB, node string, p api.PortStats, class string, per uint64, rateBps float64) api.FCClass {
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
	l, trip := c.PauseLatNs, c.TripNs
	t.Logf("%s %s %s: %d pauses at %d..%d B (X_off %d), %d refreshes, %d resumes at %d..%d B (X_on %d), peak %d B; "+
		"%d frames timed, mean %v, max %v, %d untimed; %d round trips, mean %v, max %v, overshoot %d B",
		node, p.Name, class, c.Pauses, c.AtPauseMinBytes, c.AtPauseMaxBytes, c.XoffBytes, c.Refreshes,
		c.Resumes, c.AtResumeMinBytes, c.AtResumeMaxBytes, c.XonBytes, c.PeakBytes,
		l.Count, time.Duration(l.Mean()), time.Duration(l.Max), l.Untimed,
		trip.Count, time.Duration(trip.Mean()), time.Duration(trip.Max), c.OvershootBytes)
	bound := time.Duration(maxTrip * 8 / rateBps * 1e9)
	switch {
	case c.Resumes > 0 && trip.Count == 0:
		t.Errorf("%s %s %s: %d pauses resumed, no round trip timed", node, p.Name, class, c.Resumes)
	case time.Duration(trip.Max) > bound:
		t.Errorf("%s %s %s: a pause's round trip took %v, past two full frames and a pause frame at the link's rate (%v)", node, p.Name, class, time.Duration(trip.Max), bound)
	}
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
