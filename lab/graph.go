package lab

// Pictures of a fabric: Graphviz DOT, and SVG drawn here (no Graphviz
// needed). Servers sit in a row at the bottom, level-l switches in row
// l+1 above them, each over the servers it joins; a cable is a line from
// a server's port to its switch's. Cables a lab file overrides are drawn
// apart: a rate of their own (labelled, thicker when faster), injected
// loss (red, labelled), down (dashed grey).

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/units"
)

// cable is one fabric cable as drawn.
type cable struct {
	server, level, sw, port int // h<server> eth<level> - s<level>.<sw> p<port>
	rate                    uint64
	lossPPM                 int
	down                    bool
	override                bool
}

// cables lists every cable of s's fabric with its overrides.
func cables(s Spec, t bcube.Topology) []cable {
	var out []cable
	over := map[string]LinkSpec{}
	for _, l := range s.Links {
		if a, _, err := l.cableEnds(t); err == nil {
			over[a.Node+":"+a.Ifname] = l
		}
	}
	for i := 0; i < t.Servers(); i++ {
		for l := 0; l < t.Levels(); l++ {
			w, p := t.SwitchOf(i, l)
			c := cable{server: i, level: l, sw: w, port: p, rate: s.LevelRate(l), lossPPM: s.LossPPM}
			if o, ok := over[bcube.HostName(i)+":"+bcube.HostPort(l)]; ok {
				c.override = true
				if o.RateBps != 0 {
					c.rate = o.RateBps
				}
				if o.LossPPM != nil {
					c.lossPPM = *o.LossPPM
				}
				c.down = o.Down
			}
			out = append(out, c)
		}
	}
	return out
}

// label says how c differs from the lab's other cables (lab rate labRate).
func (c cable) label(labRate uint64) string {
	var parts []string
	if c.rate != labRate {
		parts = append(parts, units.FormatRate(c.rate))
	}
	if c.lossPPM > 0 {
		parts = append(parts, "loss "+units.FormatLoss(c.lossPPM))
	}
	if c.down {
		parts = append(parts, "down")
	}
	return strings.Join(parts, ", ")
}

// title is what the fabric is, for a picture's caption.
func title(s Spec, t bcube.Topology) string {
	fc := s.FC
	if fc == "" {
		fc = "none"
	}
	return fmt.Sprintf("lab %s: %v, %d servers, %d switches, links %s, fc %s", s.Name, t, t.Servers(), t.Switches(), s.RatesText(), fc)
}

// WriteDOT writes s's fabric as a Graphviz graph (dot -Tsvg draws it).
func WriteDOT(w io.Writer, s Spec) error {
	t, err := bcube.New(s.N, s.K)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "graph %q {\n", s.Name)
	fmt.Fprintf(&b, "  label=%q; labelloc=t; rankdir=BT; splines=line; nodesep=0.15;\n", title(s, t))
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=8];\n")
	b.WriteString("  { rank=same;")
	for i := 0; i < t.Servers(); i++ {
		fmt.Fprintf(&b, " %q [fillcolor=%q, tooltip=%q];", bcube.HostName(i), serverFill, bcube.ServerIP(i).String())
	}
	b.WriteString(" }\n")
	for l := 0; l < t.Levels(); l++ {
		b.WriteString("  { rank=same;")
		for sw := 0; sw < t.SwitchesPerLevel(); sw++ {
			fmt.Fprintf(&b, " %q [fillcolor=%q];", bcube.SwitchName(l, sw), levelFill(l))
		}
		b.WriteString(" }\n")
	}
	// Invisible edges stack the levels: level l's switches rank above
	// level l-1's.
	for l := 1; l < t.Levels(); l++ {
		for sw := 0; sw < t.SwitchesPerLevel(); sw++ {
			fmt.Fprintf(&b, "  %q -- %q [style=invis];\n", bcube.SwitchName(l-1, sw), bcube.SwitchName(l, sw))
		}
	}
	for _, c := range cables(s, t) {
		attrs := []string{fmt.Sprintf("taillabel=%q", bcube.HostPort(c.level)), fmt.Sprintf("headlabel=%q", bcube.SwitchPort(c.port)),
			fmt.Sprintf("color=%q", levelColor(c.level))}
		if l := c.label(s.LevelRate(c.level)); l != "" {
			attrs = append(attrs, fmt.Sprintf("label=%q", l))
		}
		switch {
		case c.down:
			attrs = append(attrs, `style=dashed`, `color="#999999"`)
		case c.lossPPM > 0:
			attrs = append(attrs, `fontcolor="#c0392b"`, `color="#c0392b"`)
		}
		if c.override && c.rate > s.LevelRate(c.level) {
			attrs = append(attrs, "penwidth=2.5")
		}
		fmt.Fprintf(&b, "  %q -- %q [%s];\n", bcube.HostName(c.server), bcube.SwitchName(c.level, c.sw), strings.Join(attrs, ", "))
	}
	b.WriteString("}\n")
	_, err = io.WriteString(w, b.String())
	return err
}

var levelColors = []string{"#2874a6", "#1e8449", "#b9770e", "#7d3c98"}

func levelColor(l int) string { return levelColors[l%len(levelColors)] }

// serverFill is the servers' boxes' colour.
const serverFill = "#f2f3f4"

var levelFills = []string{"#d6eaf8", "#d5f5e3", "#fdebd0", "#ebdef0"}

