package experiment

import (
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bcfab/bcfab/model/units"
)

// conformanceErrors draws every figure of the conformance points that
// has a relative bound: a row per case and figure, its error in % as a
// dot in its scheme's colour, its bound a grey band about 0; the floors
// (Jain's index) and counts (drops) stay in the README's table.
func (pl *plots) conformanceErrors() {
	type key struct{ scenario, item string }
	var rows []key
	vals := map[key]map[string]float64{} // by contender
	spread := map[key]map[string][2]float64{}
	bound := map[key]float64{}
	var invalid []string
	var contenders []string
	for j := range pl.results {
		res := &pl.results[j]
		if !res.Valid {
			invalid = append(invalid, res.ID)
			continue
		}
		if !slices.Contains(contenders, res.Contender) {
			contenders = append(contenders, res.Contender)
		}
		for _, r := range res.Checks {
			if r.Floor || r.Bound == 0 || r.Expected == 0 && !r.Abs {
				continue
			}
			k := key{res.Scenario, r.Item}
			if vals[k] == nil {
				rows = append(rows, k)
				vals[k] = map[string]float64{}
				spread[k] = map[string][2]float64{}
			}
			vals[k][res.Contender] = 100 * r.Error
			if r.Spread != nil {
				spread[k][res.Contender] = [2]float64{100 * (r.Spread[0]/r.Expected - 1), 100 * (r.Spread[1]/r.Expected - 1)}
			}
			bound[k] = 100 * r.Bound
		}
	}
	if len(rows) == 0 {
		return
	}
	p := newPanel("error against the closed form, % (a probability's in points; grey: the check's bound)", "", true)
	names := make([]string, len(rows))
	lim := 0.0
	for i, k := range rows {
		y := float64(len(rows) - 1 - i) // the first row on top
		names[len(rows)-1-i] = k.scenario + ": " + k.item
		b := bound[k]
		lim = max(lim, b)
		p.Add(&plotter.Line{XYs: plotter.XYs{{X: -b, Y: y}, {X: b, Y: y}}, LineStyle: draw.LineStyle{Color: rgb(0xDDDDDD), Width: vg.Points(7)}})
		for ci, c := range contenders {
			v, ok := vals[k][c]
			if !ok {
				continue
			}
			lim = max(lim, math.Abs(v))
			// Schemes side by side within the row.
			off := (float64(ci) - float64(len(contenders)-1)/2) * 0.22
			if sp, ok := spread[k][c]; ok {
				lim = max(lim, math.Abs(sp[0]), math.Abs(sp[1]))
				p.Add(&plotter.Line{XYs: plotter.XYs{{X: sp[0], Y: y + off}, {X: sp[1], Y: y + off}}, LineStyle: draw.LineStyle{Color: contenderColor(c), Width: vg.Points(1)}})
			}
			s, err := plotter.NewScatter(plotter.XYs{{X: v, Y: y + off}})
			if err != nil {
				pl.errs = append(pl.errs, err)
				return
			}
			s.GlyphStyle = draw.GlyphStyle{Color: contenderColor(c), Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
			p.Add(s)
		}
	}
	p.Add(&plotter.Line{XYs: plotter.XYs{{X: 0, Y: -0.6}, {X: 0, Y: float64(len(rows)) - 0.4}}, LineStyle: draw.LineStyle{Color: rgb(0x999999), Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}})
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(len(rows))-0.4
	p.X.Min, p.X.Max = -1.15*lim, 1.15*lim
	p.X.Tick.Marker = plot.DefaultTicks{}
	title := "Conformance: each figure against its closed form"
	f := newFigure(pl.title(title), p)
	f.w, f.h = 9*vg.Inch, max(3*vg.Inch, vg.Length(1.6+0.24*float64(len(rows)))*vg.Inch)
	for _, c := range contenders {
		f.add(pl.c.Label(c), &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: contenderColor(c), Radius: vg.Points(3), Shape: draw.CircleGlyph{}}})
	}
	note := "right of 0 the lab's figure is greater than the formula's; a figure that is the median of several runs has their range as a line; " + units.Count(len(rows), "figure", "figures")
	if n := invalidNote(invalid); n != "" {
		note += "; " + n
	}
	pl.save(f, "conformance-errors", title, note)
}
