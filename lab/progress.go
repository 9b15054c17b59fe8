package lab

import (
	"fmt"
	"time"

	"github.com/bcfab/bcfab/internal/progress"
	"github.com/bcfab/bcfab/model/scale"
)

// WorkloadProgress is the state of a run at one poll.
type WorkloadProgress struct {
	Elapsed   time.Duration `json:"elapsed_ns"`
	Flows     int           `json:"flows"`
	Started   int           `json:"started"`
	Running   int           `json:"running"`
	Completed int           `json:"completed"`
	Failed    int           `json:"failed"`
	// AckedBytes counts the bytes acknowledged so far, all flows
	// together; Goodput is its rate since the previous poll, in the lab.
	AckedBytes int64   `json:"acked_bytes"`
	Goodput    float64 `json:"goodput_bps"`
	// Duration is the schedule's window and Drain the drain time after
	// the last start, in lab time: the run ends by about Duration +
	// Drain (flows that wait for a group may start later).
	Duration time.Duration `json:"duration_ns"`
	Drain    time.Duration `json:"drain_ns"`
	// Health is the emulation health so far: from the run's first
	// sample to its latest queue sample (nil: none yet).
	Health *Health `json:"health,omitempty"`
	// Model is the lab's, which String reads the times and rate in (a
	// zero Model: the lab's own).
	Model scale.Model `json:"-"`
}

// String is a progress line on the target's clock, such as
// "600µs in the target (3.0s of lab time): 190/687 started, 12 running,
// 176 done, 0 failed, 206 Gbit/s in the target; emulation health valid
// so far".
func (p WorkloadProgress) String() string {
	at := fmt.Sprintf("%5.1fs", p.Elapsed.Seconds())
	rate := goodput(p.Goodput)
	if p.Model.D > 0 {
		at = fmt.Sprintf("%s (%.1fs %s)", p.Model.TimeText(p.Elapsed), p.Elapsed.Seconds(), scale.LabWord)
		rate = p.Model.RateText(p.Goodput)
	}
	s := fmt.Sprintf("%s: %d/%d started, %d running, %d done, %d failed, %s",
		at, p.Started, p.Flows, p.Running, p.Completed, p.Failed, rate)
	if h := p.HealthText(); h != "" {
		s += "; emulation " + h
	}
	return s
}

// HealthText is the health so far in a few words: "health valid so
// far", "health INVALID so far: " and its first problem; "" before the
// first sample.
func (p WorkloadProgress) HealthText() string {
	switch h := p.Health; {
	case h == nil:
		return ""
	case h.Valid:
		return "health valid so far"
	case len(h.Problems) > 0:
		return "health INVALID so far: " + h.Problems[0]
	}
	return "health INVALID so far"
}

// Left is about how much longer the run takes, in lab time: its flows
// not ended, at the pace of those ended so far, but no less than the
// schedule's window left and no more than the drain time after it.
func (p WorkloadProgress) Left() time.Duration {
	least, most := p.Duration-p.Elapsed, p.Duration+p.Drain-p.Elapsed
	left := most
	if r := progress.Remaining(p.Elapsed, float64(p.Completed+p.Failed), float64(p.Flows)); r >= 0 {
		left = min(left, r)
	}
	return max(0, least, left)
}

// State is p for a progress bar: the flows ended of all, the target's
// time so far of the schedule's window, D, the wall time left (Left:
// the lab's time is the wall clock) and the health so far; the flows
// running and the goodput as its detail, the plain line String.
func (p WorkloadProgress) State() progress.State {
	s := progress.State{Done: p.Completed + p.Failed, Total: p.Flows, Unit: "flows", D: p.Model.D, ETA: p.Left(),
		Health: p.HealthText(), Line: p.String()}
	rate := goodput(p.Goodput) + " in the lab"
	if p.Model.D > 0 {
		s.Target, s.TargetTotal = p.Model.TargetTime(max(0, p.Elapsed)), p.Model.TargetTime(p.Duration)
		rate = p.Model.RateText(p.Goodput)
	}
	s.Detail = fmt.Sprintf("%d running, %s", p.Running, rate)
	return s
}
