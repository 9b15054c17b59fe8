package transport

import (
	"errors"
	"fmt"
	"time"
)

// Mode is a run's loss-recovery mode (DESIGN §7).
type Mode uint8

const (
	// Lossless expects a fabric that drops nothing: the receiver counts a
	// PSN gap as a failure and tells the sender, which fails the flow;
	// nothing is ever retransmitted.
	Lossless Mode = iota
	// GBN is Go-Back-N, RoCE's loss recovery: the receiver drops packets
	// that arrive out of order and NAKs the first gap once; the sender
	// rewinds to the NAK'd PSN, or to the oldest unacknowledged packet
	// when its retransmission timer fires.
	GBN
	// IRN is selective repeat with IRN's refinements: the receiver keeps
	// out-of-order packets and answers each with a selective NAK; the
	// sender retransmits only what is lost, uses a short timeout when few
	// packets are in flight, and keeps at most one BDP in flight.
	IRN
)

// ParseMode accepts "lossless", "gbn" and "irn".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "lossless":
		return Lossless, nil
	case "gbn":
		return GBN, nil
	case "irn":
		return IRN, nil
	}
	return 0, fmt.Errorf("transport: unknown mode %q (want lossless, gbn or irn)", s)
}

func (m Mode) String() string {
	switch m {
	case Lossless:
		return "lossless"
	case GBN:
		return "gbn"
	case IRN:
		return "irn"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// MarshalText makes a Mode its name in JSON and flags.
func (m Mode) MarshalText() ([]byte, error) {
	if m > IRN {
		return nil, fmt.Errorf("transport: invalid mode %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText parses a Mode's name.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// DCQCNParams are the reaction point's (the sender's) constants.
type DCQCNParams struct {
	// Enabled turns rate control on; off, a sender paces at the line rate.
	Enabled bool
	// G is the gain of alpha's moving average.
	G float64
	// AlphaPeriod (K) is how often alpha decays by (1-G) with no CNP.
	AlphaPeriod time.Duration
	// IncreasePeriod (T) is the rate-increase timer.
	IncreasePeriod time.Duration
	// ByteCounter (B) is the bytes sent between byte-counter increase
	// events.
	ByteCounter int64
	// F is the number of timer or byte-counter events in fast recovery;
	// beyond it the increase is additive, beyond it on both hyper.
	F int
	// AIRateBps (R_AI) and HAIRateBps (R_HAI) are the additive and hyper
	// increase steps of the target rate; MinRateBps the lowest rate a cut
	// goes to.
	AIRateBps, HAIRateBps, MinRateBps int64
	// Window adds a window of one BDP (the BDP cap, BDPBytes) to the rate:
	// DCQCN+win, as the HPCC paper evaluates it.
	Window bool
	// Mlx runs DCQCN as Mellanox's NICs do and the HPCC simulator models
	// them (its "mlx" version, CLAMP_TARGET_RATE 0): a CNP is noted, and
	// the rate is cut every DecreasePeriod if one came since the last
	// check, alpha updated every AlphaPeriod on a clock of its own, both
	// clocks started by the flow's first CNP; a cut lowers the target
	// rate only when an increase event came since the cut before it, and
	// the increase runs by the timer alone (no byte counter): F events
	// of fast recovery, one additive, then hyper increase. Its receiver
	// sends a CNP for every marked packet, as the simulator flags every
	// ACK of one (CNPInterval is the paper's receiver's). Off, DCQCN is
	// the paper's (SIGCOMM 2015): every CNP cuts at once and sets the
	// target to the rate it cuts, alpha decays from the last CNP, and
	// hyper increase needs both the timer's and the byte counter's
	// stages past F.
	Mlx bool
	// DecreasePeriod is Mlx's decrease check (the simulator's
	// RATE_DECREASE_INTERVAL).
	DecreasePeriod time.Duration
}

// DCTCPParams are DCTCP's sender constants (dctcp.go). Its window
// starts at the BDP cap (Params.BDPBytes) and its switches mark at one
// threshold (ECNParams with KminBytes = KmaxBytes).
type DCTCPParams struct {
	// Enabled turns the window on; off, nothing limits a flow but Window.
	Enabled bool
	// G is the gain of alpha's moving average.
	G float64
}

// HPCCParams are HPCC's sender constants (hpcc.go). Its window starts at
// the line rate times BaseRTT.
type HPCCParams struct {
	// Enabled turns the window and rate on; data packets then carry an
	// INT shim and receivers echo it.
	Enabled bool
	// Eta is the target utilization (η), MaxStage the additive steps
	// before a multiplicative one.
	Eta      float64
	MaxStage int
	// BaseRTT is T, the base round trip of the network's longest path.
	BaseRTT time.Duration
	// WAIBytes is the additive step W_AI.
	WAIBytes float64
}

// ECNParams are the RED-like marking thresholds of the switch side:
// nothing is marked below KminBytes of queue, the probability rises
// linearly to Pmax at KmaxBytes and everything is marked above, with the
// field names and types of queues.ECNConfig's thresholds.
type ECNParams struct {
	KminBytes, KmaxBytes int
	Pmax                 float64
}

// Params are the constants of a run's transport, shared by its senders
// and receivers. DefaultParams fills them in; the package documentation
// lists each with its origin.
type Params struct {
	// LineRateBps is the rate of the sender's link: the pacing rate
	// without DCQCN and DCQCN's ceiling. 0 turns pacing off (and is
	// invalid with DCQCN).
	LineRateBps int64
	// WireOverhead is what a data packet adds to its payload on the link
	// as the shaper counts it, for pacing and DCQCN's byte counter.
	WireOverhead int
	// PacingCatchup is how much of its schedule a sender served late may
	// make up for by sending back to back; time lost beyond it is lost.
	// 0 keeps the schedule only when late by less than a packet time. A
	// caller whose clock ticks coarsely compared with a packet time (an
	// emulated NIC woken by a loaded scheduler) needs it to reach the
	// pacing rate on average.
	PacingCatchup time.Duration

	// RTO is Go-Back-N's retransmission timeout.
	RTO time.Duration
	// RTOLow and RTOHigh are IRN's timeouts: RTOLow while fewer than
	// RTOThreshold packets are in flight (unacknowledged, not SACKed),
	// RTOHigh otherwise.
	RTOLow, RTOHigh time.Duration
	RTOThreshold    int
	// BDPBytes is IRN's in-flight cap: at most ceil(BDPBytes / MTU)
	// packets between the oldest unacknowledged and the next new one.
	BDPBytes int64
	// Window caps the outstanding packets in every mode (0: MaxWindow).
	Window int
	// LosslessTimeout fails a lossless flow that has data outstanding and
	// no acknowledgement for this long since its frames last left the NIC,
	// as an RDMA QP gives up after its retry count; 0 (the default) never.
	// In a lossless fabric a flow without acknowledgements is held —
	// paused, queued behind others, deadlocked, or carried by a daemon
	// that fell behind — not lost: the watchdog, the drop counters and
	// emulation health say which, and a run's end stops it and counts it
	// incomplete. A loss shows as a PSN gap at the receiver, which fails
	// the flow whatever this is (a lost tail is in the drop counters).
	LosslessTimeout time.Duration

	// AckEvery is how many packets a receiver acknowledges at once; a
	// packet asking for an ACK, the flow's last and a filled gap are
	// acknowledged at once, and AckDelay after the oldest packet not yet
	// acknowledged the coalescing timer does.
	AckEvery int
	AckDelay time.Duration
	// CNPInterval is the least time between two CNPs of one flow (DCQCN's
	// notification point).
	CNPInterval time.Duration

	DCQCN DCQCNParams
	DCTCP DCTCPParams
	HPCC  HPCCParams
	ECN   ECNParams
}

// INT reports whether data packets carry an INT shim and receivers echo
// it (HPCC).
func (p *Params) INT() bool { return p.HPCC.Enabled }

// echoesCE reports whether receivers echo CE marks in their ACKs (ECE)
// rather than answer them with CNPs: a window congestion control.
func (p *Params) echoesCE() bool { return p.DCTCP.Enabled }

// CNPEvery is the least time between two CNPs of a flow its receiver
// sends: none under DCQCN's Mellanox variant, whose sender notes every
// marked packet.
func (p *Params) CNPEvery() time.Duration {
	if p.DCQCN.Enabled && p.DCQCN.Mlx {
		return 0
	}
	return p.CNPInterval
}

// DefaultWireOverhead is what a data packet adds to its payload on the
// wire: Ethernet 14 + 802.1Q 4 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 bytes,
// plus the 24 bytes of preamble, FCS and inter-frame gap the shaper
// counts.
const DefaultWireOverhead = 86

// ackDelay is the coalescing timer of a receiver of packets of mtu
// payload bytes: AckDelay, but never less than AckEvery packets' time at
// the line rate. The papers' timer (half a one-hop RTT) outlasts a dozen
// 1 KB packets at 100 Gb/s, and so does a dilated lab's (package scale),
// where the floor changes nothing; a network whose timer is shorter than
// AckEvery packets (the emulator's native one at a low rate) would
// otherwise acknowledge every data packet.
func (p *Params) ackDelay(mtu int) time.Duration {
	if p.LineRateBps <= 0 {
		return p.AckDelay
	}
	pkt := time.Duration(int64(mtu+p.WireOverhead) * 8 * int64(time.Second) / p.LineRateBps)
	return max(p.AckDelay, time.Duration(p.AckEvery)*pkt)
}

// Validate reports parameters a Sender or Receiver cannot run with.
func (p *Params) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("transport: "+format, a...)) }
	if p.LineRateBps < 0 {
		bad("negative line rate %d", p.LineRateBps)
	}
	if p.WireOverhead < 0 {
		bad("negative wire overhead %d", p.WireOverhead)
	}
	if p.PacingCatchup < 0 {
		bad("negative pacing catch-up %v", p.PacingCatchup)
	}
	if p.RTO <= 0 || p.RTOLow <= 0 || p.RTOHigh <= 0 {
		bad("timeouts must be positive (rto %v, low %v, high %v)", p.RTO, p.RTOLow, p.RTOHigh)
	}
	if p.RTOThreshold < 0 {
		bad("negative RTO threshold %d", p.RTOThreshold)
	}
	if p.BDPBytes <= 0 {
		bad("BDP cap %d bytes, want > 0", p.BDPBytes)
	}
	if p.Window < 0 || p.Window > MaxWindow {
		bad("window %d outside [0, %d]", p.Window, MaxWindow)
	}
	if p.LosslessTimeout < 0 {
		bad("negative lossless timeout %v", p.LosslessTimeout)
	}
	if p.AckEvery < 1 {
		bad("ack every %d packets, want >= 1", p.AckEvery)
	}
	if p.AckDelay <= 0 {
		bad("ack delay %v, want > 0", p.AckDelay)
	}
	if p.CNPInterval < 0 {
		bad("negative CNP interval %v", p.CNPInterval)
	}
	if d := &p.DCQCN; d.Enabled {
		switch {
		case p.LineRateBps <= 0:
			bad("DCQCN needs a line rate")
		case !(d.G > 0 && d.G < 1):
			bad("DCQCN g %v outside (0, 1)", d.G)
		case d.AlphaPeriod <= 0 || d.IncreasePeriod <= 0:
			bad("DCQCN periods must be positive (alpha %v, increase %v)", d.AlphaPeriod, d.IncreasePeriod)
		case d.Mlx && d.DecreasePeriod <= 0:
			bad("DCQCN (mlx) decrease period %v, want > 0", d.DecreasePeriod)
		case d.ByteCounter <= 0 || d.F < 0:
			bad("DCQCN byte counter %d and F %d", d.ByteCounter, d.F)
		case d.AIRateBps < 0 || d.HAIRateBps < 0 || d.MinRateBps <= 0 || d.MinRateBps > p.LineRateBps:
			bad("DCQCN rates: ai %d, hai %d, min %d (line %d)", d.AIRateBps, d.HAIRateBps, d.MinRateBps, p.LineRateBps)
		}
	}
	if d := &p.DCTCP; d.Enabled {
		switch {
		case p.DCQCN.Enabled:
			bad("DCTCP and DCQCN both on: a flow has one congestion control")
		case !(d.G > 0 && d.G < 1):
			bad("DCTCP g %v outside (0, 1)", d.G)
		}
	}
	if h := &p.HPCC; h.Enabled {
		switch {
		case p.DCQCN.Enabled || p.DCTCP.Enabled:
			bad("HPCC with DCQCN or DCTCP: a flow has one congestion control")
		case p.LineRateBps <= 0:
			bad("HPCC needs a line rate")
		case !(h.Eta > 0 && h.Eta <= 1) || h.MaxStage < 0:
			bad("HPCC eta %v outside (0, 1] or max stage %d < 0", h.Eta, h.MaxStage)
		case h.BaseRTT <= 0 || h.WAIBytes < 0:
			bad("HPCC base RTT %v must be positive, W_AI %v not negative", h.BaseRTT, h.WAIBytes)
		}
	}
	if e := p.ECN; e.KminBytes < 0 || e.KminBytes > e.KmaxBytes || (e.KmaxBytes > 0 && !(e.Pmax > 0 && e.Pmax <= 1)) {
		bad("ECN: want 0 <= kmin (%d) <= kmax (%d) and 0 < pmax (%g) <= 1", e.KminBytes, e.KmaxBytes, e.Pmax)
	}
	return errors.Join(errs...)
}

// window is the most packets a sender of mode with packets of mtu bytes
// may have outstanding: Window (or MaxWindow), and for IRN at most the
// BDP cap.
func (p *Params) window(mode Mode, mtu int) int64 {
	w := int64(MaxWindow)
	if p.Window > 0 {
		w = int64(p.Window)
	}
	if mode == IRN {
		w = min(w, max(1, (p.BDPBytes+int64(mtu)-1)/int64(mtu)))
	}
	return w
}

// CC is a flow's congestion control.
type CC uint8

const (
	// CCNone: the sender paces at the line rate, nothing else.
	CCNone CC = iota
	// CCDCQCN: DCQCN's rate, from CNPs (RED marking at the switches).
	CCDCQCN
	// CCDCTCP: DCTCP's window, from marks echoed in ACKs (marking at one
	// threshold K).
	CCDCTCP
	// CCHPCC: HPCC's window and rate, from INT records echoed in ACKs
	// (every egress stamps the data packets).
	CCHPCC
	// CCDCQCNWin: DCQCN with a window of one BDP (DCQCN+win).
	CCDCQCNWin
	// CCDCQCNMlx: DCQCN as Mellanox's NICs run it (DCQCNParams.Mlx).
	CCDCQCNMlx
)

// CCNames are the congestion controls' names, by value.
var CCNames = [...]string{CCNone: "none", CCDCQCN: "dcqcn", CCDCTCP: "dctcp", CCHPCC: "hpcc", CCDCQCNWin: "dcqcn-win", CCDCQCNMlx: "dcqcn-mlx"}

// ParseCC accepts the names of CCNames.
func ParseCC(s string) (CC, error) {
	for i, n := range CCNames {
		if s == n {
			return CC(i), nil
		}
	}
	return 0, fmt.Errorf("transport: unknown congestion control %q (want hpcc, dctcp, dcqcn, dcqcn-win, dcqcn-mlx or none)", s)
}

func (c CC) String() string {
	if int(c) < len(CCNames) {
		return CCNames[c]
	}
	return fmt.Sprintf("CC(%d)", int(c))
}

// MarshalText makes a CC its name in JSON and flags.
func (c CC) MarshalText() ([]byte, error) {
	if int(c) >= len(CCNames) {
		return nil, fmt.Errorf("transport: invalid congestion control %d", int(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText parses a CC's name.
func (c *CC) UnmarshalText(b []byte) error {
	v, err := ParseCC(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// CC is the congestion control p turns on.
func (p *Params) CC() CC {
	switch {
	case p.HPCC.Enabled:
		return CCHPCC
	case p.DCTCP.Enabled:
		return CCDCTCP
	case p.DCQCN.Enabled && p.DCQCN.Window:
		return CCDCQCNWin
	case p.DCQCN.Enabled && p.DCQCN.Mlx:
		return CCDCQCNMlx
	case p.DCQCN.Enabled:
		return CCDCQCN
	}
	return CCNone
}

// Rate reports whether c is DCQCN's rate machine, with or without its
// window, in either variant: the congestion controls that hear CNPs.
func (c CC) Rate() bool { return c == CCDCQCN || c == CCDCQCNWin || c == CCDCQCNMlx }

// SetCC turns on c and the others off, keeping their constants.
func (p *Params) SetCC(c CC) {
	p.DCQCN.Enabled, p.DCTCP.Enabled, p.HPCC.Enabled = c.Rate(), c == CCDCTCP, c == CCHPCC
	p.DCQCN.Window = c == CCDCQCNWin
	p.DCQCN.Mlx = c == CCDCQCNMlx
}
