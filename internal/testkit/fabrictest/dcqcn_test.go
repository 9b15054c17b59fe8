package fabrictest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/model/fluid"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/study/experiment"
	"github.com/bcfab/bcfab/wire/transport"
)

// BenchmarkDCQCNQueue runs the conformance study's dcqcn cases (N = 2,
// 4, 8 flows of the paper's DCQCN, at once, from h1..hN into h0 through
// s0.0 of leafFabric, the papers' network at D = 5,000, ECN on the
// target's RED line) on virtual time, where no node is ever late, and
// reports the mean of the switch port's queue over the cases' window, sampled as the study samples it (experiment.DCQCNFrom,
// DCQCNTo, DCQCNSample), beside the fluid model's (experiment.DCQCNModel:
// its trajectory's mean over the window, and its fixed point's q*), and
// how far the flows move together: the mean over pairs of flows of the
// correlation of their DCQCN rates (R_C) at the same samples, 1 for the
// model's identical flows. Every flow must end without a loss or a
// retransmission, the fabric healthy.
//
//	go test -run '^$' -bench DCQCNQueue -benchtime 1x ./internal/testkit/fabrictest
func BenchmarkDCQCNQueue(b *testing.B) {
	m := scale.Model{Target: scale.Papers(), D: startsD}
	for _, n := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			model, q, err := dcqcnFluid(m.Target, n)
			if err != nil {
				b.Fatal(err)
			}
			var c dcqcnCase
			for range b.N {
				c = dcqcnCaseQueue(b, m, n, nil)
			}
			b.ReportMetric(c.mean/1e3, "queue-KB")
			b.ReportMetric(model/1e3, "model-trajectory-KB")
			b.ReportMetric(q/1e3, "model-q*-KB")
			b.ReportMetric(c.corr, "rate-correlation")
			b.Logf("N = %d: the queue's mean %.1f KB (%d-%d KB) on virtual time, the flows' rates correlated %.2f, their means %.1f%% apart; the fluid model's trajectory %.1f KB, its fixed point's q* %.1f KB",
				n, c.mean/1e3, c.lo/1000, c.hi/1000, c.corr, 100*c.spread, model/1e3, q/1e3)
		})
	}
}

// dcqcnFluid is the fluid model of n flows on t as the conformance study
// holds its dcqcn cases to (experiment.DCQCNModel): its trajectory's mean
// queue over the cases' window and its fixed point's, in bytes.
func dcqcnFluid(t scale.Target, n int) (mean, fixed float64, err error) {
	d, err := experiment.DCQCNModel(t, transport.DefaultWireOverhead, n)
	if err != nil {
		return 0, 0, err
	}
	fp, err := fluid.FixedPoint(d)
	if err != nil {
		return 0, 0, err
	}
	tr, err := fluid.Simulate(d, experiment.DCQCNTo, 0, nil)
	if err != nil {
		return 0, 0, err
	}
	k := 0
	for i, at := range tr.Time {
		if at >= experiment.DCQCNFrom && at <= experiment.DCQCNTo {
			mean += tr.QueueBytes[i]
			k++
		}
	}
	return mean / float64(k), fp.QueueBytes, nil
}

// dcqcnCase is what dcqcnCaseQueue measured over the window: the switch
// port's queue bytes (mean, least, greatest), the mean correlation of
// two flows' rates and how far apart their mean rates are.
type dcqcnCase struct {
	mean   float64
	lo, hi int
	corr   float64
	// spread is the flows' mean rates over the window, the greatest less
	// the least, over their mean.
	spread float64
}

