package experiment

import (
	"errors"
	"fmt"
	"github.com/bcfab/bcfab/model/scale"
	"image/color"
	"maps"
	"math"
	"os"
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

// A plot of every point's metrics by scheme: a group of bars per
// metric, a bar per scheme (its colour). The loop and hol experiments'
// plots are lists of these: a new field of their results is a new metric
// in the runner and a name here.
type contenderBars struct {
	name, title, ylabel string
	metrics             []string
	groups              []string // one per metric
	// prefix, when set, takes the metrics from the results instead:
	// every one whose name has it and ends in suffix (but the prefix
	// alone), the group the rest of the name.
	prefix, suffix string
}

// The units of the plots: the target network's (package scale), which a
// result's lab figures are read into (Result.targetUnits).
const (
	unitRate = "Gb/s, the target's"
	unitTime = "µs, the target's"
)

var (
	loopPlots = []contenderBars{
		{name: "loop-throughput", title: "Average throughput per flow, background and loop flows", ylabel: unitRate,
			metrics: []string{"background_gbps", "loop_gbps", "incast_gbps"}, groups: []string{"background (2-hop)", "loop (4-hop)", "incast (1-hop)"}},
		{name: "loop-background-flows", title: "Background flows' throughput", ylabel: unitRate, prefix: "bg_", suffix: "_gbps"},
		{name: "loop-pauses", title: "Pauses sent in the measured window, by class", ylabel: "pauses", prefix: "pauses_"},
		{name: "loop-servers-paused", title: "Servers' egress queues paused (mean over servers), by queue", ylabel: "% of the window", prefix: "servers_paused_pct_"},
	}
	holPlots = []contenderBars{
		{name: "hol-victim", title: "Victim flow's throughput, alone and with the congested port", ylabel: unitRate,
			metrics: []string{"victim_alone_gbps", "victim_congested_gbps"}, groups: []string{"alone", "congested"}},
		{name: "hol-group-fct", title: "Victim group's mean FCT, alone and with the congested port", ylabel: unitTime,
			metrics: []string{"group_fct_alone_us", "group_fct_congested_us"}, groups: []string{"alone", "congested"}},
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
	{"goodput-incast", "Goodput of an incast (its bytes over its first start to last end)", unitRate, "incast_goodput_gbps", func(c *Config) bool { return c.hasIncast() }},
	{"incast-time", "Incast completion time (first start to last end)", unitTime, "incast_time_avg_us", func(c *Config) bool { return c.hasIncast() }},
	{"jct-avg", "Job completion time of a pattern event (first flow's start to last flow's end)", unitTime, "jct_avg_us", func(c *Config) bool { return c.Workload.Pattern != nil }},
	{"jct-p99", "99th-percentile job completion time", unitTime, "jct_p99_us", func(c *Config) bool { return c.Workload.Pattern != nil }},
	{"switch-queue-p99", "99th percentile of the switches' queued bytes", "KB", "switch_queue_p99_kb", nil},
	{"long-flow", "Throughput of the long flow(s): bytes over FCT", unitRate, "long_gbps", func(c *Config) bool { return c.Workload.Long != nil }},
	{"big-flow", "Throughput of the background's flows over 1 MB (each its bytes over its FCT, the mean)", unitRate, "big_flow_gbps", func(c *Config) bool { return c.hasPermutation() }},
	{"background-fct-p99", "99th-percentile FCT of the background's flows", unitTime, "bg_fct_p99_us", func(c *Config) bool { return c.Lab.ECN() && c.hasIncast() }},
	{"cnps-victim", "CNPs per background flow (the victims')", "CNPs", "cnps_victim_per_flow", func(c *Config) bool { return c.Lab.ECN() && c.hasIncast() }},
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
				pl.contenderBars(b)
			}
			pl.series("loop-series-"+sc, "Throughput over time, mean per flow", "", pl.loopMarkers(), throughputAxis)
		}
		pl.scenario = ""
	case KindHoL:
		for _, b := range holPlots {
			pl.contenderBars(b)
		}
		pl.series("hol-victim-series", "Victim flow's throughput over time", pl.holGroupNote(), pl.holMarkers(), throughputAxis)
	case KindWorkload:
		for _, scn := range c.scenarioNames() {
			pl.scenario = scn
			for _, cdf := range c.cdfNames() {
				pl.cdf = cdf
				for _, b := range workloadPlots {
					if b.when == nil || b.when(c) {
						b.name = pl.named(b.name)
						pl.loadBars(b, cdf)
					}
				}
				for _, load := range c.Workload.Loads {
					pl.slowdownBySize(cdf, load)
					pl.queueCDF(cdf, load)
					if c.Lab.ECN() {
						pl.load = load
						pl.series(pl.named(fmt.Sprintf("cnp-series-%s-load%s", cdf, loadName(load))),
							fmt.Sprintf("CNPs over time, %s at load %s", cdfTitle(cdf), loadName(load)),
							"the CNPs every sender received, in each interval of the queue samples", nil, cnpAxis)
						pl.load = 0
					}
				}
			}
		}
		pl.scenario, pl.cdf = "", ""
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
	// cdf is the workload CDF being drawn (its links' rate titles it),
	// load the load of a workload's series plot.
	cdf  string
	load float64
}

