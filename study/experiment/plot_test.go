package experiment

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/node/scheme"
)

// The slowdown-by-size plot's bins: at least ten, spaced evenly on a log
// scale from the smallest flow of the plotted points to the largest.
func TestSizeBins(t *testing.T) {
	c, results := fakeResults(t)
	bg := workload.KindPoisson
	// The background's flows, and an incast's and a long flow outside
	// their range: the bins are the background's.
	results[0].Slowdowns = []FlowSlowdown{{700, 1, bg, 0, 0}, {3_000_000, 2, bg, 1, 0}, {42_000, 1.5, bg, 2, 0}, {500, 9, workload.KindIncast, 3, 0}, {90_000_000, 3, workload.KindLong, 4, 0}}
	pl := plots{c: c, results: results}
	d := pl.sizeData("websearch", 0.5)
	if !slices.Equal(d.others, []workload.Kind{workload.KindIncast, workload.KindLong}) {
		t.Errorf("kinds left out of the bins %v, want incast and long", d.others)
	}
	if n := len(d.edges) - 1; n < 10 {
		t.Fatalf("%d bins, want at least 10", n)
	}
	if d.edges[0] != 700 || d.edges[len(d.edges)-1] != 3_000_000 {
		t.Errorf("bins span %g to %g, want the flows' 700 to 3000000", d.edges[0], d.edges[len(d.edges)-1])
	}
	ratio := d.edges[1] / d.edges[0]
	for i := 1; i < len(d.edges); i++ {
		if r := d.edges[i] / d.edges[i-1]; math.Abs(r-ratio) > 1e-9*ratio || r <= 1 {
			t.Errorf("edge %d / edge %d = %g, want %g: not evenly spaced on a log scale", i, i-1, r, ratio)
		}
	}
	// Every flow falls in a bin whose edges hold it.
	for _, size := range []int64{700, 701, 42_000, 2_999_999, 3_000_000} {
		b := sizeBin(d.edges, size)
		if float64(size) > d.edges[b+1] || (b > 0 && float64(size) <= d.edges[b]) {
			t.Errorf("size %d in bin %d (%g, %g]", size, b, d.edges[b], d.edges[b+1])
		}
	}
	if e := logSizeBins(5000, 5000, 12); len(e) != 13 || e[0] != 5000 || e[12] != 50000 {
		t.Errorf("one size: edges %v, want a decade from 5000", e)
	}
}

// A bin's percentiles are the nearest-rank percentiles of its flows'
// slowdowns; a bin of fewer than minBinFlows flows has none.
func TestBinPercentiles(t *testing.T) {
	edges := []float64{1000, 10_000, 100_000}
	var fs []FlowSlowdown
	// Bin 0: 100 flows of slowdown 1..100 (in a shuffled order); bin 1:
	// minBinFlows-1 flows.
	for i := range 100 {
		fs = append(fs, FlowSlowdown{Size: 1000 + int64(i), Slowdown: float64((i*37)%100 + 1)})
	}
	for i := range minBinFlows - 1 {
		fs = append(fs, FlowSlowdown{Size: 50_000, Slowdown: float64(i)})
	}
	flows, pcts := binPercentiles(fs, edges)
	if !slices.Equal(flows, []int{100, minBinFlows - 1}) {
		t.Errorf("flows per bin %v", flows)
	}
	if want := []float64{50, 95, 99}; !slices.Equal(pcts[0], want) {
		t.Errorf("bin 0: p50, p95, p99 %v, want %v", pcts[0], want)
	}
	for j, v := range pcts[1] {
		if !math.IsNaN(v) {
			t.Errorf("bin 1 (%d flows): percentile %g = %g, want none", minBinFlows-1, sizePercentiles[j], v)
		}
	}
	// Twenty flows: p95 is the 19th, p99 the 20th.
	var twenty []FlowSlowdown
	for i := range 20 {
		twenty = append(twenty, FlowSlowdown{Size: 2000, Slowdown: float64(20 - i)})
	}
	if _, p := binPercentiles(twenty, edges); !slices.Equal(p[0], []float64{10, 19, 20}) {
		t.Errorf("20 flows: %v, want [10 19 20]", p[0])
	}
}

