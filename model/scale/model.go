package scale

import (
	"fmt"
	"math"
	"time"
)

// Model is a Target emulated at dilation D: a lab's link of the target's
// rate runs at Target.LinkRateBps / D.
type Model struct {
	Target Target  `json:"target"`
	D      float64 `json:"dilation"`
}

// MaxDilation bounds D: a microsecond of the target is at most 100 ms of
// the lab.
const MaxDilation = 100_000

// Dilate is t emulated on links of rateBps: D = t.LinkRateBps / rateBps.
// An unshaped lab (rateBps 0) runs at dilation 1.
func Dilate(t Target, rateBps uint64) (Model, error) {
	if err := t.Validate(); err != nil {
		return Model{}, err
	}
	m := Resolve(t, 0, rateBps)
	return WithDilation(m.Target, m.D)
}

// Resolve is the model of a lab of target t and dilation d whose links
// (the slowest, where they differ) run at rateBps, the zero values
// resolved: a zero t is the papers' network, or the native one for an
// unshaped lab (rateBps 0) of no given D; a zero d is t's link rate /
// rateBps, or 1 unshaped. It checks nothing (WithDilation does).
func Resolve(t Target, d float64, rateBps uint64) Model {
	if t.IsZero() {
		t = Papers()
		if rateBps == 0 && d == 0 {
			t = Native(0)
		}
	}
	if d == 0 {
		d = 1
		if rateBps != 0 && t.LinkRateBps > 0 {
			d = float64(t.LinkRateBps) / float64(rateBps)
		}
	}
	return Model{Target: t, D: d}
}

// WithDilation is t emulated at dilation d.
func WithDilation(t Target, d float64) (Model, error) {
	if err := t.Validate(); err != nil {
		return Model{}, err
	}
	if math.IsNaN(d) || d < 1 || d > MaxDilation {
		return Model{}, fmt.Errorf("dilation %g: want 1..%d (the lab's links at most as fast as the target's %s, a target µs at most %v)",
			d, MaxDilation, formatBps(float64(t.LinkRateBps)), time.Duration(MaxDilation)*time.Microsecond)
	}
	return Model{Target: t, D: d}, nil
}

// LinkRateBps is the lab's rate of a target link.
func (m Model) LinkRateBps() uint64 { return uint64(math.Round(float64(m.Target.LinkRateBps) / m.D)) }

// Time is the lab's duration of target time t (t x D).
func (m Model) Time(t time.Duration) time.Duration {
	return time.Duration(math.Round(float64(t) * m.D))
}

// Rate is the lab's rate of a target rate in bit/s (r / D), at least 1.
func (m Model) Rate(r int64) int64 { return max(1, int64(math.Round(float64(r)/m.D))) }

// TargetTime is the target's duration of lab time wall (wall / D).
func (m Model) TargetTime(wall time.Duration) time.Duration {
	return time.Duration(math.Round(float64(wall) / m.D))
}

// TargetRate is the target's rate of a lab rate in bit/s (x D).
func (m Model) TargetRate(bps float64) float64 { return bps * m.D }

// OneHopRTT is the lab's one-hop round trip the model asks for: the
// target's x D.
func (m Model) OneHopRTT() time.Duration { return m.Time(m.Target.OneHopRTT()) }

// LinkDelay is the lab's propagation delay of every link: the target's x
// D. The delay line holds a frame that long after its last bit, less the
// emulator's own latency (Link).
func (m Model) LinkDelay() time.Duration { return m.Time(m.Target.LinkDelay.D()) }

// BDP is the one-hop BDP in bytes of a lab port of rateBps (0: a target
// link's lab rate): the same bytes as the target's link of rateBps x D.
// At least one full frame.
func (m Model) BDP(rateBps uint64) int64 {
	return max(1518, m.Target.BDP(m.targetPortRate(rateBps)))
}

// targetPortRate is the target rate of a lab port of rateBps (0: the
// target's link rate).
func (m Model) targetPortRate(rateBps uint64) float64 {
	if rateBps == 0 {
		return float64(m.Target.LinkRateBps)
	}
	return float64(rateBps) * m.D
}

// rateShare is a lab port's rate as a share of a target link's lab rate:
// what scales the rate-proportional constants (ECN thresholds, DCQCN's
// steps) on a port faster or slower than the target's links.
func (m Model) rateShare(rateBps uint64) float64 {
	return m.targetPortRate(rateBps) / float64(m.Target.LinkRateBps)
}

// Thresholds are a port's flow-control thresholds in bytes: X_off and X_on
// of PortFC (both classes) and PFC, and BFC's Th's one-hop BDP. Alpha and
// Headroom are PFC's dynamic threshold at the port (Target.PFCAlpha
// scaled with the port's rate, Target.PFCHeadroomBDPs in bytes at it);
// Alpha 0: PFC's X_off and X_on are static.
type Thresholds struct {
	Xoff, Xon int
	BDP       int
	Alpha     float64
	Headroom  int
}

