package dataplane

// Sim: engines served on virtual time, for tests of whole fabrics in one
// process that must not depend on the machine's speed.

import (
	"container/heap"
	"errors"
	"time"
)

// Sim serves engines on one virtual clock, as punctual workers would and
// without any: a discrete-event driver. At each instant it steps every
// engine that has work (its deadline has come, frames arrived at one of
// its ports, or it moved frames in its last step) until none moves any
// more; then it advances the clock straight to the next instant anything
// is due: the earliest engine deadline or scheduled event. A frame an
// engine transmits is receivable at once at the peer's port (a pipe),
// since the link's serialisation and delay are the sender's port's
// (shaper and delay line), as on a worker; so a Sim's engines are never
// late, nothing depends on the machine's speed or scheduling, and a run
// is deterministic: the engines step as a worker's round steps them (in
// the order of when they got their work, those of one time in the order
// they were added; serve) and events run in time order, those of one
// time in the order they were scheduled.
//
// Everything happens on the goroutine that calls RunUntil (and its
// relatives): the engines' steps, the events' functions, and the
// notifications of their ports. Between runs the caller may use the
// engines' control calls (Call, Snapshot and what handlers build on
// them), which run directly since no worker runs a Sim's engines; the next
// run steps every engine first, so it sees what they changed. A Sim is
// not safe for concurrent use.
type Sim struct {
	now    int64
	ord    order
	events eventHeap
	seq    uint64
	steps  uint64
	// slack: deadlines are served this late (SetSlack).
	slack int64
	// at: the time of the step under way (serve), from which the
	// engines it gives frames to have them; -1 between steps.
	at int64
}

// maxRounds bounds the rounds of steps at one instant: an engine that
// keeps moving frames at one instant (an unshaped port fed by a source
// that is never paced) gets the next nanosecond, as a real pass takes
// time.
const maxRounds = 1000

// NewSim returns a Sim at time 0 with no engines.
func NewSim() *Sim { return &Sim{at: -1} }

// Add puts e on the sim: e's clock becomes the sim's, and e begins (its
// ports get their receive frames; Ready closes). e must not have run on
// a worker. Ports that notify arrivals (pipes, patch cables) mark e as
// having work; an engine with a port that does not steps in every round
// of every instant, so it is not late for frames either, only slower.
func (s *Sim) Add(e *Engine) error {
	if e.begun || e.w != nil || e.running.Load() {
		return errors.New("dataplane: sim: the engine has already run")
	}
	se := &slot{e: e, hot: true, at: s.now, deadline: -1}
	i := s.ord.free()
	// When frames reach a port: as of the step that sent them, or now
	// (an event's frames).
	at := func() int64 {
		if s.at >= 0 {
			return s.at
		}
		return s.now
	}
	for _, p := range e.ports {
		if h, ok := p.io.(heldPort); ok && p.held != nil {
			// Due when the link delivers them, as on a worker.
			h.SetNotifyAt(func(due uint32) { s.ord.arrive(i, due, at()) })
		} else if n, ok := p.io.(notifyPort); ok {
			n.SetNotify(func() { s.ord.mark(i, at()) })
		} else {
			se.poll = true
		}
	}
	e.clock = func() int64 { return s.now }
	e.begin()
	s.ord.set(i, se)
	return nil
}

// SetSlack has the sim serve every engine deadline d late, as a worker
// that sleeps wakes its slack after the earliest deadline
// (WorkerOptions.Slack), and steps what is due then as a worker does
// (serve): a test of what the engines and the worker's order make up of
// a worker's lateness. Frames and events are still served at once.
// 0, the default, is punctual.
func (s *Sim) SetSlack(d time.Duration) { s.slack = max(0, int64(d)) }

// Now is the sim's clock in ns since it began.
func (s *Sim) Now() int64 { return s.now }

// Steps is the number of engine steps the sim has run.
func (s *Sim) Steps() uint64 { return s.steps }

