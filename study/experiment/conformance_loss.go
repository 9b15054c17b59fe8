package experiment

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/wire/transport"
)

// The loss checks: one injected loss of a Go-Back-N or IRN flow
// (workload.Flow.Lose: the packet's first transmission dropped at the
// sender's NIC, counted as injected), its cost against the arithmetic of
// the transport's own rules (wire/transport, inject_test.go derives
// them): a packet in the middle is NAKed when the next one arrives, the
// last packet is recovered by the timeout.
const (
	// lossPackets is the flows' length in packets (of the target's MTU).
	lossPackets = 256
	// lossRepeats is how many times each flow runs; its median is
	// judged. A Go-Back-N flow that loses its last packet waits the RTO
	// (10 ms of the target, 50 s of a lab at D = 5,000) and runs once.
	lossRepeats = 3
	// lossBound and lossSlack bound the recovery's cost: within 10% of
	// the formula's, or lossSlack of the target, whichever is larger
	// (the emulator's own jitter on a flow alone: docs/VALIDATION.md).
	lossBound = 0.10
	lossSlack = 500 * time.Nanosecond
)

// lossCase is one flow at a time from h0 to h1 (2 links) of lossPackets
// packets under mode: none lost, the middle one lost, the last one lost.
func lossCase(mode transport.Mode) ConformanceCase {
	return ConformanceCase{
		Name: "loss-" + mode.String(), Check: "loss", Topology: Topology{N: 4, K: 1}, mode: mode.String(),
		Text: fmt.Sprintf("one %s flow of %d packets at a time from h0 to h1 (2 links): none lost, packet %d lost, the last packet lost (its first transmission dropped at the sender's NIC), %d times each but the Go-Back-N flow that waits its RTO (once); the median FCT of each against the transport's arithmetic, the cost of a loss (its FCT less the lossless flow's) within 10%% or 0.5 µs", mode, lossPackets, lossPackets/2, lossRepeats),
		flows: func(env conformanceEnv) ([]workload.Flow, time.Duration) {
			var fs []workload.Flow
			at := time.Duration(0)
			size := int64(lossPackets * env.wire.Payload)
			clean := env.ideal(0, 1, size)
			// Each flow starts once the one before has had twice its
			// formula's FCT and 20 µs.
			add := func(group int, lose []int) {
				fs = append(fs, workload.Flow{ID: len(fs), Src: 0, Dst: 1, Size: size, Start: at, Kind: workload.KindPoisson, Group: group, Lose: lose})
				fct, _, _, _ := lossFormula(env, mode.String(), group, clean)
				at += 2*fct + 20*time.Microsecond
			}
			for range lossRepeats {
				add(1, nil)
				add(2, []int{lossPackets / 2})
			}
			reps := lossRepeats
			if mode == transport.GBN {
				reps = 1
			}
			for range reps {
				add(3, []int{lossPackets - 1})
			}
			return fs, at
		},
	}
}

// lossFormula is the closed form of a loss case: the FCT of a flow of
// group 1 (none lost), 2 (packet lossPackets/2) and 3 (the last), its
// retransmissions and timeouts, and the formula in words, in the
// target's time. clean is the flow's ideal FCT (store and forward, the
// last ACK back): FCT0 = (n-1)P + F + B, which gives F + B.
func lossFormula(env conformanceEnv, mode string, group int, clean time.Duration) (fct time.Duration, retx, timeouts int64, text string) {
	t := env.target
	n := int64(lossPackets)
	P := time.Duration(float64(env.wire.Payload+env.wire.Overhead) * 8 / float64(env.wire.Rate) * 1e9)
	FB := clean - time.Duration(n-1)*P
	switch group {
	case 1:
		return clean, 0, 0, "(n−1)P + F + B: store and forward, the last ACK back"
	case 2:
		k := n / 2
		tau := time.Duration(k+1)*P + FB
		h := min(n, int64(math.Ceil(float64(tau)/float64(P))))
		R := max(tau, time.Duration(h)*P)
		if mode == transport.GBN.String() {
			return R + time.Duration(n-k-1)*P + FB, h - k, 0,
				fmt.Sprintf("NAK at τ = (k+1)P + F + B = %.2f µs, back to k at R = %.2f µs, k..n−1 again: R + (n−k−1)P + F + B", us(tau), us(R))
		}
		return R + time.Duration(n-h)*P + FB, 1, 0,
			fmt.Sprintf("NAK at τ = (k+1)P + F + B = %.2f µs, k alone again at R = %.2f µs, then the rest: R + (n−h)P + F + B", us(tau), us(R))
	}
	T := t.RTO.D()
	name := "RTO"
	if mode == transport.IRN.String() {
		T, name = t.RTOHigh.D(), "RTO_high"
		if 1 < t.RTOThreshold {
			T, name = t.RTOLow.D(), "RTO_low" // one packet in flight
		}
	}
	D := max(t.AckDelay.D(), time.Duration(t.AckEvery)*P)
	var tA time.Duration
	switch r := (n - 1) % int64(t.AckEvery); r {
	case 0:
		tA = time.Duration(n-2)*P + FB
	default:
		tA = time.Duration(n-1-r)*P + FB + D
	}
	return tA + T + FB, 1, 1, fmt.Sprintf("the ACK before it at tA = %.2f µs, then the %s (%v): tA + %s + F + B", us(tA), name, T, name)
}

