package experiment

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"

	"github.com/bcfab/bcfab/lab/workload"
)

// twoLoads are fakeResults' points at loads 0.5 and 0.7: the tiny
// experiment with a second load, every point valid.
func twoLoads(t *testing.T) (*Config, []Result) {
	t.Helper()
	c, err := Parse([]byte(strings.Replace(tiny, "loads: [0.5]", "loads: [0.5, 0.7]", 1)), false)
	if err != nil {
		t.Fatal(err)
	}
	var rs []Result
	for _, p := range c.Points() {
		r := Result{Point: p, Valid: true, Dilation: 5000, Slowdowns: fakeSlowdowns(400, 1)}
		r.add("fct_avg_ms", 10*p.Load)
		r.targetUnits()
		rs = append(rs, r)
	}
	return c, rs
}

// A bar chart of one category is a dot plot: one load, one metric.
func TestDotPlotChoiceUnit(t *testing.T) {
	c, rs := fakeResults(t) // one load
	pl := plots{c: c, results: rs}
	if d := pl.loadBarData(workloadPlots[0], "websearch"); !d.dots() {
		t.Error("one load: bars, want a dot plot")
	}
	c2, rs2 := twoLoads(t)
	if d := (&plots{c: c2, results: rs2}).loadBarData(workloadPlots[0], "websearch"); d.dots() {
		t.Error("two loads: a dot plot, want bars")
	}
	// Values over more than a decade and a half: a log axis.
	d := &barData{groups: []string{"load 0.5"}, series: []barSeries{{vals: []spread{spreadOf([]float64{70})}}, {vals: []spread{spreadOf([]float64{27_000})}}}}
	if _, _, log := d.logRange(); !log {
		t.Error("70 and 27000: a linear axis, want a log one")
	}
	d.series[1].vals[0] = spreadOf([]float64{500})
	if _, _, log := d.logRange(); log {
		t.Error("70 and 500: a log axis, want a linear one")
	}
	hc, hrs := repResults(t)
	if d := (&plots{c: hc, results: hrs}).contenderBarData(holPlots[0]); d.dots() {
		t.Error("alone and congested: a dot plot, want bars")
	}
	// The dot plot names its schemes down its side, its one load in the
	// title.
	dir := t.TempDir()
	files, err := Plot(c, rs, dir)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(files, func(f PlotFile) bool { return f.Name == "fct-avg-websearch" })
	if i < 0 || !strings.HasSuffix(files[i].Title, "WebSearch at load 0.5") {
		t.Fatalf("fct-avg-websearch: %+v", files)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "fct-avg-websearch.svg"))
	if err != nil || !bytes.Contains(svg, []byte(">PortFC<")) {
		t.Errorf("fct-avg-websearch.svg does not name PortFC (%v)", err)
	}
}

// A deadlocked point is never drawn as an ordinary value: its bar is
// hatched, its dot hollow, its slowdown line dashed, each said in words.
func TestDeadlockMarkingUnit(t *testing.T) {
	c, rs := twoLoads(t)
	for i := range rs {
		if rs[i].Contender == "portfc" && rs[i].Load == 0.7 {
			rs[i].add("deadlocked", 1)
			rs[i].add("incomplete", 3)
		}
	}
	pl := plots{c: c, results: rs}
	d := pl.loadBarData(workloadPlots[0], "websearch")
	if v := d.series[0].vals; v[0].deadlocked || !v[1].deadlocked || d.series[1].vals[1].deadlocked {
		t.Errorf("deadlocked bars %+v %+v, want portfc's at load 0.7 only", d.series[0].vals, d.series[1].vals)
	}
	dir := t.TempDir()
	if _, err := Plot(c, rs, dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"fct-avg-websearch": " deadlock<", "slowdown-size-websearch-load0.7": "PortFC (deadlock: the flows that ended)",
		"slowdown-size-websearch-load0.5": ""} {
		svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Contains(svg, []byte("deadlock")); want == "" && got || want != "" && !bytes.Contains(svg, []byte(want)) {
			t.Errorf("%s.svg: %q: %v", name, want, got)
		}
	}
	// One load: the deadlocked dot says so beside its number.
	c1, rs1 := fakeResults(t)
	rs1[0].add("deadlocked", 1)
	dir = t.TempDir()
	if _, err := Plot(c1, rs1, dir); err != nil {
		t.Fatal(err)
	}
	if svg, err := os.ReadFile(filepath.Join(dir, "fct-avg-websearch.svg")); err != nil || !bytes.Contains(svg, []byte("(deadlock)<")) {
		t.Errorf("the dot plot does not mark the deadlocked point (%v)", err)
	}
}

