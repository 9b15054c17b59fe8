package ns3

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/golden"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/wire/transport"
)

// simFCT is the sim's output for bcube21's export of threeFlows, written
// by hand as third.cc's qp_finish writes it: sip dip sport dport size
// start fct standalone_fct. Hosts 0, 1, 2 and 3 are 11.0.0.1, 11.0.1.1,
// 11.0.2.1 and 11.0.3.1; flow 2 (host 2) did not complete.
const simFCT = `0b000001 0b000301 10000 100 20000 2000000000 12000 10900
0b000101 0b000301 10000 100 1000000 2000005000 180000 90500
`

// bcfabRecords are bcfab's records of the same three flows, on the
// target's clock as lab workload writes them (lab times x D = 1000).
func bcfabRecords(sim *Sim) []workload.FlowRecord {
	fct := map[int]time.Duration{0: 11_000, 1: 200_000, 2: 170_000}
	var recs []workload.FlowRecord
	for _, f := range sim.Flows {
		r := workload.FlowRecord{ID: f.ID, Src: f.Src, Dst: f.Dst, Size: f.Size, Start: 1000 * f.Start, Kind: f.Kind, Group: f.Group}
		r.Complete(1000*fct[f.ID], 1000*f.Ideal)
		r.SetTarget(1000)
		recs = append(recs, r)
	}
	return recs
}

func TestReadFCT(t *testing.T) {
	lines, err := ReadFCT(strings.NewReader(simFCT))
	if err != nil {
		t.Fatal(err)
	}
	want := FCTLine{Src: 1, Dst: 3, SPort: 10000, DPort: 100, Size: 1_000_000, Start: 2_000_005_000, FCT: 180_000, Standalone: 90_500}
	if len(lines) != 2 || lines[1] != want {
		t.Fatalf("ReadFCT: %+v, want 2 lines, the second %+v", lines, want)
	}
	for _, c := range []struct{ line, want string }{
		{"0b000001 0b000301 10000 100 20000 2000000000 12000", "7 fields, want 8"},
		{"0b000001 0a000301 10000 100 20000 2000000000 12000 1", "dip 0a000301: no host's address"},
		{"zz 0b000301 10000 100 20000 2000000000 12000 1", `sip "zz": not a hex address`},
		{"0b000001 0b000301 10000 100 -5 2000000000 12000 1", `size "-5"`},
	} {
		if _, err := ReadFCT(strings.NewReader("\n" + c.line + "\n")); err == nil || !strings.Contains(err.Error(), "line 2: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadFCT(%q): %v, want an error at line 2 with %q", c.line, err, c.want)
		}
	}
}

