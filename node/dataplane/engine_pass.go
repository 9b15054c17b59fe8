package dataplane

// An engine's step on its worker (engine.go): the timers, the pass that
// receives, forwards and transmits, control requests, and the deadline
// the worker may sleep until.

import (
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// step is one round of the engine on its worker (see the top of
// engine.go) at now, its worker's clock; it returns how many frames it
// received, produced or transmitted.
func (e *Engine) step(now int64) int { return e.stepAt(now, false) }

// stepAt is step as of t. A replay is a step as of a time before the
// worker's clock (a late worker serving its engines' deadlines in their
// order, worker.go): the whole step, its timers, handlers and
// transmissions, sees t as the time, as a punctual worker's would have.
func (e *Engine) stepAt(t int64, replay bool) int {
	now := t
	if replay {
		// The timers and the probes read the clock too.
		e.passNow.Store(now + 1)
	}
	if e.probing && now >= e.nextProbe {
		e.sendProbes()
		e.nextProbe = now + e.probeEvery
		if e.burstLeft > 0 {
			e.burstLeft--
			if e.burstLeft > 0 {
				e.nextProbe = now + e.burstEvery
			}
		}
	}
	for i, t := range e.timers {
		next := e.timerNext[i]
		if !e.timersKnown {
			next = t.NextTick()
		}
		if next >= 0 && now >= next {
			t.Tick(now)
		}
	}
	e.timersKnown = false
	moved, now := e.passAt(now, replay)
	if e.poked.Load() {
		e.poked.Store(false)
		t := e.Now()
		e.answerSnapshot()
		e.runCalls()
		if e.w != nil {
			d := e.Now() - t
			e.w.st.controlNs.Add(d)
			if d > e.w.st.maxControlNs.Load() {
				e.w.st.maxControlNs.Store(d)
			}
		}
	}
	// The watchdog measures stalls of a millisecond and more (x D): the
	// pass's clock is recent enough.
	e.watchdog(moved > 0, now)
	return moved
}

// begin starts the clock and gives every port its receive frames.
func (e *Engine) begin() {
	e.begun = true
	if e.epoch.IsZero() {
		e.epoch = time.Now()
	}
	e.started = time.Now()
	e.monoBase = api.MonotonicNs() - e.Now()
	for _, p := range e.ports {
		e.refill(p)
		p.rxReady = true
	}
	close(e.ready)
}

// pass is one round of the loop's stages 1-4; it returns how many frames
// it received or transmitted.
//
// It looks only at the ports that may have work: those the worker's
// poller reported readable (every port when the engine has no worker),
// those with TX frames to complete or fill-ring room to top up, and those
// with frames queued or in the delay line.
// passAt is the engine's receive -> forward -> egress -> transmit pass,
// begun at now; it returns the frames it moved and the clock it
// transmitted by. The clock is read again only if frames were received
// (a pass that received none took far less than a shaper's slack), and
// never in a replay, which keeps the time it is as of (stepAt).
func (e *Engine) passAt(now int64, replay bool) (int, int64) {
	e.passNow.Store(now + 1)
	defer e.passNow.Store(0)
	moved := e.receiveAll()
	for _, p := range e.ports {
		if p.inflight > 0 {
			e.reclaim(p)
		}
		if p.needFill {
			e.refill(p)
		}
	}
	if moved > 0 && !replay {
		e.passNow.Store(0)
		now = e.Now()
		e.passNow.Store(now + 1)
	}
	if e.source != nil {
		moved += e.source.Produce(now)
	}
	for _, p := range e.ports {
		if p.egress.Len() > 0 || p.stalled || (p.wire != nil && p.wire.Len() > 0) {
			moved += e.transmit(p, now)
		}
	}
	return moved, now
}

// deadline is when the engine next has work without a frame arriving: the
// earliest shaper, delay or pause-expiry deadline of a port with frames
// waiting, a short retry for a port the kernel refused, a timer or the
// watchdog's check; -1 when there is none.
func (e *Engine) deadline(now int64) int64 {
	next := int64(-1)
	consider := func(t int64) {
		if next < 0 || t < next {
			next = t
		}
	}
	for _, p := range e.ports {
		if p.stalled {
			consider(now + int64(retryWait))
		}
		if p.egress.Len() > 0 && (p.wire == nil || !p.wire.Full()) {
			if p.egress.Eligible(now) {
				consider(p.shaper.WakeAt())
			} else if t, ok := p.egress.NextExpiry(); ok {
				consider(t)
			}
		}
		if p.wire != nil {
			if due, ok := p.wire.NextDue(); ok {
				consider(due)
			}
		}
		if p.held != nil {
			if s, ok := p.held.Head(); ok {
				consider(max(heldDue(s, now), now))
			}
		}
	}
	for i, t := range e.timers {
		next := t.NextTick()
		e.timerNext[i] = next
		if next >= 0 {
			consider(next)
		}
	}
	e.timersKnown = true
	if e.wd.next >= 0 {
		consider(e.wd.next)
	}
	if e.probing {
		consider(e.nextProbe)
	}
	return next
}
