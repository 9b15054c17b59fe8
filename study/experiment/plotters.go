package experiment

// The plotters the figures draw with, beyond gonum's: grouped bars with
// whiskers, whiskers on points, phase markers, and the axes' ticks.

import (
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// swatch is a legend entry's filled box (a bar's, a band's).
type swatch struct {
	fill color.Color
}

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	r.Min.X += 3
	r.Max.X -= 3
	c.SetColor(s.fill)
	c.Fill(r.Path())
}

// spread is what a plot shows of one setting's results: their mean,
// least and greatest value, and how many there were (NaN and 0 when
// none had the value); deadlocked when any of them deadlocked (its
// numbers count the flows that ended: not an ordinary value).
type spread struct {
	mean, lo, hi float64
	n            int
	deadlocked   bool
}

// spreadOf is the spread of vs, leaving NaN and infinities out.
func spreadOf(vs []float64) spread {
	s := spread{mean: math.NaN(), lo: math.NaN(), hi: math.NaN()}
	var sum float64
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if s.n == 0 || v < s.lo {
			s.lo = v
		}
		if s.n == 0 || v > s.hi {
			s.hi = v
		}
		sum += v
		s.n++
	}
	if s.n > 0 {
		s.mean = sum / float64(s.n)
	}
	return s
}

func (s spread) ok() bool { return s.n > 0 }

// barSeries is one scheme's bars, one per group: name is the
// contender's, note what its legend entry adds ("(INVALID, not
// plotted)").
type barSeries struct {
	name, note string
	color      color.Color
	vals       []spread
}

// groupedBars draws groups of bars, a bar per series (a scheme) that
// has a value in the group, the group's bars side by side and centred;
// a bar of more than one result has a whisker from their least to
// their greatest value, and every bar its value above it.
type groupedBars struct {
	groups int
	series []barSeries
}

// deadlocked says some bar is a deadlocked point's.
func (g *groupedBars) deadlocked() bool {
	for _, s := range g.series {
		for _, v := range s.vals {
			if v.ok() && v.deadlocked {
				return true
			}
		}
	}
	return false
}

// width is a bar's width in groups: the widest group fills 80%, and
// a bar is at most a quarter of a group.
func (g *groupedBars) width() float64 {
	most := 1
	for i := range g.groups {
		most = max(most, len(g.present(i)))
	}
	return min(0.8/float64(most), 0.25)
}

// present are the series with a value in group i.
func (g *groupedBars) present(i int) []int {
	var out []int
	for s := range g.series {
		if i < len(g.series[s].vals) && g.series[s].vals[i].ok() {
			out = append(out, s)
		}
	}
	return out
}

// Plot implements plot.Plotter.
func (g *groupedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	w := g.width()
	lsty := textStyle(7)
	for i := range g.groups {
		pres := g.present(i)
		for j, s := range pres {
			v := g.series[s].vals[i]
			x0 := float64(i) - float64(len(pres))*w/2 + float64(j)*w
			left, right := trX(x0), trX(x0+w)
			base, top := trY(max(0, p.Y.Min)), trY(v.mean)
			// A hairline of white between neighbours; a bar of about
			// zero still shows its colour.
			lo, hi := min(base, top), max(base, top)
			hi = max(hi, lo+vg.Points(1.5))
			r := vg.Rectangle{Min: vg.Point{X: left + 0.4, Y: lo}, Max: vg.Point{X: right - 0.4, Y: hi}}
			if v.deadlocked {
				hatch(c, r, g.series[s].color)
			} else {
				c.SetColor(g.series[s].color)
				c.Fill(r.Path())
			}
			labelY := r.Max.Y
			if v.n > 1 && v.hi > v.lo {
				g.whisker(c, (left+right)/2, (right-left)/4, trY(v.lo), trY(v.hi), r, g.series[s].color)
				labelY = max(top, trY(v.hi))
			}
			// The value, upright when it fits over the bar, else turned.
			l := barLabel(v.mean)
			if v.deadlocked {
				l += " deadlock"
			}
			sty := lsty
			if sty.Width(l) <= right-left+vg.Points(2) {
				sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
			} else {
				sty.Rotation = math.Pi / 2
				sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
			}
			c.FillText(sty, vg.Point{X: (left + right) / 2, Y: labelY + vg.Points(2)}, l)
		}
	}
}

// whisker draws a bar's whisker at x from lo to hi, its caps cap to
// each side: black outside the bar r, and inside it white on a dark bar
// (black on a light one), so that it shows on any bar.
func (g *groupedBars) whisker(c draw.Canvas, x, cap, lo, hi vg.Length, r vg.Rectangle, bar color.Color) {
	out := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	in := out
	if luminance(bar) < 0.45 {
		in.Color = color.White
	}
	lo, hi = min(lo, hi), max(lo, hi)
	if a, b := max(lo, r.Min.Y), min(hi, r.Max.Y); a < b {
		c.StrokeLine2(in, x, a, x, b)
	}
	if hi > r.Max.Y {
		c.StrokeLine2(out, x, max(lo, r.Max.Y), x, hi)
	}
	if lo < r.Min.Y {
		c.StrokeLine2(out, x, lo, x, min(hi, r.Min.Y))
	}
	for _, y := range []vg.Length{lo, hi} {
		sty := out
		if y > r.Min.Y && y < r.Max.Y-vg.Points(0.5) {
			sty = in
		}
		c.StrokeLine2(sty, x-cap, y, x+cap, y)
	}
}