func levelFill(l int) string { return levelFills[l%len(levelFills)] }

// Geometry of the SVG, in pixels.
const (
	svgBoxW     = 44
	svgBoxH     = 22
	svgGapX     = 12  // between servers
	svgRowGap   = 110 // between rows
	svgMargin   = 30
	svgMinWidth = 820 // room for the title and legend
	svgTitleH   = 30
)

// WriteSVG draws s's fabric as SVG.
func WriteSVG(w io.Writer, s Spec) error {
	t, err := bcube.New(s.N, s.K)
	if err != nil {
		return err
	}
	servers := t.Servers()
	pitch := svgBoxW + svgGapX
	width := max(svgMargin*2+servers*pitch-svgGapX, svgMinWidth)
	rows := t.Levels() + 1
	height := svgMargin*2 + svgTitleH + (rows-1)*svgRowGap + svgBoxH + 40 // legend below
	left := (width - (servers*pitch - svgGapX)) / 2                       // the servers' row, centred
	serverX := func(i int) int { return left + i*pitch + svgBoxW/2 }
	// A cable leaves its server by its port's spot on the box's top, and
	// reaches its switch at its port's spot on the box's bottom.
	spot := func(i, of int) int { return (2*i - (of - 1)) * (svgBoxW - 8) / max(2*(of-1), 1) / 2 }
	rowY := func(row int) int { // row 0: servers at the bottom; row l+1: level l
		return svgMargin + svgTitleH + (rows-1-row)*svgRowGap + svgBoxH/2
	}
	// A level's switches spread evenly over the servers' row: level 0's
	// then sit over the servers they join, and the higher levels' cables
	// fan out instead of meeting in the middle.
	switchX := func(l, sw int) int {
		row := servers*pitch - svgGapX
		return left + (2*sw+1)*row/(2*t.SwitchesPerLevel())
	}
	esc := func(v string) string {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(v))
		return b.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="14" font-weight="bold">%s</text>`+"\n", svgMargin, svgMargin+4, esc(title(s, t)))
	// Cables first, under the boxes.
	for _, c := range cables(s, t) {
		x1, y1 := serverX(c.server)+spot(c.level, t.Levels()), rowY(0)-svgBoxH/2
		x2, y2 := switchX(c.level, c.sw)+spot(c.port, t.N()), rowY(c.level+1)+svgBoxH/2
		color, dash, widthPx := levelColor(c.level), "", 1.2
		switch {
		case c.down:
			color, dash = "#999999", ` stroke-dasharray="5,4"`
		case c.lossPPM > 0:
			color = "#c0392b"
		}
		if c.override && c.rate > s.LevelRate(c.level) {
			widthPx = 3
		}
		tip := fmt.Sprintf("%s:%s - %s:%s, %s", bcube.HostName(c.server), bcube.HostPort(c.level),
			bcube.SwitchName(c.level, c.sw), bcube.SwitchPort(c.port), units.FormatRate(c.rate))
		if l := c.label(s.LevelRate(c.level)); l != "" {
			tip += " (" + l + ")"
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%.1f"%s><title>%s</title></line>`+"\n",
			x1, y1, x2, y2, color, widthPx, dash, esc(tip))
		if l := c.label(s.LevelRate(c.level)); l != "" {
			// A third of the way up from the server, where cables of
			// neighbouring servers are still apart.
			lx, ly := x1+(x2-x1)/3, y1+(y2-y1)/3
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="9" fill="%s" text-anchor="middle">%s</text>`+"\n", lx+3, ly, color, esc(l))
		}
	}
	box := func(x, y int, name, fill, tip string) {
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%d" y="%d" width="%d" height="%d" rx="5" fill="%s" stroke="#34495e"/>`+
			`<text x="%d" y="%d" font-size="11" text-anchor="middle">%s</text></g>`+"\n",
			esc(tip), x-svgBoxW/2, y-svgBoxH/2, svgBoxW, svgBoxH, fill, x, y+4, esc(name))
	}
	for i := 0; i < servers; i++ {
		box(serverX(i), rowY(0), bcube.HostName(i), serverFill, bcube.HostName(i)+" "+bcube.ServerIP(i).String())
	}
	for l := 0; l < t.Levels(); l++ {
		for sw := 0; sw < t.SwitchesPerLevel(); sw++ {
			name := bcube.SwitchName(l, sw)
			box(switchX(l, sw), rowY(l+1), name, levelFill(l), fmt.Sprintf("%s, level %d", name, l))
		}
	}
	// Legend: one swatch per level, and what overrides look like.
	ly := height - svgMargin + 6
	x := svgMargin
	for l := 0; l < t.Levels(); l++ {
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d" font-size="10">level %d</text>`+"\n",
			x, ly, x+20, ly, levelColor(l), x+24, ly+4, l)
		x += 80
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#c0392b" stroke-width="2"/><text x="%d" y="%d" font-size="10">injected loss</text>`+"\n",
		x, ly, x+20, ly, x+24, ly+4)
	x += 100
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999999" stroke-width="2" stroke-dasharray="5,4"/><text x="%d" y="%d" font-size="10">down</text>`+"\n",
		x, ly, x+20, ly, x+24, ly+4)
	b.WriteString("</svg>\n")
	_, err = io.WriteString(w, b.String())
	return err
}
