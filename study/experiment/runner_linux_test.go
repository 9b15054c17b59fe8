//go:build linux

package experiment

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testns"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/node/scheme"
)

// labBins builds the daemons a lab runs into a directory of the test's.
func labBins(t *testing.T) string {
	testns.RequireLab(t)
	return testns.Bins(t, "swd", "hostd", "bcfabd")
}

// e2e is a tiny experiment: a parameter server on BCube(2,1) whose pull
// waits for the push, under two schemes.
const e2e = `
name: e2e
kind: workload
topology: {n: 2, k: 1}
lab: {rate: %s, ecn: true, name: %s}
schemes: %s
health: %s
workload:
  loads: [0]
  duration: 2s
  pattern: {kind: ps, size: %s, period: 1s, wait: true}
`

// TestRunLab runs two tiny experiments end to end on real labs: one
// that the machine carries (every file written, every point valid and
// plotted, the pull after the push, one schedule for both schemes), and
// one at a rate it cannot carry, judged by strict health limits (every
// point INVALID, and not plotted).
func TestRunLab(t *testing.T) {
	testns.RequireRoot(t)
	if testing.Short() {
		t.Skip("brings up labs: not in -short")
	}
	bins, runRoot := labBins(t), t.TempDir()
	name := "xe" + time.Now().Format("150405")
	runFor := func(t *testing.T, limit time.Duration, rate, schemes, health, size, out string) (*Report, error) {
		src := fmt.Sprintf(e2e, rate, name, schemes, health, size)
		c, err := Parse([]byte(src), false)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		var progress strings.Builder
		rep, err := Run(ctx, c, RunOptions{Out: out, Source: []byte(src), BinDir: bins, RunRoot: runRoot, Progress: &progress})
		t.Log(progress.String())
		return rep, err
	}
	run := func(t *testing.T, rate, schemes, health, size, out string) *Report {
		t.Helper()
		rep, err := runFor(t, 2*time.Minute, rate, schemes, health, size, out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(runRoot, name)); !os.IsNotExist(err) {
			t.Errorf("lab %s still has its run directory after the run: %v", name, err)
			lab.Down(runRoot, name, nil)
		}
		return rep
	}

	// A point the machine was late for is run again, the whole
	// experiment on a fresh directory (lateRun).
	var out string
	var rep *Report
	outs, tries := t.TempDir(), 0 // an attempt's own TempDir is gone with it
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		tries++
		out = filepath.Join(outs, fmt.Sprintf("good%d", tries))
		rep = run(t, "10M", "[portfc, irn]", "{}", "64KB", out)
		return lateRun(t, rep)
	})
	for _, f := range []string{"source.yaml", "config.yaml", "build.json", "summary.csv", "bins.csv", "results.json", "README.md",
		"runs/none-0-portfc-s1-r1/spec.json", "runs/none-0-portfc-s1-r1/records.csv", "runs/none-0-portfc-s1-r1/queues.csv",
		"runs/none-0-portfc-s1-r1/report.json", "runs/none-0-irn-s1-r1/records.csv", "plots/jct-avg-none.png", "plots/jct-avg-none.svg", "plots/push-avg-none.png",
		"plots/queue-cdf-none-load0.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Its flows are a pattern's, none a Poisson background's: no size bin
	// holds them, so there is no slowdown-by-size plot, and the README
	// gives them in a table of their own.
	if _, err := os.Stat(filepath.Join(out, "plots/slowdown-size-none-load0.png")); err == nil {
		t.Error("a slowdown-by-size plot of an experiment with no background flows")
	}
	if b, err := os.ReadFile(filepath.Join(out, "README.md")); err != nil || !strings.Contains(string(b), "Flows outside the size bins") {
		t.Errorf("README.md has no table of the flows outside the size bins: %v", err)
	}
	var build map[string]any
	if b, err := os.ReadFile(filepath.Join(out, "build.json")); err != nil || json.Unmarshal(b, &build) != nil || build["go_version"] == "" {
		t.Errorf("build.json: %v %v", err, build)
	}
	var spec lab.Spec
	if b, err := os.ReadFile(filepath.Join(out, "runs/none-0-irn-s1-r1/spec.json")); err != nil || json.Unmarshal(b, &spec) != nil || spec.FC != scheme.NameNone || spec.RateBps != 10e6 {
		t.Errorf("spec.json of the irn point: %v %+v", err, spec)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2", len(rep.Results))
	}
	for _, r := range rep.Results {
		if !r.Valid {
			t.Errorf("%s: INVALID: %v", r.ID, r.Problems)
		}
		if done, _ := r.Get("completed"); done != 12 {
			t.Errorf("%s: %v of 12 flows completed", r.ID, done)
		}
		if ev, _ := r.Get("jct_complete"); ev != 2 {
			t.Errorf("%s: %v of 2 events complete", r.ID, ev)
		}
		// The pull waited for the push: each event's first pull flow
		// started after its last push flow ended.
		if gap, ok := r.Get("pull_after_push_min_ms"); !ok || gap < 0 {
			t.Errorf("%s: pull started %v ms after the push ended (want >= 0)", r.ID, gap)
		}
		push, _ := r.Get("push_avg_ms")
		if jct, _ := r.Get("jct_avg_ms"); !(push > 0 && push < jct) {
			t.Errorf("%s: the push took %v ms of a job of %v ms", r.ID, push, jct)
		}
		if r.Schedule != rep.Results[0].Schedule || r.Schedule == "" {
			t.Errorf("%s: schedule %s, the first point's %s", r.ID, r.Schedule, rep.Results[0].Schedule)
		}
	}
	f, err := os.Open(filepath.Join(out, "runs/none-0-portfc-s1-r1/records.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := workload.ReadCSV(f)
	f.Close()
	if err != nil || len(recs) != 12 {
		t.Errorf("records.csv: %d records, %v", len(recs), err)
	}
	for _, p := range rep.Plots {
		if strings.Contains(p.Note, "INVALID") {
			t.Errorf("plot %s: note %q with every point valid", p.Name, p.Note)
		}
	}

	// 1 Gb/s links are beyond this machine's emulation; strict limits
	// make sure any lost link time, and any miss of the model's one-hop
	// RTT by the links, counts.
	out = filepath.Join(t.TempDir(), "bad")
	rep = run(t, "1G", "[portfc]", "{max_lost_share: 0.000001, min_lost: 1ns, max_rtt_error: 0.000001, min_rtt_error: 1ns}", "4MB", out)
	if len(rep.Results) != 1 || rep.Results[0].Valid {
		t.Fatalf("at 1 Gb/s with strict limits: %+v, want one INVALID point", rep.Results)
	}
	t.Logf("invalid as expected: %v", rep.Results[0].Problems)
	readme, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil || !strings.Contains(string(readme), "**INVALID**") || !strings.Contains(string(readme), "0 valid") {
		t.Errorf("README.md does not mark the point INVALID: %v\n%s", err, readme)
	}
	sf, err := os.Open(filepath.Join(out, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(sf).ReadAll()
	sf.Close()
	col := func(name string) int { return slices.Index(rows[0], name) }
	if err != nil || len(rows) != 2 || col("valid") < 0 || rows[1][col("valid")] != "false" || rows[1][col("problems")] == "" {
		t.Errorf("summary.csv: %v %v", err, rows)
	}
	for _, p := range rep.Plots {
		if !strings.Contains(p.Note, "INVALID: none-0-portfc-s1-r1") {
			t.Errorf("plot %s does not say its only point is left out: %q", p.Name, p.Note)
		}
	}

	// Interrupted (as by Ctrl-C) in the first point: its lab comes down,
	// the files say the run stopped early. A rerun the machine was late
	// for is tried again from the interruption, on a fresh directory
	// (lateRun).
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		tries++
		out = filepath.Join(outs, fmt.Sprintf("stopped%d", tries))
		var err error
		rep, err = runFor(t, 2*time.Second, "10M", "[portfc, irn]", "{}", "64KB", out)
		if err == nil || rep == nil || !rep.Interrupted || len(rep.Results) != 1 || rep.Results[0].Valid {
			t.Fatalf("interrupted run: %v, report %+v", err, rep)
		}
		if _, err := os.Stat(filepath.Join(runRoot, name)); !os.IsNotExist(err) {
			t.Errorf("lab %s not taken down after the interruption: %v", name, err)
			lab.Down(runRoot, name, nil)
		}
		if readme, err := os.ReadFile(filepath.Join(out, "README.md")); err != nil || !strings.Contains(string(readme), "stopped early") {
			t.Errorf("README.md of the interrupted run: %v\n%s", err, readme)
		}

		// Run again in place: the interrupted point (its files kept as
		// attempt 1) and the point the run never reached, both valid now, in
		// the experiment's order, with every file rewritten.
		var progress strings.Builder
		rep, err = RunAgain(context.Background(), RunOptions{Out: out, BinDir: bins, RunRoot: runRoot, Progress: &progress}, nil, "")
		t.Log(progress.String())
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != 2 || rep.Results[0].ID != "none-0-portfc-s1-r1" || rep.Results[1].ID != "none-0-irn-s1-r1" {
			t.Fatalf("after the rerun: %d results: %+v", len(rep.Results), rep.Results)
		}
		if late := lateRun(t, rep); late != "" {
			return late
		}
		return ""
	})
	if len(rep.Reruns) != 2 || rep.Reruns[0].Attempt != 2 || rep.Reruns[0].Kept != "runs/none-0-portfc-s1-r1.attempt1" ||
		rep.Reruns[1].Attempt != 1 || rep.Reruns[1].Kept != "" || !rep.Reruns[0].Valid || !rep.Reruns[1].Valid {
		t.Errorf("reruns: %+v", rep.Reruns)
	}
	for _, f := range []string{"runs/none-0-portfc-s1-r1.attempt1/result.json", "runs/none-0-portfc-s1-r1/records.csv", "runs/none-0-irn-s1-r1/records.csv", "plots/jct-avg-none.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s after the rerun: %v", f, err)
		}
	}
	if readme, err := os.ReadFile(filepath.Join(out, "README.md")); err != nil || !strings.Contains(string(readme), "## Points run again") || !strings.Contains(string(readme), "2 of 2 points ran, 2 valid") {
		t.Errorf("README.md after the rerun: %v\n%s", err, readme)
	}
	if _, err := RunAgain(context.Background(), RunOptions{Out: out, BinDir: bins, RunRoot: runRoot}, nil, ""); err == nil || !strings.Contains(err.Error(), "nothing to run again") {
		t.Errorf("a rerun of a run whose points are all valid: %v", err)
	}
}

// lateRun is why rep's INVALID points were invalid when every one was
// only because the emulation fell behind (lab.Lateness), for
// testtool.RetryLate to run the experiment again; "" when every point is
// valid. Any other INVALID point fails t at once.
func lateRun(t *testing.T, rep *Report) string {
	t.Helper()
	var late []string
	for _, r := range rep.Results {
		if r.Valid {
			continue
		}
		why, ok := lab.Lateness(r.Problems)
		if !ok {
			t.Fatalf("%s: INVALID, and not only late: %v", r.ID, r.Problems)
		}
		late = append(late, r.ID+": "+why)
	}
	return strings.Join(late, "; ")
}
