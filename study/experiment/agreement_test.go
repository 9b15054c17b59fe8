package experiment

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/lab/workload"
)

// agreeSrc is an experiment of a lab's scheme and the simulator's.
const agreeSrc = `
name: agree
kind: workload
fabric: {kind: leafspine, leaves: 2, spines: 1, hosts: 2}
lab: {rate: 20M, ecn: true}
schemes: [pfc, "ns3:pfc"]
workload: {cdfs: [websearch], loads: [0.5], duration: 4s}
`

// The agreement table pairs each seed's lab and simulator results of a
// scheme, class by class, averages each tool's measure over the seeds,
// and marks a ratio outside its goal; an invalid point is left out.
func TestAgreementTable(t *testing.T) {
	c, err := Parse([]byte(agreeSrc+"seeds: [1, 2]\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	const d = 5000
	bin := func(label string, above int64, p50, p99 float64, meanUs float64) workload.BinSummary {
		return workload.BinSummary{Label: label, Above: above, Flows: 10, Completed: 10,
			Slowdown: workload.Dist[float64]{N: 10, P50: p50, P99: p99},
			FCT:      workload.Dist[time.Duration]{N: 10, Mean: time.Duration(meanUs * 1e3 * d)}}
	}
	res := func(contender string, seed uint64, valid bool, bins ...workload.BinSummary) Result {
		return Result{Point: Point{Contender: contender, CDF: "websearch", Load: 0.5, Seed: seed, Rep: 1}, Valid: valid, Dilation: d, Bins: bins}
	}
	results := []Result{
		res("pfc", 1, true, bin("<=10KB", 0, 1.0, 2.0, 10), bin("10KB-100KB", 10_000, 1.0, 2.0, 20)),
		res("ns3:pfc", 1, true, bin("<=10KB", 0, 1.05, 2.2, 10.5), bin("10KB-100KB", 10_000, 1.3, 2.0, 20)),
		res("pfc", 2, true, bin("<=10KB", 0, 1.0, 2.0, 10), bin("10KB-100KB", 10_000, 1.0, 2.0, 20)),
		res("ns3:pfc", 2, true, bin("<=10KB", 0, 1.15, 2.2, 10.5), bin("10KB-100KB", 10_000, 1.3, 2.0, 20)),
		// An invalid point of seed 3 and its pair: not counted.
		res("pfc", 3, false, bin("<=10KB", 0, 9, 9, 90)),
		res("ns3:pfc", 3, true, bin("<=10KB", 0, 1, 1, 1)),
	}
	rows := agreementRows(results, agreementPair{"pfc", "ns3:pfc"}, "websearch", 0.5, simAgreement.goals)
	if len(rows) != 2 || rows[0].label != "<=10KB" || rows[1].label != "10KB-100KB" {
		t.Fatalf("rows %+v, want the two classes in size order", rows)
	}
	small, mid := rows[0], rows[1]
	if small.seeds != 2 || small.sim[0] != 1.1 || small.loR[0] != 1.05 || small.hiR[0] != 1.15 {
		t.Errorf("small flows' p50: seeds %d, sim mean %v, ratios [%v, %v]; want 2, 1.1, [1.05, 1.15]", small.seeds, small.sim[0], small.loR[0], small.hiR[0])
	}
	if small.lab[2] != 10 || small.sim[2] != 10.5 {
		t.Errorf("small flows' mean FCT %v and %v µs, want the target's 10 and 10.5", small.lab[2], small.sim[2])
	}
	if small.anyOutside || small.outside[1] {
		t.Errorf("small flows: %+v, want every ratio within its goal (p99 +10%% within 25%%)", small)
	}
	if !mid.outside[0] || mid.outside[1] || mid.outside[2] {
		t.Errorf("10KB-100KB: outside %v, want only the p50 (+30%%) outside", mid.outside)
	}
	// Pause frames per ms of the target: 30 and 45 in 10 ms against 60
	// in each of the sim's, 2.0 and 1.33 times, 1.6 on average: outside
	// 25%.
	for i, n := range []float64{30, 60, 45, 60} {
		results[i].Target = 10 * time.Millisecond
		results[i].add("pauses", n)
	}
	var b strings.Builder
	agreementTable(&b, c, results)
	for _, want := range []string{"## Agreement with the simulator", "WebSearch at load 0.5", "| <=10KB | 10 | 2 |", "1.10 [1.05, 1.15]", "1.30 [1.30, 1.30] **outside**",
		"pause frames per ms of the target within 25%", "| pause frames | 2 | 3.75 | 6 | 1.60 [1.33, 2.00] **outside** |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	// Both DCQCN variants of a lab pair with the simulator's DCQCN (it
	// runs only Mellanox's); another cc or flow control does not.
	c.Contenders = []string{"pfc", "pfc/dcqcn-mlx", "pfc/hpcc", "portfc", "ns3:pfc", "ns3:pfc/hpcc"}
	got := fmt.Sprint(agreementPairs(c))
	if want := "[{pfc ns3:pfc} {pfc/dcqcn-mlx ns3:pfc} {pfc/hpcc ns3:pfc/hpcc}]"; got != want {
		t.Errorf("pairs %s, want %s", got, want)
	}
	b.Reset()
	c.Contenders = []string{"pfc"}
	agreementTable(&b, c, results)
	if b.Len() != 0 {
		t.Errorf("a run without the simulator has an agreement table:\n%s", b.String())
	}
}

// The flow-for-flow plot pairs the same flow (by ID) of a lab's and the
// simulator's points of one schedule, and is drawn only for a scheme
// both tools ran.
func TestRatioCDF(t *testing.T) {
	c, err := Parse([]byte(agreeSrc), false)
	if err != nil {
		t.Fatal(err)
	}
	var lab, sim []FlowSlowdown
	for i := range 40 {
		size := int64(1000 + 100_000*(i%2))
		lab = append(lab, FlowSlowdown{Size: size, Slowdown: 1, Kind: workload.KindPoisson, ID: i, FCT: time.Second})
		sim = append(sim, FlowSlowdown{Size: size, Slowdown: 1 + float64(i)/40, Kind: workload.KindPoisson, ID: i, FCT: time.Second + time.Duration(i)*time.Millisecond})
	}
	res := func(contender string, fs []FlowSlowdown) Result {
		return Result{Point: Point{Contender: contender, CDF: "websearch", Load: 0.5, Seed: 1, Rep: 1}, Valid: true, Dilation: 5000, Schedule: "abc", Slowdowns: fs}
	}
	dir := t.TempDir()
	files, err := Plot(c, []Result{res("pfc", lab), res("ns3:pfc", sim)}, dir)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range files {
		found = found || f.Name == "fct-ratio-websearch-ns3-pfc"
	}
	if !found {
		t.Errorf("plots %+v, want fct-ratio-websearch-ns3-pfc", files)
	}
	c.Contenders = []string{"pfc"}
	files, err = Plot(c, []Result{res("pfc", lab)}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasPrefix(f.Name, "fct-ratio") {
			t.Errorf("a run without the simulator drew %s", f.Name)
		}
	}
}

// The same-flow column pairs each background flow with itself, in the
// target's time at both D (their schedules' digests differ, their flows'
// IDs and sizes do not), skips a flow whose size differs and the
// incast's flows, and judges the median against the study's goal.
func TestSameFlowRatios(t *testing.T) {
	flows := func(d float64, fct func(i int) time.Duration) []FlowSlowdown {
		var out []FlowSlowdown
		for i := range 20 {
			out = append(out, FlowSlowdown{Size: 5000, Kind: workload.KindPoisson, ID: i, FCT: time.Duration(d) * fct(i)})
		}
		out = append(out, FlowSlowdown{Size: 1 << 20, Kind: workload.KindIncast, ID: 20, FCT: time.Duration(d) * time.Millisecond})
		return out
	}
	ref := Result{Point: Point{Contender: "pfc", CDF: "websearch", Load: 0.5, Seed: 1, Rep: 1}, Valid: true, Dilation: 5000, Schedule: "a",
		Slowdowns: flows(5000, func(int) time.Duration { return 10 * time.Microsecond })}
	// At D = 1,000 the flows take 3% longer in the target, but flow 0
	// (twice as long) and flow 1 (another size: not the same flow).
	other := Result{Point: Point{Contender: "pfc~d1000", CDF: "websearch", Load: 0.5, Seed: 1, Rep: 1}, Valid: true, Dilation: 1000, Schedule: "b",
		Slowdowns: flows(1000, func(i int) time.Duration {
			if i == 0 {
				return 20 * time.Microsecond
			}
			return 10300 * time.Nanosecond
		})}
	other.Slowdowns[1].Size = 6000
	got := sameFlowRatios(&ref, &other)
	rs := got["<=10KB"]
	if len(got) != 1 || len(rs) != 19 {
		t.Fatalf("ratios %v, want 19 of the class <=10KB", got)
	}
	slices.Sort(rs)
	if rs[0] < 1.0299 || rs[0] > 1.0301 || rs[18] != 2 {
		t.Errorf("ratios from %v to %v, want 1.03 to 2", rs[0], rs[18])
	}
	if c := sameFlowCell(rs, 0.05); c != "1.030 [1.03, 1.03]" {
		t.Errorf("cell %q", c)
	}
	if c := sameFlowCell(rs, 0.02); !strings.HasSuffix(c, "**outside**") {
		t.Errorf("cell %q within 2%%", c)
	}
	if c := sameFlowCell(nil, 0.05); c != "-" {
		t.Errorf("cell of no flows %q", c)
	}
	// At one D two schedules are other flows.
	other.Dilation = 5000
	if got := sameFlowRatios(&ref, &other); got != nil {
		t.Errorf("ratios of two schedules at one D: %v", got)
	}
	other.Dilation = 1000
	c, err := Parse([]byte(strings.Replace(agreeSrc, `schemes: [pfc, "ns3:pfc"]`, `schemes: [pfc, "pfc~d1000"]`, 1)), false)
	if err != nil {
		t.Fatal(err)
	}
	bins := []workload.BinSummary{{Label: "<=10KB", Flows: 20, Completed: 20, Slowdown: workload.Dist[float64]{N: 20, P50: 1, P99: 2}, FCT: workload.Dist[time.Duration]{N: 20, Mean: 10 * time.Microsecond}}}
	ref.Bins, other.Bins = bins, bins
	var b strings.Builder
	agreementTable(&b, c, []Result{ref, other})
	for _, want := range []string{"## Invariance across D", "the median same-flow FCT ratio within 5%", "| same flow, D / ref |", "| 1.030 [1.03, 1.03] |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
