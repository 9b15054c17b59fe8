package lab

// Pictures of a fabric given as a graph: servers in a row at the
// bottom, and each switch in the row of its tier, its hop distance from
// the nearest server (a leaf-spine's leaves, then spines; a fat-tree's
// edges, aggregation, cores; an expander's ToRs all in one row). A cable
// between two tiers is a straight line coloured by its upper tier; a
// cable within a tier (ToR to ToR) an arc above the row. A cable whose
// capacity makes it faster than the lab's rate is labelled and drawn
// thicker.

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/fabric/topo"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/scheme"
)

// tiers is each node's hop distance from the nearest server, and the
// nodes of every tier in index order.
func tiers(g *topo.Graph) (tier []int, rows [][]int) {
	tier = make([]int, len(g.Nodes))
	for i := range tier {
		tier[i] = -1
	}
	q := append([]int(nil), g.Servers()...)
	for _, s := range q {
		tier[s] = 0
	}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for p := range g.Nodes[u].Ports {
			v := g.Head(g.Out(u, p)).Node
			if tier[v] < 0 {
				tier[v] = tier[u] + 1
				q = append(q, v)
			}
		}
	}
	for u, t := range tier {
		for len(rows) <= t {
			rows = append(rows, nil)
		}
		rows[t] = append(rows[t], u)
	}
	return tier, rows
}

// graphTitle is what a graph fabric is, for a picture's caption.
func graphTitle(s Spec, g *topo.Graph) string {
	fc := s.FC
	if fc == "" {
		fc = scheme.Default
	}
	servers := len(g.Servers())
	return fmt.Sprintf("lab %s: %s, %d servers, %d switches, links %s x capacity, fc %s", s.Name, g.Name, servers, len(g.Nodes)-servers, FormatRate(s.RateBps), fc)
}

// cableLabel says how fast a cable of capacity c runs, when that is not
// the lab's rate.
func (s Spec) cableLabel(c float64) string {
	if c == 1 {
		return ""
	}
	if s.RateBps == 0 {
		return fmt.Sprintf("x%g", c)
	}
	return units.FormatRate(s.cableRate(c))
}

// graphOverrides are the cables of g a lab file overrides, by link
// index: drawn as BCube's are (rate labelled, loss red, down dashed).
func graphOverrides(s Spec, g *topo.Graph) map[int]LinkSpec {
	out := map[int]LinkSpec{}
	for _, l := range s.Links {
		a, _, err := graphCable(g, l)
		if err != nil {
			continue
		}
		u, _ := g.Lookup(a.Node)
		for p := range g.Nodes[u].Ports {
			if g.PortName(u, p) == a.Ifname {
				out[g.Out(u, p).Link()] = l
			}
		}
	}
	return out
}

// graphCableStyle is how cable i of g is drawn: its label, colour, and
// whether it is dashed (down) or thick (faster than the lab's rate).
func graphCableStyle(s Spec, g *topo.Graph, over map[int]LinkSpec, i int, color string) (label, col string, dashed, thick bool) {
	l := g.Links[i]
	label, col, thick = s.cableLabel(l.Capacity), color, l.Capacity > 1
	o, ok := over[i]
	if !ok {
		return label, col, false, thick
	}
	var parts []string
	rate := s.cableRate(l.Capacity)
	if o.RateBps != 0 {
		rate = o.RateBps
	}
	if rate != s.RateBps {
		parts = append(parts, units.FormatRate(rate))
	}
	loss := s.LossPPM
	if o.LossPPM != nil {
		loss = *o.LossPPM
	}
	if loss > 0 {
		parts = append(parts, "loss "+units.FormatLoss(loss))
		col = "#c0392b"
	}
	if o.Down {
		parts = append(parts, "down")
		col = "#999999"
	}
	return strings.Join(parts, ", "), col, o.Down, rate > s.RateBps
}

