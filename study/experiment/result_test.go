package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
)

// fakeResults are a valid portfc point and an invalid irn point of the
// tiny experiment, as a run would give them.
func fakeResults(t *testing.T) (*Config, []Result) {
	t.Helper()
	c, err := Parse([]byte(tiny), false)
	if err != nil {
		t.Fatal(err)
	}
	ps := c.Points()
	bins := func(scale float64) []workload.BinSummary {
		var bs []workload.BinSummary
		for i := range workload.DefaultBins.Len() {
			bs = append(bs, workload.BinSummary{Label: workload.DefaultBins.Label(i), Flows: 10, Completed: 10,
				Slowdown: workload.Dist[float64]{N: 10, Mean: scale * float64(i+1), P99: 3 * scale * float64(i+1)}})
		}
		return bs
	}
	good := Result{Point: ps[0], Valid: true, Bins: bins(1), Queues: []float64{0, 0, 1000, 5000, 12000}, Slowdowns: fakeSlowdowns(400, 1)}
	bad := Result{Point: ps[1], Valid: true, Bins: bins(2), Queues: []float64{0, 9000}, Slowdowns: fakeSlowdowns(400, 2)}
	for _, r := range []*Result{&good, &bad} {
		r.add("flows", 40)
		r.add("fct_avg_ms", 12.5)
		r.add("fct_p99_ms", 80)
		r.add("poisson_goodput_mbps", 4.2)
		r.Dilation = 5000
		r.targetUnits()
	}
	good.add("switch_queue_p99_kb", 12)
	// The valid point emulated 2ms of the target in 1m30s, the invalid
	// one an unknown time.
	good.Elapsed, good.Target = 90*time.Second, 2*time.Millisecond
	bad.Elapsed = time.Minute
	good.cost()
	bad.cost()
	bad.invalidate("s0.0/p1 lost 1s of link time, 50% of the run (limit 1%)")
	return c, []Result{good, bad}
}

// fakeSlowdowns are n flows from 1 KB to 10 MB, evenly on a log scale,
// slowdowns growing with the size and with scale.
func fakeSlowdowns(n int, scale float64) []FlowSlowdown {
	fs := make([]FlowSlowdown, n)
	for i := range fs {
		x := float64(i) / float64(n-1)
		fs[i] = FlowSlowdown{Size: int64(math.Round(1e3 * math.Pow(1e4, x))), Slowdown: scale * (1 + 3*x + float64(i%7)/7), Kind: workload.KindPoisson}
	}
	return fs
}

