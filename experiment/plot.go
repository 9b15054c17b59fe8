package experiment

import (
	"errors"
	"fmt"
	"image/color"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotFile is one plot written by Plot: plots/<Name>.png and .svg.
type PlotFile struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Note says what the plot leaves out: the invalid points.
	Note string `json:"note,omitempty"`
}

// A plot of every point's metric by scheme: one group of bars per
// scheme, one bar per metric. The loop and hol experiments' plots are
// lists of these: a new field of their results is a new metric in the
// runner and a name here.
type schemeBars struct {
	name, title, ylabel string
	metrics             []string
	legend              []string // one per metric
	// prefix, when set, takes the metrics from the results instead:
	// every one whose name has it and ends in suffix (but the prefix
	// alone), the legend the rest of the name.
	prefix, suffix string
}

// The units of the plots: the target network's (package scale), which a
// result's lab figures are read into (Result.targetUnits).
const (
	unitRate = "Gb/s, the target's"
	unitTime = "µs, the target's"
)

var (
	loopPlots = []schemeBars{
		{name: "loop-throughput", title: "Average throughput per flow, background and loop flows", ylabel: unitRate,
			metrics: []string{"background_gbps", "loop_gbps", "incast_gbps"}, legend: []string{"background (2-hop)", "loop (4-hop)", "incast (1-hop)"}},
		{name: "loop-background-flows", title: "Background flows' throughput", ylabel: unitRate, prefix: "bg_", suffix: "_gbps"},
		{name: "loop-pauses", title: "Pauses sent in the measured window, by class", ylabel: "pauses", prefix: "pauses_"},
		{name: "loop-servers-paused", title: "Servers' egress queues paused (mean over servers), by queue", ylabel: "% of the window", prefix: "servers_paused_pct_"},
	}
	holPlots = []schemeBars{
		{name: "hol-victim", title: "Victim flow's throughput, alone and with the congested port", ylabel: unitRate,
			metrics: []string{"victim_alone_gbps", "victim_congested_gbps"}, legend: []string{"alone", "congested"}},
		{name: "hol-group-fct", title: "Victim group's mean FCT, alone and with the congested port", ylabel: unitTime,
			metrics: []string{"group_fct_alone_us", "group_fct_congested_us"}, legend: []string{"alone", "congested"}},
	}
)

// A plot of a workload metric: a group of bars per load, a bar per
// scheme, one plot per CDF.
type loadBars struct {
	name, title, ylabel, metric string
	when                        func(*Config) bool // nil: always
}

var workloadPlots = []loadBars{
	{"fct-avg", "Average FCT", unitTime, "fct_avg_us", nil},
	{"fct-p99", "99th-percentile FCT", unitTime, "fct_p99_us", nil},
	{"slowdown-avg-all", "Average slowdown, all flows", "FCT / ideal FCT", "slowdown_avg", nil},
	{"goodput-poisson", "Goodput of the Poisson background, all hosts together", unitRate, "poisson_goodput_gbps", func(c *Config) bool { return len(c.Workload.CDFs) > 0 }},
	{"goodput-incast", "Goodput of an incast (its bytes over its first start to last end)", unitRate, "incast_goodput_gbps", func(c *Config) bool { return c.Workload.Incast != nil }},
	{"incast-time", "Incast completion time (first start to last end)", unitTime, "incast_time_avg_us", func(c *Config) bool { return c.Workload.Incast != nil }},
	{"jct-avg", "Job completion time of a pattern event (first flow's start to last flow's end)", unitTime, "jct_avg_us", func(c *Config) bool { return c.Workload.Pattern != nil }},
	{"jct-p99", "99th-percentile job completion time", unitTime, "jct_p99_us", func(c *Config) bool { return c.Workload.Pattern != nil }},
	{"switch-queue-p99", "99th percentile of the switches' queued bytes", "KB", "switch_queue_p99_kb", nil},
	{"incomplete", "Flows that never ended (a deadlock, or slower than the drain time)", "% of the flows", "incomplete_pct", nil},
}