// The sim's output joins back to the export's flows by host and source
// port, and the comparison of both tools' records is the golden table:
// flow 0 takes 12 µs in the sim and 11 in bcfab, flow 1 180 µs and
// 200, flow 2 did not complete in the sim.
func TestCompare(t *testing.T) {
	sim := export(t, bcube21(), transport.CCDCQCN)
	var flows []Flow
	for _, f := range sim.Files() {
		if f.Name == FlowsFile {
			var err error
			if flows, err = ReadFlows(strings.NewReader(f.Data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(flows) != len(sim.Flows) || flows[1] != sim.Flows[1] {
		t.Fatalf("flows.csv reads back as %+v, want %+v", flows, sim.Flows)
	}
	lines, err := ReadFCT(strings.NewReader(simFCT))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := SimRecords(flows, lines)
	if err != nil {
		t.Fatal(err)
	}
	// Flow 0, 20 KB from h0 to h3 of BCube(2,1), alone in the sim's
	// network: 6 links (the two hosts' 170 ns links to their relays
	// and 4 cables of 1 µs), all at 100 Gb/s; 20 packets of 1024 + 36
	// bytes, ACKs of 48:
	//   20,720 B on the first link           1,657.6 ns
	//   + 5 more hops of one packet (1,060 B)   424   ns
	//   + the delays, there and back      2 x 4,340   ns
	//   + 6 ACK serializations (48 B)          23.04 ns
	// = 10,784.64 ns.
	if f := flows[0]; f.SimIdeal != 10785 || f.Ideal == f.SimIdeal {
		t.Errorf("flow 0's ideal in the sim's network %v, want 10.785µs (bcfab's %v)", f.SimIdeal, f.Ideal)
	}
	if r := recs[1]; r.ID != 1 || !r.Completed || r.FCT != 180*time.Microsecond || r.TargetFCT != r.FCT || r.IdealFCT != flows[1].SimIdeal {
		t.Errorf("the sim's record of flow 1: %+v", r)
	}
	if recs[2].Completed {
		t.Errorf("flow 2 has no line in fct.txt, yet completed: %+v", recs[2])
	}
	c, err := Compare(flows, bcfabRecords(sim), recs, workload.DefaultBins)
	if err != nil {
		t.Fatal(err)
	}
	// Nearest rank: the p50 of two ratios is the smaller.
	if c.Both != 2 || math.Abs(c.Ratio.P50-0.9) > 1e-9 || math.Abs(c.Ratio.Max-12.0/11) > 1e-9 || math.Abs(c.Ratio.Min-0.9) > 1e-9 {
		t.Errorf("flow for flow: %d flows, ratio %+v; want 2, p50 0.9, from 0.9 to 12/11", c.Both, c.Ratio)
	}
	// Flow 0 (20 KB) is in 10KB-100KB; flows 1 and 2 (1 MB, the bound)
	// in 100KB-1MB.
	if b := c.Sim.Bins[1]; b.Completed != 1 || b.FCT.Mean != 12*time.Microsecond || b.Slowdown.P50 != float64(12000)/float64(flows[0].SimIdeal) {
		t.Errorf("the sim's 10KB-100KB bin: %+v", b)
	}
	var text bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "compare.txt"), text.String())
}

// Records of another schedule, or another MTU, are refused; so is sim
// output of another export.
func TestCompareRefuses(t *testing.T) {
	sim := export(t, bcube21(), transport.CCDCQCN)
	flows := sim.Flows
	lines, _ := ReadFCT(strings.NewReader(simFCT))
	recs, err := SimRecords(flows, lines)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func([]workload.FlowRecord) []workload.FlowRecord
		want string
	}{
		{"size", func(r []workload.FlowRecord) []workload.FlowRecord { r[0].Size++; return r }, "another schedule"},
		{"missing", func(r []workload.FlowRecord) []workload.FlowRecord { return r[1:] }, "lack flow 0"},
		{"stranger", func(r []workload.FlowRecord) []workload.FlowRecord { r[0].ID = 9; return r }, "flow 9 is not in the export"},
		{"mtu", func(r []workload.FlowRecord) []workload.FlowRecord { r[0].TargetIdealFCT += time.Microsecond; return r }, "--mtu"},
		{"no target", func(r []workload.FlowRecord) []workload.FlowRecord { r[0].TargetFCT = 0; return r }, "no FCT in the target"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Compare(flows, c.edit(bcfabRecords(sim)), recs, workload.DefaultBins); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Compare: %v, want an error with %q", err, c.want)
			}
		})
	}
	for _, c := range []struct{ line, want string }{
		{"0b000001 0b000301 10009 100 20000 2000000000 1 1", "no flow of the export from host 0 to 3 with source port 10009"},
		{"0b000001 0b000301 10000 100 20001 2000000000 1 1", "20001 bytes, flows.csv has 20000"},
		{"0b000001 0b000301 10000 100 20000 2000900000 1 1", "started at 2000900000 ns"},
		{"0b000001 0b000301 10000 100 20000 2000000000 1 1\n0b000001 0b000301 10000 100 20000 2000000000 1 1", "completed twice"},
	} {
		lines, err := ReadFCT(strings.NewReader(c.line))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := SimRecords(flows, lines); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SimRecords(%q): %v, want an error with %q", c.line, err, c.want)
		}
	}
}

// bcfab's records are read from lab workload's --records CSV and JSON
// lines, and from its --json report, whose model gives target times to
// records without them.
func TestReadRecords(t *testing.T) {
	sim := export(t, bcube21(), transport.CCDCQCN)
	want := bcfabRecords(sim)
	dir := t.TempDir()
	var csv, jsonl bytes.Buffer
	if err := workload.WriteCSV(&csv, want); err != nil {
		t.Fatal(err)
	}
	if err := workload.WriteJSONL(&jsonl, want); err != nil {
		t.Fatal(err)
	}
	bare := bcfabRecords(sim)
	for i := range bare {
		bare[i].TargetStart, bare[i].TargetFCT, bare[i].TargetIdealFCT = 0, 0, 0
	}
	report, err := json.Marshal(map[string]any{"lab": "ns", "model": map[string]any{"dilation": 1000}, "records": bare})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"r.csv": csv.Bytes(), "r.jsonl": jsonl.Bytes(), "r.json": jsonl.Bytes(), "run.json": report} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadRecords(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(want) || got[1].TargetFCT != want[1].TargetFCT || got[1].TargetIdealFCT != want[1].TargetIdealFCT {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
}