func TestPlotWorkload(t *testing.T) {
	c, results := fakeResults(t)
	dir := t.TempDir()
	files, err := Plot(c, results, dir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]PlotFile{}
	for _, f := range files {
		names[f.Name] = f
		checkPlotFiles(t, dir, f.Name)
	}
	for _, want := range []string{"slowdown-size-websearch-load0.5", "queue-cdf-websearch-load0.5",
		"fct-avg-websearch", "goodput-poisson-websearch", "switch-queue-p99-websearch"} {
		f, ok := names[want]
		if !ok {
			t.Errorf("no plot %s among %v", want, files)
			continue
		}
		// The invalid point is named, and left out of the legend.
		if !strings.Contains(f.Note, "INVALID: websearch-0.5-irn-s1-r1") {
			t.Errorf("%s: note %q does not name the invalid point", want, f.Note)
		}
		svg, err := os.ReadFile(filepath.Join(dir, want+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		// The schemes as the papers print them.
		if !bytes.Contains(svg, []byte(">PortFC<")) || bytes.Contains(svg, []byte(">IRN<")) || bytes.Contains(svg, []byte(">portfc<")) {
			t.Errorf("%s.svg: legend has PortFC %v, IRN %v, portfc %v; want PortFC only", want, bytes.Contains(svg, []byte(">PortFC<")), bytes.Contains(svg, []byte(">IRN<")), bytes.Contains(svg, []byte(">portfc<")))
		}
	}
	if _, ok := names["jct-avg-websearch"]; ok {
		t.Error("a pattern plot for a workload without a pattern")
	}
}

func TestPlotLoop(t *testing.T) {
	c, err := Parse([]byte("name: l\nkind: loop\nlab: {rate: 10M}\nschemes: [pfc, portfc]\nloop: {scenarios: [bcube21, bcube41-over]}\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	var results []Result
	for i, p := range c.Points() {
		r := Result{Point: p, Valid: true, Dilation: 10_000} // 10 Mb/s
		r.add("background_mbps", float64(i)*5)
		r.add("loop_mbps", 3)
		r.Series = map[string][][2]float64{"background_mbps": {{0, 1}, {1, 2}, {2, float64(i)}}}
		if p.Scenario == "bcube41-over" {
			r.add("incast_mbps", 4)
		}
		if p.Scenario == "bcube21" {
			r.add("bg_h0_h1_mbps", 2)
			r.add("pauses_A", 10)
			r.add("pauses_B", 20)
			r.add("pauses", 30)
			r.Series["loop_mbps"] = [][2]float64{{0, 0}, {1, 3}, {2, 4}}
		}
		r.targetUnits()
		results = append(results, r)
	}
	if len(results) != 4 || results[2].ID != "bcube41-over-pfc-r1" {
		t.Fatalf("points %+v", results)
	}
	dir := t.TempDir()
	files, err := Plot(c, results, dir)
	if err != nil {
		t.Fatal(err)
	}
	// bcube21 has no incast flows, so its throughput plot has no incast
	// group; bcube41-over's, drawn after it, still names its third.
	if svg, err := os.ReadFile(filepath.Join(dir, "loop-throughput-bcube41-over.svg")); err != nil || !bytes.Contains(svg, []byte(">incast (1-hop)<")) {
		t.Errorf("loop-throughput-bcube41-over.svg lacks its incast group's label (%v)", err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Name)
		checkPlotFiles(t, dir, f.Name)
		if f.Note != "" {
			t.Errorf("%s: note %q with every point valid", f.Name, f.Note)
		}
	}
	// bcube41-over's points have no bg_ or pauses_ metrics: those plots
	// are not drawn for it.
	want := "loop-throughput-bcube21,loop-background-flows-bcube21,loop-pauses-bcube21,loop-series-bcube21," +
		"loop-throughput-bcube41-over,loop-series-bcube41-over"
	if strings.Join(got, ",") != want {
		t.Errorf("plots %v, want %s", got, want)
	}
}

// checkPlotFiles checks name.png is a PNG and name.svg an SVG, both of
// some size.
func checkPlotFiles(t *testing.T, dir, name string) {
	t.Helper()
	png, err := os.ReadFile(filepath.Join(dir, name+".png"))
	if err != nil || len(png) < 5000 || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%s.png: %d bytes, %v", name, len(png), err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
	if err != nil || len(svg) < 2000 || !bytes.Contains(svg[:min(200, len(svg))], []byte("<svg")) {
		t.Errorf("%s.svg: %d bytes, %v", name, len(svg), err)
	}
}

func TestSummaryCSV(t *testing.T) {
	c, results := fakeResults(t)
	var b bytes.Buffer
	if err := WriteSummaryCSV(&b, c, results); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want a header and 2", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"point", "scheme", "label", "valid", "problems", "elapsed_s", "target_ms", "wall_s_per_target_ms", "flows", "fct_avg_ms", "switch_queue_p99_kb"} {
		if _, ok := col[h]; !ok {
			t.Errorf("no column %s in %v", h, rows[0])
		}
	}
	good, bad := rows[1], rows[2]
	if good[col["scheme"]] != "portfc" || good[col["label"]] != "PortFC" {
		t.Errorf("valid row's scheme %q, label %q; want portfc, PortFC", good[col["scheme"]], good[col["label"]])
	}
	if good[col["valid"]] != "true" || good[col["switch_queue_p99_kb"]] != "12" || good[col["fct_avg_ms"]] != "12.5" {
		t.Errorf("valid row %v", good)
	}
	if bad[col["valid"]] != "false" || !strings.Contains(bad[col["problems"]], "lost 1s") || bad[col["switch_queue_p99_kb"]] != "" {
		t.Errorf("invalid row %v", bad)
	}
	// The cost: 90 s of wall time for 2 ms of the target, 45 s per ms;
	// not known for a point of no target time.
	if good[col["elapsed_s"]] != "90.0" || good[col["target_ms"]] != "2" || good[col["wall_s_per_target_ms"]] != "45" {
		t.Errorf("valid row's cost: %s s, %s ms, %s s per ms", good[col["elapsed_s"]], good[col["target_ms"]], good[col["wall_s_per_target_ms"]])
	}
	if bad[col["target_ms"]] != "" || bad[col["wall_s_per_target_ms"]] != "" {
		t.Errorf("invalid row's cost: %v", bad)
	}
	var bins bytes.Buffer
	if err := WriteBinsCSV(&bins, c, results); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(bins.String(), "\n"); n != 1+2*workload.DefaultBins.Len() {
		t.Errorf("bins.csv has %d lines", n)
	}
}

func TestREADME(t *testing.T) {
	c, results := fakeResults(t)
	rep := &Report{Experiment: c.Name, Points: 2, Results: results, Started: time.Now(),
		Plots: []PlotFile{{Name: "fct-avg-websearch", Title: "Average FCT", Note: "not plotted, INVALID: websearch-0.5-irn-s1-r1"}}}
	rep.Build.Module, rep.Build.Revision, rep.Build.GoVersion = "github.com/bcfab/bcfab", "0123456789abcdef", "go1.26"
	var b bytes.Buffer
	if err := WriteREADME(&b, c, rep); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"Build: github.com/bcfab/bcfab", "rev 0123456789ab", "1 valid", "**INVALID**", "lost 1s of link time",
		"The points cost 45s of wall time per ms in the target (1m30s of wall time for 2ms in the target), their labs' bring-up and removal included.",
		"| point | health | wall s per target ms |", "| valid | 45 |", "| **INVALID** | - |",
		"![Average FCT](plots/fct-avg-websearch.png)", "(plots/fct-avg-websearch.svg)", "runs/websearch-0.5-portfc-s1-r1/"} {
		if !strings.Contains(s, want) {
			t.Errorf("README lacks %q:\n%s", want, s)
		}
	}
}

func TestGroupStats(t *testing.T) {
	ms := time.Millisecond
	flows := []workload.Flow{
		{ID: 0, Kind: workload.KindPS, Group: 1}, {ID: 1, Kind: workload.KindPS, Group: 1},
		{ID: 2, Kind: workload.KindPS, Group: 1, Phase: 1}, {ID: 3, Kind: workload.KindPS, Group: 1, Phase: 1},
		{ID: 4, Kind: workload.KindPS, Group: 2}, {ID: 5, Kind: workload.KindPS, Group: 2, Phase: 1},
	}
	recs := workload.Records(flows)
	done := func(i int, start, fct time.Duration) {
		recs[i].Start = start
		recs[i].Complete(fct, 0)
		recs[i].Size = 1000
	}
	done(0, 0, 80*ms)
	done(1, 0, 100*ms)     // the push ends at 100 ms
	done(2, 150*ms, 50*ms) // the pull starts 50 ms later
	done(3, 160*ms, 60*ms) // and ends at 220 ms
	done(4, 1000*ms, 10*ms)
	g := groupStats(recs, flows, workload.KindPS) // group 2's pull never completed
	if g.events != 2 || g.complete != 1 || g.avg != 220 || g.gapMin != 50 || g.gapMax != 50 || g.firstAvg != 100 || g.firstP99 != 100 {
		t.Errorf("groups %+v; want 2 events, 1 complete, 220 ms, gap 50 ms, push 100 ms", g)
	}
	if none := groupStats(recs, flows, workload.KindIncast); none.events != 0 || !math.IsNaN(none.avg) || !math.IsNaN(none.firstAvg) {
		t.Errorf("no incast: %+v", none)
	}
}

func TestRejudge(t *testing.T) {
	h := lab.Health{Valid: true, Wall: 10 * time.Second, Lost: 20 * time.Millisecond, LostShare: 0.002, WorstPort: "h0/eth0", RingDrops: 3}
	if got := Rejudge(h, lab.HealthLimits{}); !got.Valid {
		t.Errorf("no limits: %+v", got)
	}
	if got := Rejudge(h, lab.HealthLimits{MaxRingDrops: 5}); !got.Valid {
		t.Errorf("within limits: %+v", got)
	}
	got := Rejudge(h, lab.HealthLimits{MaxLostShare: 0.001, MinLost: time.Millisecond, MaxRingDrops: -1})
	if got.Valid || len(got.Problems) != 1 || !strings.Contains(got.Problems[0], "h0/eth0 lost 20ms") {
		t.Errorf("strict lost-time limit: %+v", got)
	}
	h.Skipped, h.SkippedShare, h.SkippedWorker = 30*time.Millisecond, 0.003, "w0"
	got = Rejudge(h, lab.HealthLimits{MaxSkippedShare: 0.002, MaxLostShare: -1, MaxRingDrops: -1})
	if got.Valid || len(got.Problems) != 1 || !strings.Contains(got.Problems[0], "worker w0 skipped 30ms") {
		t.Errorf("strict skipped-time limit: %+v", got)
	}
}

func TestMetricJSON(t *testing.T) {
	in := []Metric{{"a", 1.5}, {"b", math.NaN()}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `[{"name":"a","value":1.5},{"name":"b","value":null}]` {
		t.Errorf("json %s", b)
	}
	var out []Metric
	if err := json.Unmarshal(b, &out); err != nil || len(out) != 2 || out[0].Value != 1.5 || !math.IsNaN(out[1].Value) {
		t.Errorf("round trip: %v %v", out, err)
	}
}

// TestSpreadSeries checks a series plot's line is the repetitions' mean,
// sample by sample, over the samples every repetition has, and its band
// their least and greatest value.
func TestSpreadSeries(t *testing.T) {
	rs := []*Result{
		{Series: map[string][][2]float64{"background_mbps": {{0, 10}, {1, 20}, {2, 30}}}},
		{Series: map[string][][2]float64{"background_mbps": {{0, 20}, {1, 40}}}},
		{Series: map[string][][2]float64{"background_mbps": {{0, 30}, {1.5, 30}}}},
		{Series: map[string][][2]float64{"loop_mbps": {{0, 1}}}},
	}
	mean, lo, hi, n := spreadSeries(rs, "background_mbps")
	if n != 3 || len(mean) != 2 || mean[0].Y != 20 || mean[1].Y != 30 || math.Abs(mean[1].X-3.5/3) > 1e-12 {
		t.Errorf("mean %v of %d runs, want [{0 20} {1.17 30}] of 3", mean, n)
	}
	if lo[0].Y != 10 || hi[0].Y != 30 || lo[1].Y != 20 || hi[1].Y != 40 || lo[1].X != mean[1].X {
		t.Errorf("band %v to %v, want 10-30 and 20-40 at the mean times", lo, hi)
	}
	if mean, _, _, n := spreadSeries(rs, "incast_mbps"); n != 0 || mean != nil {
		t.Errorf("absent series: %v of %d", mean, n)
	}
}

// TestPartialPoints: a valid point whose flows did not all end is named,
// with the deadlock the watchdogs found, in the README and in the notes
// of the plots of its numbers.
func TestPartialPoints(t *testing.T) {
	c, results := fakeResults(t)
	good := &results[0]
	good.add("incomplete", 7)
	good.add("deadlocked", 1)
	good.add("stalled_queues", 9)
	good.add("cycle_queues", 4)
	rep := &Report{Experiment: c.Name, Points: 2, Results: results, Started: time.Now()}
	var b bytes.Buffer
	if err := WriteREADME(&b, c, rep); err != nil {
		t.Fatal(err)
	}
	if want := "- websearch-0.5-portfc-s1-r1: 7 of 40 flows incomplete; **deadlock**: a cycle of 4 queues pausing each other (9 stalled in all)"; !strings.Contains(b.String(), want) {
		t.Errorf("README lacks %q:\n%s", want, b.String())
	}
	files, err := Plot(c, results, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		// Every plot of the point's numbers; a queue CDF is of samples,
		// not flows.
		want := !strings.HasPrefix(f.Name, "queue-cdf-")
		if got := strings.Contains(f.Note, "websearch-0.5-portfc-s1-r1 (7, deadlock)"); got != want {
			t.Errorf("%s: note %q names the partial point: %v, want %v", f.Name, f.Note, got, want)
		}
	}
}

// TestReplotOldRun: replot redraws a run directory and gives a result
// from before incomplete_pct the metric, from its counts; the slowdown
// by flow size comes from the points' records.csv.
func TestReplotOldRun(t *testing.T) {
	c, results := fakeResults(t)
	results[0].add("incomplete", 10)
	dir := t.TempDir()
	rep := &Report{Experiment: c.Name, Points: 2, Results: results, Started: time.Now()}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(tiny), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONFile(filepath.Join(dir, "results.json"), rep); err != nil {
		t.Fatal(err)
	}
	// The valid point's flows, in its records.csv: results.json has
	// none.
	var recs []workload.FlowRecord
	for i, f := range fakeSlowdowns(200, 1) {
		r := workload.FlowRecord{ID: i, Size: f.Size, Kind: workload.KindPoisson}
		r.Complete(time.Duration(f.Slowdown*1e6), time.Millisecond)
		recs = append(recs, r)
	}
	runDir := filepath.Join(dir, "runs", results[0].ID)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeWith(filepath.Join(runDir, "records.csv"), func(w io.Writer) error { return workload.WriteCSV(w, recs) }); err != nil {
		t.Fatal(err)
	}
	got, err := Replot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := got.Results[0].Get("incomplete_pct"); !ok || v != 25 {
		t.Errorf("incomplete_pct %v %v, want 25 (10 of 40 flows)", v, ok)
	}
	checkPlotFiles(t, filepath.Join(dir, "plots"), "incomplete-websearch")
	checkPlotFiles(t, filepath.Join(dir, "plots"), "slowdown-size-websearch-load0.5")
	if n := len(got.Results[0].Slowdowns); n != 200 {
		t.Errorf("replot read %d flows of records.csv, want 200", n)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "README.md")); err != nil || !bytes.Contains(b, []byte("10 of 40 flows incomplete")) {
		t.Errorf("README %v:\n%s", err, b)
	}
}

// A point's lab rates and times read in the target's units: Mb/s x D in
// Gb/s, ms / D in µs; a flow's start lag too: how late the target saw
// it start.
func TestTargetUnits(t *testing.T) {
	r := Result{Dilation: 5000}
	r.add("fct_avg_ms", 12.5)
	r.add("poisson_goodput_mbps", 4.2)
	r.add("start_lag_avg_ms", 3)
	r.add("slowdown_avg", 2)
	r.targetUnits()
	got := map[string]float64{}
	for _, m := range r.Metrics {
		got[m.Name] = m.Value
	}
	if got["fct_avg_us"] != 2.5 || got["poisson_goodput_gbps"] != 21 || got["start_lag_avg_us"] != 0.6 || len(r.Metrics) != 7 {
		t.Errorf("metrics %v", r.Metrics)
	}
	none := Result{}
	none.add("fct_avg_ms", 1)
	if none.targetUnits(); len(none.Metrics) != 1 {
		t.Errorf("without a D: %v", none.Metrics)
	}
}

// A permutation's big flows: bytes over FCT of the completed background
// flows over 1 MB, the mean, and its share of the line rate; none of it
// under uniform pairs.
func TestPermutationMetrics(t *testing.T) {
	rep := &lab.WorkloadReport{RateBps: 20e6, Pairing: workload.PairingNearWorst, Records: []workload.FlowRecord{
		{Size: 2e6, FCT: time.Second, Kind: workload.KindPoisson, Completed: true},      // 16 Mb/s
		{Size: 4e6, FCT: 4 * time.Second, Kind: workload.KindPoisson, Completed: true},  // 8 Mb/s
		{Size: 1e6, FCT: time.Millisecond, Kind: workload.KindPoisson, Completed: true}, // not over 1 MB
		{Size: 3e6, Kind: workload.KindPoisson},                                         // incomplete
		{Size: 8e6, FCT: time.Second, Kind: workload.KindIncast, Completed: true},       // not the background
	}}
	var r Result
	r.WorkloadMetrics(rep, nil)
	if v, _ := r.Get("big_flow_mbps"); v != 12 {
		t.Errorf("big_flow_mbps = %g, want 12", v)
	}
	if v, _ := r.Get("big_flow_share"); v != 0.6 {
		t.Errorf("big_flow_share = %g, want 0.6", v)
	}
	rep.Pairing = ""
	var u Result
	u.WorkloadMetrics(rep, nil)
	if _, ok := u.Get("big_flow_mbps"); ok {
		t.Error("big_flow_mbps under uniform pairs")
	}
}

// results.json gives each point's target time and cost and the run's
// totals, over the points whose target time is known.
func TestCostJSON(t *testing.T) {
	c, results := fakeResults(t)
	third := results[0]
	third.Elapsed, third.Target = 30*time.Second, 2*time.Millisecond
	third.cost()
	rep := &Report{Experiment: c.Name, Points: 3, Results: append(results, third)}
	if wall, target := rep.Cost(); wall != 2*time.Minute || target != 4*time.Millisecond {
		t.Errorf("cost: %v for %v, want 2m for 4ms", wall, target)
	}
	rep.account()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"target_ns":2000000,"wall_s_per_target_ms":45,`, `"target_ns":2000000,"wall_s_per_target_ms":15,`,
		`"target_ns":4000000,"wall_s_per_target_ms":30,`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("results.json lacks %s", w)
		}
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || back.Results[0].WallPerTargetMs != 45 || back.WallPerTargetMs != 30 {
		t.Errorf("read back: %v, %+v", err, back.Results[0])
	}
}

// The switches' queues: the sum of a switch's ports, and its fullest
// port, the queue a frame waits behind; hosts are not switches.
func TestPortQueueMetrics(t *testing.T) {
	rep := &lab.WorkloadReport{RateBps: 8e6, QueueNodes: []string{"h0", "s0.0", "s1.0"}, Queues: []lab.QueueRow{
		{Bytes: []uint64{90_000, 3_000, 4_000}, PortMax: []uint64{90_000, 2_000, 4_000}},
		{Bytes: []uint64{90_000, 10_000, 0}, PortMax: []uint64{90_000, 6_000, 0}},
	}}
	var r Result
	r.WorkloadMetrics(rep, nil)
	for _, w := range []struct {
		name string
		want float64
	}{{"switch_queue_max_kb", 10}, {"port_queue_p99_kb", 6}, {"port_queue_delay_p99_ms", 6}, {"queue_delay_p99_ms", 10}} {
		if v, ok := r.Get(w.name); !ok || v != w.want {
			t.Errorf("%s = %g (%v), want %g", w.name, v, ok, w.want)
		}
	}
	rep.Queues = []lab.QueueRow{{Bytes: []uint64{0, 1, 2}}} // a report of before the ports
	var old Result
	old.WorkloadMetrics(rep, nil)
	if _, ok := old.Get("port_queue_p99_kb"); ok {
		t.Error("a port queue from a report without one")
	}
}