// named is a plot's file name for the scenario being drawn: a workload
// scenario's name first.
func (pl *plots) named(name string) string {
	if pl.scenario == "" || pl.c.Kind != KindWorkload {
		return name
	}
	return pl.scenario + "-" + name
}

// seriesAxis is a series plot's y axis: its label in the lab's units
// and in the target's (lab values × D / 1000: Mb/s to Gb/s, or per
// second of the lab to per ms of the target).
type seriesAxis struct{ lab, target string }

var (
	throughputAxis = seriesAxis{"throughput (Mb/s, the lab's)", "throughput (" + unitRate + ")"}
	cnpAxis        = seriesAxis{"CNPs per s (the lab's)", "CNPs per ms (the target's)"}
)

// match are the results of one setting (scheme and, for a workload, CDF
// and load) over seeds and repetitions: the valid ones, and the IDs of
// the invalid ones.
func (pl *plots) match(contender, cdf string, load float64) (valid []*Result, invalid []string) {
	for i := range pl.results {
		r := &pl.results[i]
		if r.Contender != contender || r.CDF != cdf || r.Scenario != pl.scenario || (pl.c.Kind == KindWorkload && r.Load != load) {
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

// spreadOfMetric is the spread of metric over rs (those that have it).
func spreadOfMetric(rs []*Result, metric string) spread {
	var vs []float64
	for _, r := range rs {
		if v, ok := r.Get(metric); ok {
			vs = append(vs, v)
		}
	}
	return spreadOf(vs)
}

// save writes f as name.png and name.svg, note under its title, and
// lists it.
func (pl *plots) save(f *figure, name, title, note string) {
	f.note(note)
	if err := f.save(pl.dir, name); err != nil {
		pl.errs = append(pl.errs, err)
		return
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

// spreadNote says what a value of more than one result is: most is the
// most results any value had.
func spreadNote(most int, what, band string) string {
	if most < 2 {
		return ""
	}
	return fmt.Sprintf("each %s the mean of up to %d valid results (repetitions, seeds); %s their least to greatest", what, most, band)
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

// barLabel prints a bar's value: three significant digits, whole
// numbers from 100 on (3614, not 3.61e+03).
func barLabel(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// barData is a bar plot's: its groups, a series of bars per scheme,
// the points it leaves out and those it draws.
type barData struct {
	groups  []string
	series  []barSeries
	invalid []string
	drawn   []*Result
}

// has says whether any bar has a value.
func (d *barData) has() bool {
	for _, s := range d.series {
		if slices.ContainsFunc(s.vals, spread.ok) {
			return true
		}
	}
	return false
}

// most is the most results of any bar.
func (d *barData) most() int {
	n := 0
	for _, s := range d.series {
		for _, v := range s.vals {
			n = max(n, v.n)
		}
	}
	return n
}

// label is contender's name in the plots' legends: as the file's labels
// name it (the paper's name for it), else as its schemes do.
func (pl *plots) label(contender string) string {
	if l := pl.c.Labels[contender]; l != "" {
		return l
	}
	return contender
}

// barFigure draws d: groups along x, the schemes' bars in each, the
// legend the schemes.
func (pl *plots) barFigure(title, xlabel, ylabel string, d *barData) *figure {
	p := newPanel(xlabel, ylabel, false)
	g := &groupedBars{groups: len(d.groups), series: d.series}
	p.Add(g)
	p.NominalX(d.groups...)
	p.X.Min, p.X.Max = -0.5, float64(len(d.groups))-0.5
	p.Y.Min = 0
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	// Room over the tallest bar for its value (turned upright when
	// the bars are narrow).
	p.Y.Max = p.Y.Min + 1.15*(p.Y.Max-p.Y.Min)
	f := newFigure(title, p)
	for _, s := range d.series {
		f.add(pl.label(s.name), swatch{s.color})
	}
	return f
}

// contenderBarData is b's data: a group per metric, a bar per scheme.
func (pl *plots) contenderBarData(b contenderBars) *barData {
	if b.prefix != "" {
		b.metrics, b.groups = nil, nil
		for i := range pl.results {
			r := &pl.results[i]
			if r.Scenario != pl.scenario {
				continue
			}
			for _, m := range r.Metrics {
				if rest, ok := strings.CutPrefix(m.Name, b.prefix); ok && rest != "" && strings.HasSuffix(rest, b.suffix) && !slices.Contains(b.metrics, m.Name) {
					b.metrics = append(b.metrics, m.Name)
					b.groups = append(b.groups, strings.ReplaceAll(strings.TrimSuffix(rest, b.suffix), "_", "->"))
				}
			}
		}
		if len(b.metrics) == 0 {
			return nil
		}
	}
	// A copy: a group dropped below must not be dropped from b's
	// (package-level) list for the next scenario's plot.
	d := &barData{groups: slices.Clone(b.groups)}
	for _, s := range pl.c.Contenders {
		valid, inv := pl.match(s, "", 0)
		d.invalid = append(d.invalid, inv...)
		d.drawn = append(d.drawn, valid...)
		bs := barSeries{name: s, color: contenderColor(s)}
		for _, metric := range b.metrics {
			bs.vals = append(bs.vals, spreadOfMetric(valid, metric))
		}
		switch {
		case len(valid) == 0 && len(inv) == 0:
			continue // not run (yet): not in the legend
		case len(valid) == 0:
			bs.name += " (INVALID, not plotted)"
		}
		d.series = append(d.series, bs)
	}
	if !d.has() && len(d.invalid) == 0 {
		return nil // no result has these metrics
	}
	// A metric no scheme has here (the incast flows of a scenario
	// without them) is no group.
	for m := len(d.groups) - 1; m >= 0; m-- {
		if !slices.ContainsFunc(d.series, func(s barSeries) bool { return s.vals[m].ok() }) && d.has() {
			d.groups = slices.Delete(d.groups, m, m+1)
			for i := range d.series {
				d.series[i].vals = slices.Delete(d.series[i].vals, m, m+1)
			}
		}
	}
	return d
}

// contenderBars draws b: a group per metric, a bar per scheme.
func (pl *plots) contenderBars(b contenderBars) {
	d := pl.contenderBarData(b)
	if d == nil {
		return
	}
	f := pl.barFigure(pl.title(b.title), "", b.ylabel, d)
	pl.save(f, b.name, b.title, joinNotes(invalidNote(d.invalid), spreadNote(d.most(), "bar", "whiskers from")))
}

// title prefixes an experiment's plot title with its topology and rate
// (a loop scenario's own topology, and its name).
func (pl *plots) title(t string) string {
	fabric, name := pl.c.TopologyText(), pl.c.Name
	if sc, ok := loopScenarios[pl.scenario]; ok {
		fabric = fmt.Sprintf("BCube(%d,%d)", sc.N, sc.K)
	}
	if pl.scenario != "" {
		name += " " + pl.scenario
	}
	d := ""
	if D := pl.dilation(); D > 0 {
		d = ", D = " + strconv.FormatFloat(D, 'f', -1, 64)
	}
	return fmt.Sprintf("%s: %s (%s, %s links%s)", name, t, fabric, pl.c.RateText(pl.cdf), d)
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

// loadBarData is b's data for one CDF: a group per load, a bar per
// scheme.
func (pl *plots) loadBarData(b loadBars, cdf string) *barData {
	d := &barData{}
	for _, l := range pl.c.Workload.Loads {
		d.groups = append(d.groups, "load "+strconv.FormatFloat(l, 'g', -1, 64))
	}
	for _, contender := range pl.c.Contenders {
		bs := barSeries{name: contender, color: contenderColor(contender)}
		some, bad, ran := false, false, false
		for _, l := range pl.c.Workload.Loads {
			valid, inv := pl.match(contender, cdf, l)
			d.invalid = append(d.invalid, inv...)
			d.drawn = append(d.drawn, valid...)
			v := spreadOfMetric(valid, b.metric)
			bs.vals = append(bs.vals, v)
			some = some || v.ok()
			bad = bad || len(inv) > 0
			ran = ran || len(valid) > 0
		}
		switch {
		case !ran && !bad:
			continue // not run (yet): not in the legend
		case !some && ran:
			// Valid, but nothing to measure: no incast or event
			// completed.
			bs.name += " (none complete)"
		case !some && bad:
			bs.name += " (INVALID, not plotted)"
		}
		d.series = append(d.series, bs)
	}
	if !d.has() && len(d.invalid) == 0 {
		return nil
	}
	return d
}

// loadBars draws b for one CDF: a group per load, a bar per scheme.
func (pl *plots) loadBars(b loadBars, cdf string) {
	d := pl.loadBarData(b, cdf)
	if d == nil {
		return
	}
	name := b.name + "-" + cdf
	f := pl.barFigure(pl.title(fmt.Sprintf("%s, %s", b.title, cdfTitle(cdf))), "offered load of the background", b.ylabel, d)
	pl.save(f, name, b.title+", "+cdfTitle(cdf), joinNotes(invalidNote(d.invalid), partialNote(d.drawn), spreadNote(d.most(), "bar", "whiskers from")))
}

func cdfTitle(cdf string) string {
	if cdf == "none" {
		return "no background"
	}
	return cdf
}

func loadName(load float64) string { return strconv.FormatFloat(load, 'g', -1, 64) }

// queueFloorKB is where the queue CDF draws an empty queue.
const queueFloorKB = 0.1

// queueCDF draws the distribution of the switches' queued bytes (every
// switch at every sample) for one CDF and load, a line per scheme.
func (pl *plots) queueCDF(cdf string, load float64) {
	p := newPanel("", "fraction of samples", true)
	title := fmt.Sprintf("Switch queue length CDF, %s at load %s", cdfTitle(cdf), loadName(load))
	f := newFigure(pl.title(title), p)
	var invalid []string
	have := false
	hi := 10 * queueFloorKB
	for _, contender := range pl.c.Contenders {
		valid, inv := pl.match(contender, cdf, load)
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
		last := max(queueFloorKB, 2*q[len(q)-1]/1e3)
		pts = append(pts, plotter.XY{X: last, Y: 1})
		hi = max(hi, last)
		l, err := plotter.NewLine(pts)
		if err != nil {
			pl.errs = append(pl.errs, err)
			return
		}
		l.Color = contenderColor(contender)
		l.Width = vg.Points(1.5)
		p.Add(l)
		f.add(pl.label(contender), l)
		have = true
	}
	if !have && len(invalid) == 0 {
		return
	}
	p.Y.Min, p.Y.Max = 0, 1.02
	p.Y.Tick.Marker = niceTicks{n: 5}
	// Queues span empty to hundreds of KB: a log axis, empty drawn at
	// its floor.
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{format: func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }}
	p.X.Min, p.X.Max = queueFloorKB, hi
	p.X.Label.Text = fmt.Sprintf("bytes queued at a switch (KB, log; empty drawn at %g)", queueFloorKB)
	pl.save(f, pl.named(fmt.Sprintf("queue-cdf-%s-load%s", cdf, loadName(load))), title, invalidNote(invalid))
}

// seriesDash are the dashes of a plot's series by name: one style per
// kind of flow, the colour being the scheme's.
var seriesDash = map[string][]vg.Length{
	"background_mbps": nil,
	"loop_mbps":       {vg.Points(6), vg.Points(3)},
	"incast_mbps":     {vg.Points(1.5), vg.Points(2)},
	"victim_mbps":     nil,
}

// seriesLine is one scheme's series of one name, in the plot's units
// (the target's ms and Gb/s when the results' D is known, else the
// lab's s and Mb/s): the mean of its valid results sample by sample,
// their least and greatest, and how many results.
type seriesLine struct {
	contender, name string
	mean, lo, hi    plotter.XYs
	reps            int
}

// seriesData are the lines of a series plot, the schemes in the legend
// and the points left out.
type seriesData struct {
	lines      []seriesLine
	contenders []string
	invalid    []string
	// target: the lines are in the target's units.
	target bool
}

func (pl *plots) seriesData() seriesData {
	var d seriesData
	for _, contender := range pl.c.Contenders {
		valid, inv := pl.match(contender, pl.seriesCDF(), pl.load)
		d.invalid = append(d.invalid, inv...)
		names := map[string]bool{}
		for _, r := range valid {
			for n := range r.Series {
				names[n] = true
			}
		}
		some := false
		for _, n := range slices.Sorted(maps.Keys(names)) {
			mean, lo, hi, k := spreadSeries(valid, n)
			if len(mean) == 0 {
				continue
			}
			// The lab's seconds and Mb/s, in the target's ms and Gb/s.
			if D := valid[0].Dilation; D > 0 {
				for _, pts := range []plotter.XYs{mean, lo, hi} {
					for i := range pts {
						pts[i].X, pts[i].Y = pts[i].X/D*1e3, pts[i].Y*D/1e3
					}
				}
				d.target = true
			}
			d.lines = append(d.lines, seriesLine{contender: contender, name: n, mean: mean, lo: lo, hi: hi, reps: k})
			some = true
		}
		if some {
			d.contenders = append(d.contenders, contender)
		}
	}
	return d
}

// seriesCDF is the CDF whose results a series plot draws: a workload's
// CDF being drawn ("" for the other kinds).
func (pl *plots) seriesCDF() string {
	if pl.c.Kind != KindWorkload {
		return ""
	}
	return pl.cdf
}

// at is a time of the lab, sec seconds, on a series plot's x axis: the
// target's ms, or the lab's s when D is not known.
func (pl *plots) at(sec float64) float64 {
	if D := pl.dilation(); D > 0 {
		return sec / D * 1e3
	}
	return sec
}

// loopMarkers mark the start of the loop flows (the file's warm-up).
func (pl *plots) loopMarkers() phaseMarkers {
	w := orDefault(pl.c.Loop.Warmup.D(), time.Second).Seconds()
	return phaseMarkers{{x: pl.at(w), label: "loop flows start"}}
}

// holGroupNote says when each phase's victim group runs: in the phase's
// last second of lab time, on the plot's clock (the target's when D is
// known).
func (pl *plots) holGroupNote() string {
	if D := pl.dilation(); D > 0 {
		last := scale.RoundTime(time.Duration(float64(time.Second) / D))
		return fmt.Sprintf("each phase's victim group shares the link in the phase's last %v in the target (its last second of lab time)", last)
	}
	return "each phase's victim group shares the link in the phase's last second (of lab time)"
}

// holMarkers mark the incast's start, the congested phase's: the mean
// over the valid results that say when theirs started (the runs start
// it after the first phase, within a few hundred ms of each other).
func (pl *plots) holMarkers() phaseMarkers {
	var ts []float64
	for i := range pl.results {
		if r := &pl.results[i]; r.Valid {
			if v, ok := r.Get("incast_start_s"); ok && v > 0 {
				ts = append(ts, v)
			}
		}
	}
	s := spreadOf(ts)
	if !s.ok() {
		return nil
	}
	return phaseMarkers{{x: pl.at(s.mean), label: "incast starts: congested phase"}}
}

// series draws the time series of the results (Result.Series) in one
// plot: a line per scheme (its colour) and series name (its dashes, see
// seriesDash), the mean of the scheme's valid results with a band from
// their least to their greatest value, and markers at the phases'
// starts; note goes under the title.
func (pl *plots) series(name, title, note string, markers phaseMarkers, axis seriesAxis) {
	d := pl.seriesData()
	if len(d.lines) == 0 && len(d.invalid) == 0 {
		return
	}
	xlabel, ylabel := "time since the first flows started (s, the lab's)", axis.lab
	if d.target {
		xlabel, ylabel = "time since the first flows started (ms, the target's)", axis.target
	}
	p := newPanel(xlabel, ylabel, true)
	f := newFigure(pl.title(title), p)
	f.w = 9 * vg.Inch
	most := 0
	// The bands first, under every line.
	for _, l := range d.lines {
		if l.reps < 2 {
			continue
		}
		poly := append(slices.Clone(l.hi), reversed(l.lo)...)
		band, err := plotter.NewPolygon(poly)
		if err != nil {
			pl.errs = append(pl.errs, fmt.Errorf("plot %s: %w", name, err))
			return
		}
		band.Color = faded(contenderColor(l.contender), 0.18)
		band.LineStyle.Width = 0
		p.Add(band)
	}
	var kinds []string
	for _, l := range d.lines {
		most = max(most, l.reps)
		line, err := plotter.NewLine(l.mean)
		if err != nil {
			pl.errs = append(pl.errs, fmt.Errorf("plot %s: %w", name, err))
			return
		}
		line.Color = contenderColor(l.contender)
		line.Width = vg.Points(1.5)
		line.Dashes = seriesDash[l.name]
		p.Add(line)
		if !slices.Contains(kinds, l.name) {
			kinds = append(kinds, l.name)
		}
	}
	if len(markers) > 0 {
		p.Add(markers)
		for _, m := range markers {
			// A phase the series end before still shows.
			p.X.Max = max(p.X.Max, 1.03*m.x)
		}
	}
	for _, s := range d.contenders {
		f.add(pl.label(s), &plotter.Line{LineStyle: draw.LineStyle{Color: contenderColor(s), Width: vg.Points(2)}})
	}
	for _, s := range pl.c.Contenders {
		if !slices.Contains(d.contenders, s) {
			if _, inv := pl.match(s, pl.seriesCDF(), pl.load); len(inv) > 0 {
				f.add(pl.label(s)+" (INVALID, not plotted)", swatch{contenderColor(s)})
			}
		}
	}
	if len(kinds) > 1 {
		// The flows' kinds by their dashes, in black.
		order := []string{"background_mbps", "loop_mbps", "incast_mbps"}
		slices.SortFunc(kinds, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
		for _, n := range kinds {
			f.add(strings.TrimSuffix(n, "_mbps")+" flows", &plotter.Line{LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(1.5), Dashes: seriesDash[n]}})
		}
	}
	if most > 1 {
		f.add(fmt.Sprintf("least to greatest of %d results", most), swatch{faded(color.Black, 0.18)})
	}
	p.X.Tick.Marker = niceTicks{n: 8}
	p.X.Min = 0
	p.Y.Min = 0
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	// Room at the top for the markers' labels.
	p.Y.Max *= 1 + 0.06*float64(1+len(markers))
	pl.save(f, name, title, joinNotes(note, invalidNote(d.invalid), spreadNote(most, "line", "the band")))
}

func reversed(pts plotter.XYs) plotter.XYs {
	out := slices.Clone(pts)
	slices.Reverse(out)
	return out
}

// spreadSeries is series n of rs sample by sample (the runs sample at
// the same interval from the same start, so sample i is the same moment
// in each), over the samples every run has: the mean, least and
// greatest value (at the mean time), and how many runs it took.
func spreadSeries(rs []*Result, n string) (mean, lo, hi plotter.XYs, k int) {
	var have [][][2]float64
	for _, r := range rs {
		if xs := r.Series[n]; len(xs) > 0 {
			have = append(have, xs)
		}
	}
	if len(have) == 0 {
		return nil, nil, nil, 0
	}
	l := len(have[0])
	for _, xs := range have[1:] {
		l = min(l, len(xs))
	}
	mean, lo, hi = make(plotter.XYs, l), make(plotter.XYs, l), make(plotter.XYs, l)
	for i := range l {
		var ts, vs []float64
		for _, xs := range have {
			ts, vs = append(ts, xs[i][0]), append(vs, xs[i][1])
		}
		t, v := spreadOf(ts), spreadOf(vs)
		mean[i] = plotter.XY{X: t.mean, Y: v.mean}
		lo[i] = plotter.XY{X: t.mean, Y: v.lo}
		hi[i] = plotter.XY{X: t.mean, Y: v.hi}
	}
	return mean, lo, hi, len(have)
}
