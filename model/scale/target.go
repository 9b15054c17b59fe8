// Package scale is the lab's scale model of a target network: the one
// place where every time, rate and amount of data a node, a flow or a run
// uses is derived.
//
// A lab emulates a target network (Target: by default the papers' 100
// Gb/s links, 1 µs link delay, 5 MB buffer per node, 1 KB MTU) at a
// dilation D (Model): every time of the target is D times longer in the
// lab, every rate D times slower, and every amount of data the same bytes.
// A 1 MB flow is 1 MB in the lab; the papers' 25 KB one-hop BDP is 25 KB;
// their 1 µs link is a D µs delay line; their 55 µs DCQCN timer fires
// every 55·D µs. So the control loops see the papers' network exactly:
// a threshold is the same number of packets and of round trips, a flow
// the same number of BDPs, the buffer the same number of RTTs of
// traffic. This is time-dilated emulation (Gupta et al., "To Infinity and
// Beyond: Time-Warped Network Emulation", NSDI'06), done by the
// parameters rather than by a virtual clock, and results are read back in
// the target's units (Model.TargetTime, Model.TargetRate).
//
// What the emulator adds is not part of the target: its own per-hop
// latency (measured at lab up and taken off the delay lines), and the
// tolerances that absorb its scheduling jitter (Emulator). Both are
// listed here so that nothing else invents a time.
package scale

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/bcfab/bcfab/model/units"
)

