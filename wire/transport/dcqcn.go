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
// In its Mellanox variant (DCQCNParams.Mlx, as the HPCC simulator runs
// it with CLAMP_TARGET_RATE 0) a cut sets Rt to Rc only when an
// increase event came since the cut before (or it is the first cut), so
// cuts in a row keep the target the first one set; and only the timer
// counts stages: its first F events are fast recovery, the next
// additive increase, every later one hyper increase.
//
// Times are nanoseconds on the caller's clock; rates bit/s.

// DCQCNCounters count what a rate machine did.
type DCQCNCounters struct {
	Cuts                          uint64 // CNPs applied
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

	rc, rt    float64
	alpha     float64 // as of lastCNP
	lastCNP   int64
	cut       bool  // a CNP has arrived
	nextInc   int64 // when the increase timer fires; -1 when resting
	timeStage int
	byteStage int
	bytes     int64 // sent since the last byte-counter event

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
		byteCounter: p.ByteCounter, f: p.F, mlx: p.Mlx,
		rc: float64(lineRateBps), rt: float64(lineRateBps), alpha: 1, nextInc: -1,
	}
}

// Rate is the current rate Rc.
func (d *DCQCN) Rate() float64 { return d.rc }

// Target is the target rate Rt.
func (d *DCQCN) Target() float64 { return d.rt }

// Alpha is alpha at now.
func (d *DCQCN) Alpha(now int64) float64 {
	if !d.cut || now <= d.lastCNP {
		return d.alpha
	}
	n := (now - d.lastCNP) / d.alphaPeriod
	return d.alpha * math.Pow(1-d.g, float64(n))
}

// Stages are the timer and byte-counter stages since the last cut.
func (d *DCQCN) Stages() (timer, bytes int) { return d.timeStage, d.byteStage }

// OnCNP applies a congestion notification that arrived at now.
func (d *DCQCN) OnCNP(now int64) {
	d.OnTimer(now)
	a := d.Alpha(now)
	if !d.mlx || !d.cut || d.timeStage > 0 {
		d.rt = d.rc
	}
	d.rc = max(d.rc*(1-a/2), d.min)
	d.alpha = (1-d.g)*a + d.g
	d.lastCNP, d.cut = now, true
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

// NextTimer is when the increase timer fires, or -1 when it rests.
func (d *DCQCN) NextTimer() int64 { return d.nextInc }

// OnTimer runs the increase events due by now.
func (d *DCQCN) OnTimer(now int64) {
	for d.nextInc >= 0 && d.nextInc <= now {
		d.nextInc += d.inc
		d.timeStage++
		d.increase()
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
