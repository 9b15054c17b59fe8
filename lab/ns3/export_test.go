package ns3

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/internal/testkit/golden"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/wire/transport"
)

// plan is the plan of a lab of spec s, or the test fails.
func plan(t *testing.T, s lab.Spec) *lab.Plan {
	t.Helper()
	p, err := lab.NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// bcube21 is BCube(2,1) under PFC with ECN at 100 Mb/s: the papers'
// network at D = 1000.
func bcube21() lab.Spec {
	s := lab.Defaults()
	s.Name, s.N, s.K, s.FC, s.ECN, s.RateBps = "ns", 2, 1, "pfc", true, 100e6
	return s
}

// leafSpine is two leaves of two servers under one spine, at 100 Mb/s.
func leafSpine() lab.Spec {
	s := lab.Defaults()
	s.Name, s.FC, s.ECN, s.RateBps = "ls", "pfc", true, 100e6
	s.Fabric = &lab.FabricSpec{Kind: lab.TopologyLeafSpine, Leaves: 2, Spines: 1, Hosts: 2}
	return s
}

// threeFlows is a small schedule in lab time: a short flow, and two
// incast flows that start together (their order in flow.txt is by id).
func threeFlows() []workload.Flow {
	return []workload.Flow{
		{ID: 0, Src: 0, Dst: 3, Size: 20_000, Start: 0, Kind: workload.KindPoisson},
		{ID: 2, Src: 2, Dst: 3, Size: 1_000_000, Start: 5 * time.Millisecond, Kind: workload.KindIncast, Group: 1},
		{ID: 1, Src: 1, Dst: 3, Size: 1_000_000, Start: 5 * time.Millisecond, Kind: workload.KindIncast, Group: 1},
	}
}

func export(t *testing.T, s lab.Spec, cc transport.CC) *Sim {
	t.Helper()
	sim, err := New(Input{Plan: plan(t, s), Flows: threeFlows(), Duration: 10 * time.Millisecond, CC: cc,
		Build: "lab (test build)", Command: "lab ns3 export -f test.yaml -o out"})
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

// The exported files of two tiny labs are those of their golden files:
// BCube(2,1), whose servers become relays in front of hosts, and a
// leaf-spine, whose servers are hosts.
func TestExportGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		spec lab.Spec
		cc   transport.CC
	}{
		{"bcube21", bcube21(), transport.CCDCQCN},
		{"leafspine", leafSpine(), transport.CCHPCC},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range export(t, c.spec, c.cc).Files() {
				golden.Check(t, filepath.Join("testdata", c.name, f.Name), f.Data)
			}
		})
	}
}

// Every sim id maps back: hosts 0..3 are h0..h3, each BCube server has
// a relay with its fabric ports, every bcfab cable is one link between
// the nodes of its ends, and every flow runs between its servers' hosts
// with a source port numbered per pair in the sim's order.
func TestExportMapsBack(t *testing.T) {
	sim := export(t, bcube21(), transport.CCDCQCN)
	p := plan(t, bcube21())
	host, relay := map[string]int{}, map[string]int{}
	for _, n := range sim.Nodes {
		switch n.Role {
		case RoleHost:
			host[n.Name] = n.ID
		case RoleRelay:
			relay[n.Name] = n.ID
		}
	}
	for i := range 4 {
		h := bcube.HostName(i)
		if host[h] != i {
			t.Errorf("%s is host %d, want %d", h, host[h], i)
		}
		if _, ok := relay[h]; !ok {
			t.Errorf("%s has no relay", h)
		}
	}
	links := map[[2]End]bool{}
	for _, l := range sim.Links {
		links[[2]End{l.A, l.B}] = true
	}
	id := func(node string) int {
		if r, ok := relay[node]; ok {
			return r
		}
		for _, n := range sim.Nodes {
			if n.Name == node {
				return n.ID
			}
		}
		t.Fatalf("no sim node for %s", node)
		return -1
	}
	for _, l := range p.Links {
		if !links[[2]End{{id(l.A.Node), l.A.Ifname}, {id(l.B.Node), l.B.Ifname}}] {
			t.Errorf("cable %v has no link in the sim", l)
		}
	}
	for h, r := range relay {
		if !links[[2]End{{r, HostPort}, {host[h], HostPort}}] {
			t.Errorf("%s's relay %d has no link to its host %d", h, r, host[h])
		}
	}
	want := []struct{ id, sport int }{{0, 10000}, {1, 10000}, {2, 10000}}
	for i, f := range sim.Flows {
		if f.ID != want[i].id || f.SPort != want[i].sport || f.SimSrc != host[bcube.HostName(f.Src)] || f.SimDst != host[bcube.HostName(f.Dst)] {
			t.Errorf("flow.txt line %d: flow %d h%d->h%d as %d->%d sport %d; want flow %d from host %d to %d, sport %d",
				i+2, f.ID, f.Src, f.Dst, f.SimSrc, f.SimDst, f.SPort, want[i].id, f.Src, f.Dst, want[i].sport)
		}
	}
}

