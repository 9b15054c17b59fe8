package experiment

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/queues"
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
//     goodput against the link's, each flow's share against 1/N, and
//     the last byte against N·S on the wire at C.
//   - HPCC (Li et al., SIGCOMM 2019, §3): the senders hold the link's
//     normalized load at η, so the link carries η of its capacity in
//     the bytes its INT records count (each frame's, the INT shim's too,
//     not the preamble, FCS and gap) with almost no standing queue. The
//     check: the flows' goodput against η of the link's, the
//     mean queue under one frame per flow (each flow's additive increase
//     W_AI is 50 bytes a round trip: at η a queue cannot stand), and the
//     last byte against N·S on the wire at η·C. The flows' shares are
//     reported, not judged: HPCC does not hold them to 1/N over
//     milliseconds, in the reference simulator either.
const (
	// ccRun is the target time the flows are sized for at C/N each; the
	// window judged starts after the first milliseconds (DCTCP's alpha
	// converges in tens of round trips, HPCC in a few) and ends before
	// the first flow may (a flow ahead of its share by 10% ends at 9 ms),
	// or before the first flow does if one ran further ahead.
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
		Name: fmt.Sprintf("%s-%d", cc, n), Check: cc, series: true, cc: cc, senders: n, interval: DCQCNSample,
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

// ccRows judge a dctcp or hpcc case. The window is ccFrom to ccTo, or
// to two samples before the first flow ends if one ends sooner (a flow
// ahead of its share).
func ccRows(rep *lab.WorkloadReport, env conformanceEnv, cc string, n int) []CheckRow {
	t := env.target
	frame := float64(env.wire.Payload + env.wire.Overhead)
	goodput := float64(env.wire.Rate) * float64(env.wire.Payload) / frame / 1e9 // Gb/s
	to := ccTo
	var first, last, base, on time.Duration
	first = -1
	for _, r := range rep.Records {
		end := r.TargetStart + r.TargetFCT
		to = min(to, end-2*DCQCNSample)
		if first < 0 || r.TargetStart < first {
			first = r.TargetStart
		}
		last = max(last, end)
		base = max(base, env.ideal(r.Src, r.Dst, r.Size)-wireTime(r.Size, env.wire))
		on += wireTime(r.Size, env.wire)
	}
	if to-ccFrom < ccFrom {
		return []CheckRow{{Item: "the window", Formula: fmt.Sprintf("every flow running from %v for at least %v; the first ended at %v", ccFrom, ccFrom, to+2*DCQCNSample)}}
	}
	span := fmt.Sprintf("%.1f–%.1f ms", float64(ccFrom)/1e6, float64(to)/1e6)
	rates := make([]float64, len(rep.Records))
	var sum float64
	var rows []CheckRow
	for f, r := range rep.Records {
		got, ok := seriesRate(rep.FlowSeries, f, ccFrom, to)
		if !ok {
			return []CheckRow{{Item: fmt.Sprintf("h%d's rate", r.Src), Formula: "samples before and after the window"}}
		}
		rates[f] = got
		sum += got
	}
	lo, hi := slices.Min(rates)/sum, slices.Max(rates)/sum
	if cc == "dctcp" {
		// DCTCP's flows share a bottleneck fairly (the analysis'
		// synchronized flows cut by the same α).
		for f, r := range rep.Records {
			row := relRow(fmt.Sprintf("h%d's share", r.Src), rates[f]/sum, 1/float64(n), "", fmt.Sprintf("1/N, N = %d", n), ccBound)
			row.Detail = span
			rows = append(rows, row)
		}
	}
	mean, qlo, qhi, k := leafQueue(rep, ccFrom, to)
	if k == 0 {
		return append(rows, CheckRow{Item: "leaf0's mean queue", Formula: "queue samples in the window"})
	}
	detail := fmt.Sprintf("%s, %d samples, %.0f–%.0f KB", span, k, qlo/1e3, qhi/1e3)
	switch cc {
	case "dctcp":
		row := relRow("the link's goodput", sum, goodput, "Gb/s", fmt.Sprintf("C·MTU/(MTU+overhead) = %g Gb/s x %d/%.0f: the link busy", float64(env.wire.Rate)/1e9, env.wire.Payload, frame), 0.05)
		row.Detail = span
		rows = append(rows, row)
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
		row = relRow("leaf0's mean queue", mean/1e3, want/1e3, "KB",
			fmt.Sprintf("Q_max − A/2: Q_max = K + N = %.1f packets, A = ½·√(2N(C·RTT + K)) = %.1f packets (C·RTT %.1f packets), packets of %.0f B", qmax, amp, bdp, frame), ccBound)
		row.Detail = detail
		rows = append(rows, row)
		rows = append(rows, relRow(fmt.Sprintf("%d x %g MB, last byte acknowledged", n, float64(rep.Records[0].Size)/1e6), us(last-first), us(on+base), "µs",
			fmt.Sprintf("N·S on the wire at C (%.1f µs) + one flow's path beyond its bytes (%.2f µs)", us(on), us(base)), 0.05))
	case "hpcc":
		// HPCC's load is what its INT records count: the frames'
		// bytes, the INT shim's too (docs/WIRE.md: the sender reserves
		// all its slots), as an egress's byte counter counts them,
		// without the preamble, FCS and gap the wire adds
		// (queues.WireOverhead), against the link's rate. At η the
		// flows carry η·C of frames, and the wire is busier than η by
		// the frame's share of it. Its flows' shares are not judged:
		// its multiplicative step keeps the windows' ratios and W_AI
		// evens them out slowly; the reference simulator on the same
		// flows lets one flow run ahead as far (docs/VALIDATION.md).
		eta := t.HPCCParams().Eta
		iframe := frame + roce.INTLen
		counted := iframe - queues.WireOverhead
		want := eta * float64(env.wire.Rate) * float64(env.wire.Payload) / counted / 1e9
		row := relRow("the link's goodput", sum, want, "Gb/s", fmt.Sprintf("η·C·MTU/(the frame INT counts: MTU+overhead+INT−preamble, FCS, gap) = %g x %g Gb/s x %d/%.0f", eta, float64(env.wire.Rate)/1e9, env.wire.Payload, counted), 0.05)
		row.Detail = fmt.Sprintf("%s; flows' shares %.3f–%.3f of it, not judged", span, lo, hi)
		rows = append(rows, row)
		ceil := float64(n) * iframe
		rows = append(rows, CheckRow{Item: "leaf0's mean queue", Detail: detail, Measured: mean / 1e3, Expected: ceil / 1e3, Unit: "KB",
			Formula: fmt.Sprintf("near zero: under one frame per flow (%d x %.0f B)", n, ceil/float64(n)), Error: (mean - ceil) / 1e3, Ceil: true, Pass: mean <= ceil})
		onEta := time.Duration(float64(on) * counted / frame / eta)
		rows = append(rows, relRow(fmt.Sprintf("%d x %g MB, last byte acknowledged", n, float64(rep.Records[0].Size)/1e6), us(last-first), us(onEta+base), "µs",
			fmt.Sprintf("N·S in frames with the INT shim at η·C (%.1f µs) + one flow's path beyond its bytes (%.2f µs)", us(onEta), us(base)), 0.05))
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
