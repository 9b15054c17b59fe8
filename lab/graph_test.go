package lab

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
)

func TestGraph(t *testing.T) {
	loss := 10_000
	s := Defaults()
	s.Name, s.N, s.K = "g", 4, 1
	s.Links = []LinkSpec{{Endpoints: []string{"h1:eth0"}, LossPPM: &loss}, {Endpoints: []string{"s1.3:p2"}, Down: true}, {Endpoints: []string{"h0:eth0"}, RateBps: 1e9}}
	var svg, dot bytes.Buffer
	if err := WriteSVG(&svg, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteDOT(&dot, s); err != nil {
		t.Fatal(err)
	}
	// The SVG is well-formed XML with a box per node and a line per cable.
	dec := xml.NewDecoder(bytes.NewReader(svg.Bytes()))
	lines, cables, texts := 0, 0, map[string]bool{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "line":
				lines++
			case "polyline":
				cables++
			}
		case xml.CharData:
			texts[strings.TrimSpace(string(e))] = true
		}
	}
	if cables != 32 || lines != 4 {
		t.Errorf("SVG has %d polylines and %d lines, want 32 cables and 4 legend swatches", cables, lines)
	}
	for _, n := range []string{"h0", "h15", "s0.0", "s1.3", "loss 1%", "down", "1 Gbit/s"} {
		if !texts[n] {
			t.Errorf("SVG lacks %q", n)
		}
	}
	for _, want := range []string{`graph "g" {`, `"h1" -- "s0.0" [taillabel="eth0", headlabel="p1"`, `label="loss 1%"`,
		`"h15" -- "s1.3" [taillabel="eth1", headlabel="p3"`, `"h11" -- "s1.3" [taillabel="eth1", headlabel="p2", color="#1e8449", label="down", style=dashed`,
		`label="1 Gbit/s", penwidth=2.5`} {
		if !strings.Contains(dot.String(), want) {
			t.Errorf("DOT lacks %s:\n%s", want, dot.String())
		}
	}
	if n := strings.Count(dot.String(), " -- "); n != 32+4 {
		t.Errorf("DOT has %d edges, want 32 cables + 4 rank edges", n)
	}
}

// The SVG's cables run between boxes: no stretch of a cable crosses a
// box but its server's and its switch's, each cable starts on its
// server's box and ends on its switch's, and no two cables share a
// stretch (they would read as one).
func TestGraphRoutes(t *testing.T) {
	for _, nk := range [][2]int{{2, 1}, {4, 1}, {8, 1}, {2, 2}, {3, 2}} {
		t.Run(fmt.Sprintf("BCube(%d,%d)", nk[0], nk[1]), func(t *testing.T) {
			s := Defaults()
			s.Name, s.N, s.K = "g", nk[0], nk[1]
			topo, err := bcube.New(s.N, s.K)
			if err != nil {
				t.Fatal(err)
			}
			lay := newSVGLayout(s, topo)
			if want := topo.Links(); len(lay.routes) != want {
				t.Fatalf("%d cables drawn, want %d", len(lay.routes), want)
			}
			boxes := map[string]svgBox{}
			for _, b := range lay.boxes {
				boxes[b.name] = b
				if x0, y0, x1, y1 := b.rect(); x0 < 0 || y0 < 0 || x1 > float64(lay.width) || y1 > float64(lay.height) {
					t.Errorf("box %s out of the picture", b.name)
				}
			}
			type seg struct {
				a, b  [2]float64
				cable string
			}
			var segs []seg
			for _, r := range lay.routes {
				name := fmt.Sprintf("%s:%s-%s:%s", r.from, bcube.HostPort(r.c.level), r.to, bcube.SwitchPort(r.c.port))
				from, to := boxes[r.from], boxes[r.to]
				if first := r.pts[0]; !onEdge(from, first) {
					t.Errorf("%s starts at %v, not on %s's box", name, first, r.from)
				}
				if last := r.pts[len(r.pts)-1]; !onEdge(to, last) {
					t.Errorf("%s ends at %v, not on %s's box", name, last, r.to)
				}
				for i := 1; i < len(r.pts); i++ {
					a, b := r.pts[i-1], r.pts[i]
					if r.c.level > 0 && a[0] != b[0] && a[1] != b[1] {
						t.Errorf("%s: stretch %v-%v is neither across nor up", name, a, b)
					}
					for _, bx := range lay.boxes {
						if bx.name != r.from && bx.name != r.to && crossesBox(a, b, bx) {
							t.Errorf("%s: stretch %v-%v crosses %s", name, a, b, bx.name)
						}
					}
					segs = append(segs, seg{a, b, name})
				}
			}
			for i := range segs {
				for j := i + 1; j < len(segs); j++ {
					if p, q := segs[i], segs[j]; p.cable != q.cable && overlap(p.a, p.b, q.a, q.b) {
						t.Errorf("%s and %s share the stretch %v-%v", p.cable, q.cable, p.a, p.b)
					}
				}
			}
		})
	}
}

