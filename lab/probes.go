package lab

import (
	"time"

	"github.com/bcfab/bcfab/model/scale"
)

// Calibration's bounds: it gathers probes for at most calibrateMax,
// until it has calibrateSamples round trips and two per link, reading
// the nodes' counters at most every calibratePollMin.
const (
	calibrateMax     = 5 * time.Second
	calibrateSamples = 100
	calibratePollMin = 10 * time.Millisecond
)

// calibrateBurst is how the ports of a lab of spec s with links cables
// probe while its delay lines are calibrated: n probes every apart, a
// tenth of the probe interval, then at the interval. Every cable's two
// ends probe, so n rounds give the calibration its samples with one
// round to spare: as many round trips a port as the interval's own
// probes gave, in a tenth of the time (at 100 ms, 0.7 s of a small lab's
// bring-up).
func calibrateBurst(s Spec, links int) (every time.Duration, n int) {
	interval := s.ProbeInterval
	if interval <= 0 {
		interval = scale.ProbeInterval
	}
	perRound := max(2*links, 1)
	want := max(calibrateSamples, 2*links)
	return interval / 10, (want+perRound-1)/perRound + 1
}