// dcqcnCaseQueue runs one dcqcn case of n flows on leafFabric. Flow i
// (from h(i+1)) starts after[i] of the lab's time after the first (nil:
// all at once); the window is timed from the first start.
func dcqcnCaseQueue(t testing.TB, m scale.Model, n int, after []time.Duration) (c dcqcnCase) {
	t.Helper()
	f := leafFabric(t, m.ECN(startsRate), hostd.TransportParams(m, startsRate))
	size := int64(experiment.DCQCNRun.Seconds() * float64(m.Target.LinkRateBps) / 8 / float64(n))
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if after != nil {
		sort.SliceStable(order, func(a, b int) bool { return after[order[a]] < after[order[b]] })
	}
	t0 := f.Now()
	ids := make([][2]int, n)
	for _, i := range order {
		if after != nil {
			if d := t0 + after[i] - f.Now(); d > 0 {
				f.RunFor(d)
			}
		}
		fs, err := f.HostLogic[i+1].StartRDMA(api.RDMARequest{Dst: 0, Bytes: size, CC: "dcqcn"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = [2]int{i + 1, fs[0].ID}
	}
	_, port := f.T.SwitchOf(0, 0)
	eg := f.Sws[0].Egress(port)
	step, from, to := m.Time(experiment.DCQCNSample), m.Time(experiment.DCQCNFrom), m.Time(experiment.DCQCNTo)
	k := 0
	c.lo = 1 << 62
	rates := make([][]float64, n)
	for f.Now()-t0 < to {
		f.RunFor(step)
		if f.Now()-t0 >= from {
			q := eg.Bytes()
			c.mean += float64(q)
			c.lo, c.hi = min(c.lo, q), max(c.hi, q)
			k++
			for i, id := range ids {
				rates[i] = append(rates[i], f.HostLogic[id[0]].RDMA([]int{id[1]}).Flows[0].RateBps)
			}
		}
	}
	c.mean /= float64(k)
	c.corr = experiment.MeanCorrelation(rates)
	lo, hi, all := math.Inf(1), 0.0, 0.0
	for _, r := range rates {
		var sum float64
		for _, x := range r {
			sum += x
		}
		lo, hi, all = min(lo, sum), max(hi, sum), all+sum
	}
	c.spread = (hi - lo) / (all / float64(n))
	losslessDone(t, f, ids, 2*m.Time(experiment.DCQCNRun))
	if n, where := fabricDrops(f); n != 0 {
		t.Fatalf("%d drops: %v", n, where)
	}
	if h := f.Health(); !h.Valid() {
		t.Fatalf("N = %d: the run was unhealthy on virtual time: %s", n, h)
	}
	return c
}

// BenchmarkDCQCNQueuePerturbed runs the dcqcn cases of BenchmarkDCQCNQueue
// again with their starts apart, on virtual time, where no node is late:
// draws 1..dcqcnDraws move every flow's start later by up to a jitter,
// startsJitter (under a quarter of a packet's time at the link's rate)
// or a microsecond of the target (about twelve packets' time). It logs
// each draw's queue mean and the flows' rate spread and reports the
// queue mean's least, median and greatest over the draws: how much of
// the lab's run-to-run spread of DCQCN's queue the starts alone give
// (docs/VALIDATION.md, the conformance results).
//
//	go test -run '^$' -bench DCQCNQueuePerturbed -benchtime 1x ./internal/testkit/fabrictest
func BenchmarkDCQCNQueuePerturbed(b *testing.B) {
	const dcqcnDraws = 10
	m := scale.Model{Target: scale.Papers(), D: startsD}
	for _, jitter := range []time.Duration{startsJitter, m.Time(time.Microsecond)} {
		for _, n := range []int{2, 4, 8} {
			b.Run(fmt.Sprintf("jitter=%v/N=%d", jitter, n), func(b *testing.B) {
				var means []float64
				for range b.N {
					means = means[:0]
					for r := 1; r <= dcqcnDraws; r++ {
						rng := rand.New(rand.NewPCG(uint64(r), uint64(n)))
						after := make([]time.Duration, n)
						for i := range after {
							after[i] = time.Duration(rng.Int64N(int64(jitter)))
						}
						c := dcqcnCaseQueue(b, m, n, after)
						means = append(means, c.mean)
						b.Logf("N = %d, starts up to %v apart, draw %d: the queue's mean %.1f KB, the flows' mean rates %.1f%% apart, correlated %.2f",
							n, jitter, r, c.mean/1e3, 100*c.spread, c.corr)
					}
				}
				slices.Sort(means)
				b.ReportMetric(means[0]/1e3, "least-queue-KB")
				b.ReportMetric(means[len(means)/2]/1e3, "median-queue-KB")
				b.ReportMetric(means[len(means)-1]/1e3, "greatest-queue-KB")
			})
		}
	}
}
