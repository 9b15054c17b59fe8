package transport

import "math"

// DCQCN's reaction point, the rate machine of one sender (DCQCN, SIGCOMM
// 2015, as its common implementations run it):
//
//   - A CNP cuts: the target rate Rt becomes the current rate Rc, Rc drops
//     to Rc(1 - alpha/2) (never below the minimum rate), alpha moves
//     toward 1 as alpha = (1-g)alpha + g, and the increase state restarts.
//   - Alpha decays as alpha = (1-g)alpha every AlphaPeriod (K) without a
//     CNP, counted from the last CNP. Before the first CNP alpha is 1, so
//     the first cut halves the rate.
//   - Increase events come from a timer (every IncreasePeriod, T) and a
//     byte counter (every ByteCounter bytes sent, B), each counting its
//     own stages since the last cut. An event with both counts below F is
//     fast recovery (Rt stays); with both above F hyper increase (Rt +=
//     R_HAI); otherwise additive increase (Rt += R_AI). Then Rc moves
//     halfway to Rt. Rt never exceeds the line rate.
//   - At the line rate with nothing to recover, the timer stops and the
//     byte counter rests until the next CNP.
//
// In its Mellanox variant (DCQCNParams.Mlx), as the HPCC simulator's
// rdma-hw.cc runs it (CLAMP_TARGET_RATE 0, RATE_ON_FIRST_CNP 1), a CNP
// cuts nothing when it arrives: it marks that one came. The first CNP
// sets alpha to 1 and starts two clocks that run for the rest of the
// flow: every AlphaPeriod alpha moves toward 1 if a CNP came since its
// last tick and decays otherwise, and every DecreasePeriod the rate is
// cut if a CNP came since the last check. A cut sets Rt to Rc only when
// an increase event came since the cut before (the first cut keeps the
// Rt the first CNP set, the rate then), so cuts in a row keep the
// target; Rc drops to Rc(1 - alpha/2) and the increase timer restarts.
// Only the timer counts stages: its first F events are fast recovery,
// the next additive increase, every later one hyper increase. The
// flows' clocks start at their first CNPs, which an incast's flows get
// within microseconds of each other: their cuts keep in step.
//
// Times are nanoseconds on the caller's clock; rates bit/s.

// DCQCNCounters count what a rate machine did.
type DCQCNCounters struct {
	Cuts                          uint64 // rate cuts (the paper's: CNPs)
	FastRecovery, Additive, Hyper uint64 // increase events by kind
}

// DCQCN is one sender's rate machine. Not safe for concurrent use.
type DCQCN struct {
	line, min, ai, hai float64
	g                  float64
	alphaPeriod, inc   int64
	byteCounter        int64
	f                  int
	mlx                bool
	decPeriod          int64 // Mlx: the decrease check's period

	rc, rt    float64
	alpha     float64 // as of lastCNP
	lastCNP   int64
	cut       bool  // a CNP has arrived
	nextInc   int64 // when the increase timer fires; -1 when resting
	timeStage int
	byteStage int
	bytes     int64 // sent since the last byte-counter event

	// Mlx: whether a CNP came since alpha's last tick and since the
	// last decrease check, and when those clocks tick next (-1 before
	// the first CNP).
	alphaCNP, decCNP   bool
	nextAlpha, nextDec int64

	C DCQCNCounters
}

// NewDCQCN returns a rate machine for a link of lineRateBps, starting at
// the line rate.
func NewDCQCN(p DCQCNParams, lineRateBps int64) *DCQCN {
	d := &DCQCN{}
	d.init(p, lineRateBps)
	return d
}

func (d *DCQCN) init(p DCQCNParams, lineRateBps int64) {
	*d = DCQCN{
		line: float64(lineRateBps), min: float64(p.MinRateBps),
		ai: float64(p.AIRateBps), hai: float64(p.HAIRateBps),
		g: p.G, alphaPeriod: int64(p.AlphaPeriod), inc: int64(p.IncreasePeriod),
		byteCounter: p.ByteCounter, f: p.F, mlx: p.Mlx, decPeriod: int64(p.DecreasePeriod),
		rc: float64(lineRateBps), rt: float64(lineRateBps), alpha: 1, nextInc: -1,
		nextAlpha: -1, nextDec: -1,
	}
}

// Rate is the current rate Rc.
func (d *DCQCN) Rate() float64 { return d.rc }

// Target is the target rate Rt.
func (d *DCQCN) Target() float64 { return d.rt }

