package experiment

import (
	"fmt"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
)

// drrWeights are the drr check's weights of a BCube(4,1) switch port's
// data queues under PortFC, in queue order: A0, A1, A2, B.
var drrWeights = []int{1, 1, 1, 3}

// drrCase is two flows into one switch egress in two of its data queues
// weighted 1 and 3: at s0.0's port toward h2, h1 -> h2 rides B (weight
// 3, for the attached server) and h0 -> h6 rides A0 (weight 1, relayed
// by h2 over level 1); each from its own ingress port. While both run,
// the egress sends them 3:1.
func drrCase() ConformanceCase {
	const size = 8 << 20
	return ConformanceCase{
		Name: "drr", Check: "drr", Topology: Topology{N: 4, K: 1}, series: true, fc: "portfc", weights: drrWeights,
		Text: fmt.Sprintf("two flows of %s at once into s0.0's egress toward h2 on BCube(4,1) under PortFC, weights %v (A0, A1, A2, B: --drr-weights): h1 -> h2 in B, h0 -> h6 in A0 (h2 relays it); while both run, B's rate over A0's against 3, and the link's goodput", "8M", drrWeights),
		flows: func(conformanceEnv) ([]workload.Flow, time.Duration) {
			return []workload.Flow{
				{ID: 0, Src: 1, Dst: 2, Size: size, Kind: workload.KindLong},
				{ID: 1, Src: 0, Dst: 6, Size: size, Kind: workload.KindLong},
			}, time.Microsecond
		},
	}
}

// drrRows judge the drr case: the rates of its two flows (B's first)
// over the middle 80% of the span both ran, their ratio against the
// weights' within 3%, their sum against the link's goodput within 5%.
func drrRows(rep *lab.WorkloadReport, env conformanceEnv) []CheckRow {
	if len(rep.Records) != 2 {
		return []CheckRow{{Item: "two flows", Formula: "the case's"}}
	}
	var from, to time.Duration
	to = 1 << 62
	for _, r := range rep.Records {
		from = max(from, r.TargetStart)
		to = min(to, r.TargetStart+r.TargetFCT)
	}
	span := to - from
	from, to = from+span/10, to-span/10
	b, okB := seriesRate(rep.FlowSeries, 0, from, to)
	a, okA := seriesRate(rep.FlowSeries, 1, from, to)
	if !okA || !okB || a <= 0 {
		return []CheckRow{{Item: "rates while both run", Formula: "samples before and after the shared span"}}
	}
	want := float64(drrWeights[3]) / float64(drrWeights[0])
	frame := float64(env.wire.Payload + env.wire.Overhead)
	capacity := float64(env.wire.Rate) * float64(env.wire.Payload) / frame / 1e9
	return []CheckRow{
		relRow("B's rate over A0's", b/a, want, "", fmt.Sprintf("the weights' ratio %d:%d (B %.2f Gb/s, A0 %.2f Gb/s)", drrWeights[3], drrWeights[0], b, a), 0.03),
		relRow("the link's goodput", a+b, capacity, "Gb/s", fmt.Sprintf("C·MTU/(MTU+overhead) = %g Gb/s x %d/%.0f", float64(env.wire.Rate)/1e9, env.wire.Payload, frame), 0.05),
	}
}
