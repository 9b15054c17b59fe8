package lab

import (
	"bytes"
	"github.com/bcfab/bcfab/model/scale"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

func planned(t *testing.T, s Spec) Spec {
	t.Helper()
	p, err := NewPlan(s)
	if err != nil {
		t.Fatalf("NewPlan: %v", err)
	}
	return p.Spec
}

func TestReadFileExample(t *testing.T) {
	s, err := ReadFile("../examples/bcube41-portfc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.Name, want.N, want.K, want.RateBps, want.FC, want.ECN = "pf", 4, 1, 100e6, scheme.NamePortFC, true
	if !reflect.DeepEqual(planned(t, s), planned(t, want)) {
		t.Errorf("spec %+v\nwant %+v", s, want)
	}
}

// The Rail-only example: level-0 cables at 16 Mb/s, the rails at 10,
// level order ate (p its default).
func TestReadFileRailOnlyATE(t *testing.T) {
	s, err := ReadFile("../examples/bcube41-railonly-ate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.LevelOrder != "ate" || s.ATEP != 0 || s.RateBps != 10e6 || len(s.Links) != 16 || s.Links[15].RateBps != 16e6 {
		t.Fatalf("spec %+v", s)
	}
}

// Every field survives a file: FileOf, YAML, ParseFile and Check give the
// spec back.
func TestFileRoundTrip(t *testing.T) {
	loss := 20_000
	zero := 0
	for _, s := range []Spec{
		Defaults(),
		func() Spec {
			s := Defaults()
			s.Name, s.N, s.K = "rt", 4, 1
			s.RateBps, s.BufferBytes, s.LossPPM = 2_500_000_000, 512<<10, 5_000
			s.Target = scale.Native(2_500_000_000)
			s.FC, s.Xoff, s.Xon = scheme.NamePFC, 200_000, 100_000
			s.ECN, s.ECNKminBytes, s.ECNKmaxBytes, s.ECNPmax = true, 10_000, 40_000, 0.5
			s.WatchdogDetect, s.WatchdogAction, s.WatchdogRestore = -1, "drop", time.Second
			s.XDPMode, s.LevelOrder, s.BinDir, s.RunRoot, s.MaxNodes, s.HealthTimeout = "generic", "1,0", "/opt/bin", "/tmp/labs", 40, time.Minute
			s.DSCPMap = config.DSCPMap{26: 3, 46: 5, 0: 1}
			s.Links = []LinkSpec{
				{Endpoints: []string{"h1:eth0", "s0.0:p1"}, LossPPM: &loss},
				{Endpoints: []string{"s1.2:p3"}, Down: true, RateBps: 50e6},
				{Endpoints: []string{"h0:eth1"}, LossPPM: &zero},
			}
			return s
		}(),
		func() Spec {
			s := Defaults()
			s.N, s.K, s.Rates, s.FC = 4, 1, []uint64{160e6, 100e6}, "portfc"
			s.DRRWeights = []int{1, 1, 1, 3}
			s.Links = []LinkSpec{{Endpoints: []string{"h5:eth1"}, RateBps: 50e6}}
			return s
		}(),
		func() Spec {
			s := Defaults()
			s.N, s.K, s.FC, s.BFCQueues, s.BFCTable = 2, 1, scheme.NameBFC, 8, 400
			s.DSCPMap = config.DSCPMap{}
			return s
		}(),
		func() Spec {
			s := Defaults()
			s.N, s.K, s.LevelOrder, s.ATEP, s.ATECapBytes = 4, 1, "ate", 0.75, 8192
			return s
		}(),
	} {
		if s.N == 0 {
			s.N, s.K = 2, 1
		}
		var b bytes.Buffer
		if err := FileOf(s).WriteYAML(&b, "test"); err != nil {
			t.Fatal(err)
		}
		f, err := ParseFile(b.Bytes())
		if err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		got, err := f.Check()
		if err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		if !reflect.DeepEqual(planned(t, got), planned(t, s)) {
			t.Errorf("round trip of\n%s\ngave %+v\nwant %+v", b.String(), got, s)
		}
	}
}

// A bad file gets one error, naming its line.
func TestFileErrors(t *testing.T) {
	head := "name: bad\ntopology:\n  kind: bcube\n  n: 2\n  k: 1\n"
	for _, c := range []struct {
		file, want string
	}{
		{head + "rate: fast\n", `6: rate: rate "fast"`},
		{head + "buffer: 1X\n", `6: buffer: size "1X"`},
		{head + "xoff: 3G\n", `6: xoff: size "3G": at most 2 GiB`},
		{head + "bogus: 1\n", "6: unknown key bogus;"},
		{head + "fc: portfcc\n", `6: fc "portfcc": want none, portfc`},
		{head + "flowcontrol: pfc\n", "6: unknown key flowcontrol (did you mean fc?)"},
		{head + "rat: 10M\n", "6: unknown key rat (did you mean rate?)"},
		{head + "rate: 1G\nloss: 2\n", `7: loss: loss "2"`},
		{head + "xoff: 1000\nxon: 2000\nfc: portfc\n", "6: config for h0: portfc thresholds"},
		{"name: bad\ntopology:\n  kind: bcube\n  n: 1\n  k: 1\n", "2: n = 1"},
		{"name: Bad\ntopology:\n  kind: bcube\n  n: 2\n  k: 1\n", `1: lab name "Bad"`},
		{"name: bad\ntopology:\n  kind: mesh\n  n: 2\n  k: 1\n", `2: topology kind "mesh"`},
		{head + "rate: [1, 2]\n", "6: rate: want one value, not a list"},
		{head + "  links:\n    - endpoints: [h0:eth0, s0.1:p0]\n", `7: link ["h0:eth0" "s0.1:p0"]: h0:eth0 is cabled to s0.0:p0`},
		{head + "  links:\n    - endpoints: [h9:eth0]\n", `7: link endpoint "h9:eth0"`},
		{head + "  links:\n    - endpoints: [h0:eth0]\n      loss: 200%\n", `8: loss: loss "200%"`},
		{head + "  links:\n    - endpoints: [h0:eth0]\n    - endpoints: [s0.0:p0]\n", "7: link h0:eth0 - s0.0:p0 is overridden twice"},
		{head + "dscp-map: 26=9\n", "6: dscp-map: dscp map: DSCP 26 -> priority 9"},
		{head + "drr-weights: 1,0\n", `6: drr-weights: drr weights "1,0": weight 0 of data queue 1: want 1..1000`},
		{head + "drr-weights: 1 3\n", `6: drr-weights: drr weights "1 3": want whole numbers 1..1000`},
		{head + "drr-weights: 1,1,1,1\n", "6: config for h0: drr_weights 1,1,1,1: 4 weights for 3 data queues; under fc none a server port's data queues are a0, b0, RQ"},
		{head + "rate: 1G\n  bad indent: x\n", "7: "},
		{"- a\n- b\n", "1: a lab file is a mapping"},
		{head + "dilation: 0.5\n", "6: config for h0: dilation 0.5"},
		{head + "target: nowhere.yaml\n", `6: target: target "nowhere.yaml"`},
		{head + "rates: 10M\n", "6: rates 10M: want one per level of BCube(2,1), 2"},
		{head + "rates: 10M,0\n", "6: rates 10M,0: level 1's rate is 0"},
		{head + "rates: 10M,fast\n", `6: rates: rates "10M,fast"`},
		{head + "rate: 10M\nrates: 10M,5M\n", "7: rates and rate: give one"},
		{"name: bad\ntopology:\n  kind: railonly\n  k: 2\n", "2: topology railonly is BCube(n,1): k 2"},
	} {
		f, err := ParseFile([]byte(c.file))
		if err == nil {
			_, err = f.Check()
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("file\n%s: error %v, want one line starting %q", c.file, err, c.want)
		}
	}
}

// Topology railonly is the Rail-only preset: BCube(4,1) at the preset's
// level rates, n and rates overridable; it is the same lab as the bcube
// file that spells it out.
func TestReadFileRailOnly(t *testing.T) {
	for _, c := range []struct {
		file  string
		n     int
		rates []uint64
	}{
		{"name: r\ntopology: {kind: railonly}\nfc: portfc\n", 4, RailOnlyRates},
		{"name: r\ntopology: {kind: railonly, n: 3, k: 1}\nrates: 160M,100M\n", 3, []uint64{160e6, 100e6}},
	} {
		f, err := ParseFile([]byte(c.file))
		if err != nil {
			t.Fatal(err)
		}
		s, err := f.Check()
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if s.N != c.n || s.K != 1 || !reflect.DeepEqual(s.Rates, c.rates) {
			t.Errorf("%s: BCube(%d,%d) at %v, want BCube(%d,1) at %v", c.file, s.N, s.K, s.Rates, c.n, c.rates)
		}
		var b bytes.Buffer
		if err := FileOf(s).WriteYAML(&b, ""); err != nil {
			t.Fatal(err)
		}
		back, err := ParseFile(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if got, err := back.Check(); err != nil || !reflect.DeepEqual(planned(t, got), planned(t, s)) {
			t.Errorf("as bcube:\n%s\ngave %+v, %v", b.String(), got, err)
		}
	}
}

func TestReadFileNames(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/lab.yaml"
	if err := os.WriteFile(path, []byte("name: x\ntopology: {kind: bcube, n: 2, k: 1}\nrate: slow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.HasPrefix(err.Error(), path+":3: rate") {
		t.Errorf("ReadFile: %v", err)
	}
}

// A cable's override reaches both of its ends' configs, and only theirs.
func TestLinkOverrides(t *testing.T) {
	loss := 10_000
	s := Defaults()
	s.N, s.K = 2, 1
	s.Links = []LinkSpec{{Endpoints: []string{"s0.0:p1"}, LossPPM: &loss, RateBps: 50e6}, {Endpoints: []string{"h3:eth1"}, Down: true}}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		node, port string
		rate       uint64
		loss       int
		down       bool
	}{
		{"h1", "eth0", 50e6, 10_000, false}, {"s0.0", "p1", 50e6, 10_000, false}, {"s0.0", "p0", 500e6, 0, false},
		{"h1", "eth1", 500e6, 0, false}, {"h3", "eth1", 500e6, 0, true}, {"s1.1", "p1", 500e6, 0, true},
	} {
		n, _ := p.Node(c.node)
		loss, down := n.Config.PortImpairment(c.port)
		if r := n.Config.PortRate(c.port); r != c.rate || loss != c.loss || down != c.down {
			t.Errorf("%s %s: rate %d loss %d down %v; want %d %d %v", c.node, c.port, r, loss, down, c.rate, c.loss, c.down)
		}
	}
}

// Per-level rates reach every port's config: a level's switches and the
// servers' ports of that level take its rate, a cable of Links overrides
// one on top, and every BDP-counted threshold follows its port's rate.
func TestLevelRates(t *testing.T) {
	s := Defaults()
	s.N, s.K, s.Rates, s.FC, s.ECN = 4, 1, []uint64{160e6, 100e6}, "portfc", true
	s.Links = []LinkSpec{{Endpoints: []string{"h5:eth1"}, RateBps: 50e6}, {Endpoints: []string{"h6:eth0"}, Down: true}}
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		node, port string
		rate       uint64
	}{
		{"h0", "eth0", 160e6}, {"h0", "eth1", 100e6}, {"h15", "eth0", 160e6}, {"h15", "eth1", 100e6},
		{"s0.0", "p0", 160e6}, {"s0.3", "p3", 160e6}, {"s1.0", "p0", 100e6}, {"s1.3", "p2", 100e6},
		{"h5", "eth1", 50e6}, {"s1.1", "p1", 50e6}, {"h5", "eth0", 160e6}, // the override, both ends
		{"h6", "eth0", 160e6}, {"s0.1", "p2", 160e6}, // down, at its level's rate
	} {
		n, ok := p.Node(c.node)
		if !ok {
			t.Fatalf("no node %s", c.node)
		}
		cfg := n.Config
		bdp := int(float64(c.rate) / 8 * p.Spec.Model().OneHopRTT().Seconds())
		if r := cfg.PortRate(c.port); r != c.rate {
			t.Errorf("%s %s: rate %d, want %d", c.node, c.port, r, c.rate)
		}
		if th := cfg.PortThresholds(c.port); th.XoffA != 6*bdp || th.XonB != 4*bdp {
			t.Errorf("%s %s: PortFC thresholds %+v, want 6 and 4 BDPs of %d", c.node, c.port, th, bdp)
		}
		if e, kmin := cfg.PortECN(c.port), int(float64(c.rate)/8*p.Spec.Model().OneHopRTT().Seconds()*4); e.KminBytes != kmin {
			t.Errorf("%s %s: ECN %+v, want K_min %d, 4 BDPs", c.node, c.port, e, kmin)
		}
	}
	if got := p.Spec.RatesText(); got != "160 Mbit/s (level 0), 100 Mbit/s (level 1)" {
		t.Errorf("RatesText %q", got)
	}
	for _, c := range []struct {
		rates []uint64
		want  string
	}{{[]uint64{10e6}, "rates 10M: want one per level of BCube(4,1), 2"}, {[]uint64{10e6, 0}, "level 1's rate is 0"},
		{[]uint64{10e6, 5e6, 1e6}, "want one per level"}} {
		s.Rates = c.rates
		if _, err := NewPlan(s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rates %v: %v, want %q", c.rates, err, c.want)
		}
	}
}

// A graph fabric in a lab file: the topology's keys are lab up's flags,
// a running lab's file (lab inspect) brings the same fabric up again,
// and BCube's keys on a graph fabric (or the reverse) are an error at
// the topology's line.
func TestFileGraphFabric(t *testing.T) {
	f, err := ParseFile([]byte("name: fbf\ntopology:\n  kind: expander\n  tors: 8\n  degree: 3\n  hosts: 2\n  seed: 5\n  routing: ksp\n  paths: 2\nfc: pfc\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Check()
	if err != nil {
		t.Fatal(err)
	}
	want := FabricSpec{Kind: TopologyExpander, ToRs: 8, Degree: 3, Hosts: 2, Seed: 5, Routing: RoutingKSP, Paths: 2}
	if s.Fabric == nil || *s.Fabric != want || s.N != 0 || s.K != 0 || s.FC != scheme.NamePFC {
		t.Fatalf("spec %+v, fabric %+v", s, s.Fabric)
	}
	var b bytes.Buffer
	if err := FileOf(s).WriteYAML(&b, ""); err != nil {
		t.Fatal(err)
	}
	back, err := ParseFile(b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if s2, err := back.Check(); err != nil || *s2.Fabric != want {
		t.Fatalf("round trip: %v, %+v\n%s", err, s2.Fabric, b.String())
	}
	ft, err := ParseFile([]byte("name: fbf\ntopology: {kind: fattree, k: 4}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := ft.Check(); err != nil || s.Fabric == nil || s.Fabric.K != 4 || s.K != 0 {
		t.Fatalf("fattree: %v %+v", err, s.Fabric)
	}
	for _, c := range []struct{ text, want string }{
		{"name: fbf\ntopology: {kind: bcube, n: 2, k: 1, tors: 4}\n", "2: topology bcube: leaves, spines"},
		{"name: fbf\ntopology: {kind: leafspine, leaves: 4, spines: 2, hosts: 2, n: 2}\n", "2: topology leafspine: n is BCube's"},
		{"name: fbf\ntopology: {kind: fattree, k: 6, hosts: 2}\n", "fattree takes --k, not --hosts"},
		{"name: fbf\ntopology: {kind: ring}\n", `topology kind "ring": want bcube, railonly, leafspine, fattree, expander or fcplus`},
	} {
		f, err := ParseFile([]byte(c.text))
		if err == nil {
			_, err = f.Check()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}