// Target is a network a lab emulates, every field in the target's own
// units. Rates of the flow-control and congestion-control machinery are
// those of a link of LinkRateBps; a port of another rate (a Rail-only
// fabric's faster level) scales its rate-proportional values with its
// own rate.
type Target struct {
	// Name says what the target is ("papers", "native", or a file's).
	Name string `json:"name" yaml:"name"`

	// LinkRateBps is the rate of the target's links, on the wire.
	LinkRateBps int64 `json:"link_rate_bps" yaml:"link-rate"`
	// LinkDelay is each link's propagation delay; the one-hop RTT, which
	// thresholds count BDPs of, is twice it.
	LinkDelay units.Duration `json:"link_delay" yaml:"link-delay"`
	// BufferBytes is each node's shared buffer.
	BufferBytes int64 `json:"buffer_bytes" yaml:"buffer"`
	// MTU is the payload of an RDMA packet.
	MTU int `json:"mtu" yaml:"mtu"`

	// Flow control: PortFC's and PFC's X_off and X_on in one-hop BDPs,
	// how often a signalled state is repeated and how long a receiver
	// keeps a pause it does not hear again, BFC's sticky time in one-hop
	// RTTs, and the deadlock watchdog's detection and restore times.
	XoffBDPs float64 `json:"xoff_bdps" yaml:"xoff-bdps"`
	XonBDPs  float64 `json:"xon_bdps" yaml:"xon-bdps"`
	// PFCAlpha, when above 0, makes PFC's X_off dynamic, as a
	// shared-buffer switch's: an ingress queue pauses when its bytes
	// reach PFCAlpha times the node's free shared buffer (the buffer less
	// the headroom it reserves and the bytes it holds), and resumes
	// (X_off - X_on) below that; PFCAlpha is a target link's, a port of
	// another rate scales it with its rate. PFCHeadroomBDPs is the
	// headroom reserved per fabric port and lossless priority, in one-hop
	// BDPs at the port's rate. 0: static X_off and X_on (the papers').
	PFCAlpha        float64        `json:"pfc_alpha,omitempty" yaml:"pfc-alpha,omitempty"`
	PFCHeadroomBDPs float64        `json:"pfc_headroom_bdps,omitempty" yaml:"pfc-headroom-bdps,omitempty"`
	FCRefresh       units.Duration `json:"fc_refresh" yaml:"fc-refresh"`
	FCHold          units.Duration `json:"fc_hold" yaml:"fc-hold"`
	BFCStickyRTTs   float64        `json:"bfc_sticky_rtts" yaml:"bfc-sticky-rtts"`
	WatchdogDetect  units.Duration `json:"watchdog_detect" yaml:"watchdog-detect"`
	WatchdogRestore units.Duration `json:"watchdog_restore" yaml:"watchdog-restore"`

	// Congestion isolation (fc ici and ci): the congested-flow table's
	// entries per egress port, the detection threshold in one-hop BDPs,
	// and how long an entry outlives its last refresh. The congested
	// queue marks between ECNKminBytes and ECNKmaxBytes on its own
	// length. Zero: the papers' values (CIDefaults).
	CITable      int            `json:"ci_table,omitempty" yaml:"ci-table,omitempty"`
	CIDetectBDPs float64        `json:"ci_detect_bdps,omitempty" yaml:"ci-detect-bdps,omitempty"`
	CIResidency  units.Duration `json:"ci_residency,omitempty" yaml:"ci-residency,omitempty"`

	// ECN marking (DCQCN's switch side) on a link of LinkRateBps: RED
	// between K_min and K_max with P_max.
	ECNKminBytes int64   `json:"ecn_kmin_bytes" yaml:"ecn-kmin"`
	ECNKmaxBytes int64   `json:"ecn_kmax_bytes" yaml:"ecn-kmax"`
	ECNPmax      float64 `json:"ecn_pmax" yaml:"ecn-pmax"`
	// ECNAtDequeue marks by the queue a packet leaves behind, as it
	// leaves, where the default marks by the queue it joins: the HPCC
	// ns-3 simulator's switches mark so (docs/VALIDATION.md).
	ECNAtDequeue bool `json:"ecn_at_dequeue,omitempty" yaml:"ecn-at-dequeue,omitempty"`

	// DCQCN's reaction point and notification point.
	DCQCN DCQCN `json:"dcqcn" yaml:"dcqcn"`
	// DCTCP's gain and marking threshold (--cc dctcp). Zero: DCTCPDefaults.
	DCTCP DCTCP `json:"dctcp,omitzero" yaml:"dctcp,omitempty"`
	// HPCC's constants (--cc hpcc). Zero: HPCCDefaults.
	HPCC HPCC `json:"hpcc,omitzero" yaml:"hpcc,omitempty"`

	// The RDMA transport: Go-Back-N's RTO, IRN's RTO_low / RTO_high and
	// the in-flight count that switches between them, IRN's in-flight
	// cap in one-hop BDPs (the longest path's round trip), and the
	// receivers' ACK coalescing.
	RTO          units.Duration `json:"rto" yaml:"rto"`
	RTOLow       units.Duration `json:"rto_low" yaml:"rto-low"`
	RTOHigh      units.Duration `json:"rto_high" yaml:"rto-high"`
	RTOThreshold int            `json:"rto_threshold" yaml:"rto-threshold"`
	IRNCapBDPs   float64        `json:"irn_cap_bdps" yaml:"irn-cap-bdps"`
	AckDelay     units.Duration `json:"ack_delay" yaml:"ack-delay"`
	AckEvery     int            `json:"ack_every" yaml:"ack-every"`
	// NICQueueBytes is how much of one flow a server NIC's egress queue
	// may hold (0: DefaultNICQueueBytes); a flow may always
	// queue one packet, so a value below a packet serves the NIC's flows
	// a packet each in turn, as the HPCC ns-3 simulator's NIC serves its
	// QPs (docs/VALIDATION.md).
	NICQueueBytes int64 `json:"nic_queue_bytes,omitempty" yaml:"nic-queue-bytes,omitempty"`

	// Runner times: how often a run samples the queues, and the least
	// time a workload waits for its flows after the last one starts.
	QueueSample units.Duration `json:"queue_sample" yaml:"queue-sample"`
	DrainMin    units.Duration `json:"drain_min" yaml:"drain-min"`
}

// DCQCN are DCQCN's constants at a link of Target.LinkRateBps.
type DCQCN struct {
	G              float64        `json:"g" yaml:"g"`
	AlphaPeriod    units.Duration `json:"alpha_period" yaml:"alpha-period"`
	IncreasePeriod units.Duration `json:"increase_period" yaml:"increase-period"`
	ByteCounter    int64          `json:"byte_counter" yaml:"byte-counter"`
	F              int            `json:"f" yaml:"f"`
	AIRateBps      int64          `json:"ai_rate_bps" yaml:"ai-rate"`
	HAIRateBps     int64          `json:"hai_rate_bps" yaml:"hai-rate"`
	MinRateBps     int64          `json:"min_rate_bps" yaml:"min-rate"`
	CNPInterval    units.Duration `json:"cnp_interval" yaml:"cnp-interval"`
	// DecreasePeriod is how often a sender of DCQCN's Mellanox variant
	// (--cc dcqcn-mlx) applies the CNPs that came since its last check
	// (the HPCC simulator's RATE_DECREASE_INTERVAL).
	DecreasePeriod units.Duration `json:"decrease_period" yaml:"decrease-period"`
}

