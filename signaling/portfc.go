package signaling

// PortFC (the papers' Algorithms 1-4), as two state machines that run on a
// node's datapath goroutine:
//
//   - Switch (Algorithms 1, 2, 4): on enqueue at egress port p, when the
//     sum of the A queues reaches X_off (or the B queue X̂_off) and that
//     (port, class) is not yet signalled, send Pause{class, p} to the
//     servers on every other port; on dequeue, at X_on (X̂_on), send Resume.
//     A relayed Pause/Resume{B, p} arriving from server Y on port q pauses
//     or resumes the A queue of port q that holds what Y will relay to the
//     congested port: Compress(p, Y.digit[l]), l the originating level.
//   - Server (Algorithm 3): Pause/Resume{A, p} from its level-l switch acts
//     on its a queue Compress(p, self.digit[l]) of port l; {B, p} on its b
//     queue n-1+Compress(p, self.digit[l]), and is relayed, marked, out of
//     its other ports. The relay queue and the HQ are never paused, and
//     servers detect no congestion of their own, so congestion travels at
//     most three hops (switch -> server -> switch).
//
// Lost signals and late nodes (hold.go): while a (port, class) is
// signalled, the switch repeats its state every Refresh (type State,
// relayed like a Pause), and receivers pause with an expiry of Hold
// (default 1 s, far above a daemon's scheduling stalls) that every
// repetition extends, so a pause holds while the switch is late. After a
// Resume the switch repeats it ResumeRepeats times, one Refresh apart. A
// lost Pause is repaired by the next refresh (within Refresh), a lost
// Resume by the next repetition; only ResumeRepeats+1 Resumes lost in a
// row leave the pause to lapse at Hold.

import (
	"net"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/queues"
)

// Env is what a flow-control state machine needs of its node's datapath.
// All calls happen on the datapath goroutine.
type Env interface {
	Egress(port int) *queues.Egress
	Now() int64
	// Emit copies the frame b and queues it in port's HQ; it reports false
	// when the node had no frame to spare (the signal is lost and counted).
	Emit(port int, b []byte) bool
}

// Thresholds of PortFC, in bytes: the A class compares the sum of a switch
// port's A queues, the B class its B queue.
type Thresholds struct {
	XoffA, XonA int
	XoffB, XonB int
	// PerPort, when set, holds the thresholds of each switch port (index:
	// port) in place of the four above: a threshold counts one-hop BDPs
	// at its own port's rate, and ports of one switch may differ (a
	// cable overridden, a Rail-only fabric's levels). Ports past its
	// end, and zero entries, take the four above.
	PerPort []PortThresholds
	// Refresh is how often a signalled state is repeated, and a Resume
	// after it was sent (ns).
	Refresh int64
	// Hold is how long a receiver keeps a pause without hearing it
	// again or a Resume (ns; 0: DefaultHold).
	Hold int64
}

// HoldNs is how long a receiver keeps a pause without hearing it again.
func (th Thresholds) HoldNs() int64 { return holdOr(th.Hold) }

// PortThresholds are PortFC's thresholds of one switch port, in bytes.
type PortThresholds struct {
	XoffA, XonA int
	XoffB, XonB int
}

// Port is the thresholds of switch port p (a zero entry is the node's).
func (th Thresholds) Port(p int) PortThresholds {
	if p >= 0 && p < len(th.PerPort) && th.PerPort[p] != (PortThresholds{}) {
		return th.PerPort[p]
	}
	return PortThresholds{XoffA: th.XoffA, XonA: th.XonA, XoffB: th.XoffB, XonB: th.XonB}
}

// Counters of signals, per port. Index [class-1][type-1].
type Counters struct {
	Sent     [2][3]uint64
	Received [2][3]uint64
	Relayed  [2][3]uint64 // by a server, out of this port
	Lost     uint64       // could not be emitted (no frame)
	Ignored  uint64       // arrived where they mean nothing (counted, dropped)
}

// Map flattens c for stats: "tx_pause_A", "rx_resume_B", "relayed_state_B", ...
func (c *Counters) Map() map[string]uint64 {
	m := make(map[string]uint64, 20)
	c.Fill(m)
	return m
}

// counterKeys are Fill's names: [direction][class][type].
var counterKeys = func() (k [3][2][3]string) {
	for d, dir := range [3]string{"tx_", "rx_", "relayed_"} {
		for i, cls := range [2]string{"A", "B"} {
			for j, typ := range [3]string{"pause", "resume", "state"} {
				k[d][i][j] = dir + typ + "_" + cls
			}
		}
	}
	return k
}()

// Fill sets Map's names in m. Once m holds them it allocates nothing.
func (c *Counters) Fill(m map[string]uint64) {
	m["lost"], m["ignored"] = c.Lost, c.Ignored
	for i := range 2 {
		for j := range 3 {
			m[counterKeys[0][i][j]] = c.Sent[i][j]
			m[counterKeys[1][i][j]] = c.Received[i][j]
			m[counterKeys[2][i][j]] = c.Relayed[i][j]
		}
	}
}

