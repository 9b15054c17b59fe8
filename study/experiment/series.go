package experiment

import (
	"fmt"
	"image/color"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bcfab/bcfab/model/scale"
)

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
	pooled := false
	hi := 10 * queueFloorKB
	for _, contender := range pl.c.Contenders {
		valid, inv := pl.match(contender, cdf, load)
		invalid = append(invalid, inv...)
		var q []float64
		for _, r := range valid {
			q = append(q, r.Queues...)
		}
		pooled = pooled || len(valid) > 1
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
		if anyDeadlocked(valid) {
			// Its queues count until the deadlock, then stand still.
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			f.add(pl.c.Label(contender)+" (deadlock)", l)
		} else {
			f.add(pl.c.Label(contender), l)
		}
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
	note := invalidNote(invalid)
	if pooled {
		note = joinNotes(note, "a line the samples of all its valid results (seeds, repetitions) together")
	}
	pl.save(f, pl.named(fmt.Sprintf("queue-cdf-%s-load%s", cdf, loadName(load))), title, note)
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
	// deadlocked are the schemes one of whose results deadlocked.
	deadlocked map[string]bool
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
			if anyDeadlocked(valid) {
				if d.deadlocked == nil {
					d.deadlocked = map[string]bool{}
				}
				d.deadlocked[contender] = true
			}
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
	if D, _ := pl.dilations(); D > 0 {
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
	if D, _ := pl.dilations(); D > 0 {
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

// maxLines is the most lines a panel draws: more (the loop's five
// schemes by three kinds of flow) are small multiples (splitLines).
const maxLines = 8

// splitLines deals a series plot's lines to its panels: all in one when
// they are at most maxLines; else a panel per series name (a kind of
// flow: every scheme's background flows side by side with their loop
// flows, on one y scale), a name of more than maxLines schemes over
// panels of maxLines each.
func splitLines(lines []seriesLine) [][]seriesLine {
	if len(lines) <= maxLines {
		return [][]seriesLine{lines}
	}
	var names []string
	by := map[string][]seriesLine{}
	for _, l := range lines {
		if _, ok := by[l.name]; !ok {
			names = append(names, l.name)
		}
		by[l.name] = append(by[l.name], l)
	}
	slices.SortStableFunc(names, func(a, b string) int { return seriesOrder(a) - seriesOrder(b) })
	var out [][]seriesLine
	for _, n := range names {
		ls := by[n]
		for len(ls) > maxLines {
			out = append(out, ls[:maxLines])
			ls = ls[maxLines:]
		}
		out = append(out, ls)
	}
	return out
}

// seriesOrder orders the kinds of flow as the papers list them.
func seriesOrder(name string) int {
	i := slices.Index([]string{"background_mbps", "loop_mbps", "incast_mbps"}, name)
	if i < 0 {
		return 3
	}
	return i
}

// kindTitle names a series for people: "loop flows".
func kindTitle(name string) string {
	if k, ok := strings.CutSuffix(name, "_mbps"); ok {
		return k + " flows"
	}
	return strings.ReplaceAll(name, "_", " ")
}

// series draws the time series of the results (Result.Series): a line
// per scheme (its colour) and series name (its dashes, see seriesDash),
// the mean of the scheme's valid results with a band from their least
// to their greatest value, and markers at the phases' starts; note goes
// under the title. More than maxLines lines are small multiples, a
// panel per kind of flow on one y scale (splitLines).
func (pl *plots) series(name, title, note string, markers phaseMarkers, axis seriesAxis) {
	d := pl.seriesData()
	if len(d.lines) == 0 && len(d.invalid) == 0 {
		return
	}
	xlabel, ylabel := "time since the first flows started (s, the lab's)", axis.lab
	if d.target {
		xlabel, ylabel = "time since the first flows started (ms, the target's)", axis.target
	}
	groups := splitLines(d.lines)
	split := len(groups) > 1
	var panels []*plot.Plot
	most := 0
	var kinds []string
	for _, ls := range groups {
		p := newPanel(xlabel, ylabel, true)
		if split {
			p.Title.Text = kindTitle(ls[0].name)
		}
		// The bands first, under every line.
		for _, l := range ls {
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
		for _, l := range ls {
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
		p.X.Tick.Marker = niceTicks{n: 8}
		if split {
			p.X.Tick.Marker = niceTicks{n: 5}
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		panels = append(panels, newPanel(xlabel, ylabel, true))
	}
	// One y scale for every panel, from 0, with room at the top for the
	// markers' labels.
	top := 0.0
	for _, p := range panels {
		top = max(top, p.Y.Max)
	}
	if top <= 0 {
		top = 1
	}
	for _, p := range panels {
		p.X.Min, p.Y.Min = 0, 0
		p.Y.Max = top * (1 + 0.06*float64(1+len(markers)))
	}
	f := newFigure(pl.title(title), panels...)
	f.w = max(9, 4.2*vg.Length(len(panels))) * vg.Inch
	for _, s := range d.contenders {
		l := pl.c.Label(s)
		if d.deadlocked[s] {
			l += " (deadlock)"
		}
		f.add(l, &plotter.Line{LineStyle: draw.LineStyle{Color: contenderColor(s), Width: vg.Points(2)}})
	}
	for _, s := range pl.c.Contenders {
		if !slices.Contains(d.contenders, s) {
			if _, inv := pl.match(s, pl.seriesCDF(), pl.load); len(inv) > 0 {
				f.add(pl.c.Label(s)+" (INVALID, not plotted)", swatch{contenderColor(s)})
			}
		}
	}
	if len(kinds) > 1 && !split {
		// The flows' kinds by their dashes, in black.
		slices.SortFunc(kinds, func(a, b string) int { return seriesOrder(a) - seriesOrder(b) })
		for _, n := range kinds {
			f.add(kindTitle(n), &plotter.Line{LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(1.5), Dashes: seriesDash[n]}})
		}
	}
	if most > 1 {
		f.add(fmt.Sprintf("least to greatest of %d results", most), swatch{faded(color.Black, 0.18)})
	}
	if split {
		note = joinNotes(note, fmt.Sprintf("%d lines, more than %d in one panel: a panel per kind of flow, on one scale", len(d.lines), maxLines))
	}
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
