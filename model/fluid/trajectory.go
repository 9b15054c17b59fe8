package fluid

import (
	"fmt"
	"math"
	"time"
)

// Trajectory is a simulated run: the state sampled every Every (at most
// MaxSamples+1 samples, from time 0 to the horizon) and a Summary
// computed at every step.
type Trajectory struct {
	Every time.Duration
	Time  []time.Duration
	// QueueBytes is q(t); Marking p(t).
	QueueBytes, Marking []float64
	// RateBps (R_C), TargetBps (R_T) and Alpha, by flow then sample.
	RateBps, TargetBps, Alpha [][]float64
	Summary                   Summary
}

// Summary is what a check compares: the steady state over the window
// [From, To], the horizon's second half, and the convergence time over
// the whole run. Means are over time, at every integration step.
type Summary struct {
	From, To time.Duration
	// The queue in the window: its mean, least and greatest, and
	// AmplitudeBytes, half its peak-to-peak: the amplitude of its
	// oscillation around the mean (0 at a fixed point).
	MeanQueueBytes, MinQueueBytes, MaxQueueBytes, AmplitudeBytes float64
	// MeanMarking is p's mean in the window.
	MeanMarking float64
	// MeanRateBps is each flow's mean R_C in the window; SumRateBps their
	// sum, the bottleneck's mean load; Fairness Jain's index of the means,
	// (Σx)² / (N Σx²): 1 when every flow has the same.
	MeanRateBps []float64
	SumRateBps  float64
	Fairness    float64
	// Converged and ConvergedAt: the convergence time is the first time
	// t_c at which every flow's R_C is within ConvergenceBand of C/N and
	// stays within it at every later step up to the horizon (0 when the
	// flows start and stay there). Converged is false when some flow is
	// outside the band at the horizon. A flow may leave the band after
	// the horizon: a t_c near the horizon says little.
	Converged   bool
	ConvergedAt time.Duration
}

// Simulate integrates d from its start (see NewIntegrator: start is the
// flows' initial rates in bit/s, nil for all at the line rate) to horizon
// with a fixed step (0: DefaultStep).
func Simulate(d DCQCN, horizon, step time.Duration, start []float64) (Trajectory, error) {
	if horizon < 0 {
		return Trajectory{}, fmt.Errorf("fluid: negative horizon %v", horizon)
	}
	in, err := NewIntegrator(d, step, start)
	if err != nil {
		return Trajectory{}, err
	}
	n := d.N
	steps := int64(math.Round(horizon.Seconds() / in.h))
	every := max(1, (steps+MaxSamples-1)/MaxSamples)
	samples := int(steps/every) + 1
	tr := Trajectory{
		Every:      time.Duration(math.Round(float64(every) * in.h * 1e9)),
		Time:       make([]time.Duration, 0, samples),
		QueueBytes: make([]float64, 0, samples),
		Marking:    make([]float64, 0, samples),
		RateBps:    make([][]float64, n),
		TargetBps:  make([][]float64, n),
		Alpha:      make([][]float64, n),
	}
	for i := range n {
		tr.RateBps[i] = make([]float64, 0, samples)
		tr.TargetBps[i] = make([]float64, 0, samples)
		tr.Alpha[i] = make([]float64, 0, samples)
	}
	sample := func() {
		tr.Time = append(tr.Time, in.Time())
		tr.QueueBytes = append(tr.QueueBytes, in.QueueBytes())
		tr.Marking = append(tr.Marking, in.Marking())
		for i := range n {
			tr.RateBps[i] = append(tr.RateBps[i], in.RateBps(i))
			tr.TargetBps[i] = append(tr.TargetBps[i], in.TargetBps(i))
			tr.Alpha[i] = append(tr.Alpha[i], in.Alpha(i))
		}
	}

	from := steps / 2
	fair := in.s.c / float64(n)
	band := ConvergenceBand * fair
	lastOut := int64(-1)
	var w window
	w.init(n)
	for k := int64(0); ; k++ {
		if k%every == 0 {
			sample()
		}
		for _, r := range in.rc {
			if math.Abs(r-fair) > band {
				lastOut = k
				break
			}
		}
		if k > from {
			w.add(in)
		}
		if k == steps {
			break
		}
		in.Step()
	}

	at := func(k int64) time.Duration { return time.Duration(math.Round(float64(k) * in.h * 1e9)) }
	sm := w.summary(&in.s)
	sm.From, sm.To = at(from), at(steps)
	sm.Converged = lastOut < steps
	if lastOut >= 0 {
		sm.ConvergedAt = at(lastOut + 1)
	}
	tr.Summary = sm
	return tr, nil
}

// window accumulates a Summary's steady state, one step at a time.
type window struct {
	steps         float64
	q, qMin, qMax float64 // packets
	p             float64
	rate          []float64 // packets/s
}

func (w *window) init(n int) {
	*w = window{qMin: math.Inf(1), qMax: math.Inf(-1), rate: make([]float64, n)}
}

func (w *window) add(in *Integrator) {
	w.steps++
	w.q += in.q
	w.qMin, w.qMax = min(w.qMin, in.q), max(w.qMax, in.q)
	w.p += in.s.mark(in.q)
	for i, r := range in.rc {
		w.rate[i] += r
	}
}

func (w *window) summary(s *sys) Summary {
	if w.steps == 0 {
		return Summary{}
	}
	qb := s.queueBytes
	sm := Summary{
		MeanQueueBytes: w.q / w.steps * qb,
		MinQueueBytes:  w.qMin * qb, MaxQueueBytes: w.qMax * qb,
		AmplitudeBytes: (w.qMax - w.qMin) / 2 * qb,
		MeanMarking:    w.p / w.steps,
		MeanRateBps:    make([]float64, len(w.rate)),
	}
	var sum, sq float64
	for i, r := range w.rate {
		x := r / w.steps * 8 * s.wireBytes
		sm.MeanRateBps[i] = x
		sum += x
		sq += x * x
	}
	sm.SumRateBps = sum
	sm.Fairness = sum * sum / (float64(len(w.rate)) * sq)
	return sm
}