// A pair's flows get consecutive source ports in the order the sim
// starts them, from FirstSPort.
func TestExportSourcePorts(t *testing.T) {
	flows := []workload.Flow{
		{ID: 0, Src: 1, Dst: 2, Size: 1000, Start: 3 * time.Millisecond, Kind: workload.KindPoisson},
		{ID: 1, Src: 1, Dst: 2, Size: 1000, Start: 1 * time.Millisecond, Kind: workload.KindPoisson},
		{ID: 2, Src: 2, Dst: 1, Size: 1000, Start: 2 * time.Millisecond, Kind: workload.KindPoisson},
		{ID: 3, Src: 1, Dst: 2, Size: 1000, Start: 2 * time.Millisecond, Kind: workload.KindPoisson},
	}
	sim, err := New(Input{Plan: plan(t, bcube21()), Flows: flows, Duration: 10 * time.Millisecond, CC: transport.CCDCQCN})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range sim.Flows {
		got = append(got, strconv.Itoa(f.ID)+":"+strconv.Itoa(f.SPort))
	}
	if want := "1:10000 2:10000 3:10001 0:10002"; strings.Join(got, " ") != want {
		t.Errorf("flows in the sim's order, id:sport: %s, want %s", strings.Join(got, " "), want)
	}
}

// What the sim cannot run is refused with one error that says why.
func TestExportRefuses(t *testing.T) {
	bcube22 := bcube21()
	bcube22.K = 2
	down := bcube21()
	down.Links = []lab.LinkSpec{{Endpoints: []string{"h1:eth0", "s0.0:p1"}, Down: true}}
	wait := threeFlows()
	wait[1].After = 1
	for _, c := range []struct {
		name  string
		spec  lab.Spec
		flows []workload.Flow
		cc    transport.CC
		mtu   int
		want  string
	}{
		{"hpcc path", bcube22, nil, transport.CCHPCC, 0, "longest path crosses 7 switches"},
		{"down", down, nil, transport.CCDCQCN, 0, "is down"},
		{"wait", bcube21(), wait, transport.CCDCQCN, 0, "waits for group 1"},
		{"mtu", bcube21(), nil, transport.CCDCQCN, 100, "mtu 100"},
		{"self", bcube21(), []workload.Flow{{ID: 7, Src: 1, Dst: 1, Size: 10}}, transport.CCDCQCN, 0, "flow 7 from h1 to h1"},
		{"none", bcube21(), nil, transport.CCDCQCN, 0, "no flows"},
		{"host link", bcube21(), nil, transport.CCDCQCN, 0, `host link "both"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			flows := c.flows
			if flows == nil && strings.HasPrefix(c.name, "host link") {
				flows = threeFlows()
			}
			hl := HostLink("")
			if c.name == "host link" {
				hl = "both"
			}
			_, err := New(Input{Plan: plan(t, c.spec), Flows: flows, Duration: time.Second, CC: c.cc, MTU: c.mtu, HostLink: hl})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// With host links at the servers' whole capacity a BCube(2,1) host's link
// to its relay runs at its two ports' 200 Gb/s, every flow at one port's
// 100 (QP_MAX_RATE, the last setting), the relay's PFC headroom still
// holds at the link's rate, and the flows' ideal in the sim's network
// is shorter than with the default's 100 Gb/s host link. A fabric
// whose servers have one port has no host links: the option changes
// nothing there.
func TestExportHostLinkPorts(t *testing.T) {
	in := Input{Plan: plan(t, bcube21()), Flows: threeFlows(), Duration: 10 * time.Millisecond, CC: transport.CCDCQCN}
	def, err := New(in)
	if err != nil {
		t.Fatal(err)
	}
	in.HostLink = HostLinkPorts
	sim, err := New(in)
	if err != nil {
		t.Fatal(err)
	}
	if sim.HostRate != 200e9 || sim.QPMaxRate != 100e9 || sim.HostLink != HostLinkPorts {
		t.Errorf("host link %s, flows at most %s (%s), want 200Gbps and 100Gbps (ports)", rateText(sim.HostRate), rateText(sim.QPMaxRate), sim.HostLink)
	}
	if def.QPMaxRate != 0 || def.HostRate != 100e9 || def.HostLink != HostLinkPort {
		t.Errorf("the default: host link %s, QPMaxRate %d (%s), want 100Gbps and none (port)", rateText(def.HostRate), def.QPMaxRate, def.HostLink)
	}
	last := sim.Settings[len(sim.Settings)-1]
	if last != (Setting{QPMaxRateKey, "100000Mb/s"}) {
		t.Errorf("last setting %v, want %s 100000Mb/s", last, QPMaxRateKey)
	}
	for _, st := range def.Settings {
		if st.Key == QPMaxRateKey {
			t.Errorf("the default export sets %s", QPMaxRateKey)
		}
	}
	// The flows' rate steps are one port's, as by default; INT counts
	// the NIC's rate; the relays' host ports, of a rate of their own,
	// mark as the fastest fabric port does.
	if len(sim.Settings) != len(def.Settings)+1 {
		t.Fatalf("%d settings, want the default's %d and %s", len(sim.Settings), len(def.Settings), QPMaxRateKey)
	}
	maps := map[string]string{"KMAX_MAP": "2 100000000000 400 200000000000 400", "KMIN_MAP": "2 100000000000 100 200000000000 100",
		"PMAX_MAP": "2 100000000000 0.20 200000000000 0.20", "INT_MULTI": "8"}
	for i, d := range def.Settings {
		st := sim.Settings[i]
		want, ok := maps[st.Key]
		if !ok {
			want = d.Value
		}
		if st.Key != d.Key || st.Value != want {
			t.Errorf("setting %s is %s with host link ports, want %s (by default %s)", st.Key, st.Value, want, d.Value)
		}
	}
	for _, l := range sim.Links {
		if l.A.Port == HostPort && (l.RateBps != 200e9 || l.Delay <= 0) {
			t.Errorf("host link %v at %s and %v, want 200Gbps", l, rateText(l.RateBps), l.Delay)
		}
	}
	for i, f := range sim.Flows {
		if f.SimIdeal >= def.Flows[i].SimIdeal {
			t.Errorf("flow %d: ideal %v in the sim's network with ports, %v with one port's host link: want it shorter", f.ID, f.SimIdeal, def.Flows[i].SimIdeal)
		}
	}
	var readme string
	for _, f := range sim.Files() {
		if f.Name == ReadmeFile {
			readme = f.Data
		}
	}
	if !strings.Contains(readme, "every flow starts at and stays under 100Gbps") || !strings.Contains(readme, "qp-rate.sh") {
		t.Errorf("README does not say the flows' cap and what reads it:\n%s", readme)
	}
	ls := Input{Plan: plan(t, leafSpine()), Flows: threeFlows(), Duration: 10 * time.Millisecond, CC: transport.CCDCQCN, HostLink: HostLinkPorts}
	if sim, err := New(ls); err != nil || sim.QPMaxRate != 0 || sim.HostRate != 0 {
		t.Errorf("leaf-spine with host link ports: %v, QPMaxRate %d, HostRate %d; want no host links", err, sim.QPMaxRate, sim.HostRate)
	}
	// Windowed congestion controls too: the sim sizes their windows by
	// the longest path's slowest link, not the host link, and scales a
	// varying one by the capped rate.
	for _, cc := range []transport.CC{transport.CCHPCC, transport.CCDCTCP, transport.CCDCQCNWin} {
		in.CC = cc
		sim, err := New(in)
		if err != nil {
			t.Errorf("cc %s with host link ports: %v", cc, err)
			continue
		}
		set := map[string]string{}
		for _, st := range sim.Settings {
			set[st.Key] = st.Value
		}
		if set["HAS_WIN"] != "1" || set[QPMaxRateKey] != "100000Mb/s" || sim.HostRate != 200e9 {
			t.Errorf("cc %s with host link ports: HAS_WIN %q, %s %q, host link %s", cc, set["HAS_WIN"], QPMaxRateKey, set[QPMaxRateKey], rateText(sim.HostRate))
		}
	}
}

// Write creates the directory, refuses one with anything in it, and
// over an export replaces it and removes the sim's old outputs.
func TestWrite(t *testing.T) {
	sim := export(t, bcube21(), transport.CCDCQCN)
	dir := filepath.Join(t.TempDir(), "out")
	if err := sim.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	for _, f := range sim.Files() {
		if b, err := os.ReadFile(filepath.Join(dir, f.Name)); err != nil || string(b) != f.Data {
			t.Errorf("%s: %v, or not what Files has", f.Name, err)
		}
	}
	if err := sim.Write(dir, false); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("Write into an export: %v, want it refused", err)
	}
	if err := os.WriteFile(filepath.Join(dir, FCTFile), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sim.Write(dir, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FCTFile)); !os.IsNotExist(err) {
		t.Errorf("an old fct.txt outlives the export written over it: %v", err)
	}
}

// The export's PFC note names bcfab's threshold as the lab runs it:
// static X_off and X_on, or a target's dynamic one with an empty
// switch's X_off, beside the sim's.
func TestExportPFCNote(t *testing.T) {
	note := func(s lab.Spec) string {
		t.Helper()
		for _, n := range export(t, s, transport.CCDCQCN).Notes {
			if strings.HasPrefix(n, "PFC: ") {
				return n
			}
		}
		t.Fatal("no PFC note")
		return ""
	}
	if n := note(leafSpine()); !strings.Contains(n, "bcfab pauses an ingress queue at X_off 150000 bytes, resuming it at X_on 100000") {
		t.Errorf("static: %s", n)
	}
	s := leafSpine()
	s.Target = scale.Papers()
	s.Target.PFCAlpha, s.Target.PFCHeadroomBDPs = 0.125, 1.5
	// A leaf's two host ports hold 37,500 bytes of headroom each and its
	// 200 Gb/s uplink 75,000: 0.125 x 4,850,000 at a host port, twice
	// the share at the uplink; the spine's two ports leave more.
	want := "bcfab pauses an ingress queue at a dynamic X_off, 0.125 of its free shared buffer (606250 bytes on an empty switch), resuming it 50000 bytes below on ports of 100Gbps; " +
		"a dynamic X_off, 0.25 of its free shared buffer (1212500 bytes on an empty switch), resuming it 100000 bytes below on ports of 200Gbps"
	if n := note(s); !strings.Contains(n, want) {
		t.Errorf("dynamic: %s\nwant %s", n, want)
	}
}