// onEdge says whether p is on b's outline.
func onEdge(b svgBox, p [2]float64) bool {
	x0, y0, x1, y1 := b.rect()
	const e = 1e-6
	in := p[0] >= x0-e && p[0] <= x1+e && p[1] >= y0-e && p[1] <= y1+e
	return in && (math.Abs(p[0]-x0) < e || math.Abs(p[0]-x1) < e || math.Abs(p[1]-y0) < e || math.Abs(p[1]-y1) < e)
}

// crossesBox says whether the segment a-b enters b's rectangle (its
// inside: touching the outline does not count), by Liang and Barsky's
// clipping.
func crossesBox(a, b [2]float64, bx svgBox) bool {
	x0, y0, x1, y1 := bx.rect()
	const e = 0.01
	x0, y0, x1, y1 = x0+e, y0+e, x1-e, y1-e
	dx, dy := b[0]-a[0], b[1]-a[1]
	lo, hi := 0.0, 1.0
	for _, c := range [][2]float64{{-dx, a[0] - x0}, {dx, x1 - a[0]}, {-dy, a[1] - y0}, {dy, y1 - a[1]}} {
		p, q := c[0], c[1]
		if p == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		r := q / p
		if p < 0 {
			lo = max(lo, r)
		} else {
			hi = min(hi, r)
		}
	}
	return lo < hi
}

// overlap says whether two stretches lie on one line and share more
// than a point.
func overlap(a, b, c, d [2]float64) bool {
	const e = 1e-6
	switch {
	case a[1] == b[1] && c[1] == d[1] && math.Abs(a[1]-c[1]) < e: // across, at one height
		return min(max(a[0], b[0]), max(c[0], d[0]))-max(min(a[0], b[0]), min(c[0], d[0])) > e
	case a[0] == b[0] && c[0] == d[0] && math.Abs(a[0]-c[0]) < e: // up, at one x
		return min(max(a[1], b[1]), max(c[1], d[1]))-max(min(a[1], b[1]), min(c[1], d[1])) > e
	}
	return false
}

// A graph fabric's picture: a box per node, a path per cable, the
// leaf-spine's faster uplinks labelled, and the DOT a line per cable.
func TestGraphFabricPicture(t *testing.T) {
	s := Defaults()
	s.Name, s.RateBps = "g", 100e6
	for _, c := range []struct {
		f             FabricSpec
		nodes, cables int
		label         string
	}{
		{FabricSpec{Kind: TopologyLeafSpine, Leaves: 4, Spines: 2, Hosts: 4}, 22, 24, "200 Mbit/s"},
		{FabricSpec{Kind: TopologyFatTree, K: 4}, 36, 48, ""},
		{FabricSpec{Kind: TopologyExpander, ToRs: 8, Degree: 3, Hosts: 2, Seed: 1}, 24, 28, ""},
	} {
		s.Fabric = &c.f
		var svg, dot bytes.Buffer
		if err := WriteSVG(&svg, s); err != nil {
			t.Fatal(err)
		}
		if err := WriteDOT(&dot, s); err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(bytes.NewReader(svg.Bytes()))
		paths, rects, texts := 0, 0, map[string]bool{}
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: SVG: %v", c.f, err)
			}
			switch e := tok.(type) {
			case xml.StartElement:
				switch e.Name.Local {
				case "path":
					paths++
				case "rect":
					rects++
				}
			case xml.CharData:
				texts[strings.TrimSpace(string(e))] = true
			}
		}
		if paths != c.cables || rects != c.nodes+1 { // the background is a rect too
			t.Errorf("%s: %d paths and %d boxes, want %d cables and %d nodes", c.f, paths, rects-1, c.cables, c.nodes)
		}
		if c.label != "" && !texts[c.label] {
			t.Errorf("%s: no cable labelled %s", c.f, c.label)
		}
		if got := strings.Count(dot.String(), " -- "); got != c.cables {
			t.Errorf("%s: DOT has %d edges, want %d", c.f, got, c.cables)
		}
	}
}

// A graph fabric's overridden cables are drawn as BCube's are.
func TestGraphFabricPictureOverrides(t *testing.T) {
	loss := 10_000
	s := Defaults()
	s.Name, s.RateBps = "g", 100e6
	s.Fabric = &FabricSpec{Kind: TopologyLeafSpine, Leaves: 4, Spines: 2, Hosts: 4}
	s.Links = []LinkSpec{{Endpoints: []string{"h1:eth0"}, LossPPM: &loss}, {Endpoints: []string{"spine1:p3"}, Down: true}}
	var svg, dot bytes.Buffer
	if err := WriteSVG(&svg, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteDOT(&dot, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">loss 1%<", `stroke="#999999" stroke-width="3.0" stroke-dasharray="5,4"`} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("SVG lacks %s", want)
		}
	}
	for _, want := range []string{`"h1" -- "leaf0" [taillabel="eth0", headlabel="p1", color="#c0392b", label="loss 1%"]`, `label="200 Mbit/s, down", penwidth=2.5, style=dashed`} {
		if !strings.Contains(dot.String(), want) {
			t.Errorf("DOT lacks %s", want)
		}
	}
}
