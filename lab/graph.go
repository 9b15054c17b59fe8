package lab

// Pictures of a fabric: Graphviz DOT, and SVG drawn here (no Graphviz
// needed). Servers sit in a row at the bottom, level-l switches in row
// l+1 above them, the switches of every level in the same columns, each
// level-0 switch over the servers it joins. A level-0 cable is a line
// from a server's port to its switch's; a higher level's cable is routed
// around the boxes (svgLayout), so that no switch looks cabled to another.
// Cables a lab file overrides are drawn apart: a rate of their own
// (labelled, thicker when faster), injected loss (red, labelled), down
// (dashed grey).

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/scheme"
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
		fc = scheme.Default
	}
	return fmt.Sprintf("lab %s: %v, %d servers, %d switches, links %s, fc %s", s.Name, t, t.Servers(), t.Switches(), s.RatesText(), fc)
}

// WriteDOT writes s's fabric as a Graphviz graph (dot -Tsvg draws it),
// its cables curves that Graphviz routes around the boxes (straight
// lines crossed the level-0 switches).
func WriteDOT(w io.Writer, s Spec) error {
	if s.Fabric != nil {
		g, err := s.Fabric.Graph()
		if err != nil {
			return err
		}
		return writeGraphDOT(w, s, g)
	}
	t, err := bcube.New(s.N, s.K)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "graph %q {\n", s.Name)
	fmt.Fprintf(&b, "  label=%q; labelloc=t; rankdir=BT; splines=true; nodesep=0.15;\n", title(s, t))
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
	svgGapX     = 12 // between servers
	svgChannel  = 88 // least height between two rows of boxes
	svgLaneGap  = 5  // least distance between two cables side by side
	svgClear    = 8  // between a box and the nearest cable that passes it
	svgMargin   = 30
	svgMinWidth = 820 // room for the title and legend
	svgTitleH   = 30
)

// svgLayout is where the SVG puts every box and every cable.
//
// A cable of level l >= 1 runs between boxes only, orthogonally:
//
//  1. up from its server's port into channel 0 (between the servers'
//     row and level 0's), on a lane of its own there;
//  2. along it to a corridor, the gap between two columns of switches
//     (or beside the first or last), on a lane of its own there;
//  3. up the corridor, past the rows of levels 0..l-1, into channel l
//     (under level l's row), on a lane of its own there;
//  4. along it under its switch's port, and up into it.
//
// Of the corridors between the server and the switch, it takes the one
// nearest the middle of the two, so the channels share the horizontal
// runs. Lanes are dealt as intervals are coloured: two runs in one
// channel or corridor share a lane only when they do not overlap, and a
// channel is as tall as its lanes need.
type svgLayout struct {
	width, height int
	boxes         []svgBox
	routes        []svgRoute
}

// svgBox is a node's box: its centre and what it shows.
type svgBox struct {
	name      string
	x, y      float64
	fill, tip string
}

// rect is b's rectangle: min and max corners.
func (b svgBox) rect() (x0, y0, x1, y1 float64) {
	return b.x - svgBoxW/2, b.y - svgBoxH/2, b.x + svgBoxW/2, b.y + svgBoxH/2
}

// svgRoute is a cable's path, a polyline from its server's box to its
// switch's.
type svgRoute struct {
	c        cable
	from, to string // the boxes' names
	pts      [][2]float64
}

// lanes deals intervals to lanes as a greedy colouring: an interval
// takes the lowest lane whose last interval ends before it starts (by
// gap). It returns each interval's lane and the number of lanes.
func lanes(iv [][2]float64, gap float64) ([]int, int) {
	order := make([]int, len(iv))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case iv[a][0] < iv[b][0]:
			return -1
		case iv[a][0] > iv[b][0]:
			return 1
		}
		return 0
	})
	lane := make([]int, len(iv))
	var ends []float64
	for _, i := range order {
		l := slices.IndexFunc(ends, func(e float64) bool { return e+gap <= iv[i][0] })
		if l < 0 {
			l = len(ends)
			ends = append(ends, 0)
		}
		ends[l] = iv[i][1]
		lane[i] = l
	}
	return lane, len(ends)
}

