package experiment

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/fluid"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/wire/transport"
)

// The dcqcn check: N long DCQCN flows into one egress against DCQCN's
// fluid model (package fluid, Zhu et al., CoNEXT 2016) on the same
// parameters, in the window where the model has settled. The case's
// times are exported for the same case on virtual time
// (fabrictest.BenchmarkDCQCNQueue).
const (
	// DCQCNRun is the target time the flows are sized for at C/N each.
	DCQCNRun = 45 * time.Millisecond
	// DCQCNFrom and DCQCNTo bound the window judged: the model, all
	// flows starting at line rate, overshoots to megabytes of queue,
	// cuts every rate deep, leaves the queue empty for about 10 ms and
	// settles near 20 ms (its mean queue per 2 ms within ±6% of its
	// 20-38 ms mean from then on); the window ends before the first flow
	// may (a flow ahead of its share by 18% ends at 38 ms).
	DCQCNFrom = 20 * time.Millisecond
	DCQCNTo   = 38 * time.Millisecond
	// dcqcnBound is the check's bound on the mean rates and queue.
	dcqcnBound = 0.10
	// DCQCNSample is the time between queue samples: the queue swings
	// with a period of about 130 µs, so the model's default 200 µs
	// would leave its mean over the window to a few dozen samples'
	// aliasing (±15%); 400 samples bring that to about ±4%.
	DCQCNSample = 20 * time.Microsecond
)

// dcqcnCase is n DCQCN flows from h1..hn to h0 on one leaf of a
// leaf-spine, sized to run DCQCNRun at C/N.
func dcqcnCase(n int) ConformanceCase {
	size := int64(float64(DCQCNRun.Seconds()) * 100e9 / 8 / float64(n)) // at the papers' 100 Gb/s; Text says so
	return ConformanceCase{
		Name: fmt.Sprintf("dcqcn-%d", n), Check: "dcqcn", series: true, cc: "dcqcn", senders: n, interval: DCQCNSample,
		Fabric: &FabricConfig{Kind: lab.TopologyLeafSpine, Leaves: 2, Spines: 1, Hosts: 9},
		Text: fmt.Sprintf("%d DCQCN flows of %.3g MB each (%v at C/N on a 100 Gb/s target) from h1..h%d to h0 at once, through one leaf of a leaf-spine (2 leaves of 9 servers, 1 spine), ECN marking on; from %v to %v the flows' mean rates and the leaf's mean queue against DCQCN's fluid model (Zhu et al., CoNEXT 2016) integrated on the target's parameters, with the loop delay of the path (4 links) and the queue's own delay (the lab marks as a packet joins its queue)",
			n, float64(size)/1e6, DCQCNRun, n, DCQCNFrom, DCQCNTo),
		flows: func(conformanceEnv) ([]workload.Flow, time.Duration) {
			fs := make([]workload.Flow, n)
			for i := range fs {
				fs[i] = workload.Flow{ID: i, Src: 1 + i, Dst: 0, Size: size, Kind: workload.KindLong}
			}
			return fs, time.Microsecond
		},
	}
}

// dcqcnModel is the fluid model of n flows on env's target (DCQCNModel).
func dcqcnModel(env conformanceEnv, n int) (fluid.DCQCN, error) {
	return DCQCNModel(env.target, env.wire.Overhead, n)
}

// DCQCNModel is the fluid model the dcqcn check holds n flows of target
// t to, its packets wireOverhead bytes over their payload on the wire:
// the loop delay of four links and the frames' serialization at two
// hops, and the queue's delay at its fixed point.
func DCQCNModel(t scale.Target, wireOverhead, n int) (fluid.DCQCN, error) {
	ser := time.Duration(float64(t.MTU+wireOverhead) * 8 / float64(t.LinkRateBps) * 1e9)
	d := fluid.FromTarget(t, n, 2*t.OneHopRTT()+2*ser)
	return fluid.WithQueueingDelay(d)
}

