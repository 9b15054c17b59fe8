package experiment

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/wire/roce"
)

// The dctcp and hpcc checks: N long flows into one egress under the
// window-based congestion controls, against their closed forms in the
// window where they have settled.
//
//   - DCTCP (Alizadeh, Javanmard and Prabhakar, "Analysis of DCTCP",
//     SIGMETRICS 2011, §3): N synchronized flows with one marking
//     threshold K drive the queue in a sawtooth between Q_max = K + N
//     packets and Q_max − A, its amplitude A = ½·√(2N(C·RTT + K))
//     packets; the link stays busy (K > C·RTT/7). The check: the mean
//     queue against the sawtooth's middle, Q_max − A/2, the flows'
//     goodput against the link's, each flow's share against 1/N.
//   - HPCC (Li et al., SIGCOMM 2019, §3): the senders hold the link's
//     normalized load at η, so the link carries η of its capacity (every
//     byte on the wire, the INT shim's too) with almost no standing
//     queue. The check: the flows' goodput against η
//     of the link's, each flow's share against 1/N, the mean queue under
//     one frame per flow (each flow's additive increase W_AI is 50 bytes
//     a round trip: at η a queue cannot stand).
const (
	// ccRun is the target time the flows are sized for at C/N each; the
	// window judged starts after the first milliseconds (DCTCP's alpha
	// converges in tens of round trips, HPCC in a few) and ends before
	// the first flow may (a flow ahead of its share by 10% ends at 9 ms).
	ccRun  = 10 * time.Millisecond
	ccFrom = 3 * time.Millisecond
	ccTo   = 9 * time.Millisecond
	// ccBound bounds the checks' relative errors.
	ccBound = 0.10
)

// ccCase is n flows under congestion control cc from h1..hn to h0 on one
// leaf of a leaf-spine, sized to run ccRun at C/N (at the papers' 100
// Gb/s).
func ccCase(cc string, n int) ConformanceCase {
	size := int64(ccRun.Seconds() * 100e9 / 8 / float64(n))
	what := map[string]string{
		"dctcp": "the mean queue against the middle of DCTCP's sawtooth (Alizadeh et al., SIGMETRICS 2011: Q_max = K + N packets, amplitude ½·√(2N(C·RTT + K))), the link's goodput against its capacity",
		"hpcc":  "the link's goodput against η of its capacity (HPCC, SIGCOMM 2019), the mean queue under one frame per flow",
	}[cc]
	return ConformanceCase{
		Name: fmt.Sprintf("%s-%d", cc, n), Check: cc, series: true, cc: cc, senders: n, interval: dcqcnSample,
		Fabric: &FabricConfig{Kind: lab.TopologyLeafSpine, Leaves: 2, Spines: 1, Hosts: 9},
		Text: fmt.Sprintf("%d %s flows of %.3g MB each (%v at C/N on a 100 Gb/s target) from h1..h%d to h0 at once, through one leaf of a leaf-spine (2 leaves of 9 servers, 1 spine); from %v to %v %s, and each flow's share against 1/N",
			n, cc, float64(size)/1e6, ccRun, n, ccFrom, ccTo, what),
		flows: func(conformanceEnv) ([]workload.Flow, time.Duration) {
			fs := make([]workload.Flow, n)
			for i := range fs {
				fs[i] = workload.Flow{ID: i, Src: 1 + i, Dst: 0, Size: size, Kind: workload.KindLong}
			}
			return fs, time.Microsecond
		},
	}
}