// Plot draws every plot of c's results into dir (PNG and SVG each) and
// lists them. Only valid results are plotted; a plot whose data lacks
// invalid points says so in its title and Note.
func Plot(c *Config, results []Result, dir string) ([]PlotFile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	pl := plots{c: c, dir: dir, results: results}
	switch c.Kind {
	case KindLoop:
		for _, sc := range c.Loop.Scenarios {
			pl.scenario = sc
			for _, b := range loopPlots {
				b.name += "-" + sc
				pl.schemeBars(b)
			}
			pl.series("loop-series-"+sc, "Throughput over time, mean per flow",
				"the loop flows start at "+pl.at(orDefault(c.Loop.Warmup.D(), time.Second).Seconds()))
		}
		pl.scenario = ""
	case KindHoL:
		for _, b := range holPlots {
			pl.schemeBars(b)
		}
		pl.series("hol-victim-series", "Victim flow's throughput over time", "the incast starts at "+pl.incastStart()+"; each phase's victim group shares the link in its last second")
	case KindWorkload:
		for _, cdf := range c.cdfNames() {
			pl.cdf = cdf
			for _, b := range workloadPlots {
				if b.when == nil || b.when(c) {
					pl.loadBars(b, cdf)
				}
			}
			for _, load := range c.Workload.Loads {
				pl.slowdownBySize(cdf, load, "avg")
				pl.slowdownBySize(cdf, load, "p99")
				pl.queueCDF(cdf, load)
			}
		}
	}
	return pl.files, errors.Join(pl.errs...)
}

type plots struct {
	c       *Config
	dir     string
	results []Result
	files   []PlotFile
	errs    []error
	// scenario is the loop scenario being drawn (match keeps its
	// results only).
	scenario string
	// cdf is the workload CDF being drawn (its links' rate titles it).
	cdf string
}

// schemeColor is scheme i's colour in every plot (Okabe-Ito, for colour
// blindness, then greys).
func schemeColor(i int) color.Color {
	palette := []color.RGBA{
		{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
		{230, 159, 0, 255}, {86, 180, 233, 255}, {240, 228, 66, 255}, {0, 0, 0, 255},
	}
	if i < len(palette) {
		return palette[i]
	}
	g := uint8(60 + 30*(i-len(palette))%180)
	return color.RGBA{g, g, g, 255}
}

// match are the results of one setting (scheme and, for a workload, CDF
// and load) over seeds and repetitions: the valid ones, and the IDs of
// the invalid ones.
func (pl *plots) match(scheme, cdf string, load float64) (valid []*Result, invalid []string) {
	for i := range pl.results {
		r := &pl.results[i]
		if r.Scheme != scheme || r.CDF != cdf || r.Scenario != pl.scenario || (pl.c.Kind == KindWorkload && r.Load != load) {
			continue
		}
		if r.Valid {
			valid = append(valid, r)
		} else {
			invalid = append(invalid, r.ID)
		}
	}
	return valid, invalid
}

// mean is the mean of metric over rs, NaN when none has it.
func mean(rs []*Result, metric string) float64 {
	var sum float64
	n := 0
	for _, r := range rs {
		if v, ok := r.Get(metric); ok && !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Add(plotter.NewGrid())
	return p
}

// save writes p as name.png and name.svg.
func (pl *plots) save(p *plot.Plot, name, title, note string) {
	if note != "" {
		p.Title.Text += "\n" + note
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(8*vg.Inch, 5*vg.Inch, filepath.Join(pl.dir, name+ext)); err != nil {
			pl.errs = append(pl.errs, fmt.Errorf("plot %s: %w", name, err))
			return
		}
	}
	pl.files = append(pl.files, PlotFile{Name: name, Title: title, Note: note})
}

// invalidNote says which points a plot leaves out.
func invalidNote(invalid []string) string {
	if len(invalid) == 0 {
		return ""
	}
	sort.Strings(invalid)
	if len(invalid) > 4 {
		return fmt.Sprintf("not plotted, INVALID: %s and %d more", strings.Join(invalid[:4], ", "), len(invalid)-4)
	}
	return "not plotted, INVALID: " + strings.Join(invalid, ", ")
}

// partialNote says which of rs (valid points) had flows that never
// ended, whose numbers count only the flows that did.
func partialNote(rs []*Result) string {
	var ids []string
	for _, r := range rs {
		if n, ok := r.Get("incomplete"); ok && n > 0 {
			d, _ := r.Get("deadlocked")
			id := fmt.Sprintf("%s (%.0f", r.ID, n)
			if d > 0 {
				id += ", deadlock"
			}
			ids = append(ids, id+")")
		}
	}
	if len(ids) == 0 {
		return ""
	}
	sort.Strings(ids)
	if len(ids) > 3 {
		ids = append(ids[:3], fmt.Sprintf("%d more", len(ids)-3))
	}
	return "flows never ended, the ended counted: " + strings.Join(ids, ", ")
}

// joinNotes puts the non-empty notes one per line.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "\n")
}

// bars adds grouped bars to p: values[s][g] is series s's bar in group
// g (NaN: no bar).
func bars(p *plot.Plot, groups, names []string, values [][]float64, colors func(int) color.Color) error {
	n := len(values)
	w := vg.Points(min(40, 360/float64(max(1, n*len(groups)))))
	for s := range values {
		vs := make(plotter.Values, len(groups))
		for g := range groups {
			if v := values[s][g]; !math.IsNaN(v) && !math.IsInf(v, 0) {
				vs[g] = v
			}
		}
		b, err := plotter.NewBarChart(vs, w)
		if err != nil {
			return err
		}
		b.Color = colors(s)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(s)-float64(n-1)/2) * w
		p.Add(b)
		p.Legend.Add(names[s], b)
		// Each bar's value above it, so a zero (a deadlock) reads as one.
		var xys plotter.XYs
		var texts []string
		for g := range groups {
			if v := values[s][g]; !math.IsNaN(v) && !math.IsInf(v, 0) {
				xys = append(xys, plotter.XY{X: float64(g), Y: v})
				texts = append(texts, barLabel(v))
			}
		}
		if len(xys) > 0 {
			l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
			if err != nil {
				return err
			}
			for i := range l.TextStyle {
				l.TextStyle[i].Font.Size = vg.Points(7)
				l.TextStyle[i].XAlign = draw.XCenter
			}
			l.Offset = vg.Point{X: b.Offset, Y: vg.Points(2)}
			p.Add(l)
		}
	}
	p.NominalX(groups...)
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	p.Y.Min = 0
	headroom(p)
	// Labels as the values are written (2500, not 2500.00).
	p.Y.Tick.Marker = niceTicks{}
	return nil
}