// DCTCP are DCTCP's constants at a link of Target.LinkRateBps: alpha's
// gain and the one marking threshold K (K_min = K_max = K, P_max 1).
type DCTCP struct {
	G      float64 `json:"g,omitempty" yaml:"g,omitempty"`
	KBytes int64   `json:"k_bytes,omitempty" yaml:"k,omitempty"`
}

// DCTCP's defaults: g = 1/16, the DCTCP paper's; K = 100 KB at 100 Gb/s,
// the papers' DCQCN K_min (the same point of the queue at which marking
// starts), one BDP of the longest BCube(n,1) path and so well above
// DCTCP's rule K > C x RTT / 7 (14 KB).
const (
	DCTCPDefaultG      = 1.0 / 16
	DCTCPDefaultKBytes = 100_000
)

// DCTCPParams are the target's DCTCP constants, its defaults where zero.
func (t Target) DCTCPParams() DCTCP {
	d := t.DCTCP
	if d.G == 0 {
		d.G = DCTCPDefaultG
	}
	if d.KBytes == 0 {
		d.KBytes = DCTCPDefaultKBytes
	}
	return d
}

// HPCC are HPCC's constants: the target utilization eta, the additive
// steps before a multiplicative one (maxStage), and N, the concurrent
// flows per link W_AI is sized for (W_AI = W_init (1 - eta) / N). Its
// base RTT T is the longest path's (IRNCapBDPs one-hop RTTs: four links
// of a BCube(n,1) path), so W_init, the line rate x T, is the BDP the
// transport's BDP cap is.
type HPCC struct {
	Eta      float64 `json:"eta,omitempty" yaml:"eta,omitempty"`
	MaxStage int     `json:"max_stage,omitempty" yaml:"max-stage,omitempty"`
	N        int     `json:"n,omitempty" yaml:"n,omitempty"`
}

// HPCC's defaults: the paper's eta 0.95 and maxStage 5; N, the paper's
// "expected number of concurrent flows on a link", is this project's
// choice: 100, so W_AI = 100 KB x 0.05 / 100 = 50 bytes, under one
// thousandth of W_init.
const (
	HPCCDefaultEta      = 0.95
	HPCCDefaultMaxStage = 5
	HPCCDefaultN        = 100
)

// HPCCParams are the target's HPCC constants, its defaults where zero.
func (t Target) HPCCParams() HPCC {
	h := t.HPCC
	if h.Eta == 0 {
		h.Eta = HPCCDefaultEta
	}
	if h.MaxStage == 0 {
		h.MaxStage = HPCCDefaultMaxStage
	}
	if h.N == 0 {
		h.N = HPCCDefaultN
	}
	return h
}

// HPCCBaseRTT is HPCC's T in the target: IRNCapBDPs one-hop round trips.
func (t Target) HPCCBaseRTT() time.Duration {
	return time.Duration(math.Round(t.IRNCapBDPs * float64(t.OneHopRTT())))
}

// Target names.
const (
	// PapersName is the papers' network: Papers.
	PapersName = "papers"
	// NativeName is the emulator's own network at the lab's rate: Native.
	NativeName = "native"
)