// hatch draws r as a deadlocked point's bar: a pale fill, diagonal
// lines and an outline in the scheme's colour.
func hatch(c draw.Canvas, r vg.Rectangle, col color.Color) {
	c.SetColor(faded(col, 0.15))
	c.Fill(r.Path())
	sty := draw.LineStyle{Color: col, Width: vg.Points(0.8)}
	const step = 5 // points between the lines, along x
	w, h := r.Max.X-r.Min.X, r.Max.Y-r.Min.Y
	// The lines y - Min.Y = x - Min.X - t, clipped to r.
	for t := -h; t < w; t += step {
		x0, x1 := r.Min.X+max(0, t), r.Min.X+min(w, t+h)
		if x1 > x0 {
			c.StrokeLine2(sty, x0, r.Min.Y+x0-r.Min.X-t, x1, r.Min.Y+x1-r.Min.X-t)
		}
	}
	c.StrokeLines(draw.LineStyle{Color: col, Width: vg.Points(1)}, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}, r.Min})
}

// hatchSwatch is the legend's entry for a deadlocked point's bar.
type hatchSwatch struct{}

// Thumbnail implements plot.Thumbnailer.
func (hatchSwatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	r.Min.X += 3
	r.Max.X -= 3
	hatch(*c, r, color.Gray{Y: 0x40})
}

// dotRows draw a dot plot: a row per scheme, the first on top, its
// value a filled dot in the scheme's colour with its number to the
// right, a line from the least to the greatest of its results when
// there are more than one, and a deadlocked point's dot hollow with
// "deadlock" beside its number.
type dotRows struct{ rows []dotRow }

type dotRow struct {
	v     spread
	color color.Color
}

// Plot implements plot.Plotter.
func (d *dotRows) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	lsty := textStyle(8)
	lsty.XAlign, lsty.YAlign = draw.XLeft, draw.YCenter
	for i, r := range d.rows {
		if !r.v.ok() {
			continue
		}
		y := trY(float64(len(d.rows) - 1 - i))
		x := trX(r.v.mean)
		right := x
		if r.v.n > 1 && r.v.hi > r.v.lo {
			lo, hi := trX(r.v.lo), trX(r.v.hi)
			line := draw.LineStyle{Color: r.color, Width: vg.Points(1.5)}
			c.StrokeLine2(line, lo, y, hi, y)
			c.StrokeLine2(line, lo, y-3, lo, y+3)
			c.StrokeLine2(line, hi, y-3, hi, y+3)
			right = max(right, hi)
		}
		gs := draw.GlyphStyle{Color: r.color, Shape: draw.CircleGlyph{}, Radius: vg.Points(4.5)}
		l := barLabel(r.v.mean)
		if r.v.deadlocked {
			c.SetColor(color.White)
			c.Fill(vg.Rectangle{Min: vg.Point{X: x - 4.5, Y: y - 4.5}, Max: vg.Point{X: x + 4.5, Y: y + 4.5}}.Path())
			gs.Shape = draw.RingGlyph{}
			gs.Radius = vg.Points(4)
			l += " (deadlock)"
		}
		c.DrawGlyphNoClip(gs, vg.Point{X: x, Y: y})
		c.FillText(lsty, vg.Point{X: right + vg.Points(7), Y: y}, l)
	}
}

// DataRange implements plot.DataRanger: 0 to the greatest value or
// range along x, the rows along y.
func (d *dotRows) DataRange() (xmin, xmax, ymin, ymax float64) {
	for _, r := range d.rows {
		if r.v.ok() {
			xmin, xmax = min(xmin, r.v.lo, r.v.mean), max(xmax, r.v.hi, r.v.mean)
		}
	}
	return xmin, xmax, -0.5, float64(len(d.rows)) - 0.5
}

// luminance is c's relative luminance, 0 (black) to 1 (white).
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
}

// DataRange implements plot.DataRanger: the groups along x, from 0 to
// the greatest value or whisker along y.
func (g *groupedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	for _, s := range g.series {
		for _, v := range s.vals {
			if v.ok() {
				ymin, ymax = min(ymin, v.mean, v.lo), max(ymax, v.mean, v.hi)
			}
		}
	}
	return -0.5, float64(g.groups) - 0.5, ymin, ymax
}

// whiskers draw each point's least-to-greatest range over repetitions,
// in a series' colour (points of one result have none).
type whiskers struct {
	pts   []whisker
	color color.Color
}

type whisker struct{ x, lo, hi float64 }

