package experiment

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/queues"
)

// fcPort is one port's flow-control timing at the end of a run
// (api.FCTiming: cumulative since its node started, which on a point's
// fresh lab is the run).
type fcPort struct {
	Node   string       `json:"node"`
	Port   string       `json:"port"`
	Timing api.FCTiming `json:"fc_timing"`
	// RTT is the one-hop round trips the port's probes measured over
	// the run, in the lab's ns (nil: none).
	RTT *api.RTT `json:"rtt,omitempty"`
}

// pauseRows judge the pauses of a lossless run (none when no port
// paused: the README's pauses column says so), by class and kind of
// node (switches, servers), over every port that paused: the counter at
// every pause at X_off or past it by less than a frame, at every resume
// at X_on or below, every pause frame out within one one-hop RTT of the
// target after X_off was crossed, and the counter's peak within X_off
// plus the bytes its senders had in flight when the pause left: a
// one-hop BDP and two frames (the one on the wire at each end) from
// each port the pause goes to (PFC: the one the bytes came in by;
// PortFC at a switch: every other port, n−1 of them; at a relaying
// server: its other levels' links, k), for each hop the pause takes to
// stop them (PortFC's B at a switch two: its relays pass it on to the
// switches that feed their relay queues, which are never paused, so
// what those sent reaches the counter a one-hop RTT later). A second peak row allows the
// same at the one-hop round trip the lab's probes measured instead of
// the model's: the greatest of the run at the port (PFC) or at any port
// of its node (the pause goes to several), which is how far the
// emulator's own latency moves the senders' reaction. A last row times
// the pauses' round trips as the ports saw them (api.FCClass.TripNs):
// from the decision to the last byte its senders sent, at most a one-hop
// RTT, the frame on the wire at each end and the pause frame itself;
// what the senders added in that time is the overshoot, which the
// round trip explains where a peak is past its allowance.
func pauseRows(ports []fcPort, env conformanceEnv, switchPorts, serverLevels int) []CheckRow {
	type agg struct {
		ports                    int
		pauses                   uint64
		atPauseMin, atPauseMax   int
		atResumeMax              int
		latMax                   int64
		peak, xoff, xon, bdp     int
		frames, untimed, resumes uint64
		// The pauses' round trips (the lab's ns) and overshoot.
		trips            uint64
		tripMax, tripSum int64
		overshoot        int
		// The port whose peak came nearest its allowance at the
		// measured round trip (or furthest past it): that margin, its
		// peak and allowance, the round trip (the target's ns), and
		// whether every paused port had one measured.
		worst            float64
		wPeak, wAllow    float64
		wRTT             float64
		measured, nodeMx bool
	}
	// The greatest one-hop round trip measured at each node's ports, in
	// the lab's ns.
	nodeRTT := map[string]int64{}
	for _, p := range ports {
		if p.RTT != nil && p.RTT.Count > 0 {
			nodeRTT[p.Node] = max(nodeRTT[p.Node], p.RTT.MaxNs)
		}
	}
	frame := env.wire.Payload + env.wire.Overhead
	modelRTT := float64(env.target.OneHopRTT())
	aggs := map[string]*agg{}
	var keys []string
	for _, p := range ports {
		kind := "switches"
		if strings.HasPrefix(p.Node, "h") {
			kind = "servers"
		}
		for _, c := range p.Timing.Classes {
			if c.Pauses == 0 {
				continue
			}
			k := kind + ", class " + c.Class
			a := aggs[k]
			if a == nil {
				a = &agg{atPauseMin: c.AtPauseMinBytes, xoff: c.XoffBytes, xon: c.XonBytes, bdp: p.Timing.BDPBytes, worst: math.Inf(-1), measured: true}
				aggs[k] = a
				keys = append(keys, k)
			}
			senders := pauseSenders(k, switchPorts, serverLevels) * pauseHops(k)
			var rtt int64
			if senders == 1 && p.RTT != nil && p.RTT.Count > 0 {
				rtt = p.RTT.MaxNs
			} else if senders > 1 {
				rtt = nodeRTT[p.Node]
				a.nodeMx = true
			}
			if rtt <= 0 {
				a.measured = false
			} else {
				t := float64(rtt) / env.d // the target's ns
				allow := float64(c.XoffBytes) + float64(senders)*(float64(p.Timing.BDPBytes)*t/modelRTT+2*float64(frame))
				if m := float64(c.PeakBytes) - allow; m > a.worst {
					a.worst, a.wPeak, a.wAllow, a.wRTT = m, float64(c.PeakBytes), allow, t
				}
			}
			a.ports++
			a.pauses += c.Pauses
			a.resumes += c.Resumes
			a.atPauseMin = min(a.atPauseMin, c.AtPauseMinBytes)
			a.atPauseMax = max(a.atPauseMax, c.AtPauseMaxBytes)
			a.atResumeMax = max(a.atResumeMax, c.AtResumeMaxBytes)
			a.latMax = max(a.latMax, c.PauseLatNs.Max)
			a.frames += c.PauseLatNs.Count
			a.untimed += c.PauseLatNs.Untimed
			a.peak = max(a.peak, c.PeakBytes)
			a.trips += c.TripNs.Count
			a.tripSum += c.TripNs.Sum
			a.tripMax = max(a.tripMax, c.TripNs.Max)
			a.overshoot = max(a.overshoot, c.OvershootBytes)
			a.xoff, a.xon, a.bdp = max(a.xoff, c.XoffBytes), min(a.xon, c.XonBytes), max(a.bdp, p.Timing.BDPBytes)
		}
	}
	if len(keys) == 0 {
		return nil // nothing paused: nothing to hold to the thresholds
	}
	slices.Sort(keys)
	kb := func(b int) float64 { return float64(b) / 1e3 }
	rtt := us(env.target.OneHopRTT())
	var rows []CheckRow
	for _, k := range keys {
		a := aggs[k]
		detail := fmt.Sprintf("%d ports, %d pauses", a.ports, a.pauses)
		rows = append(rows, CheckRow{Item: k + ": the counter at a pause", Detail: detail, Measured: kb(a.atPauseMin), Expected: kb(a.xoff), Unit: "KB",
			Formula: fmt.Sprintf("from X_off (%g KB) to X_off + one frame (%d B); the greatest %.4g KB", kb(a.xoff), frame, kb(a.atPauseMax)),
			Error:   kb(a.atPauseMin - a.xoff), Floor: true, Pass: a.atPauseMin >= a.xoff && a.atPauseMax < a.xoff+frame})
		if a.resumes > 0 {
			rows = append(rows, CheckRow{Item: k + ": the counter at a resume", Detail: fmt.Sprintf("%d resumes", a.resumes), Measured: kb(a.atResumeMax), Expected: kb(a.xon), Unit: "KB",
				Formula: fmt.Sprintf("at most X_on (%g KB)", kb(a.xon)), Error: kb(a.atResumeMax - a.xon), Ceil: true, Pass: a.atResumeMax <= a.xon})
		}
		lat := float64(a.latMax) / env.d / 1e3 // the lab's ns, in the target's µs
		rows = append(rows, CheckRow{Item: k + ": a pause frame's delay after X_off", Detail: fmt.Sprintf("%d frames timed, %d not", a.frames, a.untimed), Measured: lat, Expected: rtt, Unit: "µs",
			Formula: "the greatest, at most one one-hop RTT", Error: lat - rtt, Ceil: true, Pass: a.frames > 0 && lat <= rtt})
		senders, hops := pauseSenders(k, switchPorts, serverLevels), pauseHops(k)
		allow := a.xoff + senders*hops*(a.bdp+2*frame)
		per := fmt.Sprintf("%d x", senders)
		if hops > 1 {
			per = fmt.Sprintf("%d x %d hops x", senders, hops)
		}
		rows = append(rows, CheckRow{Item: k + ": the counter's peak", Measured: kb(a.peak), Expected: kb(allow), Unit: "KB",
			Formula: fmt.Sprintf("at most X_off + %s (BDP %g KB + 2 frames)", per, kb(a.bdp)), Error: kb(a.peak - allow), Ceil: true, Pass: a.peak <= allow})
		rows = append(rows, tripRow(k, a.trips, a.tripMax, a.tripSum, a.overshoot, env, pauseHops(k)))
		if !a.measured {
			rows = append(rows, CheckRow{Item: k + ": the counter's peak at the measured RTT", Formula: "a one-hop RTT measured at every paused port's node"})
			continue
		}
		where := "the port's"
		if a.nodeMx {
			where = "its node's ports'"
		}
		rows = append(rows, CheckRow{Item: k + ": the counter's peak at the measured RTT",
			Detail:   fmt.Sprintf("the port nearest its allowance: %s greatest one-hop RTT %.3g µs, the model's %.3g", where, a.wRTT/1e3, modelRTT/1e3),
			Measured: kb(int(a.wPeak)), Expected: kb(int(a.wAllow)), Unit: "KB",
			Formula: fmt.Sprintf("at most X_off + %s (BDP at the measured RTT + 2 frames)", per), Error: kb(int(a.wPeak - a.wAllow)), Ceil: true, Pass: a.worst <= 0})
	}
	return rows
}

