package experiment

import (
	"fmt"
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

	"github.com/bcfab/bcfab/lab/workload"
)

// FlowSlowdown is one completed flow of a workload point: its size,
// slowdown and kind (the slowdown-by-size plots bin the background's,
// the README's table of the flows outside the bins has the others).
type FlowSlowdown struct {
	Size     int64
	Slowdown float64
	Kind     workload.Kind
	// ID is the flow's in its schedule: the same flow in two points of
	// one schedule (a lab's and the simulator's) has one ID; FCT is its
	// FCT on the lab's clock.
	ID  int
	FCT time.Duration
}

// flowSlowdowns are the flows of recs that completed (not failed) with a
// known slowdown: those a point's slowdowns count (workload.Summarize).
func flowSlowdowns(recs []workload.FlowRecord) []FlowSlowdown {
	var out []FlowSlowdown
	for i := range recs {
		if r := &recs[i]; r.Completed && !r.Failed && r.Slowdown > 0 {
			out = append(out, FlowSlowdown{r.Size, r.Slowdown, r.Kind, r.ID, r.FCT})
		}
	}
	return out
}

// backgroundBins are bins.csv's rows of a point: the size classes of
// the reports (workload.DefaultBins) over its background (Poisson)
// flows only, as the slowdown-by-size plots bin them; an incast's or a
// pattern's flows, all of one size, would be a class's whole tail.
func backgroundBins(recs []workload.FlowRecord) []workload.BinSummary {
	var bg []workload.FlowRecord
	for _, r := range recs {
		if r.Kind == workload.KindPoisson {
			bg = append(bg, r)
		}
	}
	s, _ := workload.Summarize(bg, 0, workload.DefaultBins) // DefaultBins are valid
	return s.Bins
}

