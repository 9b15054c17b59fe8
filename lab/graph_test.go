package lab

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
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
	lines, texts := 0, map[string]bool{}
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
			if e.Name.Local == "line" {
				lines++
			}
		case xml.CharData:
			texts[strings.TrimSpace(string(e))] = true
		}
	}
	if want := 32 + 4; lines != want { // 32 cables, 4 legend swatches
		t.Errorf("SVG has %d lines, want %d", lines, want)
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