// The slowdown-by-size bins and bins.csv count the background's flows
// only; the README reports the others apart.
func TestBinFilterUnit(t *testing.T) {
	var recs []workload.FlowRecord
	for i := range 30 {
		r := workload.FlowRecord{ID: i, Size: int64(1000 * (i + 1)), Kind: workload.KindPoisson}
		if i >= 20 {
			r.Kind, r.Size = workload.KindIncast, 1_000_000
		}
		r.Complete(time.Duration(2+i)*time.Millisecond, time.Millisecond)
		recs = append(recs, r)
	}
	n := 0
	for _, b := range backgroundBins(recs) {
		n += b.Flows
		if b.UpTo == 1_000_000 && b.Flows != 0 {
			t.Errorf("bin %s holds %d flows: the incast's", b.Label, b.Flows)
		}
	}
	if n != 20 {
		t.Errorf("bins hold %d flows, want the background's 20", n)
	}
	fs := flowSlowdowns(recs)
	if got := len(binned(fs)); got != 20 {
		t.Errorf("%d flows binned, want 20", got)
	}
	c, rs := fakeResults(t)
	rs[0].Slowdowns = fs
	var b strings.Builder
	if err := WriteREADME(&b, c, &Report{Experiment: c.Name, Results: rs}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Flows outside the size bins") || !strings.Contains(b.String(), "| websearch load 0.5, PortFC, seed 1 | incast | 10 |") ||
		!strings.Contains(b.String(), "PortFC (`portfc`), IRN (`irn`)") {
		t.Errorf("README lacks the incast's flows:\n%s", b.String())
	}
}

// No panel draws more than maxLines lines: the loop's five schemes by
// three kinds of flow are a panel per kind.
func TestLineLimitUnit(t *testing.T) {
	var lines []seriesLine
	for _, k := range []string{"incast_mbps", "background_mbps", "loop_mbps"} {
		for _, s := range []string{"pfc", "pfcstar", "portfc", "portfc:drr", "bfc"} {
			lines = append(lines, seriesLine{contender: s, name: k})
		}
	}
	panels := splitLines(lines)
	if len(panels) != 3 {
		t.Fatalf("%d panels, want 3", len(panels))
	}
	for i, want := range []string{"background_mbps", "loop_mbps", "incast_mbps"} {
		if len(panels[i]) != 5 || panels[i][0].name != want || panels[i][4].name != want {
			t.Errorf("panel %d: %d lines of %s, want 5 of %s", i, len(panels[i]), panels[i][0].name, want)
		}
	}
	if p := splitLines(lines[:maxLines]); len(p) != 1 {
		t.Errorf("%d lines in %d panels, want one", maxLines, len(p))
	}
	many := make([]seriesLine, maxLines+2)
	if p := splitLines(many); len(p) != 2 || len(p[0]) != maxLines || len(p[1]) != 2 {
		t.Errorf("%d lines of one kind: panels of %d and %d", len(many), len(p[0]), len(p[len(p)-1]))
	}
	// The plots of a line per scheme (slowdown by size, queue CDF, CNPs)
	// stay within the limit in every built-in experiment.
	for _, name := range List() {
		c, _, err := Load(name, "", false)
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind == KindWorkload && len(c.Contenders) > maxLines {
			t.Errorf("%s: %d schemes, a line each: more than %d", name, len(c.Contenders), maxLines)
		}
	}
}

// Every slowdown-by-size panel has a log y axis, and an x axis from
// its first bin with a point to its last.
func TestSlowdownAxesUnit(t *testing.T) {
	c, rs := fakeResults(t)
	pl := plots{c: c, results: rs}
	d := pl.sizeData("websearch", 0.5)
	first, last := d.binRange()
	f, _, err := pl.sizeFigure(d, "t")
	if err != nil || f == nil {
		t.Fatal(err)
	}
	for i, p := range f.panels {
		if _, ok := p.Y.Scale.(plot.LogScale); !ok {
			t.Errorf("panel %d: a linear y axis", i)
		}
		if p.X.Min != d.edges[first] || p.X.Max != d.edges[last+1] {
			t.Errorf("panel %d: x from %g to %g, want the bins' %g to %g", i, p.X.Min, p.X.Max, d.edges[first], d.edges[last+1])
		}
	}
}

// A log axis has at least three labels, all in its range, on any range
// of a factor of 1.7 or more (the least a slowdown panel spans).
func TestLogTicksUnit(t *testing.T) {
	for _, r := range [][2]float64{{1, 1.7}, {0.9, 3}, {1, 1000}, {0.8, 30}, {1.05, 1.8}, {4.6, 7.9}, {9.1, 15.6}, {100, 1e8}} {
		var labels []string
		for _, tk := range (logTicks{}).Ticks(r[0], r[1]) {
			if tk.Value < r[0]*(1-1e-9) || tk.Value > r[1]*(1+1e-9) {
				t.Errorf("%v: tick %g outside", r, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if len(labels) < 3 || len(labels) > 10 {
			t.Errorf("%v: labels %v", r, labels)
		}
	}
	var labels []string
	for _, tk := range (logTicks{}).Ticks(1, 1000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if !slices.Equal(labels, []string{"1", "10", "100", "1000"}) {
		t.Errorf("1 to 1000: labels %v, want the powers of ten", labels)
	}
}
