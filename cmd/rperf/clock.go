package main

// The clock rperf reports on. A test on a lab of a scale model reads
// every time and rate on the target's clock, labelled (a time the lab
// took / D, a rate it carried x D); --lab-units reads them on the lab's,
// labelled too; a test without a lab (--socket alone) knows no model
// and prints what it measured, as iperf3 does. The durations rperf is
// given (-t, -i, -O) and -b's rate are the lab's. The JSON document
// keeps iperf3's keys with the lab's values and adds the target's
// beside them, named _target (fct_target_ns, bits_per_second_target).

import (
	"fmt"
	"math"
	"time"

	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
)

// clock is how the text report reads times and rates.
type clock struct {
	m     scale.Model // the lab's; D 0 without one
	label string      // "target", "lab", or "" without a model
}

// newClock is the clock of a test on model m (nil: none); lab is
// --lab-units.
func newClock(m *scale.Model, lab bool) clock {
	switch {
	case m == nil || m.D <= 0:
		return clock{}
	case lab:
		return clock{m: *m, label: "lab"}
	}
	return clock{m: *m, label: "target"}
}

func (c clock) target() bool { return c.label == "target" }

// d is what a time of the lab is divided by and a rate multiplied by.
func (c clock) d() float64 {
	if c.target() {
		return c.m.D
	}
	return 1
}

// rate is a lab rate (bit/s) on this clock.
func (c clock) rate(bps float64) float64 { return bps * c.d() }

// head is a column's title with its clock: "Bitrate (target)".
func (c clock) head(s string) string {
	if c.label == "" {
		return s
	}
	return s + " (" + c.label + ")"
}

// spanUnit is the unit of interval times: seconds of the lab, or of the
// target in ms or µs when a second of the lab is at most that.
func (c clock) spanUnit() (mult float64, unit string) {
	per := 1 / c.d() // target seconds per lab second
	switch {
	case per <= 1e-3:
		return 1e6 / c.d(), "µs "
	case per < 1:
		return 1e3 / c.d(), "ms "
	}
	return 1, "sec"
}

// given is a duration the user gave (lab time, in seconds) as the
// header says it: "3 seconds of lab time = 600µs in the target".
func (c clock) given(secs float64) string {
	s := seconds(secs)
	if c.label == "" {
		return s
	}
	return s + " " + scale.LabWord + " = " + c.m.TimeText(time.Duration(math.Round(secs*1e9)))
}

// givenRate is a rate the user gave (-b, the lab's).
func (c clock) givenRate(bps float64) string {
	s := trim(formatBits(bps))
	if c.label == "" {
		return s
	}
	return fmt.Sprintf("%s in the lab (%s in the target)", s, trim(formatBits(c.m.TargetRate(bps))))
}

// fct is a flow's FCT (lab ns) and, when known, its ideal's.
func (c clock) fct(ns, idealNs int64) string {
	lab := time.Duration(ns).Round(time.Microsecond)
	if c.label == "" {
		return lab.String()
	}
	ideal := ""
	if idealNs > 0 {
		ideal = fmt.Sprintf(", %.3fx its ideal %s", float64(ns)/float64(idealNs), c.m.TimeText(time.Duration(idealNs)))
	}
	if c.target() {
		return fmt.Sprintf("%s (%s %s%s)", c.m.TimeText(time.Duration(ns)), scale.RoundTime(time.Duration(ns)), scale.LabWord, ideal)
	}
	return fmt.Sprintf("%v %s (%s%s)", lab, scale.LabWord, c.m.TimeText(time.Duration(ns)), ideal)
}

func trim(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	return s
}

// Target values of the JSON document.

func (m modelPtr) secs(s float64) float64 { return s / m.D }
func (m modelPtr) bps(b float64) float64  { return b * m.D }

// modelPtr is a model known to be there.
type modelPtr struct{ *scale.Model }

// target returns m as a modelPtr, ok when it has a dilation.
func target(m *scale.Model) (modelPtr, bool) { return modelPtr{m}, m != nil && m.D > 0 }

// setTarget fills the interval's target values under m.
func (iv *Interval) setTarget(m *scale.Model) {
	t, ok := target(m)
	if !ok {
		return
	}
	for i := range iv.Streams {
		iv.Streams[i].setTarget(t)
	}
	iv.Sum.setTarget(t)
	if iv.SumBidirReverse != nil {
		iv.SumBidirReverse.setTarget(t)
	}
}

func (s *IntervalStream) setTarget(t modelPtr) {
	s.StartTarget, s.EndTarget, s.SecondsTarget = t.secs(s.Start), t.secs(s.End), t.secs(s.Seconds)
	s.BitsPerSecondTarget, s.RateBpsTarget = t.bps(s.BitsPerSecond), t.bps(s.RateBps)
}

func (s *Sum) setTarget(t modelPtr) {
	s.StartTarget, s.EndTarget, s.SecondsTarget = t.secs(s.Start), t.secs(s.End), t.secs(s.Seconds)
	s.BitsPerSecondTarget, s.WireBitsPerSecondTarget = t.bps(s.BitsPerSecond), t.bps(s.WireBitsPerSecond)
}

// setTarget fills the summary's target values under m.
func (e *End) setTarget(m *scale.Model) {
	t, ok := target(m)
	if !ok {
		return
	}
	for i := range e.Streams {
		s := &e.Streams[i]
		s.Sender.setTarget(t)
		s.Receiver.setTarget(t)
		s.FCTLabNs = s.FCTNs
		s.FCTTargetNs = int64(t.TargetTime(time.Duration(s.FCTNs)))
	}
	for _, s := range []*Sum{&e.SumSent, &e.SumReceived, e.SumSentBidirReverse, e.SumReceivedBidirReverse} {
		if s != nil {
			s.setTarget(t)
		}
	}
}

// setTarget fills the start's target values under its model.
func (s *Start) setTarget() {
	t, ok := target(s.Model)
	if !ok {
		return
	}
	s.LinkRateTargetBps = int64(t.bps(float64(s.LinkRateBps)))
	if s.IdealFCTNs > 0 {
		s.IdealFCTTargetNs = int64(t.TargetTime(time.Duration(s.IdealFCTNs)))
	}
	s.TestStart.DurationTarget = t.secs(s.TestStart.Duration)
}

// setTarget fills a bandwidth row's target values under m.
func (r *BandwidthRow) setTarget(m *scale.Model) {
	if t, ok := target(m); ok {
		r.PeakTargetBps, r.AvgTargetBps, r.MsgRateTarget = t.bps(r.PeakBps), t.bps(r.AvgBps), r.MsgRate*t.D
	}
}

// setTarget fills a latency row's target round trips under m.
func (r *LatencyRow) setTarget(m *scale.Model) {
	t, ok := target(m)
	if !ok {
		return
	}
	at := func(ns int64) int64 { return int64(t.TargetTime(time.Duration(ns))) }
	l := r.LatencyStats
	r.Target = &api.LatencyStats{Samples: l.Samples, MinNs: at(l.MinNs), MaxNs: at(l.MaxNs), AvgNs: at(l.AvgNs),
		StdevNs: at(l.StdevNs), P50Ns: at(l.P50Ns), P99Ns: at(l.P99Ns), P999Ns: at(l.P999Ns)}
}
