package experiment

// The shape of every plot file, after the papers' figures:
//
//  1. Margins all round, so nothing touches or is cut at an edge.
//  2. The title at the top, wrapped to the width and smaller when it
//     would take more than two lines; the notes (points left out, how
//     many repetitions a value is the mean of) under it, smaller.
//  3. The legend in rows under the notes, above the data: it never
//     covers a bar or a line and never runs past an edge.
//  4. One or more panels side by side, their axes aligned.

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"html"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Sizes of a figure, in points.
const (
	figMargin     = 14 // all round
	figTitleSize  = 12 // the title's font; 10 when it would wrap to more than two lines
	figNoteSize   = 8.5
	figLegendSize = 9
	figThumbW     = 22 // a legend entry's swatch
	figEntryGap   = 14 // between legend entries in a row
	figHeaderGap  = 8  // between the header and the panels
	figPanelGap   = 16 // between panels
	figPNGDPI     = 144
)

// figure is one plot file: a title, notes, a legend and panels (see the
// stages above).
type figure struct {
	title  string
	notes  []string
	legend []legendEntry
	panels []*plot.Plot
	w, h   vg.Length
}

// legendEntry is a legend's name and what it looks like.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

func newFigure(title string, panels ...*plot.Plot) *figure {
	return &figure{title: title, panels: panels, w: 8 * vg.Inch, h: 5 * vg.Inch}
}

func (f *figure) add(name string, thumbs ...plot.Thumbnailer) {
	f.legend = append(f.legend, legendEntry{name, thumbs})
}

// note adds the non-empty lines of n under the title.
func (f *figure) note(n string) {
	for _, l := range strings.Split(n, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			f.notes = append(f.notes, l)
		}
	}
}

func textStyle(size float64) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(size)), Handler: plot.DefaultTextHandler}
}

// wrap breaks s into lines no wider than w in style sty, at spaces (a
// word wider than w gets a line of its own).
func wrap(sty text.Style, s string, w vg.Length) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			try := word
			if line != "" {
				try = line + " " + word
			}
			if line != "" && sty.Width(try) > w {
				lines = append(lines, line)
				try = word
			}
			line = try
		}
		if line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// titleLines are the title's lines and their style: figTitleSize, or
// smaller when that takes more than two lines. A title too long for a
// line breaks before its last parenthesis first (the fabric, the rate
// and D), then where it must.
func (f *figure) titleLines(w vg.Length) ([]string, text.Style) {
	var lines []string
	var sty text.Style
	for _, size := range []float64{figTitleSize, 10.5, 9.5} {
		sty = textStyle(size)
		title := f.title
		if i := strings.LastIndex(title, " ("); i > 0 && sty.Width(title) > w && !strings.Contains(title, "\n") {
			title = title[:i] + "\n" + title[i+1:]
		}
		if lines = wrap(sty, title, w); len(lines) <= 2 {
			break
		}
	}
	return lines, sty
}

// draw lays f out on c (see the stages above).
func (f *figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, figMargin, -figMargin, figMargin, -figMargin)
	w := c.Max.X - c.Min.X
	cx := c.Min.X + w/2
	y := c.Max.Y
	put := func(sty text.Style, lines []string) {
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		e := sty.FontExtents()
		for _, l := range lines {
			c.FillText(sty, vg.Point{X: cx, Y: y}, l)
			y -= e.Height
		}
	}
	tl, tsty := f.titleLines(w)
	put(tsty, tl)
	if len(f.notes) > 0 {
		y -= 2
		nsty := textStyle(figNoteSize)
		nsty.Color = color.Gray{Y: 0x40}
		var lines []string
		for _, n := range f.notes {
			lines = append(lines, wrap(nsty, n, w)...)
		}
		put(nsty, lines)
	}
	if len(f.legend) > 0 {
		y -= 4
		y = f.drawLegend(c, y)
	}
	y -= figHeaderGap
	if len(f.panels) == 0 || y <= c.Min.Y {
		return
	}
	area := c
	area.Max.Y = y
	// gonum pads a log x axis for its label as if the label sat over
	// the arithmetic middle of the range, far right on a log scale,
	// which squeezes the data: such a panel gets a one-space label to
	// hold its place, and its label is drawn here where gonum would
	// draw it, centred under the data.
	labels := make([]string, len(f.panels))
	for j, p := range f.panels {
		if _, log := p.X.Scale.(plot.LogScale); log && p.X.Label.Text != "" {
			labels[j], p.X.Label.Text = p.X.Label.Text, " "
		}
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(f.panels), PadX: figPanelGap}
	for j, pc := range plot.Align([][]*plot.Plot{f.panels}, tiles, area)[0] {
		p := f.panels[j]
		p.Draw(pc)
		if labels[j] != "" {
			dc := p.DataCanvas(pc)
			sty := p.X.Label.TextStyle
			pc.FillText(sty, vg.Point{X: dc.Center().X, Y: pc.Min.Y + sty.FontExtents().Descent}, labels[j])
			p.X.Label.Text = labels[j]
		}
	}
}