// pauseWire is what a pause frame takes on the wire: a minimum Ethernet
// frame (60 bytes before its FCS) and what the wire adds to every frame.
const pauseWire = 60 + queues.WireOverhead

// tripRow judges the greatest of n pause round trips (max and sum in
// the lab's ns) of the class in key k against hops times the one-hop
// RTT, a data frame on the wire at each end and the pause frame, and a
// frame more for each relay on the way back (it forwards a frame once
// it has all of it); overshoot, the most a counter grew past its value
// at a pause, is its detail.
func tripRow(k string, n uint64, maxNs, sumNs int64, overshoot int, env conformanceEnv, hops int) CheckRow {
	frame := env.wire.Payload + env.wire.Overhead
	ser := func(b int) float64 { return float64(b) * 8 / float64(env.wire.Rate) * 1e6 } // µs
	allow := float64(hops)*(us(env.target.OneHopRTT())+ser(2*frame+pauseWire)) + float64(hops-1)*ser(frame)
	formula := "at most the one-hop RTT + 2 frames + the pause frame"
	if hops > 1 {
		formula = fmt.Sprintf("at most %d x (the one-hop RTT + 2 frames + the pause frame) + %d frame: the relays pass the pause one hop on, and store and forward what comes back", hops, hops-1)
	}
	row := CheckRow{Item: k + ": a pause's round trip", Expected: allow, Unit: "µs", Ceil: true,
		Formula: fmt.Sprintf("from the pause to the last byte its senders sent: %s (%.4g µs)", formula, allow)}
	if n == 0 {
		row.Detail = "no pause after which more bytes came"
		row.Pass = true
		return row
	}
	trip := float64(maxNs) / env.d / 1e3
	mean := float64(sumNs) / float64(n) / env.d / 1e3
	row.Measured, row.Error, row.Pass = trip, trip-allow, trip <= allow
	row.Detail = fmt.Sprintf("%d pauses timed, mean %.3g µs; the counter grew at most %.4g KB past its value at a pause", n, mean, float64(overshoot)/1e3)
	return row
}

// pauseHops is how many hops a pause of the class in key k (a pauseRows
// key) may take to stop what it counts: PortFC's class B at a switch
// counts the frames of its last hop, among them those a server relays,
// which stop only once the server has passed the pause on to its other
// levels' switches and their frames on the wire have crossed it: two
// one-hop round trips. Every other class's senders are one hop away.
func pauseHops(k string) int {
	if strings.HasPrefix(k, "switches") && strings.HasSuffix(k, "class B") {
		return 2
	}
	return 1
}

// pauseSenders is how many ports a pause of the class in key k (a
// pauseRows key) stops: PFC's one, PortFC's A and B at a switch the
// other switchPorts − 1, its RQ at a server the other serverLevels − 1.
func pauseSenders(k string, switchPorts, serverLevels int) int {
	switch {
	case strings.HasSuffix(k, "class A"), strings.HasSuffix(k, "class B"):
		return switchPorts - 1
	case strings.HasSuffix(k, "class RQ"):
		return serverLevels - 1
	}
	return 1
}
