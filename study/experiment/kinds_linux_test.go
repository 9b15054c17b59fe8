//go:build linux

package experiment

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testns"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
)

// The loop and hol kinds end to end, small, on real labs: a loop point
// under plain PFC and one under PortFC with its relay queue in the round
// (portfc:drr), and a hol point under BFC's hashed queues (bfc:hash).
// Every point is valid; PFC deadlocks in the native network (no
// background flow moves; in the papers' network no loop queue reaches its
// X_off, docs/FIDELITY.md) and
// PortFC keeps every flow moving without a drop; under BFC the victim and
// the congested flow move and nothing is lost.
func TestRunKindsLab(t *testing.T) {
	testns.RequireRoot(t)
	if testing.Short() {
		t.Skip("brings up labs: not in -short")
	}
	run := labRunner(t)
	get := func(r Result, m string) float64 {
		t.Helper()
		v, ok := r.Get(m)
		if !ok {
			t.Fatalf("%s has no %s", r.ID, m)
		}
		return v
	}

	loop := run(`
name: kloop
kind: loop
lab: {rate: 20M, target: native, name: kl` + time.Now().Format("150405") + `}
schemes: [pfc, "portfc:drr"]
loop: {scenarios: [bcube21], warmup: 1s, settle: 1s, measure: 2s}
`)
	if len(loop.Results) != 2 {
		t.Fatalf("loop: %d points, want 2", len(loop.Results))
	}
	for _, r := range loop.Results {
		bg, lp := get(r, "background_mbps"), get(r, "loop_mbps")
		t.Logf("%s: background %.2f Mb/s, loop %.2f Mb/s, deadlocked %v, drops %v", r.ID, bg, lp, get(r, "deadlocked"), get(r, "drops"))
		switch {
		case strings.Contains(r.ID, "pfc") && !strings.Contains(r.ID, "portfc"):
			if bg != 0 || get(r, "deadlocked") != 1 {
				t.Errorf("%s: background %.2f Mb/s, deadlocked %v: plain PFC must deadlock", r.ID, bg, get(r, "deadlocked"))
			}
		default:
			if bg <= 0 || lp <= 0 || get(r, "deadlocked") != 0 || get(r, "drops") != 0 || get(r, "missing") != 0 {
				t.Errorf("%s: background %.2f, loop %.2f Mb/s, deadlocked %v, %v drops, %v missing: PortFC keeps every flow moving, losslessly",
					r.ID, bg, lp, get(r, "deadlocked"), get(r, "drops"), get(r, "missing"))
			}
		}
	}

	hol := run(`
name: khol
kind: hol
lab: {rate: 20M, name: kh` + time.Now().Format("150405") + `}
schemes: ["bfc:hash"]
hol: {phase: 2s, group_flows: 2, group_size: 64KiB}
`)
	if len(hol.Results) != 1 {
		t.Fatalf("hol: %d points, want 1", len(hol.Results))
	}
	r := hol.Results[0]
	t.Logf("%s: victim %.2f -> %.2f Mb/s", r.ID, get(r, "victim_alone_mbps"), get(r, "victim_congested_mbps"))
	if get(r, "victim_alone_mbps") <= 0 || get(r, "victim_congested_mbps") <= 0 {
		t.Errorf("%s: the victim did not move", r.ID)
	}
	if get(r, "drops") != 0 || get(r, "missing") != 0 {
		t.Errorf("%s: %v drops, %v frames missing under a lossless scheme", r.ID, get(r, "drops"), get(r, "missing"))
	}
}

// labRunner returns a function that runs an experiment file on real
// labs, the daemons this test binary's build made, and returns its
// report. An experiment with a point the machine was late for runs
// again, whole (testtool.RetryLate, lateRun); any other INVALID point
// fails the test.
func labRunner(t *testing.T) func(src string) *Report {
	bins, runRoot, outs := labBins(t), t.TempDir(), t.TempDir()
	return func(src string) *Report {
		t.Helper()
		var rep *Report
		testtool.RetryLate(t, 0, func(t *testing.T) string {
			c, err := Parse([]byte(src), false)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			var progress strings.Builder
			out, err := os.MkdirTemp(outs, c.Name)
			if err != nil {
				t.Fatal(err)
			}
			rep, err = Run(ctx, c, RunOptions{Out: out, Source: []byte(src), BinDir: bins, RunRoot: runRoot, Progress: &progress})
			t.Log(progress.String())
			if err != nil {
				t.Fatal(err)
			}
			return lateRun(t, rep)
		})
		return rep
	}
}