// headroom raises the top of p's y axis above its data, for the legend
// at the top to sit clear of it.
func headroom(p *plot.Plot) {
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	p.Y.Max = p.Y.Min + 1.3*(p.Y.Max-p.Y.Min)
}

// barLabel prints a bar's value: three significant digits, whole
// numbers from 100 on (3614, not 3.61e+03).
func barLabel(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// schemeBars draws b: a group per scheme, a bar per metric.
func (pl *plots) schemeBars(b schemeBars) {
	if b.prefix != "" {
		b.metrics, b.legend = nil, nil
		for i := range pl.results {
			r := &pl.results[i]
			if r.Scenario != pl.scenario {
				continue
			}
			for _, m := range r.Metrics {
				if rest, ok := strings.CutPrefix(m.Name, b.prefix); ok && rest != "" && strings.HasSuffix(rest, b.suffix) && !slices.Contains(b.metrics, m.Name) {
					b.metrics = append(b.metrics, m.Name)
					b.legend = append(b.legend, strings.ReplaceAll(strings.TrimSuffix(rest, b.suffix), "_", "->"))
				}
			}
		}
		if len(b.metrics) == 0 {
			return
		}
	}
	values := make([][]float64, len(b.metrics))
	var groups, invalid []string
	have := false
	for _, s := range pl.c.Schemes {
		valid, inv := pl.match(s, "", 0)
		invalid = append(invalid, inv...)
		label := s
		if len(valid) == 0 && len(inv) > 0 {
			label += " (INVALID)"
		}
		groups = append(groups, label)
		for m, metric := range b.metrics {
			v := mean(valid, metric)
			values[m] = append(values[m], v)
			have = have || !math.IsNaN(v)
		}
	}
	if !have && len(invalid) == 0 {
		return // no result has these metrics
	}
	p := newPlot(pl.title(b.title), "scheme", b.ylabel)
	if err := bars(p, groups, b.legend, values, func(i int) color.Color { return schemeColor(i) }); err != nil {
		pl.errs = append(pl.errs, fmt.Errorf("plot %s: %w", b.name, err))
		return
	}
	pl.save(p, b.name, b.title, invalidNote(invalid))
}

// title prefixes an experiment's plot title with its topology and rate
// (a loop scenario's own topology, and its name).
func (pl *plots) title(t string) string {
	topo, name := pl.c.Topology, pl.c.Name
	if sc, ok := loopScenarios[pl.scenario]; ok {
		topo, name = sc, name+" "+pl.scenario
	}
	d := ""
	if D := pl.dilation(); D > 0 {
		d = ", D = " + strconv.FormatFloat(D, 'f', -1, 64)
	}
	return fmt.Sprintf("%s: %s (BCube(%d,%d), %s links%s)", name, t, topo.N, topo.K, pl.c.RateText(pl.cdf), d)
}

// dilation is the D of the plotted points (of the CDF being drawn: a CDF
// may run at a rate of its own), 0 when unknown.
func (pl *plots) dilation() float64 {
	for i := range pl.results {
		if r := &pl.results[i]; r.Dilation > 0 && (pl.cdf == "" || r.CDF == pl.cdf) {
			return r.Dilation
		}
	}
	return 0
}

// at says a time of the lab, sec seconds, in the target's time (and the
// lab's).
func (pl *plots) at(sec float64) string {
	lab := strconv.FormatFloat(sec, 'f', -1, 64) + " s"
	if D := pl.dilation(); D > 0 {
		return fmt.Sprintf("%v of the target (%s of the lab)", time.Duration(sec/D*1e9).Round(time.Microsecond/10), lab)
	}
	return lab
}

// loadBars draws b for one CDF: a group per load, a bar per scheme.
func (pl *plots) loadBars(b loadBars, cdf string) {
	var groups, invalid []string
	for _, l := range pl.c.Workload.Loads {
		groups = append(groups, "load "+strconv.FormatFloat(l, 'g', -1, 64))
	}
	values := make([][]float64, len(pl.c.Schemes))
	names := slices.Clone(pl.c.Schemes)
	have := false
	var drawn []*Result
	for s, scheme := range pl.c.Schemes {
		some, bad, ran := false, false, false
		for _, l := range pl.c.Workload.Loads {
			valid, inv := pl.match(scheme, cdf, l)
			invalid = append(invalid, inv...)
			drawn = append(drawn, valid...)
			v := mean(valid, b.metric)
			values[s] = append(values[s], v)
			some = some || !math.IsNaN(v)
			bad = bad || len(inv) > 0
			ran = ran || len(valid) > 0
		}
		switch {
		case !some && ran:
			// Valid, but nothing to measure: no incast or event
			// completed.
			names[s] += " (none complete)"
		case !some && bad:
			names[s] += " (INVALID, not plotted)"
		}
		have = have || some
	}
	if !have && len(invalid) == 0 {
		return
	}
	name := b.name + "-" + cdf
	p := newPlot(pl.title(fmt.Sprintf("%s, %s", b.title, cdfTitle(cdf))), "offered load of the background", b.ylabel)
	if err := bars(p, groups, names, values, schemeColor); err != nil {
		pl.errs = append(pl.errs, fmt.Errorf("plot %s: %w", name, err))
		return
	}
	pl.save(p, name, b.title+", "+cdfTitle(cdf), joinNotes(invalidNote(invalid), partialNote(drawn)))
}

func cdfTitle(cdf string) string {
	if cdf == "none" {
		return "no background"
	}
	return cdf
}

func loadName(load float64) string { return strconv.FormatFloat(load, 'g', -1, 64) }

// slowdownBySize draws the papers' slowdown against flow size for one
// CDF and load: the mean (stat avg) or 99th percentile (p99) slowdown of
// every size bin, a line per scheme.
func (pl *plots) slowdownBySize(cdf string, load float64, stat string) {
	var labels, invalid []string
	var drawn []*Result
	p := newPlot("", "flow size", "slowdown (FCT / ideal FCT), "+stat)
	have := false
	for s, scheme := range pl.c.Schemes {
		valid, inv := pl.match(scheme, cdf, load)
		invalid = append(invalid, inv...)
		drawn = append(drawn, valid...)
		if len(valid) == 0 {
			continue
		}
		var pts plotter.XYs
		for b := range valid[0].Bins {
			if len(labels) < len(valid[0].Bins) {
				labels = append(labels, valid[0].Bins[b].Label)
			}
			var sum float64
			n := 0
			for _, r := range valid {
				if b >= len(r.Bins) || r.Bins[b].Slowdown.N == 0 {
					continue
				}
				v := r.Bins[b].Slowdown.Mean
				if stat == "p99" {
					v = r.Bins[b].Slowdown.P99
				}
				sum += v
				n++
			}
			if n > 0 {
				pts = append(pts, plotter.XY{X: float64(b), Y: sum / float64(n)})
			}
		}
		if len(pts) == 0 {
			continue
		}
		lp, sp, err := plotter.NewLinePoints(pts)
		if err != nil {
			pl.errs = append(pl.errs, err)
			return
		}
		lp.Color, sp.Color = schemeColor(s), schemeColor(s)
		lp.Width = vg.Points(1.5)
		sp.Shape = draw.CircleGlyph{}
		p.Add(lp, sp)
		p.Legend.Add(scheme, lp, sp)
		have = true
	}
	if !have && len(invalid) == 0 {
		return
	}
	if len(labels) > 0 {
		p.NominalX(labels...)
		p.X.Min, p.X.Max = -0.3, float64(len(labels))-0.7
	}
	if lo, hi := p.Y.Min, p.Y.Max; lo > 0 && hi/lo > 20 {
		// A scheme that collapses (Go-Back-N under incast) is orders of
		// magnitude above the rest: a log axis keeps both readable.
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = lo/1.5, hi*4
		p.Y.Label.Text += " (log)"
	} else {
		p.Y.Min = 0
		headroom(p)
	}
	title := fmt.Sprintf("%s slowdown by flow size, %s at load %s", map[string]string{"avg": "Average", "p99": "99th-percentile"}[stat], cdfTitle(cdf), loadName(load))
	p.Title.Text = pl.title(title)
	pl.save(p, fmt.Sprintf("slowdown-%s-%s-load%s", stat, cdf, loadName(load)), title, joinNotes(invalidNote(invalid), partialNote(drawn)))
}

// queueFloorKB is where the queue CDF draws an empty queue.
const queueFloorKB = 0.1

// queueCDF draws the distribution of the switches' queued bytes (every
// switch at every sample) for one CDF and load, a line per scheme.
func (pl *plots) queueCDF(cdf string, load float64) {
	p := newPlot("", "bytes queued at a switch (KB)", "fraction of samples")
	var invalid []string
	have := false
	for s, scheme := range pl.c.Schemes {
		valid, inv := pl.match(scheme, cdf, load)
		invalid = append(invalid, inv...)
		var q []float64
		for _, r := range valid {
			q = append(q, r.Queues...)
		}
		if len(q) == 0 {
			continue
		}
		slices.Sort(q)
		pts := make(plotter.XYs, 0, 2*len(q)+1)
		for i, v := range q {
			x := max(queueFloorKB, v/1e3) // a log axis has no 0
			pts = append(pts, plotter.XY{X: x, Y: float64(i) / float64(len(q))}, plotter.XY{X: x, Y: float64(i+1) / float64(len(q))})
		}
		pts = append(pts, plotter.XY{X: max(queueFloorKB, 2*q[len(q)-1]/1e3), Y: 1})
		l, err := plotter.NewLine(pts)
		if err != nil {
			pl.errs = append(pl.errs, err)
			return
		}
		l.Color = schemeColor(s)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(scheme, l)
		have = true
	}
	if !have && len(invalid) == 0 {
		return
	}
	p.Legend.Top, p.Legend.Left = false, false
	p.Y.Min, p.Y.Max = 0, 1
	// Queues span empty to hundreds of KB: a log axis, empty drawn at
	// its floor.
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.X.Min, p.X.Max = queueFloorKB, max(10*queueFloorKB, p.X.Max)
	p.X.Label.Text = fmt.Sprintf("bytes queued at a switch (KB, log; empty drawn at %g)", queueFloorKB)
	title := fmt.Sprintf("Switch queue length CDF, %s at load %s", cdfTitle(cdf), loadName(load))
	p.Title.Text = pl.title(title)
	pl.save(p, fmt.Sprintf("queue-cdf-%s-load%s", cdf, loadName(load)), title, invalidNote(invalid))
}

// seriesDash are the dashes of a plot's series by name: one style per
// kind of flow, the colour being the scheme's.
var seriesDash = map[string][]vg.Length{
	"background_mbps": nil,
	"loop_mbps":       {vg.Points(6), vg.Points(3)},
	"incast_mbps":     {vg.Points(1.5), vg.Points(2)},
	"victim_mbps":     nil,
}

// series draws the time series of the results (Result.Series) in one
// plot: a line per scheme (its colour) and series name (its dashes, see
// seriesDash), the first valid result of each scheme (repetitions are
// not averaged). note goes under the title.
func (pl *plots) series(name, title, note string) {
	p := newPlot(pl.title(title), "time since the first flows started (ms, the target's)", "throughput ("+unitRate+")")
	if note != "" {
		p.Title.Text += "\n" + note
	}
	var invalid, kinds []string
	entries, reps := 0, 0
	for s, scheme := range pl.c.Schemes {
		valid, inv := pl.match(scheme, "", 0)
		invalid = append(invalid, inv...)
		names := map[string]bool{}
		for _, r := range valid {
			for n := range r.Series {
				names[n] = true
			}
		}
		var first *plotter.Line
		for _, n := range slices.Sorted(maps.Keys(names)) {
			pts, k := meanSeries(valid, n)
			if len(pts) == 0 {
				continue
			}
			// The lab's seconds and Mb/s, in the target's ms and Gb/s.
			if d := valid[0].Dilation; d > 0 {
				for i := range pts {
					pts[i].X, pts[i].Y = pts[i].X/d*1e3, pts[i].Y*d/1e3
				}
			}
			reps = max(reps, k)
			l, err := plotter.NewLine(pts)
			if err != nil {
				pl.errs = append(pl.errs, fmt.Errorf("plot %s: %w", name, err))
				return
			}
			l.Color = schemeColor(s)
			l.Width = vg.Points(1.5)
			l.Dashes = seriesDash[n]
			p.Add(l)
			if first == nil || len(l.Dashes) == 0 {
				first = l
			}
			if !slices.Contains(kinds, n) {
				kinds = append(kinds, n)
			}
		}
		if first != nil {
			// The scheme's colour, solid.
			sw := *first
			sw.Dashes = nil
			p.Legend.Add(scheme, &sw)
			entries++
		}
	}
	if reps > 1 {
		p.Title.Text += fmt.Sprintf("\neach line the mean of up to %d valid repetitions", reps)
	}
	if entries == 0 && len(invalid) == 0 {
		return
	}
	if len(kinds) > 1 {
		// The flows' kinds by their dashes, in black.
		order := []string{"background_mbps", "loop_mbps", "incast_mbps"}
		slices.SortFunc(kinds, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
		for _, n := range kinds {
			l := &plotter.Line{LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(1.5), Dashes: seriesDash[n]}}
			p.Legend.Add(strings.TrimSuffix(n, "_mbps")+" flows", l)
			entries++
		}
	}
	p.Legend.Top, p.Legend.Left = true, false
	p.Y.Min = 0
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	// Room above the data for the legend, about 3.5% of the height
	// per entry.
	p.Y.Max /= 1 - min(0.6, 0.05+0.035*float64(entries))
	p.Y.Tick.Marker = niceTicks{}
	pl.save(p, name, title, invalidNote(invalid))
}

// meanSeries is series n of rs averaged sample by sample (the runs
// sample at the same interval from the same start, so sample i is the
// same moment in each), over the samples every run has; and how many
// runs it averaged.
func meanSeries(rs []*Result, n string) (plotter.XYs, int) {
	var have [][][2]float64
	for _, r := range rs {
		if xs := r.Series[n]; len(xs) > 0 {
			have = append(have, xs)
		}
	}
	if len(have) == 0 {
		return nil, 0
	}
	l := len(have[0])
	for _, xs := range have[1:] {
		l = min(l, len(xs))
	}
	pts := make(plotter.XYs, l)
	for i := range pts {
		for _, xs := range have {
			pts[i].X += xs[i][0]
			pts[i].Y += xs[i][1]
		}
		pts[i].X /= float64(len(have))
		pts[i].Y /= float64(len(have))
	}
	return pts, len(have)
}

// niceTicks labels an axis from 0 at steps of 1, 2 or 5 times a power
// of ten, about five of them (gonum's default may label only two on a
// stretched axis).
type niceTicks struct{}

// Ticks implements plot.Ticker.
func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{2, 5, 10} {
		if step < raw {
			step = m * mag
		}
	}
	var ts []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step/1e9; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
	}
	return ts
}

// incastStart is when the hol runs' incast started ("5.2 s"), from
// the first result that says.
func (pl *plots) incastStart() string {
	for i := range pl.results {
		if v, ok := pl.results[i].Get("incast_start_s"); ok && v > 0 {
			return pl.at(math.Round(v*10) / 10)
		}
	}
	return "the second phase"
}
