//go:build linux

package experiment

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/lab/ns3"
)

// fakeSim is a stand-in for the simulator's program (a checkout's
// simulation/build/scratch/third): it reads the export's flows.csv in
// its working directory and writes fct.txt as the sim would, every flow
// ending after 1.5 of its ideal FCT, in pfc.txt one pause and its
// resume, and on its output one drop. It checks its argument and its library path as the real one
// needs them.
const fakeSim = `#!/bin/sh
set -e
[ "$1" = config.txt ] && [ -f config.txt ] || { echo "want config.txt, got $1" >&2; exit 2; }
case $LD_LIBRARY_PATH in */simulation/build*) ;; *) echo "no library path" >&2; exit 2;; esac
awk -F, 'NR > 1 { printf "0b%04x01 0b%04x01 %d %d %d %d %d %d\n", $4, $5, $6, $7, $8, $10, $14 * 1.5, $14 }' flows.csv > fct.txt
printf '2000001000 5 1 1 1\n2000002000 5 1 1 0\n' > pfc.txt
echo ran
echo '2000001500 5 Drop: queue:1,3: Headroom full'
`

// TestRunSimulator runs an experiment whose one scheme is the simulator
// (ns3:pfc), the program a fake: the export is written in the point's
// directory, the program runs there, and its output becomes the point's
// records on the lab's clock, its slowdowns those the program wrote,
// its pauses counted and what it does not count left empty. No lab
// comes up: it needs no privileges.
func TestRunSimulator(t *testing.T) {
	sim := t.TempDir()
	prog := filepath.Join(sim, "simulation", "build", "scratch", "third")
	if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, []byte(fakeSim), 0o755); err != nil {
		t.Fatal(err)
	}
	src := `
name: sim
kind: workload
fabric: {kind: leafspine, leaves: 2, spines: 1, hosts: 2}
lab: {rate: 20M, ecn: true, name: xsim}
schemes: ["ns3:pfc"]
workload: {cdfs: [websearch], loads: [0.5], duration: 4s}
`
	c, err := Parse([]byte(src), false)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := Run(ctx, c, RunOptions{Out: out, Source: []byte(src), RunRoot: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "scripts/ns3/fetch.sh") {
		t.Errorf("without --ns3: err %v, want one naming how to get the simulator", err)
	}
	out = filepath.Join(t.TempDir(), "out")
	rep, err := Run(ctx, c, RunOptions{Out: out, Source: []byte(src), RunRoot: t.TempDir(), NS3: sim})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || !rep.Results[0].Valid {
		t.Fatalf("results %+v, want one valid", rep.Results)
	}
	res := rep.Results[0]
	dir := filepath.Join(out, "runs", res.Point.ID)
	if res.Point.ID != "websearch-0.5-ns3-pfc-s1-r1" {
		t.Errorf("point %s", res.Point.ID)
	}
	for _, f := range []string{"ns3/config.txt", "ns3/flows.csv", "ns3/fct.txt", "ns3/" + ns3.LogFile, "records.csv", "report.json", "result.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	flows, _ := res.Get("flows")
	done, _ := res.Get("completed")
	if flows == 0 || done != flows {
		t.Errorf("%v of %v flows completed, want all", done, flows)
	}
	if sd, _ := res.Get("slowdown_avg"); math.Abs(sd-1.5) > 0.01 {
		t.Errorf("slowdown_avg %v, want the fake's 1.5", sd)
	}
	if p, _ := res.Get("pauses"); p != 1 {
		t.Errorf("pauses %v, want the one pause of pfc.txt", p)
	}
	if d, _ := res.Get("drops"); d != 1 {
		t.Errorf("drops %v, want the one drop the program printed", d)
	}
	if m, ok := res.Get("ecn_marks"); !ok || !math.IsNaN(m) {
		t.Errorf("ecn_marks %v (%v), want NaN: the simulator counts none", m, ok)
	}
	if res.Dilation != 5000 || res.Target <= 0 {
		t.Errorf("D %v, target time %v: want the lab's D and the run's target time", res.Dilation, res.Target)
	}
	readme, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "ns-3 DCQCN") {
		t.Errorf("README names the scheme otherwise than ns-3 DCQCN:\n%s", readme)
	}
}
