package experiment

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bcfab/bcfab/lab/workload"
)

// FlowSlowdown is one completed flow of a workload point: its size and
// slowdown (the slowdown-by-size plots).
type FlowSlowdown struct {
	Size     int64
	Slowdown float64
}

// flowSlowdowns are the flows of recs that completed (not failed) with a
// known slowdown: those a point's slowdowns count (workload.Summarize).
func flowSlowdowns(recs []workload.FlowRecord) []FlowSlowdown {
	var out []FlowSlowdown
	for i := range recs {
		if r := &recs[i]; r.Completed && !r.Failed && r.Slowdown > 0 {
			out = append(out, FlowSlowdown{r.Size, r.Slowdown})
		}
	}
	return out
}

// readFlowSlowdowns reads a point's records.csv (workload.WriteCSV).
func readFlowSlowdowns(path string) ([]FlowSlowdown, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := workload.ReadCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return flowSlowdowns(recs), nil
}

// The slowdown-by-size plots, as the papers draw them: the flows' sizes
// in sizeBinCount bins spaced evenly on a log scale from the smallest
// flow of the plot's points to the largest, and in each the 50th, 95th
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
}

// sizeData is a slowdown-by-size plot's: the bins' edges and a line per
// scheme with flows.
type sizeData struct {
	edges   []float64
	lines   []sizeLine
	invalid []string
	drawn   []*Result
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
			if len(r.Slowdowns) > 0 {
				_, p := binPercentiles(r.Slowdowns, d.edges)
				per = append(per, p)
			}
		}
		if len(per) == 0 {
			continue
		}
		l := sizeLine{contender: contender, pcts: make([][]spread, len(sizePercentiles))}
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

// slowdownBySize draws the papers' slowdown against flow size for one
// CDF and load: a panel per percentile (p50, p95, p99), a line per
// scheme over the size bins (see sizeBinCount).
func (pl *plots) slowdownBySize(cdf string, load float64) {
	d := pl.sizeData(cdf, load)
	if len(d.edges) == 0 {
		return // no valid point has flows (or records: a run's records.csv lost)
	}
	title := fmt.Sprintf("Slowdown (FCT / ideal FCT) by flow size, %s at load %s", cdfTitle(cdf), loadName(load))
	var panels []*plot.Plot
	most := 0
	for j, pc := range sizePercentiles {
		// A short y label: a rotated label taller than the data
		// would shrink it.
		p := newPanel("flow size (bytes, log)", "slowdown", true)
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
				pl.errs = append(pl.errs, err)
				return
			}
			st := styleOf(l.contender)
			line.Color, line.Width = st.color, vg.Points(1.4)
			scatter.Color, scatter.Shape, scatter.Radius = st.color, st.glyph, vg.Points(2.8)
			p.Add(ws, line, scatter)
		}
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{format: sizeText}
		p.X.Min, p.X.Max = d.edges[0]/1.3, d.edges[len(d.edges)-1]*1.3
		switch {
		case math.IsInf(ylo, 0):
			p.Y.Min, p.Y.Max = 0, 1
		case ylo > 0 && yhi/ylo > 10:
			// A scheme that collapses (Go-Back-N under incast) is
			// orders of magnitude above the rest: a log axis keeps both
			// readable.
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
			p.Y.Min, p.Y.Max = ylo/1.3, yhi*1.6
			p.Y.Label.Text += " (log)"
		default:
			p.Y.Min, p.Y.Max = 0, yhi*1.1
		}
		panels = append(panels, p)
	}
	f := newFigure(pl.title(title), panels...)
	f.w, f.h = 12*vg.Inch, 5*vg.Inch
	for _, l := range d.lines {
		st := styleOf(l.contender)
		f.add(pl.label(l.contender), &plotter.Line{LineStyle: draw.LineStyle{Color: st.color, Width: vg.Points(1.4)}},
			&plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: st.color, Shape: st.glyph, Radius: vg.Points(2.8)}})
	}
	binNote := fmt.Sprintf("%d size bins evenly spaced on a log scale from %s to %s (a point at its bin's geometric centre); a bin of fewer than %d flows of a point is left out; every completed flow counts",
		sizeBinCount, sizeText(d.edges[0]), sizeText(d.edges[len(d.edges)-1]), minBinFlows)
	pl.save(f, pl.named(fmt.Sprintf("slowdown-size-%s-load%s", cdf, loadName(load))), title,
		joinNotes(invalidNote(d.invalid), partialNote(d.drawn), binNote, spreadNote(most, "point", "whiskers from")))
}