// Plot implements plot.Plotter.
func (ws whiskers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: ws.color, Width: vg.Points(1)}
	for _, w := range ws.pts {
		x, lo, hi := trX(w.x), trY(w.lo), trY(w.hi)
		c.StrokeLine2(sty, x, lo, x, hi)
		c.StrokeLine2(sty, x-3, lo, x+3, lo)
		c.StrokeLine2(sty, x-3, hi, x+3, hi)
	}
}

// phaseMarker marks when a phase of a run starts (the loop flows, the
// incast): a dashed vertical line and its label at the top.
type phaseMarker struct {
	x     float64 // on the plot's x axis
	label string
}

// phaseMarkers draw their markers, labels stacked so that two near
// each other do not overlap.
type phaseMarkers []phaseMarker

// Plot implements plot.Plotter.
func (ms phaseMarkers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	line := draw.LineStyle{Color: color.Gray{Y: 0x30}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	sty := textStyle(8.5)
	sty.YAlign = draw.YTop
	h := sty.FontExtents().Height
	for i, m := range ms {
		x := trX(m.x)
		if !c.ContainsX(x) {
			continue
		}
		c.StrokeLine2(line, x, c.Min.Y, x, c.Max.Y)
		// Right of the line, or left of it when it would run past the
		// panel's edge; on a white ground, over the data.
		tw := sty.Width(m.label)
		tx := x + 3
		if tx+tw > c.Max.X {
			tx = x - 3 - tw
		}
		ty := c.Max.Y - 2 - vg.Length(i)*(h+1)
		c.SetColor(color.NRGBA{255, 255, 255, 220})
		c.Fill(vg.Rectangle{Min: vg.Point{X: tx - 1, Y: ty - h}, Max: vg.Point{X: tx + tw + 1, Y: ty}}.Path())
		c.FillText(sty, vg.Point{X: tx, Y: ty}, m.label)
	}
}

// niceTicks label an axis at steps of 1, 2 or 5 times a power of ten,
// the finest step that gives at most n+1 labels (gonum's default may
// label only two or three), with unlabelled minor ticks between.
type niceTicks struct{ n int }

// Ticks implements plot.Ticker.
func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	n := t.n
	if n < 2 {
		n = 5
	}
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/float64(n))))
	var step, minor float64
	for _, m := range []struct{ step, minor float64 }{{1, 0.2}, {2, 0.5}, {5, 1}, {10, 2}, {20, 5}} {
		step, minor = m.step*mag, m.minor*mag
		if math.Floor(hi/step+1e-9)-math.Ceil(lo/step-1e-9)+1 <= float64(n+1) {
			break
		}
	}
	var ts []plot.Tick
	for k := math.Ceil(lo/minor - 1e-9); k*minor <= hi+minor*1e-9; k++ {
		v := k * minor
		if math.Abs(v) < minor*1e-9 {
			v = 0
		}
		label := ""
		if r := math.Mod(math.Abs(v)+step*1e-9, step); r < step*1e-6 {
			label = strconv.FormatFloat(v, 'g', 6, 64)
		}
		ts = append(ts, plot.Tick{Value: v, Label: label})
	}
	return ts
}

// logTicks label a log axis at powers of ten (by format); where fewer
// than three of them fall in its range, at 1, 2 and 5 times them; then
// at every whole multiple; then, on a range of less than a factor of
// three (p50 slowdowns of 1 to 1.6), at finer steps (1.2, 1.4, 2.5).
// The next finer set are unlabelled minor ticks.
type logTicks struct{ format func(float64) string }

// logMantissas are the sets of multiples of a power of ten logTicks
// labels, coarsest first.
var logMantissas = [][]float64{
	{1},
	{1, 2, 5},
	{1, 2, 3, 4, 5, 6, 7, 8, 9},
	{1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9},
}

// Ticks implements plot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || lo <= 0 {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	format := t.format
	if format == nil {
		format = func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	}
	// at are the values of mantissas ms in [lo, hi].
	at := func(ms []float64) []float64 {
		var vs []float64
		for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
			for _, m := range ms {
				// Rounded so that 1.2 x 10^-1 prints as 0.12.
				v, _ := strconv.ParseFloat(strconv.FormatFloat(m*math.Pow(10, e), 'g', 12, 64), 64)
				if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
					vs = append(vs, v)
				}
			}
		}
		return vs
	}
	level := 0
	for level < len(logMantissas)-1 && len(at(logMantissas[level])) < 3 {
		level++
	}
	labelled := map[float64]bool{}
	var ts []plot.Tick
	for _, v := range at(logMantissas[level]) {
		labelled[v] = true
		ts = append(ts, plot.Tick{Value: v, Label: format(v)})
	}
	minor := logMantissas[min(max(level+1, 2), len(logMantissas)-1)]
	for _, v := range at(minor) {
		if !labelled[v] {
			ts = append(ts, plot.Tick{Value: v})
		}
	}
	return ts
}

// sizeText prints a byte count as the papers write sizes: 1 KB, 10 MB.
func sizeText(v float64) string {
	for _, u := range []struct {
		div  float64
		name string
	}{{1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}} {
		if v >= u.div {
			return strconv.FormatFloat(v/u.div, 'g', 4, 64) + " " + u.name
		}
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " B"
}
