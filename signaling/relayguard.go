package signaling

// Relay back-pressure for servers whose links differ in rate (a Rail-only
// fabric: level 0, the high-bandwidth domain, faster than level 1, the
// rails). PortFC's relay queue (RQ) is never paused and servers detect
// no congestion of their own: in a BCube of equal links that is safe, as
// what a server relays out of port l' came in on one link of the same
// rate and the RQ is served first. When the link it came in on is
// faster than port l', the RQ fills at the difference of the two rates
// with nothing to stop it, until the server's buffer overflows
// (docs/BENCHMARKS.md, "Rail-only NDC", measures it).
//
// A guarded port l' makes its RQ a congestion point, as a switch egress
// is: when the RQ reaches X_off (X̂_off, the B class's, at port l''s
// rate) the server tells the switch of each other level l, the one the
// relayed frames come from, to pause its A queues toward the server —
// they hold exactly what the server will relay, out of its other port —
// and resumes them at X_on. It does so with the frames switches already
// act on: a relayed Pause{B, p} for every port p of its level-l'
// switch but its own, which pauses the A queue compress(p,
// self.digit[l']) of the switch's port toward it, so all n-1 of them. The
// state is repeated every Refresh and a Resume ResumeRepeats times, as a
// switch does.
//
// Deadlock freedom holds: the RQ itself is never paused and drains at its
// link's rate; what it pauses, switch A queues, can only pause sources'
// own a queues in turn (Algorithm 1), which hold no relayed traffic. The
// chain is RQ -> switch -> source, as PortFC's three hops.

import "github.com/bcfab/bcfab/queues"

// GuardRelay makes the relay queue of fabric port l a congestion point
// (see above); th's thresholds of port l (its B class) apply. Ports not
// guarded behave as PortFC's servers always do.
func (h *HostPortFC) GuardRelay(l int) {
	if h.guard == nil {
		h.guard = make([]bool, h.t.Levels())
		h.rOn = make([]bool, h.t.Levels())
		h.rResend = make([]uint8, h.t.Levels())
		h.RT = make([]ClassTiming, h.t.Levels())
	}
	h.guard[l] = true
	lim := h.th.Port(l)
	h.RT[l] = ClassTiming{Class: "RQ", Xoff: lim.XoffB, Xon: lim.XonB}
}

// Guarded reports whether port l's relay queue is guarded.
func (h *HostPortFC) Guarded(l int) bool { return h.guard != nil && h.guard[l] }

// Guarding reports whether any port's relay queue is guarded.
func (h *HostPortFC) Guarding() bool { return h.guard != nil }

// RelayHooks are the queue hooks of fabric port l: nil unless a port is
// guarded. Every fabric port has them then, guarded or not: the guard's
// pauses leave by the other ports, whose hooks time them.
func (h *HostPortFC) RelayHooks(l int) *RelayHooks {
	if !h.Guarding() {
		return nil
	}
	return &RelayHooks{h, l}
}

// RelayHooks watch a guarded port's relay queue.
type RelayHooks struct {
	h *HostPortFC
	l int
}

func (k *RelayHooks) Enqueued(q int, p queues.Packet) {
	k.h.dep.enqueued(p)
	k.h.checkRelay(k.l, q, true)
}

func (k *RelayHooks) Dequeued(q int, p queues.Packet) {
	k.h.dep.dequeued(p, k.h.env)
	k.h.checkRelay(k.l, q, false)
}

// RelaySignalled reports whether port l's relay queue holds its
// upstream switches paused.
func (h *HostPortFC) RelaySignalled(l int) bool { return h.rOn != nil && h.rOn[l] }

// checkRelay signals when queue q of port l, if its RQ and guarded,
// crosses a threshold.
func (h *HostPortFC) checkRelay(l, q int, up bool) {
	if q != h.t.ServerRQ() || !h.guard[l] {
		return
	}
	level, ct := h.env.Egress(l).QueueBytes(q), &h.RT[l]
	if up {
		ct.charged(level, h.env)
	}
	switch {
	case up && !h.rOn[l] && level >= ct.Xoff:
		now := h.env.Now()
		ct.paused(level, now)
		h.relay.arm(now, h.th.Refresh)
		setOwed(&h.rResend[l], &h.relay.owed, 0)
		h.rOn[l] = true
		h.relay.active++
		h.relaySignal(l, TypePause, now, &ct.Lat)
	case !up && h.rOn[l] && level <= ct.Xon:
		ct.resumed(level)
		h.relay.arm(h.env.Now(), h.th.Refresh)
		h.rOn[l] = false
		h.relay.active--
		setOwed(&h.rResend[l], &h.relay.owed, ResumeRepeats)
		h.relaySignal(l, TypeResume, 0, nil)
	}
}

// relaySignal sends typ for port l's RQ to the switches of the other
// levels: a relayed {B, p} for every port p of port l's switch but the
// server's own; each frame timed from t0 into lat unless lat is nil.
func (h *HostPortFC) relaySignal(l int, typ uint8, t0 int64, lat *LatHist) {
	w, own := h.t.SwitchOf(h.self, l)
	for l2 := 0; l2 < h.t.Levels(); l2++ {
		if l2 == l {
			continue
		}
		for p := 0; p < h.t.N(); p++ {
			if p == own {
				continue
			}
			h.seq[l2]++
			PutPortFC(h.buf[:], h.sw[l2], h.own[l2], typ, FlagRelayed, h.seq[l2], ClassB, uint8(p), uint8(l), uint32(w))
			if h.dep.emit(h.env, l2, h.buf[:], t0, lat) {
				h.C[l2].Sent[ClassB-1][typ-1]++
			} else {
				h.C[l2].Lost++
			}
		}
	}
}

// Timing sets t to port l's pause timing: its relay queue's ("RQ"),
// guarded, or none.
func (h *HostPortFC) Timing(l int, t *FCTiming) {
	t.N = 0
	if h.Guarded(l) {
		t.add(&h.RT[l])
	}
}

// NextTick is when Tick must run next, or -1 when no relay queue holds
// its switches paused and no Resume is left to repeat.
func (h *HostPortFC) NextTick() int64 { return h.relay.nextTick() }

// Tick repeats the state of every signalling relay queue and the Resumes
// still to repeat.
func (h *HostPortFC) Tick(now int64) {
	if !h.relay.due(now, h.th.Refresh) {
		return
	}
	for l := range h.rOn {
		switch {
		case h.rOn[l]:
			h.RT[l].Refreshes++
			h.relaySignal(l, TypeState, 0, nil)
		case h.rResend[l] > 0:
			setOwed(&h.rResend[l], &h.relay.owed, h.rResend[l]-1)
			h.relaySignal(l, TypeResume, 0, nil)
		}
	}
}