// readRecords reads a point's records.csv (workload.WriteCSV).
func readRecords(path string) ([]workload.FlowRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := workload.ReadCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

// The slowdown-by-size plots, as the papers draw them: the background's
// (Poisson) flows' sizes in sizeBinCount bins spaced evenly on a log
// scale from the smallest such flow of the plot's points to the largest
// (an incast's or a pattern's flows, all of one size, and the long flows
// are reported apart: patternTable), and in each the 50th, 95th
// and 99th percentile (nearest rank, workload.Percentile) of the
// slowdowns of one point's flows in it. A bin of fewer than minBinFlows
// flows of a point has no percentiles for that point (of 10 flows the
// p99 is the largest); a bin no point has that many in is not drawn.
const (
	sizeBinCount = 12
	minBinFlows  = 10
)

var sizePercentiles = []float64{50, 95, 99}

// logSizeBins are the n+1 edges of n bins spaced evenly on a log scale
// from lo to hi (bin i holds sizes above edge i up to edge i+1; the
// first holds lo too). A range of one size is widened to a decade.
func logSizeBins(lo, hi int64, n int) []float64 {
	a, b := float64(max(lo, 1)), float64(hi)
	if b <= a {
		b = 10 * a
	}
	edges := make([]float64, n+1)
	for i := range edges {
		edges[i] = a * math.Pow(b/a, float64(i)/float64(n))
	}
	edges[0], edges[n] = a, b
	return edges
}

// sizeBin is the bin of edges that size falls in (clamped to the
// first and last).
func sizeBin(edges []float64, size int64) int {
	i := sort.SearchFloat64s(edges, float64(size)) - 1
	return min(max(i, 0), len(edges)-2)
}

// binPercentiles are, for each bin of edges, the flows of fs in it and
// the slowdowns' percentiles (sizePercentiles; NaN for a bin of fewer
// than minBinFlows flows).
func binPercentiles(fs []FlowSlowdown, edges []float64) (flows []int, pcts [][]float64) {
	n := len(edges) - 1
	per := make([][]float64, n)
	for _, f := range fs {
		i := sizeBin(edges, f.Size)
		per[i] = append(per[i], f.Slowdown)
	}
	flows, pcts = make([]int, n), make([][]float64, n)
	for i, s := range per {
		flows[i] = len(s)
		pcts[i] = make([]float64, len(sizePercentiles))
		slices.Sort(s)
		for j, p := range sizePercentiles {
			pcts[i][j] = math.NaN()
			if len(s) >= minBinFlows {
				pcts[i][j] = workload.Percentile(s, p)
			}
		}
	}
	return flows, pcts
}

// sizeLine is one scheme's line in each percentile's panel: per bin
// the spread of its points' percentile (NaN where none had enough
// flows).
type sizeLine struct {
	contender string
	pcts      [][]spread // [percentile][bin]
	// deadlocked: a result of the scheme deadlocked, and its slowdowns
	// are of the flows that ended (a dashed line).
	deadlocked bool
}

// sizeData is a slowdown-by-size plot's: the bins' edges and a line per
// scheme with flows, and the kinds of flow left out of the bins.
type sizeData struct {
	edges   []float64
	lines   []sizeLine
	invalid []string
	drawn   []*Result
	others  []workload.Kind
}

// binned are the flows of fs the slowdown-by-size bins count: the
// background's.
func binned(fs []FlowSlowdown) []FlowSlowdown {
	var out []FlowSlowdown
	for _, f := range fs {
		if f.Kind == workload.KindPoisson {
			out = append(out, f)
		}
	}
	return out
}

func (pl *plots) sizeData(cdf string, load float64) *sizeData {
	d := &sizeData{}
	byContender := map[string][]*Result{}
	var lo, hi int64 = math.MaxInt64, 0
	for _, contender := range pl.c.Contenders {
		valid, inv := pl.match(contender, cdf, load)
		d.invalid = append(d.invalid, inv...)
		d.drawn = append(d.drawn, valid...)
		byContender[contender] = valid
		for _, r := range valid {
			for _, f := range r.Slowdowns {
				if f.Kind != workload.KindPoisson {
					if !slices.Contains(d.others, f.Kind) {
						d.others = append(d.others, f.Kind)
					}
					continue
				}
				lo, hi = min(lo, f.Size), max(hi, f.Size)
			}
		}
	}
	if hi == 0 {
		return d
	}
	d.edges = logSizeBins(lo, hi, sizeBinCount)
	for _, contender := range pl.c.Contenders {
		var per [][][]float64 // [result][bin][percentile]
		for _, r := range byContender[contender] {
			if fs := binned(r.Slowdowns); len(fs) > 0 {
				_, p := binPercentiles(fs, d.edges)
				per = append(per, p)
			}
		}
		if len(per) == 0 {
			continue
		}
		l := sizeLine{contender: contender, pcts: make([][]spread, len(sizePercentiles)), deadlocked: anyDeadlocked(byContender[contender])}
		for j := range sizePercentiles {
			for b := range sizeBinCount {
				var vs []float64
				for _, p := range per {
					vs = append(vs, p[b][j])
				}
				l.pcts[j] = append(l.pcts[j], spreadOf(vs))
			}
		}
		d.lines = append(d.lines, l)
	}
	return d
}

// binRange is the first and last bin any line has a point in: the
// x axis spans those bins and no more.
func (d *sizeData) binRange() (first, last int) {
	first, last = len(d.edges), -1
	for _, l := range d.lines {
		for _, pc := range l.pcts {
			for b, s := range pc {
				if s.ok() {
					first, last = min(first, b), max(last, b)
				}
			}
		}
	}
	return first, last
}

// slowdownBySize draws the papers' slowdown against flow size for one
// CDF and load: a panel per percentile (p50, p95, p99), a line per
// scheme over the size bins (see sizeBinCount). Every panel has the
// same axes' kinds: x the flow size on a log scale, from the first bin
// with a point to the last; y the slowdown on a log scale, for a
// slowdown is a ratio (2x is as far from 1 as 1 from 0.5) and a scheme
// that collapses is orders of magnitude above the rest, and so that
// p50's panel reads as p99's does.
func (pl *plots) slowdownBySize(cdf string, load float64) {
	d := pl.sizeData(cdf, load)
	title := fmt.Sprintf("Slowdown (FCT / ideal FCT) of the background's flows by size, %s at load %s", cdfTitle(cdf), loadName(load))
	f, most, err := pl.sizeFigure(d, title)
	if f == nil {
		if err != nil {
			pl.errs = append(pl.errs, err)
		}
		return // no valid point has background flows (or records: a run's records.csv lost)
	}
	binNote := fmt.Sprintf("the background's (Poisson) flows that completed, in %d size bins evenly spaced on a log scale from %s to %s (a point at its bin's geometric centre); a bin of fewer than %d flows of a point is left out",
		sizeBinCount, sizeText(d.edges[0]), sizeText(d.edges[len(d.edges)-1]), minBinFlows)
	if len(d.others) > 0 {
		var ks []string
		for _, k := range d.others {
			ks = append(ks, string(k))
		}
		binNote += fmt.Sprintf("; the %s flows are not binned: the README's \"Flows outside the size bins\"", strings.Join(ks, " and "))
	}
	pl.save(f, pl.named(fmt.Sprintf("slowdown-size-%s-load%s", cdf, loadName(load))), title,
		joinNotes(invalidNote(d.invalid), partialNote(d.drawn), binNote, spreadNote(most, "point", "whiskers from")))
}

// sizeFigure draws d (nil when it has no point), and says the most
// results a point is the mean of.
func (pl *plots) sizeFigure(d *sizeData, title string) (*figure, int, error) {
	first, last := d.binRange()
	if len(d.edges) == 0 || last < 0 {
		return nil, 0, nil
	}
	var panels []*plot.Plot
	most := 0
	for j, pc := range sizePercentiles {
		// A short y label: a rotated label taller than the data
		// would shrink it.
		p := newPanel("flow size (bytes, log)", "slowdown (log)", true)
		p.Title.Text = "p" + strconv.FormatFloat(pc, 'f', -1, 64)
		ylo, yhi := math.Inf(1), math.Inf(-1)
		for _, l := range d.lines {
			var pts plotter.XYs
			ws := whiskers{color: contenderColor(l.contender)}
			for b, s := range l.pcts[j] {
				if !s.ok() {
					continue
				}
				x := math.Sqrt(d.edges[b] * d.edges[b+1])
				pts = append(pts, plotter.XY{X: x, Y: s.mean})
				ylo, yhi = min(ylo, s.lo), max(yhi, s.hi)
				most = max(most, s.n)
				if s.n > 1 && s.hi > s.lo {
					ws.pts = append(ws.pts, whisker{x, s.lo, s.hi})
				}
			}
			if len(pts) == 0 {
				continue
			}
			line, scatter, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, 0, err
			}
			st := styleOf(l.contender)
			line.Color, line.Width = st.color, vg.Points(1.4)
			line.Dashes = l.dashes()
			scatter.Color, scatter.Shape, scatter.Radius = st.color, st.glyph, vg.Points(2.8)
			p.Add(ws, line, scatter)
		}
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{format: sizeText}
		p.X.Min, p.X.Max = d.edges[first], d.edges[last+1]
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
		if math.IsInf(ylo, 0) || ylo <= 0 {
			p.Y.Min, p.Y.Max = 1, 10
		} else {
			p.Y.Min, p.Y.Max = ylo/1.15, max(yhi*1.25, ylo*1.5)
		}
		panels = append(panels, p)
	}
	f := newFigure(pl.title(title), panels...)
	f.w, f.h = 12*vg.Inch, 5*vg.Inch
	for _, l := range d.lines {
		st := styleOf(l.contender)
		name := pl.c.Label(l.contender)
		if l.deadlocked {
			name += " (deadlock: the flows that ended)"
		}
		f.add(name, &plotter.Line{LineStyle: draw.LineStyle{Color: st.color, Width: vg.Points(1.4), Dashes: l.dashes()}},
			&plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: st.color, Shape: st.glyph, Radius: vg.Points(2.8)}})
	}
	return f, most, nil
}

// dashes are a line's dashes: a deadlocked scheme's is dashed, the
// simulator's dotted.
func (l sizeLine) dashes() []vg.Length {
	switch {
	case l.deadlocked:
		return []vg.Length{vg.Points(4), vg.Points(2)}
	case strings.HasPrefix(l.contender, simPrefix):
		return []vg.Length{vg.Points(1.5), vg.Points(2)}
	}
	return nil
}