// legendRows deals the legend's entries to rows no wider than w: each
// row's entries and its width.
func (f *figure) legendRows(sty text.Style, w vg.Length) (rows [][]int, widths []vg.Length) {
	var row []int
	var rw vg.Length
	for i, e := range f.legend {
		ew := figThumbW + 4 + sty.Width(e.name)
		if len(row) > 0 && rw+figEntryGap+ew > w {
			rows, widths = append(rows, row), append(widths, rw)
			row, rw = nil, 0
		}
		if len(row) > 0 {
			rw += figEntryGap
		}
		row, rw = append(row, i), rw+ew
	}
	if len(row) > 0 {
		rows, widths = append(rows, row), append(widths, rw)
	}
	return rows, widths
}

// drawLegend draws the legend in centred rows from y down, and returns
// the y under it.
func (f *figure) drawLegend(c draw.Canvas, y vg.Length) vg.Length {
	sty := textStyle(figLegendSize)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	w := c.Max.X - c.Min.X
	rowH := max(sty.FontExtents().Height, 11) + 3
	rows, widths := f.legendRows(sty, w)
	for r, row := range rows {
		x := c.Min.X + (w-widths[r])/2
		mid := y - rowH/2
		for _, i := range row {
			e := f.legend[i]
			thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: mid - 5}, Max: vg.Point{X: x + figThumbW, Y: mid + 5}}}
			for _, t := range e.thumbs {
				t.Thumbnail(&thumb)
			}
			c.FillText(sty, vg.Point{X: x + figThumbW + 4, Y: mid}, e.name)
			x += figThumbW + 4 + sty.Width(e.name) + figEntryGap
		}
		y -= rowH
	}
	return y
}

// save writes f as name.png and name.svg in dir.
func (f *figure) save(dir, name string) error {
	png := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(figPNGDPI))
	f.draw(draw.New(png))
	svg := vgsvg.New(f.w, f.h)
	f.draw(draw.New(svg))
	for _, out := range []struct {
		ext string
		w   interface {
			WriteTo(w io.Writer) (int64, error)
		}
	}{{".png", vgimg.PngCanvas{Canvas: png}}, {".svg", portableSVG{svg}}} {
		if err := writeWith(filepath.Join(dir, name+out.ext), func(w io.Writer) error {
			_, err := out.w.WriteTo(w)
			return err
		}); err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
	}
	return nil
}

// portableSVG writes an SVG whose text keeps the widths the layout gave
// it in any viewer: the layout measures the text in Liberation Serif,
// which a viewer may lack, and a wider font in its place would run past
// the legend's entries and the figure's edge. So every text names the
// fonts metric-compatible with it (Times New Roman), and its width
// (textLength, the font fitted to it).
type portableSVG struct{ c *vgsvg.Canvas }

var svgText = regexp.MustCompile(`(<text [^>]*)style="font-family:Liberation Serif;([^"]*font-size:([0-9.]+)px[^"]*)">([^<]*)</text>`)

// WriteTo implements io.WriterTo.
func (s portableSVG) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	if _, err := s.c.WriteTo(&b); err != nil {
		return 0, err
	}
	out := svgText.ReplaceAllFunc(b.Bytes(), func(m []byte) []byte {
		g := svgText.FindSubmatch(m)
		size, err := strconv.ParseFloat(string(g[3]), 64)
		if err != nil {
			return m
		}
		width := textStyle(size).Width(html.UnescapeString(string(g[4])))
		return fmt.Appendf(nil, `%stextLength="%.2f" lengthAdjust="spacingAndGlyphs" style="font-family:'Liberation Serif','Times New Roman',Times,serif;%s">%s</text>`,
			g[1], width.Points(), g[2], g[4])
	})
	n, err := w.Write(out)
	return int64(n), err
}

// newPanel is a panel with the figures' fonts and a light grid along
// y, and along x when xgrid (not for bars by category).
func newPanel(xlabel, ylabel string, xgrid bool) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(10)
		a.Tick.Label.Font.Size = vg.Points(9)
		a.Padding = vg.Points(2)
	}
	p.Title.TextStyle.Font.Size = vg.Points(10.5)
	p.Title.Padding = vg.Points(6)
	p.Y.Tick.Marker = niceTicks{n: 6}
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xe0}
	g.Horizontal.Color = color.Gray{Y: 0xe0}
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	if !xgrid {
		g.Vertical.Color = nil
		p.X.Tick.Length = 0
	}
	p.Add(g)
	return p
}