// lossRows judge a loss case's records: each group's median FCT, its
// cost over the lossless flow's against the formula's, and its
// retransmissions and timeouts.
func lossRows(recs []workload.FlowRecord, env conformanceEnv, mode string) []CheckRow {
	groups := map[int][]workload.FlowRecord{}
	for _, r := range recs {
		groups[r.Group] = append(groups[r.Group], r)
	}
	median := func(rs []workload.FlowRecord, v func(workload.FlowRecord) float64) (m, lo, hi float64) {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = v(r)
		}
		slices.Sort(xs)
		return xs[len(xs)/2], xs[0], xs[len(xs)-1]
	}
	fct := func(r workload.FlowRecord) float64 { return us(r.TargetFCT) }
	if len(groups[1]) == 0 {
		return []CheckRow{{Item: "a lossless flow", Formula: "the reference of the losses' cost"}}
	}
	r0 := groups[1][0]
	clean := env.ideal(r0.Src, r0.Dst, r0.Size)
	m0, _, _ := median(groups[1], fct)
	var rows []CheckRow
	for _, g := range []int{1, 2, 3} {
		rs := groups[g]
		if len(rs) == 0 {
			continue
		}
		want, retx, touts, text := lossFormula(env, mode, g, clean)
		m, lo, hi := median(rs, fct)
		item := map[int]string{1: "none lost", 2: fmt.Sprintf("packet %d of %d lost", lossPackets/2, lossPackets), 3: fmt.Sprintf("the last of %d lost", lossPackets)}[g]
		if g == 1 {
			row := relRow(item+": FCT", m, us(want), "µs", text, 0.01)
			if len(rs) > 1 {
				row.Detail = fmt.Sprintf("median of %d, %.4g–%.4g µs", len(rs), lo, hi)
				row.Spread = &[2]float64{lo, hi}
			}
			rows = append(rows, row)
			continue
		}
		// The cost of the loss: the FCT over the lossless flow's, both
		// the lab's and the formula's.
		cost, wantCost := m-m0, us(want-clean)
		row := relRow(item+": its cost", cost, wantCost, "µs", fmt.Sprintf("%s = %.2f µs, less FCT0 %.2f µs", text, us(want), us(clean)), lossBound)
		row.Slack = us(lossSlack)
		row.Pass = row.Pass || math.Abs(cost-wantCost) <= row.Slack
		if len(rs) > 1 {
			row.Detail = fmt.Sprintf("median of %d, FCT %.4g–%.4g µs", len(rs), lo, hi)
		}
		rows = append(rows, row)
		rt, _, _ := median(rs, func(r workload.FlowRecord) float64 { return float64(r.Retransmissions) })
		slack := 0.0
		if mode == transport.GBN.String() && g == 2 {
			slack = 2 // the packets sent before the NAK lands: a pacing slot either way
		}
		rows = append(rows, CheckRow{Item: item + ": retransmissions", Measured: rt, Expected: float64(retx), Unit: "packets", Formula: map[bool]string{true: "h − k: k and the packets after it sent before the NAK", false: "the lost packet alone"}[mode == transport.GBN.String() && g == 2],
			Error: rt - float64(retx), Abs: true, Bound: slack, Pass: math.Abs(rt-float64(retx)) <= slack})
		to, _, _ := median(rs, func(r workload.FlowRecord) float64 { return float64(r.Timeouts) })
		rows = append(rows, CheckRow{Item: item + ": timeouts", Measured: to, Expected: float64(touts), Unit: "timeouts", Formula: map[int64]string{0: "none: the NAK recovers it", 1: "one: nothing follows it to be NAKed"}[touts],
			Error: to - float64(touts), Abs: true, Pass: to == float64(touts)})
	}
	return rows
}