// dcqcnRows judge the dcqcn check: each flow's mean goodput in the window
// against the model's mean rate (its payload's share), and the leaf's
// mean queue against the model's and the packet model's, within
// dcqcnBound.
func dcqcnRows(rep *lab.WorkloadReport, env conformanceEnv, n int) []CheckRow {
	d, err := dcqcnModel(env, n)
	if err != nil {
		return []CheckRow{{Item: "the fluid model", Formula: err.Error()}}
	}
	tr, err := fluid.Simulate(d, DCQCNTo, 0, nil)
	if err != nil {
		return []CheckRow{{Item: "the fluid model", Formula: err.Error()}}
	}
	// The model's means over the window, from its samples.
	var mq, qlo, qhi float64
	qlo = math.Inf(1)
	rates := make([]float64, n)
	k := 0
	for i, at := range tr.Time {
		if at < DCQCNFrom || at > DCQCNTo {
			continue
		}
		q := tr.QueueBytes[i]
		mq += q
		qlo, qhi = min(qlo, q), max(qhi, q)
		for f := range n {
			rates[f] += tr.RateBps[f][i]
		}
		k++
	}
	if k == 0 {
		return []CheckRow{{Item: "the fluid model", Formula: "no sample in the window"}}
	}
	mq /= float64(k)
	goodput := float64(env.target.MTU) / float64(d.WireBytes) // the payload's share of a rate on the wire
	// The packet model (DCQCNPackets): the fluid model's flows are
	// identical and marked by expectation, a lab's are marked packet by
	// packet, each flow by its own draws, which spreads their rates and
	// lifts the mean queue with N (docs/VALIDATION.md, the dcqcn case).
	pk, pkErr := DCQCNPacketsDraws(env.target, transport.CCDCQCN, n, PacketsIndependent, DCQCNPacketDraws)
	spread := ""
	if pkErr == nil {
		spread = fmt.Sprintf("; the packet model's flows within ±%.0f%% of it over %d draws, all within the bound in %d", 100*pk.MaxRateError, DCQCNPacketDraws, pk.RatesWithin(dcqcnBound))
	}
	var rows []CheckRow
	for f, r := range rep.Records {
		got, ok := seriesRate(rep.FlowSeries, f, DCQCNFrom, DCQCNTo)
		want := rates[min(f, n-1)] / float64(k) * goodput / 1e9
		if !ok {
			rows = append(rows, CheckRow{Item: fmt.Sprintf("h%d's mean rate", r.Src), Formula: "samples before and after the window"})
			continue
		}
		rows = append(rows, relRow(fmt.Sprintf("h%d's mean rate", r.Src), got, want, "Gb/s",
			fmt.Sprintf("the fluid model's mean R_C x MTU/wire bytes (%d/%d)%s", env.target.MTU, d.WireBytes, spread), dcqcnBound))
	}
	// The lab's queue: the leaf's egress bytes (its port to h0 holds
	// all but the ACKs and CNPs) at the samples in the window.
	col := slices.Index(rep.QueueNodes, "leaf0")
	var lq []float64
	for _, row := range rep.Queues {
		if col >= 0 && col < len(row.Bytes) && row.TargetElapsed >= DCQCNFrom && row.TargetElapsed <= DCQCNTo {
			lq = append(lq, float64(row.Bytes[col]))
		}
	}
	if len(lq) == 0 {
		return append(rows, CheckRow{Item: "leaf0's mean queue", Formula: "queue samples in the window"})
	}
	var sum float64
	for _, v := range lq {
		sum += v
	}
	row := relRow("leaf0's mean queue", sum/float64(len(lq))/1e3, mq/1e3, "KB",
		fmt.Sprintf("the fluid model's mean q (loop delay %.2f µs with the queue's; it swings %.0f–%.0f KB; its flows within ±%.0f%% of C/N for good from %v, the convergence time, not judged: flows marked packet by packet seldom stay in that band)",
			float64(d.LoopDelay)/1e3, qlo/1e3, qhi/1e3, 100*fluid.ConvergenceBand, tr.Summary.ConvergedAt.Round(10*time.Microsecond)), dcqcnBound)
	slices.Sort(lq)
	row.Detail = fmt.Sprintf("%d samples, %.0f–%.0f KB", len(lq), lq[0]/1e3, lq[len(lq)-1]/1e3)
	rows = append(rows, row)
	// The same queue against the packet model.
	if pkErr != nil {
		return append(rows, CheckRow{Item: "the packet model", Formula: pkErr.Error()})
	}
	pr := relRow("leaf0's mean queue, packet by packet", row.Measured, pk.MeanQueueBytes/1e3, "KB",
		fmt.Sprintf("the packet model's mean q: the transport's DCQCN rate machines, one per flow, paced into one FIFO at C, each packet marked on RED's line as it joins (%d draws of the marks, %.0f–%.0f KB)",
			DCQCNPacketDraws, pk.MinQueueBytes/1e3, pk.MaxQueueBytes/1e3), dcqcnBound)
	pr.Detail = row.Detail
	return append(rows, pr)
}

// seriesRate is flow f's goodput in Gb/s between the target times from
// and to: its acknowledged bytes at the last sample at or before from and
// the first at or after to.
func seriesRate(series []lab.FlowSample, f int, from, to time.Duration) (float64, bool) {
	a, b := -1, -1
	for i, s := range series {
		if s.Flow != f {
			continue
		}
		if s.TargetElapsed <= from && (a < 0 || s.TargetElapsed > series[a].TargetElapsed) {
			a = i
		}
		if s.TargetElapsed >= to && (b < 0 || s.TargetElapsed < series[b].TargetElapsed) {
			b = i
		}
	}
	if a < 0 || b < 0 || series[b].TargetElapsed <= series[a].TargetElapsed {
		return 0, false
	}
	return 8 * float64(series[b].Acked-series[a].Acked) / (series[b].TargetElapsed - series[a].TargetElapsed).Seconds() / 1e9, true
}
