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
	"html"
	"image/color"
	"io"
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
	figTitleSize  = 12 // the title's font; 10.5, then 9.5, when it would take more than two lines
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
	// The panels' titles on one line over the panels (gonum would set
	// each at its own panel's top, which Align moves by the room its
	// tick labels take).
	titles := make([]string, len(f.panels))
	var titleSty text.Style
	for j, p := range f.panels {
		if p.Title.Text != "" {
			titles[j], p.Title.Text = p.Title.Text, ""
			titleSty = p.Title.TextStyle
		}
	}
	titleY := area.Max.Y
	if titleSty.Handler != nil {
		area.Max.Y -= titleSty.FontExtents().Height + vg.Points(4)
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(f.panels), PadX: figPanelGap}
	for j, pc := range plot.Align([][]*plot.Plot{f.panels}, tiles, area)[0] {
		p := f.panels[j]
		p.Draw(pc)
		dc := p.DataCanvas(pc)
		if labels[j] != "" {
			sty := p.X.Label.TextStyle
			pc.FillText(sty, vg.Point{X: dc.Center().X, Y: pc.Min.Y + sty.FontExtents().Descent}, labels[j])
			p.X.Label.Text = labels[j]
		}
		if titles[j] != "" {
			sty := titleSty
			sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
			pc.FillText(sty, vg.Point{X: dc.Center().X, Y: titleY}, titles[j])
			p.Title.Text = titles[j]
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