// SwitchPortFC is the switch side of PortFC for switch (Level, Index).
type SwitchPortFC struct {
	t        bcube.Topology
	level, w int
	env      Env
	th       Thresholds
	lim      []PortThresholds // per port, resolved from th
	own      []net.HardwareAddr
	peer     []net.HardwareAddr
	seq      []uint32
	on       [][2]bool  // signalled (port, class)
	resend   [][2]uint8 // Resumes of (port, class) still to repeat
	refresh             // of the signalled (port, class) and those owing Resumes
	C        []Counters
	// T is the pause timing of every (port, class) (fctiming.go), dep
	// the Pauses being timed.
	T   [][2]ClassTiming
	dep departures
	buf [FrameLen]byte
}

// NewSwitchPortFC returns the PortFC logic of switch (level, w).
func NewSwitchPortFC(t bcube.Topology, level, w int, env Env, th Thresholds) *SwitchPortFC {
	s := &SwitchPortFC{t: t, level: level, w: w, env: env, th: th,
		seq: make([]uint32, t.N()), on: make([][2]bool, t.N()), resend: make([][2]uint8, t.N()), C: make([]Counters, t.N()),
		T: make([][2]ClassTiming, t.N())}
	for p := 0; p < t.N(); p++ {
		l := th.Port(p)
		s.lim = append(s.lim, l)
		s.T[p] = [2]ClassTiming{{Class: "A", Xoff: l.XoffA, Xon: l.XonA}, {Class: "B", Xoff: l.XoffB, Xon: l.XonB}}
		s.own = append(s.own, bcube.SwitchPortMAC(level, w, p))
		s.peer = append(s.peer, bcube.HostPortMAC(t.ServerAt(level, w, p), level))
	}
	return s
}

// Hooks returns the queue hooks of egress port p.
func (s *SwitchPortFC) Hooks(p int) queues.Hooks { return switchHooks{s, p} }

type switchHooks struct {
	s *SwitchPortFC
	p int
}

func (h switchHooks) Enqueued(q int, p queues.Packet) {
	h.s.dep.enqueued(p)
	h.s.check(h.p, q, true)
}

func (h switchHooks) Dequeued(q int, p queues.Packet) {
	h.s.dep.dequeued(p, h.s.env)
	h.s.check(h.p, q, false)
}

// check runs Algorithms 1 and 2 for queue q of port p after an enqueue
// (up) or a dequeue.
func (s *SwitchPortFC) check(p, q int, up bool) {
	n := s.t.N()
	var class, level, xoff, xon int
	eg, lim := s.env.Egress(p), &s.lim[p]
	switch {
	case q < n-1:
		class, level, xoff, xon = ClassA, eg.GroupBytes(0), lim.XoffA, lim.XonA
	case q == n-1:
		class, level, xoff, xon = ClassB, eg.QueueBytes(q), lim.XoffB, lim.XonB
	default:
		return // the HQ is never counted for congestion
	}
	c := class - 1
	ct := &s.T[p][c]
	if up {
		ct.charged(level, s.env)
	}
	switch {
	case up && !s.on[p][c] && level >= xoff:
		now := s.env.Now()
		ct.paused(level, now)
		s.arm(now, s.th.Refresh)
		s.setResend(p, c, 0)
		s.on[p][c] = true
		s.active++
		s.broadcast(p, uint8(class), TypePause, now, &ct.Lat)
	case !up && s.on[p][c] && level <= xon:
		ct.resumed(level)
		s.arm(s.env.Now(), s.th.Refresh)
		s.on[p][c] = false
		s.active--
		s.setResend(p, c, ResumeRepeats)
		s.broadcast(p, uint8(class), TypeResume, 0, nil)
	}
}

// setResend sets how many more times the Resume of (p, class c) goes out.
func (s *SwitchPortFC) setResend(p, c int, n uint8) { setOwed(&s.resend[p][c], &s.owed, n) }

// broadcast sends {class, p} of type typ to the servers on every other
// port, each frame timed from t0 into lat unless lat is nil.
func (s *SwitchPortFC) broadcast(p int, class, typ uint8, t0 int64, lat *LatHist) {
	for q := 0; q < s.t.N(); q++ {
		if q == p {
			continue
		}
		s.seq[q]++
		PutPortFC(s.buf[:], s.peer[q], s.own[q], typ, 0, s.seq[q], class, uint8(p), uint8(s.level), uint32(s.w))
		if s.dep.emit(s.env, q, s.buf[:], t0, lat) {
			s.C[q].Sent[class-1][typ-1]++
		} else {
			s.C[q].Lost++
		}
	}
}

