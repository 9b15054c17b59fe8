package scale

import (
	"fmt"
	"time"
)

// Kind is how a parameter scales from the target to the lab.
type Kind uint8

const (
	// KindTime is a time: the lab's is the target's x D.
	KindTime Kind = iota + 1
	// KindRate is a rate in bit/s: the lab's is the target's / D.
	KindRate
	// KindBytes is an amount of data: the same bytes.
	KindBytes
	// KindCount is a number or a ratio: the same.
	KindCount
	// KindFloored is a time x D with a floor of the emulator's (the
	// pause hold: Emulator.HoldFloor).
	KindFloored
	// KindBounded is a time x D within the emulator's bounds (the
	// worker's slack: Model.WorkerSlack).
	KindBounded
)

func (k Kind) String() string {
	switch k {
	case KindTime:
		return "time x D"
	case KindRate:
		return "rate / D"
	case KindBytes:
		return "bytes"
	case KindCount:
		return "count"
	case KindFloored:
		return "time x D, floored"
	case KindBounded:
		return "time x D, bounded"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Param is one parameter of a model: its value in the target and in the
// lab, in ns for times, bit/s for rates, bytes for data.
type Param struct {
	Name   string
	Kind   Kind
	Target float64
	Lab    float64
}

// Params lists every parameter the model derives for a port of a target
// link, in the order the docs give them.
func (m Model) Params() []Param {
	t := m.Target
	bdp := float64(m.BDP(0))
	th := m.Thresholds(0)
	ecn := m.ECN(0)
	fc := m.FlowControl()
	tr := m.Transport(0)
	run := m.Runner()
	ci := m.CI(0)
	_, ciDetect, ciResidency := t.CI()
	ns := func(d time.Duration) float64 { return float64(d) }
	return []Param{
		{"link rate", KindRate, float64(t.LinkRateBps), float64(m.LinkRateBps())},
		{"link delay", KindTime, ns(t.LinkDelay.D()), ns(m.LinkDelay())},
		{"one-hop RTT", KindTime, ns(t.OneHopRTT()), ns(m.OneHopRTT())},
		{"one-hop BDP", KindBytes, float64(t.BDP(0)), bdp},
		{"buffer per node", KindBytes, float64(t.BufferBytes), float64(t.BufferBytes)},
		{"MTU (payload)", KindBytes, float64(t.MTU), float64(tr.MTU)},
		{"X_off (PortFC, PFC)", KindBytes, t.XoffBDPs * float64(t.BDP(0)), float64(th.Xoff)},
		{"X_on (PortFC, PFC)", KindBytes, t.XonBDPs * float64(t.BDP(0)), float64(th.Xon)},
		{"PFC dynamic threshold alpha (0: static)", KindCount, t.PFCAlpha, th.Alpha},
		{"PFC headroom per port and priority", KindBytes, t.PFCHeadroomBDPs * float64(t.BDP(0)), float64(th.Headroom)},
		{"BFC Th's BDP", KindBytes, float64(t.BDP(0)), float64(th.BDP)},
		{"BFC sticky time", KindTime, t.BFCStickyRTTs * ns(t.OneHopRTT()), ns(fc.Sticky)},
		{"CI table entries per port", KindCount, float64(ci.Table), float64(ci.Table)},
		{"CI detection threshold", KindBytes, ciDetect * float64(t.BDP(0)), float64(ci.Detect)},
		{"CI residency", KindTime, ns(ciResidency), ns(ci.Residency)},
		{"flow-control refresh", KindTime, ns(t.FCRefresh.D()), ns(fc.Refresh)},
		{"pause hold", KindFloored, ns(t.FCHold.D()), ns(fc.Hold)},
		{"watchdog detect", KindTime, ns(t.WatchdogDetect.D()), ns(fc.WatchdogDetect)},
		{"watchdog restore", KindTime, ns(t.WatchdogRestore.D()), ns(fc.WatchdogRestore)},
		{"ECN K_min", KindBytes, float64(t.ECNKminBytes), float64(ecn.KminBytes)},
		{"ECN K_max", KindBytes, float64(t.ECNKmaxBytes), float64(ecn.KmaxBytes)},
		{"ECN P_max", KindCount, t.ECNPmax, ecn.Pmax},
		{"ECN at dequeue (1: yes)", KindCount, oneIf(t.ECNAtDequeue), oneIf(ecn.AtDequeue)},
		{"DCQCN g", KindCount, t.DCQCN.G, tr.G},
		{"DCQCN alpha period K", KindTime, ns(t.DCQCN.AlphaPeriod.D()), ns(tr.AlphaPeriod)},
		{"DCQCN increase period T", KindTime, ns(t.DCQCN.IncreasePeriod.D()), ns(tr.Increase)},
		{"DCQCN decrease period", KindTime, ns(t.DCQCN.DecreasePeriod.D()), ns(tr.Decrease)},
		{"DCQCN byte counter B", KindBytes, float64(t.DCQCN.ByteCounter), float64(tr.ByteCounter)},
		{"DCQCN F", KindCount, float64(t.DCQCN.F), float64(tr.F)},
		{"DCQCN R_AI", KindRate, float64(t.DCQCN.AIRateBps), float64(tr.AIRate)},
		{"DCQCN R_HAI", KindRate, float64(t.DCQCN.HAIRateBps), float64(tr.HAIRate)},
		{"DCQCN minimum rate", KindRate, float64(t.DCQCN.MinRateBps), float64(tr.MinRt)},
		{"CNP interval", KindTime, ns(t.DCQCN.CNPInterval.D()), ns(tr.CNPInterval)},
		{"DCTCP g", KindCount, t.DCTCPParams().G, tr.DCTCPG},
		{"DCTCP K", KindBytes, float64(t.DCTCPParams().KBytes), float64(m.DCTCPECN(0).KmaxBytes)},
		{"HPCC eta", KindCount, t.HPCCParams().Eta, tr.HPCCEta},
		{"HPCC max stage", KindCount, float64(t.HPCCParams().MaxStage), float64(tr.HPCCMaxStage)},
		{"HPCC base RTT T", KindTime, ns(t.HPCCBaseRTT()), ns(tr.HPCCBaseRTT)},
		{"HPCC W_AI", KindBytes, t.IRNCapBDPs * float64(t.BDP(0)) * (1 - t.HPCCParams().Eta) / float64(t.HPCCParams().N), tr.HPCCWAI},
		{"Go-Back-N RTO", KindTime, ns(t.RTO.D()), ns(tr.RTO)},
		{"IRN RTO_low", KindTime, ns(t.RTOLow.D()), ns(tr.RTOLow)},
		{"IRN RTO_high", KindTime, ns(t.RTOHigh.D()), ns(tr.RTOHigh)},
		{"IRN RTO threshold", KindCount, float64(t.RTOThreshold), float64(tr.RTOThreshold)},
		{"IRN in-flight cap", KindBytes, t.IRNCapBDPs * float64(t.BDP(0)), float64(tr.BDPBytes)},
		{"ACK delay", KindTime, ns(t.AckDelay.D()), ns(tr.AckDelay)},
		{"ACK every", KindCount, float64(t.AckEvery), float64(tr.AckEvery)},
		{"NIC queue per flow", KindBytes, float64(t.NICQueue()), float64(t.NICQueue())},
		{"queue sample interval", KindTime, ns(t.QueueSample.D()), ns(run.QueueSample)},
		{"least drain time", KindTime, ns(t.DrainMin.D()), ns(run.DrainMin)},
		{"worker slack", KindBounded, ns(t.OneHopRTT() / slackShare), ns(m.WorkerSlack())},
	}
}

// oneIf is a switch as a count: 1 when on.
func oneIf(on bool) float64 {
	if on {
		return 1
	}
	return 0
}