// Alpha is alpha at now (Mlx: as of its clock's last tick).
func (d *DCQCN) Alpha(now int64) float64 {
	if d.mlx || !d.cut || now <= d.lastCNP {
		return d.alpha
	}
	n := (now - d.lastCNP) / d.alphaPeriod
	return d.alpha * math.Pow(1-d.g, float64(n))
}

// Stages are the timer and byte-counter stages since the last cut.
func (d *DCQCN) Stages() (timer, bytes int) { return d.timeStage, d.byteStage }

// OnCNP applies a congestion notification that arrived at now (Mlx:
// notes it for the clocks).
func (d *DCQCN) OnCNP(now int64) {
	d.OnTimer(now)
	if d.mlx {
		d.alphaCNP, d.decCNP = true, true
		if d.nextDec < 0 {
			// The first: alpha starts at 1 and the target at the rate,
			// and the clocks start; the decrease check comes 1 ns after
			// alpha's tick when they fall together, as in the
			// simulator.
			d.alpha, d.alphaCNP, d.rt, d.cut = 1, false, d.rc, true
			d.nextAlpha, d.nextDec = now+d.alphaPeriod, now+d.decPeriod+1
		}
		return
	}
	a := d.Alpha(now)
	d.rt = d.rc
	d.decrease(now, a)
	d.alpha = (1-d.g)*a + d.g
	d.lastCNP, d.cut = now, true
}

// decrease cuts the rate at now by alpha a and restarts the increase.
func (d *DCQCN) decrease(now int64, a float64) {
	d.rc = max(d.rc*(1-a/2), d.min)
	d.timeStage, d.byteStage, d.bytes = 0, 0, 0
	d.nextInc = now + d.inc
	d.C.Cuts++
}

// OnSent counts bytes sent at now toward the byte counter.
func (d *DCQCN) OnSent(bytes int, now int64) {
	if d.nextInc < 0 || d.mlx {
		return
	}
	d.OnTimer(now)
	d.bytes += int64(bytes)
	for d.bytes >= d.byteCounter && d.nextInc >= 0 {
		d.bytes -= d.byteCounter
		d.byteStage++
		d.increase()
	}
}

// NextTimer is when the machine's next timer fires (the increase
// timer; Mlx: also alpha's clock and the decrease check), or -1 when
// none runs.
func (d *DCQCN) NextTimer() int64 {
	t := d.nextInc
	for _, c := range [...]int64{d.nextAlpha, d.nextDec} {
		if c >= 0 && (t < 0 || c < t) {
			t = c
		}
	}
	return t
}

// OnTimer runs the timer events due by now, in their order (on a tie:
// alpha's tick, the decrease check, the increase).
func (d *DCQCN) OnTimer(now int64) {
	for {
		next := d.NextTimer()
		if next < 0 || next > now {
			return
		}
		switch next {
		case d.nextAlpha:
			if d.alphaCNP {
				d.alpha = (1-d.g)*d.alpha + d.g
			} else {
				d.alpha = (1 - d.g) * d.alpha
			}
			d.alphaCNP = false
			d.nextAlpha += d.alphaPeriod
		case d.nextDec:
			d.nextDec += d.decPeriod
			if d.decCNP {
				if d.timeStage > 0 {
					d.rt = d.rc
				}
				d.decCNP = false
				d.decrease(next, d.alpha)
			}
		default:
			d.nextInc += d.inc
			d.timeStage++
			d.increase()
		}
	}
}

// increase is one increase event; at the line rate it puts the timer to
// rest.
func (d *DCQCN) increase() {
	switch {
	case d.mlx && d.timeStage <= d.f:
		// The timer's events 1..F.
		d.C.FastRecovery++
	case d.mlx && d.timeStage > d.f+1:
		d.rt += d.hai
		d.C.Hyper++
	case d.timeStage < d.f && d.byteStage < d.f:
		d.C.FastRecovery++
	case d.timeStage > d.f && d.byteStage > d.f:
		d.rt += d.hai
		d.C.Hyper++
	default:
		d.rt += d.ai
		d.C.Additive++
	}
	d.rt = min(d.rt, d.line)
	d.rc = (d.rt + d.rc) / 2
	if d.rt-d.rc < d.line*1e-9 {
		d.rc = d.rt
	}
	if d.rc >= d.line {
		d.rc, d.nextInc, d.bytes = d.line, -1, 0
	}
}