// At schedules fn to run at time t (ns; the next instant the sim runs, if
// t is past), before the engines step at that instant. fn runs on the
// sim's goroutine and may use the engines, schedule events and add
// frames to ports; every engine steps after it.
func (s *Sim) At(t int64, fn func()) {
	s.seq++
	heap.Push(&s.events, event{t: t, seq: s.seq, fn: fn})
}

// After schedules fn to run d after now.
func (s *Sim) After(d time.Duration, fn func()) { s.At(s.now+int64(d), fn) }

// RunUntil runs the engines and events up to time t, those due at t
// included, and leaves the clock at t. A t in the past runs the present
// instant only.
func (s *Sim) RunUntil(t int64) { s.run(t, nil) }

// RunFor runs the sim for d from now.
func (s *Sim) RunFor(d time.Duration) { s.run(s.now+int64(d), nil) }

// RunUntilDone is RunUntil that stops at the first instant after which
// done returns true (done runs after every instant, so it should be
// cheap); it reports whether done returned true, the clock at that
// instant, or false with the clock at t.
func (s *Sim) RunUntilDone(t int64, done func() bool) bool { return s.run(t, done) }

func (s *Sim) run(t int64, done func() bool) bool {
	// The caller may have changed any engine since the last run.
	for i := range s.ord.slots {
		s.ord.mark(i, s.now)
	}
	for {
		s.instant()
		if done != nil && done() {
			return true
		}
		if s.now >= t {
			return false
		}
		next := t
		for _, se := range s.ord.slots {
			if se.deadline >= 0 && se.deadline+s.slack < next {
				next = se.deadline + s.slack
			}
		}
		if len(s.events) > 0 && s.events[0].t < next {
			next = s.events[0].t
		}
		// A deadline that has come already was served this instant;
		// whatever it still waits for comes later.
		s.now = max(next, s.now+1)
	}
}

// instant runs the events due now, then steps the engines with work
// until none moves a frame; an event may schedule another for now, which
// runs too.
func (s *Sim) instant() {
	for {
		ran := false
		for len(s.events) > 0 && s.events[0].t <= s.now {
			ev := heap.Pop(&s.events).(event)
			ev.fn()
			ran = true
		}
		if ran {
			for i := range s.ord.slots {
				s.ord.mark(i, s.now)
			}
		}
		s.settle()
		if len(s.events) == 0 || s.events[0].t > s.now {
			return
		}
	}
}

// settle steps the engines with work, as a worker's round does (serve):
// those whose deadline has come and those frames reached, in the order
// of when they got it, and those that poll; round after round until
// none moves a frame.
func (s *Sim) settle() {
	for round := 0; round < maxRounds; round++ {
		s.ord.serve(s.now, replayReach(s.slack), stepsPerEngine*len(s.ord.slots)+1, func(se *slot, at int64) { s.step(se, at) }, func(int64) {})
		more := false
		for i, se := range s.ord.slots {
			if se.poll {
				more = s.step(se, s.now) > 0 || more
				s.ord.update(i)
			}
		}
		for _, k := range s.ord.keys {
			more = more || k <= s.now
		}
		if !more {
			return
		}
	}
	// Left for the next nanosecond (maxRounds).
}

// step steps se as of at and returns the frames it moved.
func (s *Sim) step(se *slot, at int64) int {
	s.steps++
	s.at = at
	moved := se.e.stepAt(at, at < s.now)
	s.at = -1
	se.stepped(moved, at)
	se.deadline = se.e.deadline(at)
	return moved
}

type event struct {
	t   int64
	seq uint64
	fn  func()
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	return h[i].t < h[j].t || (h[i].t == h[j].t && h[i].seq < h[j].seq)
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	ev := old[len(old)-1]
	old[len(old)-1] = event{}
	*h = old[:len(old)-1]
	return ev
}
