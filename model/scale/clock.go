package scale

import (
	"fmt"
	"math"
	"time"

	"github.com/bcfab/bcfab/model/units"
)

// Every report reads what a lab measured on the target's clock: a time
// the lab took / D, a rate it carried x D, each labelled "in the
// target"; the lab's own value goes beside it, labelled "of lab time" or
// "in the lab", only where it helps (a duration the user gave, which is
// the lab's). The functions below print those labels, so that every
// command says the same words.

// TargetWord and LabWord label a value of the target's clock and of the
// lab's; WallWord a run's cost, which is the lab's clock too, all of
// the run's time counted (labs brought up, samples, reports).
const (
	TargetWord = "in the target"
	LabWord    = "of lab time"
	WallWord   = "of wall time"
)

// RoundTime rounds a time for people to four significant digits
// (3.286ms, 16.43s, 497ns).
func RoundTime(d time.Duration) time.Duration {
	a := d
	if a < 0 {
		a = -a
	}
	step := time.Duration(1)
	for a >= 10_000*step {
		step *= 10
	}
	return d.Round(step)
}

// TimeText is lab time t read on the target's clock, labelled:
// "1.6ms in the target".
func (m Model) TimeText(lab time.Duration) string {
	return fmt.Sprintf("%v %s", RoundTime(m.TargetTime(lab)), TargetWord)
}

// TimeBoth is lab time t on the target's clock with the lab's beside it:
// "1.6ms in the target (8s of lab time)".
func (m Model) TimeBoth(lab time.Duration) string {
	return fmt.Sprintf("%s (%v %s)", m.TimeText(lab), RoundTime(lab), LabWord)
}

// LabTimeText is a duration given in the lab's time (a flag's) with the
// target's beside it: "8s of lab time = 1.6ms in the target".
func (m Model) LabTimeText(lab time.Duration) string {
	return fmt.Sprintf("%v %s = %s", RoundTime(lab), LabWord, m.TimeText(lab))
}

// RateText is a rate the lab carried (bit/s) read on the target's
// clock, labelled: "91.5 Gbit/s in the target".
func (m Model) RateText(labBps float64) string {
	return FormatMeasuredRate(m.TargetRate(labBps)) + " " + TargetWord
}

// RateBoth is RateText with the lab's rate beside it: "91.5 Gbit/s in
// the target (18.3 Mbit/s in the lab)".
func (m Model) RateBoth(labBps float64) string {
	return fmt.Sprintf("%s (%s in the lab)", m.RateText(labBps), FormatMeasuredRate(labBps))
}

// FormatMeasuredRate prints a measured rate in bit/s; unlike a link
// rate, 0 is "0 bit/s", not "unshaped".
func FormatMeasuredRate(bps float64) string {
	if bps < 1 || math.IsNaN(bps) {
		return "0 bit/s"
	}
	return units.FormatRate(uint64(math.Round(bps)))
}

// WallPerTargetMs is what each ms of the target cost a run: the wall
// time it took (the lab's clock), in seconds, over the target's time it
// emulated, in ms; 0 when it emulated none. The least is D ms, the lab's
// time of one ms of the target; the rest is the run's own work (labs
// brought up and down, samples, reports).
func WallPerTargetMs(wall, target time.Duration) float64 {
	if target <= 0 {
		return 0
	}
	return wall.Seconds() / (float64(target) / float64(time.Millisecond))
}

// CostText is WallPerTargetMs labelled, with what it is of: "6.522s of
// wall time per ms in the target (21.43s of wall time for 3.286ms in
// the target)"; "" when the run emulated nothing.
func CostText(wall, target time.Duration) string {
	per := WallPerTargetMs(wall, target)
	if per == 0 {
		return ""
	}
	return fmt.Sprintf("%v %s per ms %s (%v %s for %v %s)", RoundTime(time.Duration(per*float64(time.Second))), WallWord, TargetWord,
		RoundTime(wall), WallWord, RoundTime(target), TargetWord)
}