// OnSignal handles a signal frame that arrived on port in.
func (s *SwitchPortFC) OnSignal(in int, sig Signal) {
	class, typ := sig.Class(), sig.Type()
	if sig.Scheme() != SchemePortFC || class != ClassB || !sig.Relayed() || int(sig.OriginLevel()) == s.level ||
		int(sig.OriginLevel()) > s.t.K() || int(sig.Port()) >= s.t.N() {
		s.C[in].Ignored++
		return
	}
	s.C[in].Received[class-1][typ-1]++
	y := s.t.ServerAt(s.level, s.w, in)
	l := int(sig.OriginLevel())
	p := int(sig.Port())
	if p == s.t.Digit(y, l) {
		s.C[in].Ignored++ // Y itself is the congested port's server: nothing of Y's A traffic goes there
		return
	}
	q := bcube.Compress(p, s.t.Digit(y, l))
	apply(s.env.Egress(in), q, typ, s.env.Now(), s.th.HoldNs())
}

// NextTick is when Tick must run next, or -1 when nothing is signalled
// and no Resume is left to repeat.
func (s *SwitchPortFC) NextTick() int64 { return s.nextTick() }

// Tick repeats every signalled state and the Resumes still to repeat.
func (s *SwitchPortFC) Tick(now int64) {
	if !s.due(now, s.th.Refresh) {
		return
	}
	for p := range s.on {
		for c := 0; c < 2; c++ {
			switch {
			case s.on[p][c]:
				s.T[p][c].Refreshes++
				s.broadcast(p, uint8(c+1), TypeState, 0, nil)
			case s.resend[p][c] > 0:
				s.setResend(p, c, s.resend[p][c]-1)
				s.broadcast(p, uint8(c+1), TypeResume, 0, nil)
			}
		}
	}
}

// Signalled reports whether (port, class) is currently signalled.
func (s *SwitchPortFC) Signalled(p, class int) bool { return s.on[p][class-1] }

// Timing sets t to port p's pause timing: classes A and B.
func (s *SwitchPortFC) Timing(p int, t *FCTiming) {
	t.N = 0
	t.add(&s.T[p][0])
	t.add(&s.T[p][1])
}

// apply acts on queue q of eg for a pause, state or resume.
func apply(eg *queues.Egress, q int, typ uint8, now, hold int64) {
	if typ == TypeResume {
		eg.Resume(q, now)
	} else {
		eg.Pause(q, now, now+hold)
	}
}

// HostPortFC is the server side of PortFC for server Self.
type HostPortFC struct {
	t    bcube.Topology
	self int
	env  Env
	th   Thresholds
	own  []net.HardwareAddr // eth<l>
	sw   []net.HardwareAddr // the switch port eth<l> is cabled to
	seq  []uint32
	C    []Counters
	buf  [FrameLen]byte

	// Relay back-pressure (relayguard.go), per fabric port: guarded,
	// signalled, Resumes still to repeat; and their refresh timer.
	guard   []bool
	rOn     []bool
	rResend []uint8
	relay   refresh
	// RT is the pause timing of each guarded relay queue (fctiming.go),
	// dep the Pauses being timed.
	RT  []ClassTiming
	dep departures
}

// NewHostPortFC returns the PortFC logic of server self (ports 0..k are its
// fabric ports).
func NewHostPortFC(t bcube.Topology, self int, env Env, th Thresholds) *HostPortFC {
	h := &HostPortFC{t: t, self: self, env: env, th: th, seq: make([]uint32, t.Levels()), C: make([]Counters, t.Levels())}
	for l := 0; l < t.Levels(); l++ {
		w, p := t.SwitchOf(self, l)
		h.own = append(h.own, bcube.HostPortMAC(self, l))
		h.sw = append(h.sw, bcube.SwitchPortMAC(l, w, p))
	}
	return h
}

// OnSignal handles a signal frame that arrived on fabric port l.
func (h *HostPortFC) OnSignal(l int, sig Signal) {
	class, typ := sig.Class(), sig.Type()
	p := int(sig.Port())
	if sig.Scheme() != SchemePortFC || sig.Relayed() || int(sig.OriginLevel()) != l || p >= h.t.N() || p == h.t.Digit(h.self, l) {
		h.C[l].Ignored++
		return
	}
	h.C[l].Received[class-1][typ-1]++
	c := bcube.Compress(p, h.t.Digit(h.self, l))
	q := c // a queue: own traffic of more than one hop toward port p
	if class == ClassB {
		q = h.t.N() - 1 + c // b queue: own one-hop traffic to p's server
	}
	apply(h.env.Egress(l), q, typ, h.env.Now(), h.th.HoldNs())
	if class != ClassB {
		return
	}
	// Relay the B signal, marked, to the switches of the other levels.
	for l2 := 0; l2 < h.t.Levels(); l2++ {
		if l2 == l {
			continue
		}
		h.seq[l2]++
		PutPortFC(h.buf[:], h.sw[l2], h.own[l2], typ, FlagRelayed, h.seq[l2], uint8(class), uint8(p), sig.OriginLevel(), sig.OriginIndex())
		if h.env.Emit(l2, h.buf[:]) {
			h.C[l2].Relayed[class-1][typ-1]++
		} else {
			h.C[l2].Lost++
		}
	}
}
