package experiment

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/fabric/fcplus"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/wire/transport"
)

// Every contender of every built-in experiment is named as the papers
// print it, from its parts; a file's label overrides.
func TestDisplayNamesUnit(t *testing.T) {
	const leafspine = "name: x\nkind: workload\nfabric: {kind: leafspine, leaves: 2, spines: 1, hosts: 2}\nworkload: {cdfs: [websearch], loads: [0.5], duration: 2s}\n"
	for _, c := range []struct {
		exp, file  string // a built-in, or a file
		contenders map[string]string
	}{
		{exp: "fct", contenders: map[string]string{"portfc": "PortFC", "pfcstar": "PFC*", "pfc": "DCQCN", "bfc": "BFC", "irn": "IRN", "gbn": "Go-Back-N"}},
		// Generated flows have no congestion control: PFC is PFC.
		{exp: "hol", contenders: map[string]string{"pfc": "PFC", "none": "No flow control", "bfc:2": "BFC, 1 queue", "bfc:hash": "BFC, hashed queues"}},
		{exp: "loop", contenders: map[string]string{"pfcstar": "PFC*", "portfc:drr": "PortFC, DRR relay"}},
		{exp: "ici", contenders: map[string]string{"ici": "ICI", "ci": "CI", "pfc": "DCQCN", "pfc/nocc": "PFC, no CC"}},
		// The file's labels, and the defaults where it gives none.
		{exp: "bfc-clos", contenders: map[string]string{"bfc/nocc": "BFC", "bfc:2/nocc": "BFC, 1 queue", "ideal-fq/nocc": "Ideal-FQ",
			"pfc": "DCQCN", "pfc/hpcc": "HPCC", "sfq/hpcc": "HPCC+SFQ", "pfc/dctcp": "DCTCP"}},
		// One scheme on four routings: the routings name them.
		{exp: "fcplus", contenders: map[string]string{"pfc@dfksp1": "DF-KSP-1", "pfc@dfksp2": "DF-KSP-2", "pfc@fc": "FC", "pfc@ksp": "KSP"}},
		{file: leafspine + "lab: {rate: 20M, ecn: true}\nschemes: [pfc@ksp, bfc@ksp, pfc/gbn, \"bfc:hash:8\", \"sfq:8/hpcc\"]\n",
			contenders: map[string]string{"pfc@ksp": "DCQCN on KSP", "bfc@ksp": "BFC on KSP", "pfc/gbn": "Go-Back-N over PFC",
				"bfc:hash:8": "BFC, 7 hashed queues", "sfq:8/hpcc": "HPCC+SFQ, 7 queues"}},
		// A lab that marks nothing gives DCQCN nothing to act on.
		{file: leafspine + "lab: {rate: 20M}\nschemes: [pfc, bfc/nocc]\n", contenders: map[string]string{"pfc": "PFC", "bfc/nocc": "BFC, no CC"}},
	} {
		var cfg *Config
		var err error
		if c.exp != "" {
			cfg, _, err = Load(c.exp, "", false)
		} else {
			cfg, err = Parse([]byte(c.file), false)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range slices.Sorted(maps.Keys(c.contenders)) {
			if got := cfg.Label(s); got != c.contenders[s] {
				t.Errorf("%s%s: %s is %q, want %q", c.exp, cfg.Name, s, got, c.contenders[s])
			}
		}
	}
	// A label overrides; the default stays what the parts say.
	c, _, err := Load("bfc-clos", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.DefaultLabel("bfc/nocc"); got != "BFC, no CC" {
		t.Errorf("bfc/nocc's default %q, want BFC, no CC", got)
	}
}

// The table of names covers every registered scheme, congestion
// control, routing and built-in CDF; the built-in experiments give a
// label only where it differs from the default, and name their
// contenders apart.
func TestDisplayNameTableUnit(t *testing.T) {
	for _, n := range append(scheme.Names(), scheme.NameIRN, scheme.NameGBN) {
		if fcTitles[n] == "" {
			t.Errorf("scheme %s has no name in fcTitles", n)
		}
	}
	for _, n := range transport.CCNames {
		if ccTitles[n] == "" && n != transport.CCNone.String() {
			t.Errorf("congestion control %s has no name in ccTitles", n)
		}
	}
	routings := []string{lab.RoutingECMP, lab.RoutingKSP}
	for _, r := range fcplus.Routings {
		routings = append(routings, string(r))
	}
	for _, r := range routings {
		if routingTitles[r] == "" {
			t.Errorf("routing %s has no name in routingTitles", r)
		}
	}
	for _, n := range workload.BuiltinCDFs() {
		if cdfTitles[n] == "" {
			t.Errorf("CDF %s has no name in cdfTitles", n)
		}
	}
	for _, name := range List() {
		c, _, err := Load(name, "", false)
		if err != nil {
			t.Fatal(err)
		}
		for s, l := range c.Labels {
			if l == c.DefaultLabel(s) {
				t.Errorf("%s: label %s: %q is its default", name, s, l)
			}
		}
		seen := map[string]string{}
		for _, s := range c.Contenders {
			l := c.Label(s)
			if o, ok := seen[l]; ok {
				t.Errorf("%s: %s and %s are both %q", name, o, s, l)
			}
			seen[l] = s
		}
	}
}

// A plot's title names the fabric in words and D, never lab up's flags.
func TestPlotTitleUnit(t *testing.T) {
	c, _, err := Load("bfc-clos", "", false)
	if err != nil {
		t.Fatal(err)
	}
	pl := plots{c: c, results: []Result{{Point: Point{CDF: "websearch"}, Dilation: 5000}}, scenario: "no-incast", cdf: "websearch"}
	want := "no incast: Throughput of the long flow(s) (leaf-spine, 2 leaves x 8 hosts, 1 spine; D = 5,000)"
	if got := pl.title("Throughput of the long flow(s)"); got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	for _, name := range List() {
		c, _, err := Load(name, "", false)
		if err != nil {
			t.Fatal(err)
		}
		if w := c.FabricWords(); strings.Contains(w, "--") {
			t.Errorf("%s: fabric %q has flags", name, w)
		}
	}
	fc, _, err := Load("fcplus", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if w := fc.FabricWords(); w != "FC+, 8 ToRs x 2 hosts, s = 4, v = 3" {
		t.Errorf("fcplus fabric %q", w)
	}
	ro, _, err := Load("railonly-8", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if w := ro.FabricWords(); w != "Rail-only NDC(8,1), HBD 1.6x the rails" {
		t.Errorf("railonly-8 fabric %q", w)
	}
	for d, want := range map[float64]string{5000: "5,000", 20_000: "20,000", 1_000_000: "1,000,000", 333.33: "333", 1: "1"} {
		if got := dilationText(d); got != want {
			t.Errorf("D %g: %q, want %q", d, got, want)
		}
	}
	// Without D (a result from before the scale model), the links' rate.
	if err := c.SetRate("20M"); err != nil {
		t.Fatal(err)
	}
	pl = plots{c: c}
	if got := pl.title("X"); got != "X (leaf-spine, 2 leaves x 8 hosts, 1 spine, 20M links)" {
		t.Errorf("title without D %q", got)
	}
}