// Papers is the network the papers behind this project evaluate: 100
// Gb/s links with 1 µs of delay (a 2 µs one-hop RTT, a 25 KB one-hop
// BDP), 5 MB of buffer per node, 1 KB MTU; PortFC and PFC at 6 and 4
// one-hop BDPs; DCQCN with K_min 100 KB, K_max 400 KB, P_max 0.2 and the
// timers of its paper; IRN with RTO_low 100 µs, RTO_high 320 µs,
// threshold 3 and a one-BDP cap over a four-link path; Go-Back-N with a
// 10 ms RTO.
//
// Four values the papers leave open are chosen in the target's time:
//   - FCRefresh 10 µs (five one-hop RTTs): a signalled state is repeated
//     that often, so a lost Resume costs at most 10 µs of the link.
//   - FCHold 335 µs: the longest pause one 802.1Qbb frame can ask for
//     (65,535 quanta of 512 bit times at 100 Gb/s), for every scheme.
//   - WatchdogDetect and WatchdogRestore 1 ms: three of those longest
//     pauses, so a queue held by ordinary congestion is not reported.
//   - QueueSample 200 µs and DrainMin 2 ms.
func Papers() Target {
	us := func(v float64) units.Duration { return units.Duration(v * float64(time.Microsecond)) }
	return Target{
		Name:        PapersName,
		LinkRateBps: 100_000_000_000,
		LinkDelay:   us(1),
		BufferBytes: 5_000_000,
		MTU:         1024,

		XoffBDPs:        6,
		XonBDPs:         4,
		FCRefresh:       us(10),
		FCHold:          us(335),
		BFCStickyRTTs:   2,
		CITable:         CIDefaultTable,
		CIDetectBDPs:    CIDefaultDetectBDPs,
		CIResidency:     us(CIDefaultResidencyUs),
		WatchdogDetect:  us(1000),
		WatchdogRestore: us(1000),

		ECNKminBytes: 100_000,
		ECNKmaxBytes: 400_000,
		ECNPmax:      0.2,
		DCQCN: DCQCN{
			G:              1.0 / 256,
			AlphaPeriod:    us(55),
			IncreasePeriod: us(55),
			ByteCounter:    10_000_000,
			F:              5,
			AIRateBps:      100_000_000,   // 0.1% of the link
			HAIRateBps:     1_000_000_000, // 10 x R_AI
			MinRateBps:     100_000_000,
			CNPInterval:    us(50),
			DecreasePeriod: us(50),
		},

		RTO:          us(10_000),
		RTOLow:       us(100),
		RTOHigh:      us(320),
		RTOThreshold: 3,
		IRNCapBDPs:   4,
		AckDelay:     us(1), // half a one-hop RTT
		AckEvery:     4,

		QueueSample: us(200),
		DrainMin:    us(2000),
	}
}

// Congestion isolation's values in the papers' network (docs/SCHEMES.md,
// "Congestion isolation", gives the reasons):
//   - CIDefaultTable 8 entries per egress port: RECN's evaluations find 8
//     set-aside queues per port enough to isolate every congestion tree
//     of their traffic, and 802.1Qcz leaves the table's size to the
//     implementation; ICI's scenario of 4 trees then fits, one of more
//     roots than entries does not.
//   - CIDefaultDetectBDPs 2 one-hop BDPs (50 KB): below DCQCN's K_min
//     (100 KB) and PFC's X_off (150 KB), so a root isolates its flows
//     before anything is marked or paused, as 802.1Qcz places detection
//     below the pause threshold; above one BDP, so a frame's worth of
//     link jitter does not isolate.
//   - CIDefaultResidencyUs 100 µs: about two of DCQCN's 55 µs rate
//     increase periods, so an isolated flow stays isolated while DCQCN
//     throttles it rather than flapping back into the normal queue each
//     time the congested queue empties.
const (
	CIDefaultTable       = 8
	CIDefaultDetectBDPs  = 2
	CIDefaultResidencyUs = 100
)

// NativeOneHopRTT is the one-hop round trip of the emulator's own links:
// half the idle two-hop ping RTT of a lab on the reference machine
// (docs/BENCHMARKS.md), what Native counts BDPs and round trips in.
const NativeOneHopRTT = 250 * time.Microsecond

