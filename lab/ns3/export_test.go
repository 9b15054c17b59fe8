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
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(Input{Plan: plan(t, c.spec), Flows: c.flows, Duration: time.Second, CC: c.cc, MTU: c.mtu})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New: %v, want an error with %q", err, c.want)
			}
		})
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
