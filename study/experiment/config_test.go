package experiment

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/scheme"
)

// TestBuiltins parses every built-in experiment, full and quick, and
// checks the quick section replaces only the keys it names.
func TestBuiltins(t *testing.T) {
	names := List()
	for _, want := range []string{"fct", "hol", "incast-scale", "loop", "ps"} {
		if !slices.Contains(names, want) {
			t.Errorf("built-in experiments %v lack %s", names, want)
		}
	}
	for _, name := range names {
		for _, quick := range []bool{false, true} {
			c, _, err := Load(name, "", quick)
			if err != nil {
				t.Errorf("%s quick=%v: %v", name, quick, err)
				continue
			}
			if c.Name != name || c.IsQuick != quick || len(c.Points()) == 0 {
				t.Errorf("%s quick=%v: name %q, quick %v, %d points", name, quick, c.Name, c.IsQuick, len(c.Points()))
			}
			y, err := ConfigYAML(c)
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			// As run: parses again to the same points, without its quick
			// section.
			again, err := Parse(y, false)
			if err != nil || len(again.Points()) != len(c.Points()) || strings.Contains(string(y), "\nquick:") {
				t.Errorf("%s quick=%v: config.yaml does not parse back (%v):\n%s", name, quick, err, y)
			}
		}
	}
	// Every workload experiment runs three seeds, so that a verdict can
	// say whether they agree, and its quick version one.
	for _, name := range names {
		full, _, err1 := Load(name, "", false)
		quick, _, err2 := Load(name, "", true)
		if err1 != nil || err2 != nil || full.Kind != KindWorkload {
			continue
		}
		if len(full.Seeds) < 3 || len(quick.Seeds) != 1 {
			t.Errorf("%s: seeds %v, quick %v: want three at least, and one", name, full.Seeds, quick.Seeds)
		}
	}
	full, _, err := Load("fct", "", false)
	if err != nil {
		t.Fatal(err)
	}
	quick, _, err := Load("fct", "", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(quick.Contenders) >= len(full.Contenders) || len(quick.Workload.Loads) != 1 || len(quick.Workload.CDFs) != 1 ||
		len(quick.Seeds) != 1 || len(full.Seeds) != 3 {
		t.Errorf("fct quick: schemes %v, loads %v, cdfs %v, seeds %v (full: %v): want fewer, one seed against three",
			quick.Contenders, quick.Workload.Loads, quick.Workload.CDFs, quick.Seeds, full.Seeds)
	}
	// Keys the quick section does not name stay: the incast, the rate.
	if quick.Workload.Incast == nil || quick.Workload.Incast.Senders != 8 || quick.Lab.Rate() != full.Lab.Rate() || !quick.Lab.ECN() {
		t.Errorf("fct quick lost keys it does not set: incast %+v, lab %+v", quick.Workload.Incast, quick.Lab)
	}
}

const tiny = `
name: tiny
kind: workload
topology: {n: 2, k: 1}
lab: {rate: 10M}
schemes: [portfc, irn]
workload:
  cdfs: [websearch]
  loads: [0.5]
  duration: 2s
quick:
  schemes: [portfc]
`

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, file string
		quick      bool
		want       string
	}{
		{"unknown key with its line", tiny + "colour: blue\n", false, "line 13: field colour not found"},
		{"unknown nested key", strings.Replace(tiny, "duration: 2s", "duration: 2s\n  flows: 3", 1), false, "line 11: field flows not found"},
		{"unknown key in quick", tiny + "  loadz: [1]\n", false, "field loadz not found"},
		{"quick changes kind", tiny + "  kind: loop\n", true, "may not change name or kind"},
		{"no quick section", strings.Split(tiny, "quick:")[0], true, "no quick section"},
		{"bad scheme", strings.Replace(tiny, "[portfc, irn]", "[portfc, pfx]", 1), false, `schemes[1]: scheme "pfx"`},
		{"bad mode", strings.Replace(tiny, "[portfc, irn]", "[pfc/tcp]", 1), false, `scheme "pfc/tcp"`},
		{"queue count on pfc", strings.Replace(tiny, "[portfc, irn]", "[\"pfc:4\"]", 1), false, "have variants"},
		{"variant of portfc", strings.Replace(tiny, "[portfc, irn]", "[\"portfc:hash\"]", 1), false, "have variants"},
		{"one bfc queue", strings.Replace(tiny, "[portfc, irn]", "[\"bfc:hash:1\"]", 1), false, "at least 2"},
		{"old hashed bfc name", strings.Replace(tiny, "[portfc, irn]", "[bfchash]", 1), false, `flow control "bfchash"`},
		{"scheme twice", strings.Replace(tiny, "[portfc, irn]", "[irn, irn]", 1), false, `"irn" twice`},
		{"no rate", strings.Replace(tiny, "lab: {rate: 10M}", "lab: {ecn: true}", 1), false, "lab.rate"},
		{"bad clock", strings.Replace(tiny, "duration: 2s", "duration: 2s\n  clock: wall", 1), false, `workload.clock "wall": want lab or target`},
		{"bad rate", strings.Replace(tiny, "rate: 10M", "rate: fast", 1), false, `rate "fast"`},
		{"bad duration", strings.Replace(tiny, "duration: 2s", "duration: soon", 1), false, "soon"},
		{"old spelling of a lab key", strings.Replace(tiny, "lab: {rate: 10M}", "lab: {rate: 10M, level_order: ascending}", 1), false, "line 5: lab: key level_order is now spelt level-order"},
		{"unknown lab key", strings.Replace(tiny, "lab: {rate: 10M}", "lab: {rate: 10M, rat: 1}", 1), false, "unknown key rat (did you mean rate?)"},
		{"lab key the schemes set", strings.Replace(tiny, "lab: {rate: 10M}", "lab: {rate: 10M, fc: pfc}", 1), false, "lab.fc: the schemes set it"},
		{"bad lab value", strings.Replace(tiny, "lab: {rate: 10M}", "lab: {rate: 10M, workers: many}", 1), false, `lab.workers: "many": want a whole number`},
		{"bad lab name", strings.Replace(tiny, "lab: {rate: 10M}", "lab: {rate: 10M, name: Big-Lab}", 1), false, `lab name "Big-Lab"`},
		{"load without cdf", strings.Replace(tiny, "cdfs: [websearch]", "cdfs: []", 1), false, "without cdfs"},
		{"bad cdf", strings.Replace(tiny, "cdfs: [websearch]", "cdfs: [nosuch]", 1), false, "nosuch"},
		{"load above 1", strings.Replace(tiny, "loads: [0.5]", "loads: [1.5]", 1), false, "load 1.5"},
		{"wrong kind", strings.Replace(tiny, "kind: workload", "kind: movie", 1), false, `kind "movie"`},
		{"loop with irn", "name: l\nkind: loop\nlab: {rate: 10M}\nschemes: [pfc, irn]\n", false, "no transport mode"},
		{"loop on another fabric", "name: l\nkind: loop\ntopology: {n: 4, k: 1}\nlab: {rate: 10M}\nschemes: [pfc]\n", false, "BCube(2,1)"},
		{"workload section in loop", "name: l\nkind: loop\nlab: {rate: 10M}\nschemes: [pfc]\nworkload: {loads: [0]}\n", false, "only its own section"},
		{"wait with gap", strings.Replace(tiny, "duration: 2s", "duration: 2s\n  pattern: {kind: ps, size: 1KB, period: 1s, gap: 1ms, wait: true}", 1), false, "gap and wait"},
		{"too short a hol phase", "name: h\nkind: hol\nlab: {rate: 10M}\nschemes: [pfc]\nhol: {phase: 1s}\n", false, "at least 2s"},
		{"bad name", strings.Replace(tiny, "name: tiny", "name: Tiny Run", 1), false, `name "Tiny Run"`},
		{"cc of a lossy transport", strings.Replace(tiny, "[portfc, irn]", "[irn/hpcc]", 1), false, "nocc and a cc are for a flow-control scheme"},
		{"cc in a loop", "name: l\nkind: loop\nlab: {rate: 10M}\nschemes: [pfc/hpcc]\n", false, "no transport mode"},
		{"label of no scheme", tiny + "labels: {pfx: PFX}\n", false, `labels: scheme "pfx"`},
		{"empty label", tiny + "labels: {irn: \"\"}\n", false, `labels: "irn": an empty label`},
		{"nocc of a lossy transport", strings.Replace(tiny, "[portfc, irn]", "[irn/nocc]", 1), false, "nocc and a cc are for a flow-control scheme"},
		{"fabric and topology", strings.Replace(tiny, "kind: workload", "kind: workload\nfabric: {kind: leafspine, leaves: 2, spines: 1, hosts: 2}", 1), false, "fabric and topology: give one"},
		{"bad fabric", strings.Replace(strings.Replace(tiny, "topology: {n: 2, k: 1}\n", "", 1), "kind: workload", "kind: workload\nfabric: {kind: leafspine, leaves: 0, spines: 1, hosts: 2}", 1), false, "leaves"},
		{"fabric of a loop", "name: l\nkind: loop\nfabric: {kind: leafspine, leaves: 2, spines: 1, hosts: 2}\nlab: {rate: 10M}\nschemes: [pfc]\n", false, "only a workload experiment"},
		{"portfc on a graph fabric", strings.Replace(strings.Replace(tiny, "topology: {n: 2, k: 1}\n", "", 1), "kind: workload", "kind: workload\nfabric: {kind: leafspine, leaves: 2, spines: 1, hosts: 2}", 1), false, "fc portfc"},
		{"scenario twice", strings.Replace(tiny, "duration: 2s", "duration: 2s\n  scenarios: [{name: a}, {name: a}]", 1), false, `"a" twice`},
		{"incast beside scenarios", strings.Replace(tiny, "duration: 2s", "duration: 2s\n  incast: {senders: 1, size: 1KB}\n  scenarios: [{name: a}]", 1), false, "give the incast in each scenario"},
		{"routing on BCube", strings.Replace(tiny, "[portfc, irn]", "[portfc@ksp]", 1), false, "a graph fabric's"},
		{"empty routing", strings.Replace(tiny, "[portfc, irn]", "[portfc@]", 1), false, "a routing after the @"},
		{"routing of FC+ on a leaf-spine", strings.Replace(strings.Replace(strings.Replace(tiny, "topology: {n: 2, k: 1}\n", "", 1), "kind: workload", "kind: workload\nfabric: {kind: leafspine, leaves: 2, spines: 1, hosts: 2}", 1), "[portfc, irn]", "[pfc@dfksp2]", 1), false, `routing "dfksp2"`},
		{"pairing on BCube", strings.Replace(tiny, "duration: 2s", "duration: 2s\n  pairing: random", 1), false, "needs a graph fabric"},
		{"bad pairing", strings.Replace(tiny, "duration: 2s", "duration: 2s\n  scenarios: [{name: a, pairing: worst}]", 1), false, `pairing "worst"`},
		{"bad ns3 host link", strings.Replace(tiny, "[portfc, irn]", "[pfc, \"ns3:pfc\"]", 1) + "ns3: {host_link: both}\n", false, `ns3.host_link: host link "both"`},
		{"ns3 section without the sim", tiny + "ns3: {host_link: ports}\n", false, "ns3: no scheme runs in the simulator"},
		{"too many trees", strings.Replace(tiny, "duration: 2s", "duration: 2s\n  scenarios: [{name: a, incast: {senders: 1, size: 1KB, trees: 4}}]", 1), false, "incast trees 4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.file), c.quick)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestParseTiny(t *testing.T) {
	c, err := Parse([]byte(tiny), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Lab.Name != "xtiny" || c.Repetitions != 1 || !slices.Equal(c.Seeds, []uint64{1}) || c.Workload.Basis != "link" {
		t.Errorf("defaults: lab %q, repetitions %d, seeds %v, basis %q", c.Lab.Name, c.Repetitions, c.Seeds, c.Workload.Basis)
	}
	var ids []string
	for _, p := range c.Points() {
		ids = append(ids, p.ID)
	}
	if want := []string{"websearch-0.5-portfc-s1-r1", "websearch-0.5-irn-s1-r1"}; !slices.Equal(ids, want) {
		t.Errorf("points %v, want %v", ids, want)
	}
	q, err := Parse([]byte(tiny), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Points()) != 1 || q.Workload.Duration.D() != 2*time.Second {
		t.Errorf("quick: %d points, duration %v", len(q.Points()), q.Workload.Duration)
	}
}

// A workload on a graph fabric with scenarios: the points take every
// scenario in turn, each its own incast, on the fabric's servers.
func TestFabricScenarios(t *testing.T) {
	file := `name: fab
kind: workload
fabric: {kind: leafspine, leaves: 2, spines: 2, hosts: 4}
lab: {rate: 10M, ecn: true}
schemes: [ici, pfc/nocc]
workload:
  cdfs: [websearch]
  loads: [0.3]
  duration: 2s
  scenarios:
    - {name: one, incast: {senders: 3, size: 10KB, period: 500ms}}
    - {name: four, incast: {senders: 3, size: 10KB, period: 500ms, trees: 4}}
    - {name: calm}
`
	c, err := Parse([]byte(file), false)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range c.Points() {
		ids = append(ids, p.ID)
	}
	want := []string{"one-websearch-0.3-ici-s1-r1", "one-websearch-0.3-pfc-nocc-s1-r1", "four-websearch-0.3-ici-s1-r1",
		"four-websearch-0.3-pfc-nocc-s1-r1", "calm-websearch-0.3-ici-s1-r1", "calm-websearch-0.3-pfc-nocc-s1-r1"}
	if !slices.Equal(ids, want) {
		t.Errorf("points %v, want %v", ids, want)
	}
	s := c.LabSpec("ici", "websearch", "")
	if s.Fabric == nil || s.Fabric.Kind != "leafspine" || s.Fabric.Hosts != 4 || s.FC != scheme.NameICI {
		t.Errorf("lab spec: fabric %+v, fc %s", s.Fabric, s.FC)
	}
	trees := map[string]int{"one": 1, "four": 4, "calm": 0}
	for _, p := range c.Points() {
		wc, err := c.PointWorkload(p)
		if err != nil {
			t.Fatal(err)
		}
		if wc.Hosts != 8 || wc.LinksPerHost != 1 {
			t.Errorf("%s: %d hosts of %d links, want 8 of 1", p.ID, wc.Hosts, wc.LinksPerHost)
		}
		got := 0
		if wc.Incast != nil {
			got = max(1, wc.Incast.Trees)
		}
		if got != trees[p.Scenario] {
			t.Errorf("%s: %d trees, want %d", p.ID, got, trees[p.Scenario])
		}
	}
	if got := c.TopologyText(); !strings.Contains(got, "leafspine") {
		t.Errorf("topology text %q", got)
	}
}

// Routings and pairings on an FC+ fabric: a scheme names its routing
// after an @, a scenario its pairing; the points take every scenario and
// scheme, each lab its scheme's routing, each workload its scenario's
// permutation of the racks.
func TestFabricRoutings(t *testing.T) {
	file := `name: fcp
kind: workload
fabric: {kind: fcplus, tors: 8, ports: 4, virtual: 3, hosts: 2, seed: 2, routing: dfksp2, paths: 8}
lab: {rate: 10M, ecn: true}
schemes: [pfc@dfksp1, pfc@ksp, pfc]
workload:
  cdfs: [websearch]
  loads: [0.3]
  duration: 2s
  scenarios:
    - {name: random, pairing: random}
    - {name: near-worst, pairing: near-worst}
    - {name: uniform}
`
	c, err := Parse([]byte(file), false)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range c.Points() {
		ids = append(ids, p.ID)
	}
	want := []string{"random-websearch-0.3-pfc-dfksp1-s1-r1", "random-websearch-0.3-pfc-ksp-s1-r1", "random-websearch-0.3-pfc-s1-r1",
		"near-worst-websearch-0.3-pfc-dfksp1-s1-r1", "near-worst-websearch-0.3-pfc-ksp-s1-r1", "near-worst-websearch-0.3-pfc-s1-r1",
		"uniform-websearch-0.3-pfc-dfksp1-s1-r1", "uniform-websearch-0.3-pfc-ksp-s1-r1", "uniform-websearch-0.3-pfc-s1-r1"}
	if !slices.Equal(ids, want) {
		t.Errorf("points %v, want %v", ids, want)
	}
	for name, routing := range map[string]string{"pfc@dfksp1": "dfksp1", "pfc@ksp": "ksp", "pfc": "dfksp2"} {
		sc, err := ParseContender(name)
		if err != nil {
			t.Fatal(err)
		}
		if s := c.ContenderLabSpec(sc, "websearch", ""); s.FC != scheme.NamePFC || s.Fabric.Routing != routing || s.Fabric.Paths != 8 {
			t.Errorf("%s: lab fc %s, routing %s, paths %d; want pfc, %s, 8", name, s.FC, s.Fabric.Routing, s.Fabric.Paths, routing)
		}
	}
	if c.Fabric.Routing != "dfksp2" {
		t.Errorf("the file's fabric routing became %s", c.Fabric.Routing)
	}
	if got := c.TopologyText(); !strings.Contains(got, "--routing dfksp1|ksp|dfksp2 --paths 8") {
		t.Errorf("topology text %q: want the schemes' routings", got)
	}
	digests := map[string]string{}
	for _, p := range c.Points() {
		wc, err := c.PointWorkload(p)
		if err != nil {
			t.Fatal(err)
		}
		flows, err := workload.Generate(wc)
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := digests[p.Scenario]; ok && d != ScheduleDigest(flows) {
			t.Errorf("%s: another schedule than its scenario's other schemes", p.ID)
		}
		digests[p.Scenario] = ScheduleDigest(flows)
		if p.Scenario == "uniform" {
			if wc.Pairing != workload.PairingUniform || wc.Perm != nil {
				t.Errorf("%s: pairing %s, perm %v", p.ID, wc.Pairing, wc.Perm)
			}
			continue
		}
		if string(wc.Pairing) != p.Scenario || len(wc.Perm) != 16 {
			t.Fatalf("%s: pairing %s, perm %v", p.ID, wc.Pairing, wc.Perm)
		}
		for _, f := range flows {
			if f.Dst != wc.Perm[f.Src] {
				t.Fatalf("%s: flow %+v off the permutation %v", p.ID, f, wc.Perm)
			}
		}
	}
	if digests["random"] == digests["near-worst"] {
		t.Error("random and near-worst pairings ran one schedule")
	}
}

func TestParseContender(t *testing.T) {
	for _, c := range []struct {
		in, fc, mode string
	}{
		{"portfc", "portfc", "lossless"},
		{"bfc:2", "bfc:2", "lossless"},
		{"irn", "none", "irn"},
		{"gbn", "none", "gbn"},
		{"pfc/gbn", "pfc", "gbn"},
		{"none", "none", "lossless"},
		{"bfc:hash", "bfc:hash", "lossless"},
		{"bfc:hash:8", "bfc:hash:8", "lossless"},
		{"portfc:drr", "portfc:drr", "lossless"},
		{"portfc:drr/irn", "portfc:drr", "irn"},
		{"pfc/nocc", "pfc", "lossless"},
		{"pfc@ksp", "pfc", "lossless"},
		{"pfc/nocc@dfksp2", "pfc", "lossless"},
		{"irn@fc", "none", "irn"},
		{"irn:drr", "none:drr", "irn"},
		{"gbn:strict", "none:strict", "gbn"},
		{"irn:drr@fc", "none:drr", "irn"},
		{"pfc/hpcc", "pfc", "lossless"},
		{"sfq/hpcc", "sfq", "lossless"},
		{"pfc/dctcp@ksp", "pfc", "lossless"},
		{"pfc/dcqcn-win", "pfc", "lossless"},
		{"ideal-fq/nocc", "ideal-fq", "lossless"},
	} {
		s, err := ParseContender(c.in)
		base, routing, _ := strings.Cut(c.in, "@")
		cc := ""
		if _, m, ok := strings.Cut(base, "/"); ok && m != "nocc" && m != "gbn" && m != "irn" {
			cc = m
		}
		if err != nil || s.FC != c.fc || s.Mode != c.mode || s.NoCC != strings.Contains(c.in, "/nocc") || s.Routing != routing || s.CC != cc {
			t.Errorf("ParseContender(%q) = %+v, %v; want fc %s, mode %s, cc %q", c.in, s, err, c.fc, c.mode, cc)
		}
	}
	// A contender's cc is its lab's; the others keep the file's.
	c, err := Parse([]byte(strings.Replace(strings.Replace(tiny, "[portfc, irn]", "[portfc, pfc/hpcc]", 1), "lab: {rate: 10M}", "lab: {rate: 10M, cc: dctcp}", 1)), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ contender, cc string }{{"portfc", "dctcp"}, {"pfc/hpcc", "hpcc"}} {
		sc, _ := ParseContender(w.contender)
		if s := c.ContenderLabSpec(sc, "", ""); s.CC != w.cc || s.FC != sc.FC {
			t.Errorf("%s: lab fc %s, cc %s", w.contender, s.FC, s.CC)
		}
	}
}

// Only a scheme whose buffer no flow may fill makes a drop a problem,
// and only Ideal-FQ a shared queue.
func TestFabricProblems(t *testing.T) {
	for _, c := range []struct {
		contender     string
		drops, shared uint64
		problems      int
	}{
		{"ideal-fq/nocc", 1, 0, 1}, {"sfq:8/hpcc", 3, 0, 1}, {"ideal-fq/nocc", 0, 0, 0}, {"ideal-fq/nocc", 2, 1, 2},
		{"pfc", 5, 0, 0}, {"irn", 5, 0, 0}, {"bfc:hash/nocc", 5, 0, 0},
	} {
		sc, err := ParseContender(c.contender)
		if err != nil {
			t.Fatal(err)
		}
		if p := sc.FabricProblems(lab.FabricCounters{Drops: c.drops, FQShared: c.shared}); len(p) != c.problems {
			t.Errorf("%s, %d drops, %d shared: %q", c.contender, c.drops, c.shared, p)
		}
	}
}

// An experiment's lab section takes any knob of a lab file, and writes
// it back as it reads.
func TestLabSection(t *testing.T) {
	c, err := Parse([]byte(strings.Replace(tiny, "lab: {rate: 10M}", "lab: {rate: 10M, watchdog-action: drop, level-order: ascending, probe-interval: 0}", 1)), false)
	if err != nil {
		t.Fatal(err)
	}
	s := c.LabSpec("pfc", "", "")
	if s.WatchdogAction != "drop" || s.LevelOrder != "ascending" || s.ProbeInterval >= 0 || s.RateBps != 10e6 {
		t.Errorf("spec %+v", s)
	}
	y, err := ConfigYAML(c)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(y, false)
	if err != nil || !reflect.DeepEqual(again.Lab, c.Lab) {
		t.Errorf("config.yaml gives lab %+v (%v), want %+v:\n%s", again.Lab, err, c.Lab, y)
	}
}

func TestLabSpec(t *testing.T) {
	c, err := Parse([]byte(tiny), false)
	if err != nil {
		t.Fatal(err)
	}
	s := c.LabSpec("bfc:2", "", "/tmp/r")
	if s.FC != scheme.NameBFC || s.BFCQueues != 2 || s.N != 2 || s.K != 1 || s.RateBps != 10e6 || s.Name != "xtiny" || s.RunRoot != "/tmp/r" {
		t.Errorf("spec %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
	if s := c.LabSpec("bfc:hash:8", "", ""); s.FC != scheme.NameBFC || s.BFCAssign != scheme.BFCAssignHash || s.BFCQueues != 8 {
		t.Errorf("bfc:hash:8: spec %+v", s)
	}
	if s := c.LabSpec("portfc:drr", "", ""); s.FC != scheme.NamePortFC || s.RelayQueue != scheme.RelayDRR {
		t.Errorf("portfc:drr: spec %+v", s)
	}
	// A transport's name keeps its variants: irn:drr's servers relay in
	// their round robin, as portfc:drr's do.
	sc, err := ParseContender("irn:drr")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.LabSpec(sc.FC, "", ""); s.FC != scheme.NameNone || s.RelayQueue != scheme.RelayDRR {
		t.Errorf("irn:drr: spec %+v", s)
	}
}

// TestDeterminism: the same config and seed give the same flows, on
// every parse; another seed gives others.
func TestDeterminism(t *testing.T) {
	digest := func(seed uint64) (string, int) {
		c, _, err := Load("fct", "", false)
		if err != nil {
			t.Fatal(err)
		}
		wc, err := c.WorkloadConfig("hadoop", 0.5, seed)
		if err != nil {
			t.Fatal(err)
		}
		flows, err := workload.Generate(wc)
		if err != nil {
			t.Fatal(err)
		}
		return ScheduleDigest(flows), len(flows)
	}
	a, n := digest(1)
	b, _ := digest(1)
	c, _ := digest(2)
	if a != b || n == 0 {
		t.Errorf("seed 1 twice: %s and %s (%d flows)", a, b, n)
	}
	if a == c {
		t.Errorf("seeds 1 and 2 give the same schedule %s", a)
	}
}

// TestMinFlows: a point's duration grows until its schedule has at least
// min_flows flows, and the result is the same every time.
func TestMinFlows(t *testing.T) {
	c, _, err := Load("fct", "", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, cdf := range c.Workload.CDFs {
		for _, load := range c.Workload.Loads {
			wc, err := c.WorkloadConfig(cdf, load, 1)
			if err != nil {
				t.Fatal(err)
			}
			flows, err := workload.Generate(wc)
			if err != nil {
				t.Fatal(err)
			}
			if len(flows) < c.Workload.MinFlows {
				t.Errorf("%s load %g: %d flows in %v, want at least %d", cdf, load, len(flows), wc.Duration, c.Workload.MinFlows)
			}
		}
	}
}

func TestDefaultLabName(t *testing.T) {
	for in, want := range map[string]string{"fct": "xfct", "incast-scale": "xincasts", "ps": "xps", "a_b": "xab"} {
		if got := DefaultLabName(in); got != want {
			t.Errorf("DefaultLabName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRates: lab.rates is the lab's per-level rates, and a workload's
// load counts the slowest level's links as the lab would.
func TestRates(t *testing.T) {
	c, err := Parse([]byte(strings.Replace(tiny, "lab: {rate: 10M}", "lab: {rates: \"16M,10M\"}", 1)), false)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.LabSpec("portfc", "", ""); !slices.Equal(s.Rates, []uint64{16e6, 10e6}) || s.RateBps != 0 {
		t.Errorf("spec rates %v, rate %d", s.Rates, s.RateBps)
	}
	wc, err := c.WorkloadConfig("websearch", 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if wc.LinkRate != 10e6 || wc.HostRate != 26e6 {
		t.Errorf("workload link rate %d, host rate %d; want 10M and 26M", wc.LinkRate, wc.HostRate)
	}
	if c.RateText("") != "16M,10M" {
		t.Errorf("rate text %q", c.RateText(""))
	}
	for _, bad := range []string{"lab: {rate: 10M, rates: \"16M,10M\"}", "lab: {rates: \"16M\"}"} {
		if _, err := Parse([]byte(strings.Replace(tiny, "lab: {rate: 10M}", bad, 1)), false); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestCDFRates: workload.cdf_rates gives a CDF's points their own link
// rate, in the lab and in the schedule (the same load of a slower link
// starts fewer flows), and names it in titles.
func TestCDFRates(t *testing.T) {
	file := strings.Replace(tiny, "cdfs: [websearch]", "cdfs: [websearch, storage]\n  cdf_rates: {storage: 5M}", 1)
	c, err := Parse([]byte(file), false)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.LabSpec("portfc", "storage", ""); s.RateBps != 5e6 {
		t.Errorf("storage lab rate %d, want 5M", s.RateBps)
	}
	if s := c.LabSpec("portfc", "websearch", ""); s.RateBps != 10e6 {
		t.Errorf("websearch lab rate %d, want lab.rate 10M", s.RateBps)
	}
	slow, err := c.WorkloadConfig("storage", 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	c.Workload.CDFRates = nil
	fast, err := c.WorkloadConfig("storage", 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	c.Workload.CDFRates = map[string]units.Rate{"storage": 5e6}
	a, _ := workload.Generate(slow)
	b, _ := workload.Generate(fast)
	if slow.LinkRate != 5e6 || len(a)*3 > len(b)*2 {
		t.Errorf("storage at 5M: link rate %d, %d flows against %d at 10M", slow.LinkRate, len(a), len(b))
	}
	if got := c.RateText(""); got != "10M (storage 5M)" {
		t.Errorf("rate text %q", got)
	}
	if got := c.RateText("storage"); got != "5M" {
		t.Errorf("storage rate text %q", got)
	}
	for _, x := range []struct{ from, to, want string }{
		{"cdf_rates: {storage: 5M}", "cdf_rates: {hadoop: 5M}", `"hadoop" is not one of workload.cdfs`},
		{"cdf_rates: {storage: 5M}", "cdf_rates: {storage: 0}", "storage: a rate is needed"},
		{"lab: {rate: 10M}", "lab: {rates: \"16M,10M\"}", "not with lab.rates"},
	} {
		_, err := Parse([]byte(strings.Replace(file, x.from, x.to, 1)), false)
		if err == nil || !strings.Contains(err.Error(), x.want) {
			t.Errorf("%s: error %v, want %q", x.to, err, x.want)
		}
	}
	// The quick section may run fewer CDFs than cdf_rates names.
	q, err := Parse([]byte(file+"  workload: {cdfs: [websearch]}\n"), true)
	if err != nil {
		t.Fatalf("quick with fewer CDFs: %v", err)
	}
	if len(q.Workload.CDFRates) != 0 {
		t.Errorf("quick with websearch only: rates %v left", q.Workload.CDFRates)
	}
}

// Every knob of a lab file but those the schemes and the runner set
// reads in an experiment's lab section, reaches its labs' spec, and is
// written back by config.yaml.
func TestLabSectionKnobs(t *testing.T) {
	for _, k := range lab.Knobs() {
		if k.Scheme || k.Common {
			continue
		}
		given := lab.Values{"rate": "10M", k.Name: k.Example}
		switch k.Name {
		case "rates":
			delete(given, "rate")
		case "ate-p", "ate-cap":
			given["level-order"] = "ate"
		}
		var keys []string
		for _, kk := range lab.Knobs() {
			if v, ok := given[kk.Name]; ok {
				keys = append(keys, fmt.Sprintf("%s: %q", kk.Name, v))
			}
		}
		section := "lab: {" + strings.Join(keys, ", ") + "}"
		c, err := Parse([]byte(strings.Replace(tiny, "lab: {rate: 10M}", section, 1)), false)
		if err != nil {
			t.Errorf("%s: %v", section, err)
			continue
		}
		want := lab.Spec{Name: c.Lab.Name}
		if err := given.Apply(&want); err != nil {
			t.Fatal(err)
		}
		if got := k.Get(c.LabSpec("", "", "")); got != k.Get(want) {
			t.Errorf("%s: the lab's %s is %q, want %q", section, k.Name, got, k.Get(want))
		}
		y, err := ConfigYAML(c)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := Parse(y, false); err != nil || again.Lab.Values[k.Name] != k.Example {
			t.Errorf("%s: config.yaml gives %v (%v)", section, again.Lab.Values, err)
		}
	}
}

// The simulator's schemes (ns3:) and a scheme's own dilation (~dD):
// what each may name, and what a D changes in a point's lab and
// workload: the rate, and every lab-time duration scaled by D over the
// experiment's, so that every D runs the same flows over the same time
// of the target.
func TestSimAndDilationContenders(t *testing.T) {
	for _, c := range []struct {
		in      string
		sim     string
		d       float64
		fc, bad string
	}{
		{"ns3:pfc", SimNS3, 0, "pfc", ""},
		{"ns3:pfc/hpcc", SimNS3, 0, "pfc", ""},
		{"ns3:pfc@ecmp", SimNS3, 0, "pfc", ""},
		{"ns3:portfc", "", 0, "", "runs PFC"},
		{"ns3:irn", "", 0, "", "runs PFC"},
		{"ns3:pfc@ksp", "", 0, "", "ECMP only"},
		{"ns3:ns3:pfc", "", 0, "", "runs PFC"},
		{"portfc~d1000", "", 1000, "portfc", ""},
		{"pfc/nocc~d333", "", 333, "pfc", ""},
		{"pfc~d0.5", "", 0, "", "at least 1"},
		{"pfc~dx", "", 0, "", "at least 1"},
		{"pfc~d1000~d2", "", 0, "", "at least 1"},
		{"ns3:pfc~d1000", "", 0, "", "no dilation"},
		{"nosuch~d1000", "", 0, "", "nosuch"},
	} {
		sc, err := ParseContender(c.in)
		switch {
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("ParseContender(%q): %v, want an error with %q", c.in, err, c.bad)
		case c.bad == "" && (err != nil || sc.Sim != c.sim || sc.D != c.d || sc.FC != c.fc || sc.Name != c.in):
			t.Errorf("ParseContender(%q) = %+v, %v; want sim %q, D %v, fc %s", c.in, sc, err, c.sim, c.d, c.fc)
		}
	}
	src := `
name: inv
kind: workload
topology: {n: 4, k: 1}
lab: {rate: 20M, ecn: true}
schemes: [portfc, portfc~d1000]
workload: {cdfs: [websearch], loads: [0.5], duration: 40s, incast: {senders: 8, size: 1MB, start: 2s}}
`
	c, err := Parse([]byte(src), false)
	if err != nil {
		t.Fatal(err)
	}
	ps := c.Points()
	if len(ps) != 2 || ps[1].ID != "websearch-0.5-portfc-d1000-s1-r1" {
		t.Fatalf("points %+v", ps)
	}
	ref, err := c.PointWorkload(ps[0])
	if err != nil {
		t.Fatal(err)
	}
	fast, err := c.PointWorkload(ps[1])
	if err != nil {
		t.Fatal(err)
	}
	if ref.LinkRate != 20e6 || fast.LinkRate != 100e6 || fast.Duration != 8*time.Second || fast.Incast.Start != 400*time.Millisecond || fast.Incast.Period != ref.Incast.Period/5 {
		t.Errorf("at D = 1,000: rate %d, window %v, incast start %v and period %v; want 100 Mb/s and the D = 5,000 ones (%v, %v, %v) / 5",
			fast.LinkRate, fast.Duration, fast.Incast.Start, fast.Incast.Period, ref.Duration, ref.Incast.Start, ref.Incast.Period)
	}
	sc, _ := ParseContender(ps[1].Contender)
	if s := c.ContenderLabSpec(sc, "websearch", "/"); s.Dilation != 1000 || s.RateBps != 0 {
		t.Errorf("lab of portfc~d1000: D %v, rate %d; want D 1000 and the target's rate / D", s.Dilation, s.RateBps)
	}
	// The same flows, each at the same time of the target.
	a, err := workload.Generate(ref)
	if err != nil {
		t.Fatal(err)
	}
	b, err := workload.Generate(fast)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%d and %d flows", len(a), len(b))
	}
	for i := range a {
		if a[i].Src != b[i].Src || a[i].Dst != b[i].Dst || a[i].Size != b[i].Size || (a[i].Start-5*b[i].Start).Abs() > 5 {
			t.Fatalf("flow %d: %+v at D = 5,000, %+v at D = 1,000", i, a[i], b[i])
		}
	}
	if l := c.Label("portfc~d1000"); l != "PortFC, D = 1,000" {
		t.Errorf("label %q", l)
	}
	bad := strings.Replace(src, "lab: {rate: 20M, ecn: true}", "lab: {rates: \"20M,10M\", ecn: true}", 1)
	if _, err := Parse([]byte(bad), false); err == nil || !strings.Contains(err.Error(), "own dilation") {
		t.Errorf("a D with lab.rates: %v", err)
	}
}

// A scheme at its own lab knobs (~KEY=VALUE, a sweep of a knob): what a
// name may set, the knobs in its lab and nothing else changed, the same
// flows as the scheme's, its point's name, label and colour.
func TestKnobContenders(t *testing.T) {
	for _, c := range []struct {
		in    string
		d     float64
		knobs []KnobValue
		bad   string
	}{
		{"portfc~xoff=50KB~xon=30KB", 0, []KnobValue{{"xoff", "50KB"}, {"xon", "30KB"}}, ""},
		{"pfc~d1000~buffer=2MB", 1000, []KnobValue{{"buffer", "2MB"}}, ""},
		{"pfc@ksp~ecn-kmin=10K", 0, []KnobValue{{"ecn-kmin", "10K"}}, ""},
		{"portfc~xoff=50KB~xoff=20KB", 0, nil, "xoff twice"},
		{"portfc~rate=10M", 0, nil, "not a contender's own"},
		{"portfc~dilation=10", 0, nil, "not a contender's own"},
		{"portfc~run-root=/tmp/x", 0, nil, "not a contender's own"},
		{"portfc~cc=hpcc", 0, nil, "scheme's name sets it"},
		{"portfc~bfc-queues=8", 0, nil, "scheme's name sets it"},
		{"portfc~xoff=lots", 0, nil, "xoff=lots"},
		{"portfc~xof=50KB", 0, nil, "did you mean xoff"},
		{"ns3:pfc~xoff=50KB", 0, nil, "simulator"},
		{"portfc~fast", 0, nil, `not "fast"`},
		{"portfc~d1000~d2000", 0, nil, "once"},
	} {
		sc, err := ParseContender(c.in)
		switch {
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("ParseContender(%q): %v, want an error with %q", c.in, err, c.bad)
		case c.bad == "" && (err != nil || sc.D != c.d || !slices.Equal(sc.Knobs, c.knobs) || sc.Name != c.in):
			t.Errorf("ParseContender(%q) = %+v, %v; want D %v, knobs %v", c.in, sc, err, c.d, c.knobs)
		}
	}
	src := `
name: sweep
kind: workload
topology: {n: 4, k: 1}
lab: {rate: 20M, ecn: true, buffer: 4MB}
schemes: [portfc, "portfc~xoff=50KB~xon=30KB", "portfc~buffer=2MB"]
workload: {cdfs: [websearch], loads: [0.5], duration: 10s, incast: {senders: 8, size: 1MB, start: 2s}}
`
	c, err := Parse([]byte(src), false)
	if err != nil {
		t.Fatal(err)
	}
	ps := c.Points()
	if len(ps) != 3 || ps[1].ID != "websearch-0.5-portfc-xoff50KB-xon30KB-s1-r1" || ps[2].ID != "websearch-0.5-portfc-buffer2MB-s1-r1" {
		t.Fatalf("points %+v", ps)
	}
	specs := make([]lab.Spec, len(ps))
	var flows [][]workload.Flow
	for i, p := range ps {
		sc, _ := ParseContender(p.Contender)
		specs[i] = c.ContenderLabSpec(sc, p.CDF, "/")
		w, err := c.PointWorkload(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := workload.Generate(w)
		if err != nil {
			t.Fatal(err)
		}
		flows = append(flows, f)
	}
	if s := specs[0]; s.Xoff != 0 || s.Xon != 0 || s.BufferBytes != 4_000_000 || s.RateBps != 20e6 || !s.ECN {
		t.Errorf("portfc's lab: xoff %d, xon %d, buffer %d, rate %d, ecn %v; want the lab section's", s.Xoff, s.Xon, s.BufferBytes, s.RateBps, s.ECN)
	}
	if s := specs[1]; s.Xoff != 50_000 || s.Xon != 30_000 || s.BufferBytes != 4_000_000 || s.RateBps != 20e6 || s.FC != "portfc" {
		t.Errorf("portfc~xoff=50KB~xon=30KB's lab: xoff %d, xon %d, buffer %d, rate %d, fc %s", s.Xoff, s.Xon, s.BufferBytes, s.RateBps, s.FC)
	}
	if s := specs[2]; s.Xoff != 0 || s.BufferBytes != 2_000_000 {
		t.Errorf("portfc~buffer=2MB's lab: xoff %d, buffer %d", s.Xoff, s.BufferBytes)
	}
	if c.Lab.Values["buffer"] != "4MB" || len(c.Lab.Values) != 3 {
		t.Errorf("the lab section changed: %v", c.Lab.Values)
	}
	for i := range flows[1:] {
		if !reflect.DeepEqual(flows[0], flows[i+1]) {
			t.Errorf("%s runs other flows than portfc", ps[i+1].Contender)
		}
	}
	if l := c.Label(ps[1].Contender); l != "PortFC, X_off 50 KB, X_on 30 KB" {
		t.Errorf("label %q", l)
	}
	if l := c.Label(ps[2].Contender); l != "PortFC, buffer 2 MB" {
		t.Errorf("label %q", l)
	}
	base, a, b := styleOf("portfc"), styleOf(ps[1].Contender), styleOf(ps[2].Contender)
	if a.glyph != base.glyph || a.color == base.color || b.color == base.color {
		t.Errorf("styles: portfc %v, its sweep's %v and %v: want its marker and other shades", base, a, b)
	}
	// A sweep's values a factor of 1.5-16 apart get shades a tenth of the
	// range apart, none near the scheme's own colour.
	for _, sweep := range [][]string{{"8KB", "12KB", "24KB", "48KB", "96KB"}, {"2MB", "5MB", "12MB"}, {"0.25", "0.5", "0.75"}} {
		for i, a := range sweep {
			fa := knobShade([]KnobValue{{"xoff", a}})
			if math.Abs(fa) < 0.15 || math.Abs(fa) > 0.6 {
				t.Errorf("shade of %s: %g, want 0.15-0.6 either way", a, fa)
			}
			for _, b := range sweep[i+1:] {
				if fb := knobShade([]KnobValue{{"xoff", b}}); math.Abs(fa-fb) < 0.1 {
					t.Errorf("shades of %s and %s: %g and %g", a, b, fa, fb)
				}
			}
		}
	}
	if p := dInvariance.pairs(c); len(p) != 0 {
		t.Errorf("invariance pairs %v of knob contenders", p)
	}
	if simEquivalent(ps[1].Contender) == simEquivalent("portfc") {
		t.Errorf("%s counted as the simulator's portfc", ps[1].Contender)
	}
	for _, w := range []struct{ from, to, want string }{
		// X_on above X_off: the lab would refuse it.
		{`"portfc~buffer=2MB"`, `"portfc~xoff=12KB"`, `schemes[2]: "portfc~xoff=12KB"`},
		{"kind: workload", "kind: loop", "workload experiment's"},
	} {
		if _, err := Parse([]byte(strings.Replace(src, w.from, w.to, 1)), false); err == nil || !strings.Contains(err.Error(), w.want) {
			t.Errorf("%s for %s: %v, want an error with %q", w.to, w.from, err, w.want)
		}
	}
}

// An experiment's ns3 section reaches the runner as read; its host link
// defaults to the fastest port's.
func TestParseNS3(t *testing.T) {
	file := strings.Replace(tiny, "[portfc, irn]", "[pfc, \"ns3:pfc\"]", 1)
	for _, c := range []struct{ section, want string }{{"", ""}, {"ns3: {host_link: ports}\n", "ports"}, {"ns3: {host_link: port}\n", "port"}} {
		cfg, err := Parse([]byte(file+c.section), false)
		if err != nil {
			t.Fatalf("%q: %v", c.section, err)
		}
		got := ""
		if cfg.NS3 != nil {
			got = cfg.NS3.HostLink
		}
		if got != c.want {
			t.Errorf("%q: host link %q, want %q", c.section, got, c.want)
		}
	}
}