// The schemes' looks. A scheme has the same colour and marker in every
// plot of every experiment: Okabe and Ito's colour-blind-safe palette
// (its yellow left out, too pale on white), then dark colours of Paul
// Tol's muted palette for the variants, grey for Go-Back-N.
type schemeStyle struct {
	color color.RGBA
	glyph draw.GlyphDrawer
}

func rgb(v uint32) color.RGBA { return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255} }

var schemeStyles = map[string]schemeStyle{
	"portfc":     {rgb(0xD55E00), draw.CircleGlyph{}},   // vermillion
	"portfc:drr": {rgb(0x882255), draw.RingGlyph{}},     // wine
	"pfc":        {rgb(0x0072B2), draw.SquareGlyph{}},   // blue
	"pfcstar":    {rgb(0x56B4E9), draw.TriangleGlyph{}}, // sky blue
	"bfc":        {rgb(0x009E73), draw.PyramidGlyph{}},  // bluish green
	"bfc:2":      {rgb(0x999933), draw.BoxGlyph{}},      // olive
	"bfc:hash":   {rgb(0x332288), draw.PlusGlyph{}},     // indigo
	"irn":        {rgb(0xCC79A7), draw.CrossGlyph{}},    // reddish purple
	"gbn":        {rgb(0x777777), draw.BoxGlyph{}},      // grey
	"none":       {rgb(0x000000), draw.CrossGlyph{}},    // black
}

// reserveColors are for schemes outside schemeStyles (pfc/gbn,
// bfc:hash:8): one by a hash of the name, the same in every plot,
// though two such schemes may share one.
var reserveColors = []color.RGBA{rgb(0x117733), rgb(0xAA4499), rgb(0x44AA99), rgb(0x661100), rgb(0x6699CC), rgb(0xE69F00), rgb(0xDDAA33)}

var reserveGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{}}

// styleOf is scheme's colour and marker.
func styleOf(scheme string) schemeStyle {
	if s, ok := schemeStyles[scheme]; ok {
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(scheme))
	v := h.Sum32()
	return schemeStyle{reserveColors[v%uint32(len(reserveColors))], reserveGlyphs[(v/7)%uint32(len(reserveGlyphs))]}
}

func schemeColor(scheme string) color.Color { return styleOf(scheme).color }

// faded is c at the given opacity (a band's fill).
func faded(c color.Color, alpha float64) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = uint8(255 * alpha)
	return n
}

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
// none had the value).
type spread struct {
	mean, lo, hi float64
	n            int
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

// barSeries is one scheme's bars, one per group.
type barSeries struct {
	name  string
	color color.Color
	vals  []spread
}

// groupedBars draws groups of bars, a bar per series (a scheme) that
// has a value in the group, the group's bars side by side and centred;
// a bar of more than one result has a whisker from their least to
// their greatest value, and every bar its value above it.
type groupedBars struct {
	groups int
	series []barSeries
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
	// Whiskers in black on a white halo, to show on a dark bar too.
	halo := draw.LineStyle{Color: color.White, Width: vg.Points(2.6)}
	whisk := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	for i := range g.groups {
		pres := g.present(i)
		for j, s := range pres {
			v := g.series[s].vals[i]
			x0 := float64(i) - float64(len(pres))*w/2 + float64(j)*w
			left, right := trX(x0), trX(x0+w)
			base, top := trY(max(0, p.Y.Min)), trY(v.mean)
			// A hairline of white between neighbours.
			r := vg.Rectangle{Min: vg.Point{X: left + 0.4, Y: min(base, top)}, Max: vg.Point{X: right - 0.4, Y: max(base, top)}}
			c.SetColor(g.series[s].color)
			c.Fill(r.Path())
			labelY := top
			if v.n > 1 && v.hi > v.lo {
				mid := (left + right) / 2
				cap := (right - left) / 4
				lo, hi := trY(v.lo), trY(v.hi)
				for _, sty := range []draw.LineStyle{halo, whisk} {
					c.StrokeLine2(sty, mid, lo, mid, hi)
					c.StrokeLine2(sty, mid-cap, lo, mid+cap, lo)
					c.StrokeLine2(sty, mid-cap, hi, mid+cap, hi)
				}
				labelY = max(top, hi)
			}
			// The value, upright when it fits over the bar, else turned.
			l := barLabel(v.mean)
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

// logTicks label a log axis at powers of ten (by format), and at 2 and
// 5 times them too when fewer than three powers of ten fall in its
// range, with unlabelled minor ticks at the other multiples.
type logTicks struct{ format func(float64) string }

// Ticks implements plot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || lo <= 0 {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	format := t.format
	if format == nil {
		format = func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	}
	dense := math.Floor(math.Log10(hi)+1e-9)-math.Ceil(math.Log10(lo)-1e-9) < 2
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		dec := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * dec
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			label := ""
			if m == 1 || (dense && (m == 2 || m == 5)) {
				label = format(v)
			}
			ts = append(ts, plot.Tick{Value: v, Label: label})
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