// Thresholds of a lab port of rateBps (0: a target link's).
func (m Model) Thresholds(rateBps uint64) Thresholds {
	bdp := m.BDP(rateBps)
	return Thresholds{
		Xoff:     int(math.Round(m.Target.XoffBDPs * float64(bdp))),
		Xon:      int(math.Round(m.Target.XonBDPs * float64(bdp))),
		BDP:      int(bdp),
		Alpha:    m.Target.PFCAlpha * m.rateShare(rateBps),
		Headroom: int(math.Round(m.Target.PFCHeadroomBDPs * float64(bdp))),
	}
}

// ECN is the marking of an egress of rateBps: the target's K_min and
// K_max (scaled with the port's rate when it is not a target link's: a
// 160 Gb/s port of a 100 Gb/s target marks at 160 KB) and P_max.
type ECN struct {
	KminBytes, KmaxBytes int
	Pmax                 float64
	AtDequeue            bool // decided as a packet leaves (Target.ECNAtDequeue)
}

// ECN of a lab port of rateBps (0: a target link's).
func (m Model) ECN(rateBps uint64) ECN {
	s := m.rateShare(rateBps)
	return ECN{
		KminBytes: int(math.Round(float64(m.Target.ECNKminBytes) * s)),
		KmaxBytes: int(math.Round(float64(m.Target.ECNKmaxBytes) * s)),
		Pmax:      m.Target.ECNPmax,
		AtDequeue: m.Target.ECNAtDequeue,
	}
}

// DCTCPECN is DCTCP's marking at an egress of rateBps: one threshold K
// (K_min = K_max, scaled with the port's rate as ECN's), P_max 1.
func (m Model) DCTCPECN(rateBps uint64) ECN {
	k := int(math.Round(float64(m.Target.DCTCPParams().KBytes) * m.rateShare(rateBps)))
	return ECN{KminBytes: k, KmaxBytes: k, Pmax: 1, AtDequeue: m.Target.ECNAtDequeue}
}

// FlowControl are the lab's times of the flow-control schemes.
type FlowControl struct {
	// Refresh and Hold: Target.FCRefresh x D, and Target.FCHold x D but
	// at least Emulator.HoldFloor (a pause must hold while the daemon
	// that sent it is descheduled).
	Refresh, Hold time.Duration
	// Sticky is BFC's sticky time: Target.BFCStickyRTTs one-hop RTTs.
	Sticky time.Duration
	// Watchdog's detection and restore times.
	WatchdogDetect, WatchdogRestore time.Duration
}

// FlowControl is the model's flow-control times.
func (m Model) FlowControl() FlowControl {
	t := m.Target
	return FlowControl{
		Refresh:         m.Time(t.FCRefresh.D()),
		Hold:            max(m.Time(t.FCHold.D()), HoldFloor),
		Sticky:          m.Time(time.Duration(math.Round(t.BFCStickyRTTs * float64(t.OneHopRTT())))),
		WatchdogDetect:  m.Time(t.WatchdogDetect.D()),
		WatchdogRestore: m.Time(t.WatchdogRestore.D()),
	}
}

// CI are congestion isolation's values on a lab port (fc ici and ci).
type CI struct {
	// Table is the congested-flow table's entries per egress port.
	Table int
	// Detect is the detection threshold in bytes: Target.CIDetectBDPs
	// one-hop BDPs at the port's rate.
	Detect int
	// CQKmin, CQKmax and Pmax mark the congested queue: the port's ECN.
	CQKmin, CQKmax int
	Pmax           float64
	// Residency is Target.CIResidency x D; Refresh, the least time
	// between two signals for one entry, the flow-control refresh.
	Residency, Refresh time.Duration
}

// CI is congestion isolation on a lab port of rateBps (0: a target
// link's lab rate); a target's zero values are the papers'.
func (m Model) CI(rateBps uint64) CI {
	table, detect, res := m.Target.CI()
	e := m.ECN(rateBps)
	return CI{Table: table, Detect: int(math.Round(detect * float64(m.BDP(rateBps)))),
		CQKmin: e.KminBytes, CQKmax: e.KmaxBytes, Pmax: e.Pmax,
		Residency: m.Time(res), Refresh: m.FlowControl().Refresh}
}