// A scheme has one colour in every plot: the same whatever the other
// schemes, distinct from every other scheme of any built-in experiment.
func TestSchemeColors(t *testing.T) {
	seen := map[string]string{}
	for s := range contenderStyles {
		k := fmt.Sprint(contenderColor(s))
		if o, ok := seen[k]; ok {
			t.Errorf("%s and %s share colour %s", s, o, k)
		}
		seen[k] = s
	}
	// Far enough apart to tell (sum of the channels' differences).
	for a, sa := range contenderStyles {
		for b, sb := range contenderStyles {
			d := math.Abs(float64(sa.color.R)-float64(sb.color.R)) + math.Abs(float64(sa.color.G)-float64(sb.color.G)) + math.Abs(float64(sa.color.B)-float64(sb.color.B))
			if a < b && d < 90 {
				t.Errorf("%s and %s: colours %v and %v too alike", a, b, sa.color, sb.color)
			}
		}
	}
	if contenderColor("portfc") != contenderColor("portfc") || contenderColor("pfc/gbn") != contenderColor("pfc/gbn") {
		t.Error("a scheme's colour changes from call to call")
	}
	for _, name := range List() {
		c, _, err := Load(name, "", false)
		if err != nil {
			t.Fatal(err)
		}
		colors := map[string]string{}
		for _, s := range c.Contenders {
			k := fmt.Sprint(contenderColor(s))
			// The simulator's run of a scheme has the scheme's colour,
			// its own marker and a dotted line.
			if o, ok := colors[k]; ok && s != simPrefix+o && o != simPrefix+s {
				t.Errorf("experiment %s: %s and %s share a colour", name, s, o)
			} else if ok && styleOf(s).glyph == styleOf(o).glyph {
				t.Errorf("experiment %s: %s and %s share a colour and a marker", name, s, o)
			}
			colors[k] = s
		}
	}
	// The colour does not depend on the scheme's place in the file: the
	// same in the loadBars of two files that list the schemes in other
	// orders.
	c1, r1 := fakeResults(t)
	c2, r2 := fakeResults(t)
	c2.Contenders = []string{"irn", "portfc"}
	d1 := (&plots{c: c1, results: r1}).loadBarData(workloadPlots[0], "websearch")
	d2 := (&plots{c: c2, results: r2}).loadBarData(workloadPlots[0], "websearch")
	if d1.series[0].color != d2.series[1].color || d1.series[1].color != d2.series[0].color {
		t.Error("a scheme's bars change colour with the order of the schemes")
	}
}