// ccRows judge a dctcp or hpcc case.
func ccRows(rep *lab.WorkloadReport, env conformanceEnv, cc string, n int) []CheckRow {
	t := env.target
	frame := float64(env.wire.Payload + env.wire.Overhead)
	goodput := float64(env.wire.Rate) * float64(env.wire.Payload) / frame / 1e9 // Gb/s
	rates := make([]float64, len(rep.Records))
	var sum float64
	var rows []CheckRow
	for f, r := range rep.Records {
		got, ok := seriesRate(rep.FlowSeries, f, ccFrom, ccTo)
		if !ok {
			return []CheckRow{{Item: fmt.Sprintf("h%d's rate", r.Src), Formula: "samples before and after the window"}}
		}
		rates[f] = got
		sum += got
	}
	for f, r := range rep.Records {
		rows = append(rows, relRow(fmt.Sprintf("h%d's share", r.Src), rates[f]/sum, 1/float64(n), "", fmt.Sprintf("1/N, N = %d", n), ccBound))
	}
	mean, lo, hi, k := leafQueue(rep, ccFrom, ccTo)
	if k == 0 {
		return append(rows, CheckRow{Item: "leaf0's mean queue", Formula: "queue samples in the window"})
	}
	detail := fmt.Sprintf("%d samples, %.0f–%.0f KB", k, lo/1e3, hi/1e3)
	switch cc {
	case "dctcp":
		rows = append(rows, relRow("the link's goodput", sum, goodput, "Gb/s", fmt.Sprintf("C·MTU/(MTU+overhead) = %g Gb/s x %d/%.0f: the link busy", float64(env.wire.Rate)/1e9, env.wire.Payload, frame), 0.05))
		p := t.DCTCPParams()
		// The round trip of the path without its queue: four links and
		// two frames' serialization, as the fluid model's loop delay.
		ser := frame * 8 / float64(env.wire.Rate)
		rtt := 2*t.OneHopRTT().Seconds() + 2*ser
		bdp := float64(env.wire.Rate) * rtt / 8 / frame // packets
		K := float64(p.KBytes) / frame
		qmax := K + float64(n)
		amp := 0.5 * math.Sqrt(2*float64(n)*(bdp+K))
		want := (qmax - amp/2) * frame
		row := relRow("leaf0's mean queue", mean/1e3, want/1e3, "KB",
			fmt.Sprintf("Q_max − A/2: Q_max = K + N = %.1f packets, A = ½·√(2N(C·RTT + K)) = %.1f packets (C·RTT %.1f packets), packets of %.0f B", qmax, amp, bdp, frame), ccBound)
		row.Detail = detail
		rows = append(rows, row)
	case "hpcc":
		// HPCC's load counts every byte on the wire, the INT shim's
		// too (docs/WIRE.md: the sender reserves all its slots).
		eta := t.HPCCParams().Eta
		iframe := frame + roce.INTLen
		want := eta * float64(env.wire.Rate) * float64(env.wire.Payload) / iframe / 1e9
		rows = append(rows, relRow("the link's goodput", sum, want, "Gb/s", fmt.Sprintf("η·C·MTU/(MTU+overhead+INT) = %g x %g Gb/s x %d/%.0f", eta, float64(env.wire.Rate)/1e9, env.wire.Payload, iframe), 0.05))
		ceil := float64(n) * iframe
		rows = append(rows, CheckRow{Item: "leaf0's mean queue", Detail: detail, Measured: mean / 1e3, Expected: ceil / 1e3, Unit: "KB",
			Formula: fmt.Sprintf("near zero: under one frame per flow (%d x %.0f B)", n, ceil/float64(n)), Error: (mean - ceil) / 1e3, Ceil: true, Pass: mean <= ceil})
	}
	return rows
}

// leafQueue is the mean, least and greatest of leaf0's egress bytes over
// the queue samples between from and to (target times), and their count.
func leafQueue(rep *lab.WorkloadReport, from, to time.Duration) (mean, lo, hi float64, k int) {
	col := slices.Index(rep.QueueNodes, "leaf0")
	lo = math.Inf(1)
	for _, row := range rep.Queues {
		if col < 0 || col >= len(row.Bytes) || row.TargetElapsed < from || row.TargetElapsed > to {
			continue
		}
		v := float64(row.Bytes[col])
		mean += v
		lo, hi = min(lo, v), max(hi, v)
		k++
	}
	if k > 0 {
		mean /= float64(k)
	}
	return mean, lo, hi, k
}