// newSVGLayout lays s's fabric out (see svgLayout).
func newSVGLayout(s Spec, t bcube.Topology) svgLayout {
	servers, cols, levels := t.Servers(), t.SwitchesPerLevel(), t.Levels()
	pitch := svgBoxW + svgGapX
	rowW := float64(servers*pitch - svgGapX)
	width := max(svgMargin*2+servers*pitch-svgGapX+2*svgGapX, svgMinWidth)
	left := (float64(width) - rowW) / 2 // the servers' row, centred
	serverX := func(i int) float64 { return left + float64(i*pitch) + svgBoxW/2 }
	// A level's switches spread evenly over the servers' row: level 0's
	// then sit over the servers they join, and every level's in the same
	// columns, with corridors between them.
	colX := func(w int) float64 { return left + float64(2*w+1)*rowW/float64(2*cols) }
	// A cable leaves its server by its port's spot on the box's top, and
	// reaches its switch at its port's spot on the box's bottom.
	spot := func(i, of int) float64 {
		return float64((2*i-(of-1))*(svgBoxW-8)) / float64(max(2*(of-1), 1)) / 2
	}
	// Corridor j runs left of column j (j = cols: right of the last).
	corridor := func(j int) (lo, hi float64) {
		lo, hi = left-float64(svgGapX), left+rowW+float64(svgGapX)
		if j > 0 {
			lo = colX(j-1) + svgBoxW/2 + svgClear
		}
		if j < cols {
			hi = colX(j) - svgBoxW/2 - svgClear
		}
		return lo, hi
	}
	mid := func(j int) float64 { lo, hi := corridor(j); return (lo + hi) / 2 }

	all := cables(s, t)
	type route struct {
		sx, swx  float64 // ports' x
		corr     int     // corridor, for level >= 1
		corrLane int
		x        float64 // the corridor lane's x
		lane0    int     // lane in channel 0
		laneL    int     // lane in channel level
	}
	rs := make([]route, len(all))
	byCorr := make([][]int, cols+1)
	for i, c := range all {
		r := &rs[i]
		r.sx = serverX(c.server) + spot(c.level, levels)
		r.swx = colX(c.sw) + spot(c.port, t.N())
		if c.level == 0 {
			continue
		}
		best, cost := 0, math.Inf(1)
		centre := (r.sx + r.swx) / 2
		for j := 0; j <= cols; j++ {
			x := mid(j)
			if v := math.Abs(r.sx-x) + math.Abs(x-r.swx) + 1e-3*math.Abs(x-centre); v < cost {
				best, cost = j, v
			}
		}
		r.corr = best
		byCorr[best] = append(byCorr[best], i)
	}
	// Corridor lanes: every cable in a corridor runs up from channel 0,
	// so each has a lane of its own; ordered by where they go, so that
	// runs to the left leave from the left lanes.
	for j, ids := range byCorr {
		slices.SortStableFunc(ids, func(a, b int) int {
			return cmpFloat(rs[a].swx, rs[b].swx)
		})
		lo, hi := corridor(j)
		for k, i := range ids {
			rs[i].corrLane = k
			rs[i].x = lo + (hi-lo)*float64(k+1)/float64(len(ids)+1)
		}
	}
	// Channel lanes: channel 0 takes every routed cable's run from its
	// server to its corridor, channel l the runs of level l's cables
	// from their corridor to their switch.
	ivs := make([][][2]float64, levels)
	ids := make([][]int, levels)
	for i, c := range all {
		if c.level == 0 {
			continue
		}
		r := &rs[i]
		ivs[0] = append(ivs[0], [2]float64{min(r.sx, r.x), max(r.sx, r.x)})
		ids[0] = append(ids[0], i)
		ivs[c.level] = append(ivs[c.level], [2]float64{min(r.x, r.swx), max(r.x, r.swx)})
		ids[c.level] = append(ids[c.level], i)
	}
	nLanes := make([]int, levels)
	for ch := range levels {
		lane, n := lanes(ivs[ch], svgLaneGap)
		nLanes[ch] = n
		for k, i := range ids[ch] {
			if ch == 0 {
				rs[i].lane0 = lane[k]
			} else {
				rs[i].laneL = lane[k]
			}
		}
	}
	// Rows from the top: level k's switches, ..., level 0's, the
	// servers; channel ch between row ch (below) and row ch+1.
	chanH := make([]float64, levels)
	for ch := range levels {
		chanH[ch] = max(svgChannel, float64((nLanes[ch]+1)*svgLaneGap+2*svgClear))
	}
	rowY := make([]float64, levels+1) // row 0: servers; row l+1: level l
	rowY[levels] = svgMargin + svgTitleH + svgBoxH/2
	for r := levels - 1; r >= 0; r-- {
		rowY[r] = rowY[r+1] + svgBoxH + chanH[r]
	}
	laneY := func(ch, lane int) float64 {
		top := rowY[ch+1] + svgBoxH/2 + svgClear
		bottom := rowY[ch] - svgBoxH/2 - svgClear
		return bottom - (bottom-top)*float64(lane+1)/float64(nLanes[ch]+1)
	}
	lay := svgLayout{width: width, height: int(math.Ceil(rowY[0])) + svgBoxH/2 + svgMargin + 40} // the legend below
	for i := range servers {
		lay.boxes = append(lay.boxes, svgBox{name: bcube.HostName(i), x: serverX(i), y: rowY[0], fill: serverFill,
			tip: bcube.HostName(i) + " " + bcube.ServerIP(i).String()})
	}
	for l := range levels {
		for w := range cols {
			name := bcube.SwitchName(l, w)
			lay.boxes = append(lay.boxes, svgBox{name: name, x: colX(w), y: rowY[l+1], fill: levelFill(l),
				tip: fmt.Sprintf("%s, level %d", name, l)})
		}
	}
	for i, c := range all {
		r := &rs[i]
		y0, y1 := rowY[0]-svgBoxH/2, rowY[c.level+1]+svgBoxH/2
		pts := [][2]float64{{r.sx, y0}}
		if c.level > 0 {
			a, b := laneY(0, r.lane0), laneY(c.level, r.laneL)
			pts = append(pts, [2]float64{r.sx, a}, [2]float64{r.x, a}, [2]float64{r.x, b}, [2]float64{r.swx, b})
		}
		pts = append(pts, [2]float64{r.swx, y1})
		lay.routes = append(lay.routes, svgRoute{c: c, from: bcube.HostName(c.server), to: bcube.SwitchName(c.level, c.sw), pts: pts})
	}
	return lay
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// WriteSVG draws s's fabric as SVG.
func WriteSVG(w io.Writer, s Spec) error {
	if s.Fabric != nil {
		g, err := s.Fabric.Graph()
		if err != nil {
			return err
		}
		return writeGraphSVG(w, s, g)
	}
	t, err := bcube.New(s.N, s.K)
	if err != nil {
		return err
	}
	lay := newSVGLayout(s, t)
	esc := func(v string) string {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(v))
		return b.String()
	}
	num := func(v float64) string { return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", v), "0"), ".") }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif">`+"\n",
		lay.width, lay.height, lay.width, lay.height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="14" font-weight="bold">%s</text>`+"\n", svgMargin, svgMargin+4, esc(title(s, t)))
	// Cables first, under the boxes.
	for _, r := range lay.routes {
		c := r.c
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
		tip := fmt.Sprintf("%s:%s - %s:%s, %s", r.from, bcube.HostPort(c.level), r.to, bcube.SwitchPort(c.port), units.FormatRate(c.rate))
		if l := c.label(s.LevelRate(c.level)); l != "" {
			tip += " (" + l + ")"
		}
		var pts []string
		for _, p := range r.pts {
			pts = append(pts, num(p[0])+","+num(p[1]))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%.1f" stroke-linejoin="round"%s><title>%s</title></polyline>`+"\n",
			strings.Join(pts, " "), color, widthPx, dash, esc(tip))
		if l := c.label(s.LevelRate(c.level)); l != "" {
			// Beside the cable's longest stretch, a third of the way
			// along it: on a straight cable near the server, where
			// neighbouring cables are still apart.
			k := 1
			for i := 2; i < len(r.pts); i++ {
				if math.Hypot(r.pts[i][0]-r.pts[i-1][0], r.pts[i][1]-r.pts[i-1][1]) > math.Hypot(r.pts[k][0]-r.pts[k-1][0], r.pts[k][1]-r.pts[k-1][1]) {
					k = i
				}
			}
			a, z := r.pts[k-1], r.pts[k]
			lx, ly := a[0]+(z[0]-a[0])/3, a[1]+(z[1]-a[1])/3
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="9" fill="%s" text-anchor="start">%s</text>`+"\n", num(lx+3), num(ly), color, esc(l))
		}
	}
	for _, bx := range lay.boxes {
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%s" y="%s" width="%d" height="%d" rx="5" fill="%s" stroke="#34495e"/>`+
			`<text x="%s" y="%s" font-size="11" text-anchor="middle">%s</text></g>`+"\n",
			esc(bx.tip), num(bx.x-svgBoxW/2), num(bx.y-svgBoxH/2), svgBoxW, svgBoxH, bx.fill, num(bx.x), num(bx.y+4), esc(bx.name))
	}
	// Legend: one swatch per level, and what overrides look like.
	ly := lay.height - svgMargin + 6
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
