package dataplane

// The order in which a worker (and a Sim) steps its engines: the order of
// the times they got their work.

import (
	"math"
	"time"
)

// A worker replays its engines' work in the order of the model's time
// (serve) up to twice its slack behind its clock, and at least
// MinReplay: what it slept through by its slack and as much again of
// the machine's lateness. A worker later than that steps its engines as
// of its reach ago, and what is later still is the ports' to make up
// within their catch-up bound (scale.Catchup), or to count as lost link
// time; the probes of the fidelity monitor see it. The reach follows the
// slack, which is a share of the model's one-hop RTT: the lateness a
// replay hides is the same share of the target's time at every D.
const (
	replayPerSlack = 2
	MinReplay      = 100 * time.Microsecond
)

// replayReach is the replay's reach for a slack (ns).
func replayReach(slack int64) int64 { return max(replayPerSlack*slack, int64(MinReplay)) }

// slot is an engine as its worker (or Sim) schedules it.
type slot struct {
	e        *Engine
	deadline int64 // the engine's next deadline, -1: none
	// hot: frames arrived at one of its ports (or its last receive
	// stopped at a full batch), a control request came, or (a Sim's)
	// its caller may have changed it; at is when, in the order's time
	// (the step that marked it).
	hot bool
	at  int64
	// last is the time of its last step: an engine's clock never goes
	// back, so it steps no earlier than that.
	last int64
	// poll: a port does not notify arrivals, so the engine steps in
	// every round of every instant (a Sim's).
	poll bool
}

// stepped records s's step as of at, which moved frames: s has work
// again at once only if its receive stopped at a full batch (what no
// deadline names).
func (s *slot) stepped(moved int, at int64) {
	s.hot, s.at, s.last = moved > 0 && s.e.rxPending(), at, at
}

// never is the key of a slot without work (order's keys).
const never = math.MaxInt64

// order is a worker's (or Sim's) engines as serve steps them: their
// slots, nil where an engine left, and each slot's key, kept beside
// them so that finding the next engine to step reads one array.
type order struct {
	slots []*slot
	// keys[i] is when slots[i] got the work it has, the earlier of its
	// deadline and the time it was marked (hot), times 2, plus 1 for a
	// mark: of one time, the deadlines come first, so that the frames
	// several engines deliver at one time are all at their receiver
	// when it steps (it takes them side by side, as a switch does
	// frames arriving together). never without either.
	keys []int64
	// batch: the slots of the least key, which serve steps in turn.
	batch []int
	// floor is the last serve's now - reach: what it skipped, if
	// anything, was up to that time, and any work older than that has
	// been stepped, so a serve skips only what came after it.
	floor int64
}

// free returns the index of a free slot, adding one if none is.
func (o *order) free() int {
	i := 0
	for i < len(o.slots) && o.slots[i] != nil {
		i++
	}
	if i == len(o.slots) {
		o.slots = append(o.slots, nil)
		o.keys = append(o.keys, never)
	}
	return i
}

// set puts s in slot i.
func (o *order) set(i int, s *slot) {
	o.slots[i] = s
	o.update(i)
}

// remove frees slot i.
func (o *order) remove(i int) {
	o.slots[i] = nil
	o.keys[i] = never
}

// mark gives slot i work from time v, unless it had some from earlier.
func (o *order) mark(i int, v int64) {
	if s := o.slots[i]; s != nil && !s.hot {
		s.hot, s.at = true, v
		o.update(i)
	}
}

// due gives slot i a deadline at t, unless it has an earlier one.
func (o *order) due(i int, t int64) {
	if s := o.slots[i]; s != nil && (s.deadline < 0 || t < s.deadline) {
		s.deadline = t
		o.update(i)
	}
}

// arrive gives slot i the work of a held port's frames (HeldIO) that
// reached it as of v: a deadline when they are due, or a mark at v for
// frames due at once.
func (o *order) arrive(i int, due uint32, v int64) {
	if t := heldDue(due, v); t >= 0 {
		o.due(i, t)
	} else {
		o.mark(i, v)
	}
}

// update sets slot i's key from its state.
func (o *order) update(i int) {
	s, k := o.slots[i], int64(never)
	if s != nil {
		if s.hot {
			k = 2*s.at + 1
		}
		if s.deadline >= 0 && 2*s.deadline < k {
			k = 2 * s.deadline
		}
	}
	o.keys[i] = k
}

// serve steps the engines that have work at now, at most limit steps,
// one at a time in the order of when they got it: the earliest
// deadline, or the earliest time frames reached an engine, first. Each
// steps as of that time (never before the last step's, its own last
// step's, nor now - reach): a late worker, or one whose engines'
// deadlines fell within its slack of each other, steps them as a
// punctual one would have, so that a receiver's timer due later in the
// model than a frame another engine delivers to it goes off after the
// frame, and what each sends is timed from its cause. After each step,
// marked marks the engines that step gave frames to (frames the
// worker's cables carried) as of the step's time. step steps s as of at
// (at < now: a replay) and sets s's deadline, hot and at.
//
// serve returns the time of the model it skipped: when the earliest
// work is older than now - reach, what came between it and now - reach
// (and after what an earlier serve skipped) all happens as of now -
// reach, at once. A worker's skipped time is the lateness its replay
// did not absorb (Health judges it).
func (o *order) serve(now, reach int64, limit int, step func(s *slot, at int64), marked func(v int64)) (skipped int64) {
	v := now - reach
	steps := 0
	for steps < limit {
		// The least key, and every slot that has it.
		key := int64(never)
		o.batch = o.batch[:0]
		for j, k := range o.keys {
			switch {
			case k < key:
				key = k
				o.batch = append(o.batch[:0], j)
			case k == key && k != never:
				o.batch = append(o.batch, j)
			}
		}
		if len(o.batch) == 0 || key>>1 > now {
			break
		}
		if steps == 0 {
			// The least key of a serve is its earliest work.
			skipped = max(v-max(key>>1, o.floor), 0)
		}
		v = max(v, key>>1)
		for _, i := range o.batch {
			if steps == limit {
				continue // left for the next round
			}
			s := o.slots[i]
			steps++
			step(s, max(v, s.last))
			if s.hot {
				s.at = min(s.at, now) // work it has, however late it stepped
			}
			o.update(i)
			marked(v)
		}
	}
	o.floor = max(o.floor, now-reach)
	return skipped
}
