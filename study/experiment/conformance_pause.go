package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bcfab/bcfab/node/api"
)

// fcPort is one port's flow-control timing at the end of a run
// (api.FCTiming: cumulative since its node started, which on a point's
// fresh lab is the run).
type fcPort struct {
	Node   string       `json:"node"`
	Port   string       `json:"port"`
	Timing api.FCTiming `json:"fc_timing"`
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
// server: its other levels' links, k).
func pauseRows(ports []fcPort, env conformanceEnv, switchPorts, serverLevels int) []CheckRow {
	type agg struct {
		ports                    int
		pauses                   uint64
		atPauseMin, atPauseMax   int
		atResumeMax              int
		latMax                   int64
		peak, xoff, xon, bdp     int
		frames, untimed, resumes uint64
	}
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
				a = &agg{atPauseMin: c.AtPauseMinBytes, xoff: c.XoffBytes, xon: c.XonBytes, bdp: p.Timing.BDPBytes}
				aggs[k] = a
				keys = append(keys, k)
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
			a.xoff, a.xon, a.bdp = max(a.xoff, c.XoffBytes), min(a.xon, c.XonBytes), max(a.bdp, p.Timing.BDPBytes)
		}
	}
	if len(keys) == 0 {
		return nil // nothing paused: nothing to hold to the thresholds
	}
	slices.Sort(keys)
	frame := env.wire.Payload + env.wire.Overhead
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
		senders := 1
		switch {
		case strings.HasSuffix(k, "class A"), strings.HasSuffix(k, "class B"):
			senders = switchPorts - 1
		case strings.HasSuffix(k, "class RQ"):
			senders = serverLevels - 1
		}
		allow := a.xoff + senders*(a.bdp+2*frame)
		rows = append(rows, CheckRow{Item: k + ": the counter's peak", Measured: kb(a.peak), Expected: kb(allow), Unit: "KB",
			Formula: fmt.Sprintf("at most X_off + %d x (BDP %g KB + 2 frames)", senders, kb(a.bdp)), Error: kb(a.peak - allow), Ceil: true, Pass: a.peak <= allow})
	}
	return rows
}