// Transport are the lab's constants of the RDMA transport on a NIC port
// of rateBps: the target's, times x D, data in the same bytes, rates
// scaled with the port's lab rate.
type Transport struct {
	LineRateBps            int64
	RTO, RTOLow, RTOHigh   time.Duration
	RTOThreshold           int
	BDPBytes               int64 // IRN's in-flight cap
	AckDelay               time.Duration
	AckEvery               int
	CNPInterval            time.Duration
	G                      float64
	AlphaPeriod, Increase  time.Duration
	Decrease               time.Duration // DCQCN's Mellanox variant's
	ByteCounter            int64
	F                      int
	AIRate, HAIRate, MinRt int64
	DCTCPG                 float64
	// HPCC: eta, maxStage, the base RTT T and W_AI in bytes.
	HPCCEta      float64
	HPCCMaxStage int
	HPCCBaseRTT  time.Duration
	HPCCWAI      float64
	// PacingCatchup is the emulator's (Emulator.Catchup at the rate).
	PacingCatchup time.Duration
	MTU           int
}

// Transport on a lab port of rateBps (0: a target link's lab rate).
func (m Model) Transport(rateBps uint64) Transport {
	if rateBps == 0 {
		rateBps = m.LinkRateBps()
	}
	t := m.Target
	s := m.rateShare(rateBps)
	rate := func(r int64) int64 { return max(1, int64(math.Round(float64(r)*s/m.D))) }
	h := t.HPCCParams()
	bdp := int64(math.Round(t.IRNCapBDPs * float64(m.BDP(rateBps))))
	return Transport{
		HPCCEta:       h.Eta,
		HPCCMaxStage:  h.MaxStage,
		HPCCBaseRTT:   m.Time(t.HPCCBaseRTT()),
		HPCCWAI:       float64(bdp) * (1 - h.Eta) / float64(h.N),
		LineRateBps:   int64(rateBps),
		RTO:           m.Time(t.RTO.D()),
		RTOLow:        m.Time(t.RTOLow.D()),
		RTOHigh:       m.Time(t.RTOHigh.D()),
		RTOThreshold:  t.RTOThreshold,
		BDPBytes:      bdp,
		AckDelay:      m.Time(t.AckDelay.D()),
		AckEvery:      t.AckEvery,
		CNPInterval:   m.Time(t.DCQCN.CNPInterval.D()),
		G:             t.DCQCN.G,
		AlphaPeriod:   m.Time(t.DCQCN.AlphaPeriod.D()),
		Increase:      m.Time(t.DCQCN.IncreasePeriod.D()),
		Decrease:      m.Time(t.DCQCN.DecreasePeriod.D()),
		ByteCounter:   t.DCQCN.ByteCounter,
		F:             t.DCQCN.F,
		AIRate:        rate(t.DCQCN.AIRateBps),
		HAIRate:       rate(t.DCQCN.HAIRateBps),
		MinRt:         min(rate(t.DCQCN.MinRateBps), int64(rateBps)),
		DCTCPG:        t.DCTCPParams().G,
		PacingCatchup: Catchup(rateBps),
		MTU:           t.MTU,
	}
}

// Runner are the lab's times of a run: queue sampling and the least
// drain time (both x D; the sampling at least Emulator.MinSample, what
// polling every node costs).
type Runner struct {
	QueueSample time.Duration
	DrainMin    time.Duration
}

// Runner is the model's run times.
func (m Model) Runner() Runner {
	return Runner{
		QueueSample: max(m.Time(m.Target.QueueSample.D()), MinSample),
		DrainMin:    m.Time(m.Target.DrainMin.D()),
	}
}

// String says which network is emulated at which D: "the papers' network
// (100 Gb/s, 1 µs links, 5 MB buffers) at D = 5000".
func (m Model) String() string {
	t := m.Target
	what := "target " + t.Name
	switch t.Name {
	case PapersName:
		what = "the papers' network"
	case NativeName:
		what = "the emulator's own network (links whose delay is the emulator's, thresholds and timers in its RTT)"
	}
	return fmt.Sprintf("%s (%s, %v links, %s buffers) at D = %s", what, formatBps(float64(t.LinkRateBps)),
		t.LinkDelay.D(), formatBytes(t.BufferBytes), formatD(m.D))
}

func formatD(d float64) string {
	if d == math.Trunc(d) {
		return fmt.Sprintf("%.0f", d)
	}
	return fmt.Sprintf("%.4g", d)
}

func formatBps(b float64) string {
	for _, u := range []struct {
		v float64
		s string
	}{{1e12, "Tb/s"}, {1e9, "Gb/s"}, {1e6, "Mb/s"}, {1e3, "kb/s"}} {
		if b >= u.v {
			return fmt.Sprintf("%.4g %s", b/u.v, u.s)
		}
	}
	return fmt.Sprintf("%.4g b/s", b)
}

func formatBytes(b int64) string {
	switch {
	case b >= 1e6:
		return fmt.Sprintf("%.4g MB", float64(b)/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.4g KB", float64(b)/1e3)
	}
	return fmt.Sprintf("%d B", b)
}