// Native is the network the emulator is without a delay line, at link
// rate rateBps (0: unshaped, counted as 1 Gb/s): links of that rate whose
// delay is the emulator's own per-hop latency (NativeOneHopRTT/2), with
// the papers' constants rescaled so that a threshold is the same number
// of its one-hop BDPs, a timer the same number of its RTTs, and a rate
// the same share of its link. It is run at dilation 1. Its results are
// the emulator's network, not the papers': its BDP is 40 times smaller
// than theirs at 20 Mb/s while flows and buffers stay the papers' bytes.
func Native(rateBps uint64) Target {
	if rateBps == 0 {
		rateBps = 1_000_000_000
	}
	p := Papers()
	tf := float64(NativeOneHopRTT) / float64(p.OneHopRTT()) // time
	rf := float64(rateBps) / float64(p.LinkRateBps)         // rate
	bf := tf * rf                                           // data
	t := p
	t.Name = NativeName
	t.LinkRateBps = int64(rateBps)
	t.LinkDelay = units.Duration(NativeOneHopRTT / 2)
	dur := func(d units.Duration) units.Duration { return units.Duration(math.Round(float64(d) * tf)) }
	size := func(b int64) int64 { return max(1, int64(math.Round(float64(b)*bf))) }
	rate := func(r int64) int64 { return max(1, int64(math.Round(float64(r)*rf))) }
	t.ECNKminBytes, t.ECNKmaxBytes = size(p.ECNKminBytes), size(p.ECNKmaxBytes)
	t.DCQCN.AlphaPeriod, t.DCQCN.IncreasePeriod = dur(p.DCQCN.AlphaPeriod), dur(p.DCQCN.IncreasePeriod)
	t.DCQCN.ByteCounter = size(p.DCQCN.ByteCounter)
	t.DCQCN.AIRateBps, t.DCQCN.HAIRateBps, t.DCQCN.MinRateBps = rate(p.DCQCN.AIRateBps), rate(p.DCQCN.HAIRateBps), rate(p.DCQCN.MinRateBps)
	t.DCQCN.CNPInterval = dur(p.DCQCN.CNPInterval)
	t.DCQCN.DecreasePeriod = dur(p.DCQCN.DecreasePeriod)
	t.DCTCP.KBytes = size(p.DCTCPParams().KBytes)
	t.RTO, t.RTOLow, t.RTOHigh, t.AckDelay = dur(p.RTO), dur(p.RTOLow), dur(p.RTOHigh), dur(p.AckDelay)
	t.FCRefresh, t.FCHold = dur(p.FCRefresh), dur(p.FCHold)
	t.CIResidency = dur(p.CIResidency)
	t.WatchdogDetect, t.WatchdogRestore = dur(p.WatchdogDetect), dur(p.WatchdogRestore)
	t.QueueSample, t.DrainMin = dur(p.QueueSample), dur(p.DrainMin)
	return t
}

// MaxPFCAlpha bounds Target.PFCAlpha: a shared-buffer switch's dynamic
// thresholds run from 1/128 to 8 of its free buffer.
const MaxPFCAlpha = 8

// DefaultNICQueueBytes is a server NIC's egress queue's share of one flow
// where the target leaves NICQueueBytes zero.
const DefaultNICQueueBytes = 32 << 10

// NICQueue is NICQueueBytes, or its default.
func (t Target) NICQueue() int64 {
	if t.NICQueueBytes == 0 {
		return DefaultNICQueueBytes
	}
	return t.NICQueueBytes
}

// ByName is a built-in target: papers, or native at rateBps.
func ByName(name string, rateBps uint64) (Target, error) {
	switch name {
	case "", PapersName:
		return Papers(), nil
	case NativeName:
		return Native(rateBps), nil
	}
	return Target{}, fmt.Errorf("target %q: want %s or %s (or a target file)", name, PapersName, NativeName)
}

// CI is the target's congestion isolation: table entries per port,
// detection threshold in one-hop BDPs and residency, the papers' where
// the target leaves them zero.
func (t Target) CI() (table int, detectBDPs float64, residency time.Duration) {
	table, detectBDPs, residency = t.CITable, t.CIDetectBDPs, t.CIResidency.D()
	if table == 0 {
		table = CIDefaultTable
	}
	if detectBDPs == 0 {
		detectBDPs = CIDefaultDetectBDPs
	}
	if residency == 0 {
		residency = CIDefaultResidencyUs * time.Microsecond
	}
	return table, detectBDPs, residency
}

// OneHopRTT is the target's one-hop round trip: twice its link delay.
func (t Target) OneHopRTT() time.Duration { return 2 * t.LinkDelay.D() }

// BDP is the target's one-hop bandwidth-delay product in bytes on a link
// of rateBps (0: LinkRateBps).
func (t Target) BDP(rateBps float64) int64 {
	if rateBps <= 0 {
		rateBps = float64(t.LinkRateBps)
	}
	return int64(math.Round(rateBps / 8 * t.OneHopRTT().Seconds()))
}

// IsZero reports whether t is the zero Target (none given).
func (t Target) IsZero() bool { return t.LinkRateBps == 0 && t.Name == "" }

