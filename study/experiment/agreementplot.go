package experiment

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/units"
)

// ratioClasses colour the lines of the FCT-ratio CDF: the size classes
// of the reports (workload.DefaultBins), small to large, in Paul Tol's
// bright scheme (no scheme's colour: the lines are classes, not
// schemes).
var ratioClasses = []struct {
	label string
	color uint32
}{
	{"<=10KB", 0x4477AA}, {"10KB-100KB", 0x228833}, {"100KB-1MB", 0xCCBB44}, {">1MB", 0xEE6677},
}

// ratioClass is the index in ratioClasses of a flow of size bytes.
func ratioClass(size int64) int {
	for i, edge := range workload.DefaultBins {
		if size <= edge {
			return i
		}
	}
	return len(workload.DefaultBins)
}

// ratioCDF draws, for a scheme run by both tools, the distribution of
// the simulator's FCT over the lab's, flow for flow (the same flow of
// the same schedule, both on the lab's clock), over every seed both ran validly: a panel per load, a line
// per size class of the background.
func (pl *plots) ratioCDF(cdf string) {
	for _, pair := range agreementPairs(pl.c) {
		var panels []*plot.Plot
		var invalid []string
		drawn := make([]bool, len(ratioClasses))
		lo, hi := 1.0, 1.0
		for _, load := range pl.c.Workload.Loads {
			labs, inv := pl.match(pair.lab, cdf, load)
			sims, sinv := pl.match(pair.sim, cdf, load)
			invalid = append(append(invalid, inv...), sinv...)
			ratios := make([][]float64, len(ratioClasses))
			pairs := 0
			for _, lr := range labs {
				for _, sr := range sims {
					if sr.Seed != lr.Seed || sr.Rep != lr.Rep || sr.Schedule != lr.Schedule {
						continue
					}
					pairs++
					sim := map[int]time.Duration{}
					for _, f := range sr.Slowdowns {
						if f.Kind == workload.KindPoisson {
							sim[f.ID] = f.FCT
						}
					}
					for _, f := range lr.Slowdowns {
						if s, ok := sim[f.ID]; ok && f.Kind == workload.KindPoisson && f.FCT > 0 && s > 0 {
							c := ratioClass(f.Size)
							ratios[c] = append(ratios[c], float64(s)/float64(f.FCT))
						}
					}
				}
			}
			if pairs == 0 {
				continue
			}
			p := newPanel("the simulator's FCT / the lab's, same flow (log)", "fraction of flows", true)
			p.Title.Text = fmt.Sprintf("load %s (%s)", loadName(load), units.Count(pairs, "seed", "seeds"))
			for c, rs := range ratios {
				if len(rs) < 10 {
					continue // too few to draw a distribution
				}
				slices.Sort(rs)
				pts := make(plotter.XYs, 0, 2*len(rs))
				for i, v := range rs {
					pts = append(pts, plotter.XY{X: v, Y: float64(i) / float64(len(rs))}, plotter.XY{X: v, Y: float64(i+1) / float64(len(rs))})
				}
				lo, hi = min(lo, rs[0]), max(hi, rs[len(rs)-1])
				l, err := plotter.NewLine(pts)
				if err != nil {
					pl.errs = append(pl.errs, err)
					return
				}
				l.Color, l.Width = rgb(ratioClasses[c].color), vg.Points(1.5)
				p.Add(l)
				drawn[c] = true
			}
			p.Y.Min, p.Y.Max = 0, 1.02
			p.Y.Tick.Marker = niceTicks{n: 5}
			p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{format: func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }}
			panels = append(panels, p)
		}
		if len(panels) == 0 {
			continue
		}
		// One x range for every panel, symmetric about 1 on the log
		// axis, so that faster and slower read alike.
		span := math.Max(hi, 1/lo) * 1.1
		for _, p := range panels {
			p.X.Min, p.X.Max = 1/span, span
			p.Add(&plotter.Line{XYs: plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: 1.02}}, LineStyle: draw.LineStyle{Color: rgb(0x999999), Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}})
		}
		title := fmt.Sprintf("Flow for flow, %s against %s: FCT ratio, %s", pl.c.Label(pair.sim), pl.c.Label(pair.lab), cdfTitle(cdf))
		f := newFigure(pl.title(title), panels...)
		f.w, f.h = vg.Length(4*len(panels)+1)*vg.Inch, 4.5*vg.Inch
		for c, cl := range ratioClasses {
			if drawn[c] {
				f.add(cl.label, &plotter.Line{LineStyle: draw.LineStyle{Color: rgb(cl.color), Width: vg.Points(1.5)}})
			}
		}
		note := "the background's flows both tools completed, by size class, over the seeds both ran validly; right of 1 the simulator's flow took longer"
		if n := invalidNote(invalid); n != "" {
			note += "; " + n
		}
		pl.save(f, pl.named(fmt.Sprintf("fct-ratio-%s-%s", cdf, strings.NewReplacer(":", "-", "/", "-", "@", "-").Replace(pair.sim))), title, note)
	}
}
