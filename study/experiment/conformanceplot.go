package experiment

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/bcfab/bcfab/model/units"
)

// conformanceErrors draws every figure of the conformance points that
// has a bound about its formula (relative, or a probability's in
// points): a row per case and figure, its error over its bound as a dot
// in its scheme's colour, so that every row reads on one scale, within
// when inside the grey band [-1, 1]; the bound in the row's name. The
// floors and ceilings (Jain's index, the pauses) and the counts (drops,
// retransmissions) stay in the README's table.
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
			if r.Floor || r.Ceil || r.Bound == 0 || r.Expected == 0 && !r.Abs || r.Abs && r.Unit != "" {
				continue
			}
			// The bound as a share of the formula's figure (a
			// probability's in points), the slack's if that is larger.
			b := r.Bound
			if r.Slack > 0 && r.Expected != 0 {
				b = max(b, r.Slack/math.Abs(r.Expected))
			}
			k := key{res.Scenario, r.Item + " (" + boundText(r, b) + ")"}
			if vals[k] == nil {
				rows = append(rows, k)
				vals[k] = map[string]float64{}
				spread[k] = map[string][2]float64{}
			}
			vals[k][res.Contender] = r.Error / b
			if r.Spread != nil {
				spread[k][res.Contender] = [2]float64{(r.Spread[0]/r.Expected - 1) / b, (r.Spread[1]/r.Expected - 1) / b}
			}
			bound[k] = 1
		}
	}
	if len(rows) == 0 {
		return
	}
	p := newPanel("error against the closed form, over the check's bound (grey: within it)", "", true)
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
	note := "right of 0 the lab's figure is greater than the formula's; each row's bound is in its name, a figure that is the median of several runs has their range as a line; " + units.Count(len(rows), "figure", "figures")
	if n := invalidNote(invalid); n != "" {
		note += "; " + n
	}
	pl.save(f, "conformance-errors", title, note)
}

// boundText is a row's bound b (a share of its formula's figure) for
// people: "±1%", "±5 points".
func boundText(r CheckRow, b float64) string {
	if r.Abs {
		return "±" + strconv.FormatFloat(100*b, 'g', 3, 64) + " points"
	}
	return "±" + strconv.FormatFloat(100*b, 'g', 3, 64) + "%"
}
