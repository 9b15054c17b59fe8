package experiment

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

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

// dots says whether d is drawn as a dot plot: a bar chart of one
// category (one load, one metric) is a row per scheme, its value a dot
// on a common scale, the spread of its results a line through it; bars
// are for comparing groups.
func (d *barData) dots() bool { return len(d.groups) == 1 }

// barFigure draws d: groups along x, the schemes' bars in each, the
// legend the schemes; or, of one group, a dot plot (dotFigure). A
// deadlocked point's bar is hatched and says so over it.
func (pl *plots) barFigure(title, xlabel, ylabel string, d *barData) *figure {
	if d.dots() {
		return pl.dotFigure(title, ylabel, d)
	}
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
		f.add(pl.c.Label(s.name)+s.note, swatch{s.color})
	}
	if g.deadlocked() {
		f.add("deadlocked: the flows that ended", hatchSwatch{})
	}
	return f
}

// dotFigure draws d's one group as a dot plot: a row per scheme, named
// on the left, the value along x from 0 with its number beside it, a
// filled dot in the scheme's colour (the row names it: no shape is
// needed), a deadlocked point's hollow and saying so.
func (pl *plots) dotFigure(title, xlabel string, d *barData) *figure {
	p := newPanel(xlabel, "", true)
	rows := make([]dotRow, len(d.series))
	names := make([]string, len(d.series))
	for i, s := range d.series {
		rows[i] = dotRow{v: s.vals[0], color: s.color}
		// NominalY counts from the bottom: the first scheme on top.
		names[len(names)-1-i] = pl.c.Label(s.name) + s.note
	}
	p.Add(&dotRows{rows: rows})
	if len(names) > 0 {
		p.NominalY(names...)
	}
	// A dot at 0 clear of its name.
	p.Y.Padding = vg.Points(10)
	p.Y.Min, p.Y.Max = -0.6, float64(len(rows))-0.4
	if lo, hi, ok := d.logRange(); ok {
		// Values over more than a decade and a half (a switch's queue
		// under Ideal-FQ's unbounded buffer, 100 times the others'): a
		// log axis keeps the small ones apart.
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
		p.X.Min = lo / 1.5
		p.X.Max = hi * math.Pow(hi/p.X.Min, 0.15)
		p.X.Label.Text += " (log)"
	} else {
		p.X.Min = 0
		p.X.Tick.Marker = niceTicks{n: 6}
		if p.X.Max <= 0 {
			p.X.Max = 1
		}
		// Room right of the greatest dot for its number.
		p.X.Max *= 1.18
	}
	f := newFigure(title, p)
	f.h = max(3*vg.Inch, vg.Length(1.9+0.36*float64(len(rows)))*vg.Inch)
	return f
}

// groupTitles name the groups of a prefix's metrics that are not already
// a name the papers use: BFC's pauses, which pause upstream queues, not
// a class (the loop's pauses_bfc).
var groupTitles = map[string]string{"bfc": "BFC's queues"}

// groupTitle is the group a prefix's metric named rest draws as.
func groupTitle(rest string) string {
	if t, ok := groupTitles[rest]; ok {
		return t
	}
	return rest
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
					b.groups = append(b.groups, groupTitle(strings.ReplaceAll(strings.TrimSuffix(rest, b.suffix), "_", "->")))
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
			bs.note = " (INVALID, not plotted)"
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

// contenderBars draws b: a group per metric, a bar per scheme (of one
// metric, a dot per scheme, the metric in the title).
func (pl *plots) contenderBars(b contenderBars) {
	d := pl.contenderBarData(b)
	if d == nil {
		return
	}
	what := b.title
	if d.dots() {
		what += ": " + d.groups[0]
	}
	f := pl.barFigure(pl.title(what), "", b.ylabel, d)
	pl.save(f, b.name, what, joinNotes(invalidNote(d.invalid), partialNote(d.drawn), spreadNote(d.most(), d.valueWord(), d.rangeWord())))
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
			bs.note = " (none complete)"
		case !some && bad:
			bs.note = " (INVALID, not plotted)"
		}
		d.series = append(d.series, bs)
	}
	if !d.has() && len(d.invalid) == 0 {
		return nil
	}
	return d
}

// loadBars draws b for one CDF: a group per load, a bar per scheme (of
// one load, a dot per scheme, the load in the title).
func (pl *plots) loadBars(b loadBars, cdf string) {
	d := pl.loadBarData(b, cdf)
	if d == nil {
		return
	}
	what := b.title + ", " + cdfTitle(cdf)
	if d.dots() {
		what += " at " + d.groups[0]
	}
	f := pl.barFigure(pl.title(what), "offered load of the background", b.ylabel, d)
	pl.save(f, b.name+"-"+cdf, what, joinNotes(invalidNote(d.invalid), partialNote(d.drawn), spreadNote(d.most(), d.valueWord(), d.rangeWord())))
}

// logRange is the least and greatest value of a dot plot's one group
// and whether they call for a log axis: all above 0, the greatest more
// than 30 times the least.
func (d *barData) logRange() (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), 0
	for _, s := range d.series {
		if v := s.vals[0]; v.ok() {
			lo, hi = min(lo, v.lo, v.mean), max(hi, v.hi, v.mean)
		}
	}
	return lo, hi, lo > 0 && hi > 30*lo
}

// valueWord and rangeWord name what the notes say of a value of more
// than one result: a bar and its whisker, or a dot and its line.
func (d *barData) valueWord() string {
	if d.dots() {
		return "dot"
	}
	return "bar"
}

func (d *barData) rangeWord() string {
	if d.dots() {
		return "the line through it from"
	}
	return "whiskers from"
}