// Validate reports a target no lab can emulate.
func (t Target) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	pos := func(name string, d units.Duration) {
		if d <= 0 {
			bad("%s %v: want > 0", name, d.D())
		}
	}
	if t.LinkRateBps <= 0 {
		bad("link rate %d bit/s: want > 0", t.LinkRateBps)
	}
	pos("link delay", t.LinkDelay)
	if t.BufferBytes < 2*1518 {
		bad("buffer %d bytes: want at least two full frames", t.BufferBytes)
	}
	if t.MTU < 256 || t.MTU > 1456 {
		bad("mtu %d: want 256..1456 bytes of payload", t.MTU)
	}
	if !(t.XonBDPs > 0 && t.XonBDPs < t.XoffBDPs) {
		bad("xon %g and xoff %g BDPs: want 0 < xon < xoff", t.XonBDPs, t.XoffBDPs)
	}
	if !(t.PFCAlpha >= 0 && t.PFCAlpha <= MaxPFCAlpha) || t.PFCHeadroomBDPs < 0 || t.PFCAlpha == 0 && t.PFCHeadroomBDPs != 0 {
		bad("pfc alpha %g, headroom %g BDPs: want 0 <= alpha <= %g (0: static thresholds) and headroom >= 0, set only with alpha", t.PFCAlpha, t.PFCHeadroomBDPs, float64(MaxPFCAlpha))
	}
	pos("fc refresh", t.FCRefresh)
	if t.FCHold < 3*t.FCRefresh {
		bad("fc hold %v: want at least three refreshes (%v)", t.FCHold.D(), 3*t.FCRefresh.D())
	}
	if t.CITable < 0 || t.CIDetectBDPs < 0 || t.CIResidency < 0 {
		bad("ci table %d, detection %g BDPs, residency %v: want >= 0 (0: the papers')", t.CITable, t.CIDetectBDPs, t.CIResidency.D())
	}
	if t.BFCStickyRTTs <= 0 {
		bad("bfc sticky %g RTTs: want > 0", t.BFCStickyRTTs)
	}
	pos("watchdog detect", t.WatchdogDetect)
	pos("watchdog restore", t.WatchdogRestore)
	if t.ECNKminBytes < 0 || t.ECNKminBytes > t.ECNKmaxBytes || !(t.ECNPmax > 0 && t.ECNPmax <= 1) {
		bad("ecn: want 0 <= kmin (%d) <= kmax (%d) and 0 < pmax (%g) <= 1", t.ECNKminBytes, t.ECNKmaxBytes, t.ECNPmax)
	}
	d := t.DCQCN
	if !(d.G > 0 && d.G < 1) {
		bad("dcqcn g %g: want in (0, 1)", d.G)
	}
	pos("dcqcn alpha period", d.AlphaPeriod)
	pos("dcqcn increase period", d.IncreasePeriod)
	pos("cnp interval", d.CNPInterval)
	pos("dcqcn decrease period", d.DecreasePeriod)
	if d.ByteCounter <= 0 || d.F < 0 || d.AIRateBps < 0 || d.HAIRateBps < 0 || d.MinRateBps <= 0 || d.MinRateBps > t.LinkRateBps {
		bad("dcqcn: byte counter %d, f %d, rates ai %d hai %d min %d (link %d)", d.ByteCounter, d.F, d.AIRateBps, d.HAIRateBps, d.MinRateBps, t.LinkRateBps)
	}
	if dc := t.DCTCP; dc.G < 0 || dc.G >= 1 || dc.KBytes < 0 {
		bad("dctcp: g %g, k %d: want 0 <= g < 1 and k >= 0 (0: the defaults)", dc.G, dc.KBytes)
	}
	if h := t.HPCC; h.Eta < 0 || h.Eta > 1 || h.MaxStage < 0 || h.N < 0 {
		bad("hpcc: eta %g, max stage %d, n %d: want 0 <= eta <= 1, the others >= 0 (0: the defaults)", h.Eta, h.MaxStage, h.N)
	}
	pos("rto", t.RTO)
	pos("rto low", t.RTOLow)
	pos("rto high", t.RTOHigh)
	pos("ack delay", t.AckDelay)
	if t.NICQueueBytes < 0 || t.NICQueueBytes > t.BufferBytes {
		bad("nic queue %d bytes per flow: want 0 (the default) up to the buffer, %d", t.NICQueueBytes, t.BufferBytes)
	}
	if t.RTOThreshold < 0 || t.AckEvery < 1 || t.IRNCapBDPs <= 0 {
		bad("rto threshold %d, ack every %d, irn cap %g BDPs: want >= 0, >= 1, > 0", t.RTOThreshold, t.AckEvery, t.IRNCapBDPs)
	}
	pos("queue sample", t.QueueSample)
	pos("drain min", t.DrainMin)
	if err := errors.Join(errs...); err != nil {
		name := t.Name
		if name == "" {
			name = "(unnamed)"
		}
		return fmt.Errorf("target %s: %w", name, err)
	}
	return nil
}