// repResults are three valid repetitions of each of two schemes of the
// hol experiment, and an invalid fourth of portfc.
func repResults(t *testing.T) (*Config, []Result) {
	t.Helper()
	c, err := Parse([]byte("name: h\nkind: hol\nlab: {rate: 20M}\nschemes: [portfc, pfc]\nrepetitions: 4\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	var rs []Result
	for _, p := range c.Points() {
		r := Result{Point: p, Valid: true, Dilation: 5000}
		v := float64(10 * p.Rep)
		if p.Contender == scheme.NamePFC {
			v = float64(p.Rep * p.Rep)
		}
		r.add("victim_alone_mbps", v)
		r.add("victim_congested_mbps", v/2)
		r.add("incast_start_s", 5+0.1*float64(p.Rep))
		r.Series = map[string][][2]float64{"victim_mbps": {{0.25, v}, {0.5, 2 * v}, {0.75, v}}}
		if p.Rep == 4 {
			r.invalidate("lost link time")
			r.add("victim_alone_mbps", 1e6) // not drawn
		}
		r.targetUnits()
		rs = append(rs, r)
	}
	return c, rs
}

// A bar and a series point of more than one valid result show their
// mean, with a whisker (a band) from the least to the greatest.
func TestSpreadOverRepetitions(t *testing.T) {
	c, rs := repResults(t)
	pl := plots{c: c, results: rs}
	d := pl.contenderBarData(holPlots[0])
	if d == nil || len(d.series) != 2 || !slices.Equal(d.groups, []string{"alone", "congested"}) {
		t.Fatalf("bars %+v", d)
	}
	// portfc: 10, 20, 30 Mb/s at D = 5,000: 50, 100, 150 Gb/s.
	got := d.series[0].vals[0]
	if got.n != 3 || got.lo != 50 || got.hi != 150 || got.mean != 100 {
		t.Errorf("portfc alone: %+v, want mean 100 from 50 to 150 over 3", got)
	}
	// pfc: 1, 4, 9 Mb/s, halved.
	got = d.series[1].vals[1]
	if got.n != 3 || got.lo != 2.5 || got.hi != 22.5 || math.Abs(got.mean-35.0/3) > 1e-9 {
		t.Errorf("pfc congested: %+v, want 2.5 to 22.5 over 3", got)
	}
	if !slices.Equal(d.invalid, []string{"portfc-r4", "pfc-r4"}) {
		t.Errorf("invalid %v", d.invalid)
	}
	// The series' band: sample 1 of pfc is 2, 8, 18 Mb/s (x 5 Gb/s).
	sd := pl.seriesData()
	if len(sd.lines) != 2 || !sd.target {
		t.Fatalf("series %+v", sd)
	}
	l := sd.lines[1]
	if l.contender != scheme.NamePFC || l.reps != 3 || l.lo[1].Y != 10 || l.hi[1].Y != 90 || math.Abs(l.mean[1].Y-140.0/3) > 1e-9 {
		t.Errorf("pfc's band at sample 1: %v to %v, mean %v over %d; want 10 to 90", l.lo[1], l.hi[1], l.mean[1], l.reps)
	}
	if l.mean[1].X != 0.5/5000*1e3 {
		t.Errorf("sample 1 at %g ms of the target, want 0.1", l.mean[1].X)
	}
	// One result: no spread to show.
	if s := spreadOf([]float64{4, math.NaN()}); s.n != 1 || s.lo != 4 || s.hi != 4 {
		t.Errorf("one value: %+v", s)
	}
}

// The series plots mark their phases: the incast's start in hol (the
// mean of the valid results'), the loop flows' in loop; a result that
// does not know the time gets no marker.
func TestPhaseMarkers(t *testing.T) {
	c, rs := repResults(t)
	pl := plots{c: c, results: rs}
	ms := pl.holMarkers()
	if len(ms) != 1 || math.Abs(ms[0].x-5.2/5000*1e3) > 1e-12 || !strings.Contains(ms[0].label, "incast starts") {
		t.Errorf("hol markers %+v, want the incast at 1.04 ms of the target", ms)
	}
	dir := t.TempDir()
	files, err := Plot(c, rs, dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	if !slices.Contains(names, "hol-victim-series") {
		t.Fatalf("plots %v", names)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "hol-victim-series.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">incast starts: congested phase<", "stroke-dasharray", ">PortFC<", ">PFC<"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("hol-victim-series.svg lacks %s", want)
		}
	}
	// Every text keeps its width in a viewer without the layout's font.
	if texts, fitted := bytes.Count(svg, []byte("<text ")), bytes.Count(svg, []byte(`lengthAdjust="spacingAndGlyphs"`)); texts < 10 || fitted != texts {
		t.Errorf("hol-victim-series.svg: %d of %d texts with their width", fitted, texts)
	}
	for i := range rs {
		rs[i].Metrics = slices.DeleteFunc(rs[i].Metrics, func(m Metric) bool { return m.Name == "incast_start_s" })
	}
	if ms := pl.holMarkers(); len(ms) != 0 {
		t.Errorf("markers %+v with no incast time", ms)
	}

	lc, err := Parse([]byte("name: l\nkind: loop\nlab: {rate: 10M}\nschemes: [pfc]\nloop: {scenarios: [bcube21], warmup: 2s}\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	lp := plots{c: lc, results: []Result{{Point: lc.Points()[0], Valid: true, Dilation: 10_000}}}
	if ms := lp.loopMarkers(); len(ms) != 1 || ms[0].x != 0.2 || ms[0].label != "loop flows start" {
		t.Errorf("loop markers %+v, want the loop flows at 0.2 ms of the target (2 s of the lab at D = 10000)", ms)
	}
}

// A time axis gets 5 to 10 labelled ticks at steps of 1, 2 or 5.
func TestNiceTicks(t *testing.T) {
	for _, r := range [][2]float64{{0, 2.7}, {0, 1}, {0, 8.2}, {0, 130}, {0.05, 2.65}, {0, 0.0021}, {0, 5000}} {
		ts := niceTicks{n: 8}.Ticks(r[0], r[1])
		var labels []string
		for _, tk := range ts {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
			if tk.Value < r[0]-1e-12 || tk.Value > r[1]+1e-12 {
				t.Errorf("%v: tick %g outside", r, tk.Value)
			}
		}
		if len(labels) < 5 || len(labels) > 10 {
			t.Errorf("%v: labels %v, want 5 to 10", r, labels)
		}
	}
}

// Nothing of a figure's header runs past its width: a long title wraps,
// the legend breaks into rows.
func TestFigureHeaderFits(t *testing.T) {
	f := newFigure(strings.Repeat("a long title of a plot with many words ", 8))
	for i := range 12 {
		f.add(fmt.Sprintf("scheme %d (INVALID, not plotted)", i), swatch{contenderColor("portfc")})
	}
	w := f.w - 2*figMargin
	lines, sty := f.titleLines(w)
	if len(lines) < 2 {
		t.Errorf("title in %d line(s)", len(lines))
	}
	for _, l := range lines {
		if sty.Width(l) > w {
			t.Errorf("title line %q is %v wide, more than %v", l, sty.Width(l), w)
		}
	}
	rows, widths := f.legendRows(textStyle(figLegendSize), w)
	n := 0
	for i, r := range rows {
		n += len(r)
		if widths[i] > w {
			t.Errorf("legend row %d is %v wide, more than %v", i, widths[i], w)
		}
	}
	if n != 12 || len(rows) < 2 {
		t.Errorf("legend: %d entries in %d rows", n, len(rows))
	}
	if sty.Font.Size > vg.Points(figTitleSize) {
		t.Errorf("title font %v", sty.Font.Size)
	}
}

// A bar plot's groups are the metrics some scheme has: the loop's
// scenario without incast flows has no incast group, and a scheme that
// has not run is not in the legend.
func TestBarGroups(t *testing.T) {
	c, err := Parse([]byte("name: l\nkind: loop\nlab: {rate: 10M}\nschemes: [pfc, portfc, bfc]\nloop: {scenarios: [bcube21]}\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	var rs []Result
	for _, p := range c.Points()[:2] { // bfc has not run
		r := Result{Point: p, Valid: true, Dilation: 10_000}
		r.add("background_mbps", 3)
		r.add("loop_mbps", 2)
		r.targetUnits()
		rs = append(rs, r)
	}
	pl := plots{c: c, results: rs, scenario: "bcube21"}
	d := pl.contenderBarData(loopPlots[0])
	if d == nil || !slices.Equal(d.groups, []string{"background (2-hop)", "loop (4-hop)"}) {
		t.Fatalf("groups %+v", d)
	}
	var names []string
	for _, s := range d.series {
		names = append(names, s.name)
		if len(s.vals) != 2 || s.vals[0].mean != 30 {
			t.Errorf("%s: %+v, want 30 Gb/s of background", s.name, s.vals)
		}
	}
	if !slices.Equal(names, []string{scheme.NamePFC, scheme.NamePortFC}) {
		t.Errorf("legend %v, want the schemes that ran", names)
	}

	// The pauses by class: a group per class in the results, BFC's named
	// for what it pauses.
	rs[0].add("pauses_P3", 5)
	rs[1].add("pauses_A", 4)
	rs[1].add("pauses_bfc", 7)
	i := slices.IndexFunc(loopPlots, func(b contenderBars) bool { return b.name == "loop-pauses" })
	if i < 0 {
		t.Fatal("no loop-pauses plot")
	}
	pl = plots{c: c, results: rs, scenario: "bcube21"}
	if d := pl.contenderBarData(loopPlots[i]); d == nil || !slices.Equal(d.groups, []string{"P3", "A", "BFC's queues"}) {
		t.Fatalf("pause groups %+v", d)
	}
}