// writeGraphDOT is WriteDOT for a graph fabric.
func writeGraphDOT(w io.Writer, s Spec, g *topo.Graph) error {
	tier, rows := tiers(g)
	var b strings.Builder
	fmt.Fprintf(&b, "graph %q {\n", s.Name)
	fmt.Fprintf(&b, "  label=%q; labelloc=t; rankdir=BT; splines=true; nodesep=0.15;\n", graphTitle(s, g))
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=8];\n")
	for t, row := range rows {
		b.WriteString("  { rank=same;")
		for _, u := range row {
			if t == 0 {
				fmt.Fprintf(&b, " %q [fillcolor=%q, tooltip=%q];", g.Nodes[u].Name, serverFill, bcube.ServerIP(u).String())
			} else {
				fmt.Fprintf(&b, " %q [fillcolor=%q];", g.Nodes[u].Name, levelFill(t-1))
			}
		}
		b.WriteString(" }\n")
	}
	over := graphOverrides(s, g)
	for i, l := range g.Links {
		up := max(tier[l.A.Node], tier[l.B.Node])
		lb, col, dashed, thick := graphCableStyle(s, g, over, i, levelColor(up-1))
		attrs := []string{fmt.Sprintf("taillabel=%q", g.PortName(l.A.Node, l.A.Port)), fmt.Sprintf("headlabel=%q", g.PortName(l.B.Node, l.B.Port)),
			fmt.Sprintf("color=%q", col)}
		if lb != "" {
			attrs = append(attrs, fmt.Sprintf("label=%q", lb))
		}
		if thick {
			attrs = append(attrs, "penwidth=2.5")
		}
		if dashed {
			attrs = append(attrs, "style=dashed")
		}
		if tier[l.A.Node] == tier[l.B.Node] {
			attrs = append(attrs, "constraint=false")
		}
		fmt.Fprintf(&b, "  %q -- %q [%s];\n", g.Nodes[l.A.Node].Name, g.Nodes[l.B.Node].Name, strings.Join(attrs, ", "))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeGraphSVG is WriteSVG for a graph fabric.
func writeGraphSVG(w io.Writer, s Spec, g *topo.Graph) error {
	tier, rows := tiers(g)
	widest := 0
	for _, r := range rows {
		widest = max(widest, len(r))
	}
	pitch := float64(svgBoxW + svgGapX)
	width := max(svgMinWidth, 2*svgMargin+int(float64(widest)*pitch))
	rowH := float64(svgChannel + svgBoxH)
	arcs := 0.0 // room above the top row for its arcs
	for _, l := range g.Links {
		if t := tier[l.A.Node]; t == tier[l.B.Node] && t == len(rows)-1 {
			arcs = 12 + arcRise*float64(width)
		}
	}
	height := svgMargin + svgTitleH + int(arcs) + int(float64(len(rows))*rowH) + svgMargin + 20
	x, y := make([]float64, len(g.Nodes)), make([]float64, len(g.Nodes))
	for t, row := range rows {
		span := float64(width-2*svgMargin) / float64(len(row))
		for i, u := range row {
			x[u] = float64(svgMargin) + span*(float64(i)+0.5)
			y[u] = float64(height-svgMargin-20) - svgBoxH/2 - float64(t)*rowH
		}
	}
	esc := func(v string) string {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(v))
		return b.String()
	}
	num := func(v float64) string { return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", v), "0"), ".") }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="14" font-weight="bold">%s</text>`+"\n", svgMargin, svgMargin+4, esc(graphTitle(s, g)))
	over := graphOverrides(s, g)
	for i, l := range g.Links {
		a, z := l.A.Node, l.B.Node
		up := max(tier[a], tier[z])
		lb, color, dashed, thick := graphCableStyle(s, g, over, i, levelColor(up-1))
		widthPx, dash := 1.2, ""
		if thick {
			widthPx = 3
		}
		if dashed {
			dash = ` stroke-dasharray="5,4"`
		}
		tip := fmt.Sprintf("%s:%s - %s:%s, %s", g.Nodes[a].Name, g.PortName(a, l.A.Port), g.Nodes[z].Name, g.PortName(z, l.B.Port), FormatRate(s.cableRate(l.Capacity)))
		var path string
		mx, my := (x[a]+x[z])/2, (y[a]+y[z])/2
		if tier[a] == tier[z] {
			// Within a row: an arc above it, higher the farther apart.
			my = y[a] - svgBoxH/2 - 12 - arcRise*abs(x[z]-x[a])
			path = fmt.Sprintf("M%s,%s Q%s,%s %s,%s", num(x[a]), num(y[a]-svgBoxH/2), num(mx), num(2*my-y[a]+svgBoxH/2), num(x[z]), num(y[z]-svgBoxH/2))
		} else {
			path = fmt.Sprintf("M%s,%s L%s,%s", num(x[a]), num(y[a]), num(x[z]), num(y[z]))
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="%.1f"%s><title>%s</title></path>`+"\n", path, color, widthPx, dash, esc(tip))
		if lb != "" {
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="9" fill="%s">%s</text>`+"\n", num(mx+3), num(my), color, esc(lb))
		}
	}
	for u, n := range g.Nodes {
		fill, tip := serverFill, n.Name
		if tier[u] == 0 {
			tip += " " + bcube.ServerIP(u).String()
		} else {
			fill = levelFill(tier[u] - 1)
		}
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%s" y="%s" width="%d" height="%d" rx="5" fill="%s" stroke="#34495e"/>`+
			`<text x="%s" y="%s" font-size="10" text-anchor="middle">%s</text></g>`+"\n",
			esc(tip), num(x[u]-svgBoxW/2), num(y[u]-svgBoxH/2), svgBoxW, svgBoxH, fill, num(x[u]), num(y[u]+4), esc(n.Name))
	}
	ly, lx := height-svgMargin+6, svgMargin
	for t := 1; t < len(rows); t++ {
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d" font-size="10">tier %d</text>`+"\n",
			lx, ly, lx+20, ly, levelColor(t-1), lx+24, ly+4, t)
		lx += 80
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// arcRise is how far an arc within a row rises per unit of its span.
const arcRise = 0.12

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
