package dataplane

// The order in which a worker (and a Sim) steps its engines: the order of
// the times they got their work.

import "time"

// MaxReplay is how far behind its clock a late worker replays its
// engines' work in the order of the model's time (serve). A worker
// later than that steps its engines as of MaxReplay ago, and what is
// later still is the ports' to make up within their catch-up bound
// (scale.Catchup), or to count as lost link time. It is the catch-up
// bound's least value: a replay never runs further back than a port
// may start a frame.
const MaxReplay = time.Millisecond

// slot is an engine as its worker (or Sim) schedules it.
type slot struct {
	e        *Engine
	deadline int64 // the engine's next deadline, -1: none
	// hot: frames arrived at one of its ports, it moved frames in its
	// last step, or (a Sim's) its caller may have changed it; at is
	// when, in the order's time (the serve that marked it).
	hot bool
	at  int64
	// last is the time of its last step: an engine's clock never goes
	// back, so it steps no earlier than that.
	last int64
	// poll: a port does not notify arrivals, so the engine steps in
	// every round of every instant (a Sim's).
	poll bool
}

// mark gives s work from time v, unless it had some from earlier.
func (s *slot) mark(v int64) {
	if !s.hot {
		s.hot, s.at = true, v
	}
}

// key is when s got the work it has at now, and whether it has any: its
// deadline if that has come, the time it was marked, now for a control
// request.
func (s *slot) key(now int64) (int64, bool) {
	k, ok := int64(0), false
	if s.hot {
		k, ok = s.at, true
	}
	if s.deadline >= 0 && s.deadline <= now && (!ok || s.deadline < k) {
		k, ok = s.deadline, true
	}
	if !ok && s.e.poked.Load() {
		k, ok = now, true
	}
	return k, ok
}

// serve steps the engines of slots that have work at now, at most limit
// steps, one at a time in the order of when they got it: the earliest
// deadline, or the earliest time frames reached an engine, first. Each
// steps as of that time (never before the last step's, its own last
// step's, nor now - MaxReplay): a late worker, or one whose engines' deadlines fell
// within its slack of each other, steps them as a punctual one would
// have, so that a receiver's timer due later in the model than a frame
// another engine delivers to it goes off after the frame, and what each
// sends is timed from its cause. After each step, mark marks the
// engines that step gave frames to (frames the worker's cables carried)
// as of the step's time. step steps s as of at (at < now: a replay) and
// sets s's deadline, hot and at. serve returns the steps it took and
// the time of the last.
func serve(slots []*slot, now int64, limit int, step func(s *slot, at int64), mark func(v int64)) (int, int64) {
	v := now - int64(MaxReplay)
	steps := 0
	for steps < limit {
		var next *slot
		var key int64
		for _, s := range slots {
			if s == nil {
				continue
			}
			if k, ok := s.key(now); ok && (next == nil || k < key) {
				next, key = s, k
			}
		}
		if next == nil {
			break
		}
		v = max(v, min(key, now))
		steps++
		step(next, max(v, next.last))
		mark(v)
	}
	return steps, v
}
