package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	labpkg "github.com/bcfab/bcfab/lab"
)

// lab calibrate measures the reference point on real labs and stores
// what it measured; lab up --rate auto and an experiment at rate: auto
// then run at the D it gives, and say so. The capacity goes to a file of
// the test's, never the machine's.
func TestCalibrateAndRateAuto(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: brings up labs of real daemons")
	}
	if testing.Short() {
		t.Skip("short: brings up labs of real daemons")
	}
	bins := realBins(t)
	id := fmt.Sprintf("%05x", rand.IntN(1<<20))
	root := t.TempDir()
	file := filepath.Join(t.TempDir(), "capacity.json")
	lab := func(args ...string) (int, string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		code, err := run(append(args, "--run-root", root), &out, &errOut)
		if err != nil {
			errOut.WriteString(err.Error())
		}
		return code, out.String(), errOut.String()
	}

	var c labpkg.Capacity
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		code, out, errs := lab("calibrate", "--name", "ca"+id, "--bin-dir", bins, "--duration", "6s", "--file", file, "--json")
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatalf("calibrate: exit %d, no capacity printed (%v)\n%s%s", code, err, out, errs)
		}
		if why, late := labpkg.Lateness(c.Problems); !c.Valid && late {
			return why
		}
		if code != 0 || !c.Valid {
			t.Fatalf("calibrate: exit %d, %+v\n%s", code, c, errs)
		}
		return ""
	})
	if c.FrameHops == 0 || c.WorkerPerHop <= 0 || c.HopsPerTargetMs <= 0 || c.DataFramesPerTargetMs <= 0 || c.IdlePerHop < 0 || c.D != 1000 {
		t.Errorf("calibrate measured %+v", c)
	}
	stored, err := labpkg.LoadCapacity(file)
	if err != nil || stored.FrameHops != c.FrameHops {
		t.Fatalf("stored capacity: %+v, %v", stored, err)
	}
	t.Logf("calibrate: %v of a worker's CPU per frame-hop, %.0f%% of a CPU; %d frame-hops", c.WorkerPerHop, 100*c.WorkerLoad, c.FrameHops)
	// The D lab up chooses: its own reference schedule (WebSearch at 0.5
	// over a window of its own on this fabric) against the capacity
	// stored, not the calibration run's schedule, whose frames per ms
	// differ a little: a machine whose capacity falls near a step of D
	// would otherwise want another D than lab up rightly takes.
	ref := labpkg.Defaults()
	ref.N, ref.K, ref.RateAuto, ref.FC, ref.ECN = 4, 1, true, "portfc", true
	resolved, err := labpkg.ResolveAutoRate(ref, file)
	if err != nil {
		t.Fatal(err)
	}
	d, why := resolved.Dilation, resolved.RateChoice

	// lab up --rate auto: the reference lab at the D the capacity gives.
	name := "au" + id
	code, out, errs := lab("up", "bcube", "--n", "4", "--k", "1", "--name", name, "--bin-dir", bins, "--fc", "portfc", "--ecn", "--rate", "auto", "--capacity", file)
	t.Cleanup(func() {
		if code, out, errs := lab("down", "--name", name); code != 0 {
			t.Errorf("down: %d\n%s%s", code, out, errs)
		}
	})
	if code != 0 {
		t.Fatalf("up --rate auto: exit %d\n%s%s", code, out, errs)
	}
	if want := fmt.Sprintf("at D = %g", d); !strings.Contains(out, want) || !strings.Contains(out, "rate auto for WebSearch at load 0.5: D = ") {
		t.Errorf("up --rate auto does not run at %s (%s) and say why:\n%s", want, why, out)
	}
	st, err := labpkg.LoadState(root, name)
	if err != nil || st.Spec.Dilation != d || st.Spec.RateChoice == "" {
		t.Errorf("the lab's state: D %g, choice %q (%v); want %g", st.Spec.Dilation, st.Spec.RateChoice, err, d)
	}
	if code, out, errs := lab("down", "--name", name); code != 0 {
		t.Fatalf("down: %d\n%s%s", code, out, errs)
	}

	// An experiment at rate: auto: its point runs at the D chosen, and
	// the README and config.yaml say which and why.
	exp := filepath.Join(t.TempDir(), "auto.yaml")
	src := `name: auto
kind: workload
topology: {n: 2, k: 1}
lab: {rate: auto, name: ax` + id + `}
schemes: [portfc]
workload: {loads: [0.2], cdfs: [storage], duration: 2s}
`
	if err := os.WriteFile(exp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		outDir := filepath.Join(t.TempDir(), "auto")
		code, out, errs := lab("experiment", "run", "-f", exp, "--bin-dir", bins, "--out", outDir, "--capacity", file)
		t.Logf("experiment run: %s%s", out, errs)
		if why := lateExperiment(t, code, outDir); why != "" {
			return why
		}
		if code != 0 {
			t.Fatalf("experiment run: exit %d", code)
		}
		readme, _ := os.ReadFile(filepath.Join(outDir, "README.md"))
		cfg, _ := os.ReadFile(filepath.Join(outDir, "config.yaml"))
		if !strings.Contains(string(readme), "## Rate: auto") || !strings.Contains(string(readme), "| storage-0.2-portfc-s1-r1 | ") {
			t.Errorf("README.md has no account of rate auto:\n%s", readme)
		}
		if !strings.Contains(string(cfg), "rate: auto") || !strings.Contains(string(cfg), "storage-0.2-portfc-s1-r1:") {
			t.Errorf("config.yaml does not keep the D chosen:\n%s", cfg)
		}
		if !strings.Contains(errs, "rate auto: D = ") {
			t.Errorf("the run does not say the D it chose:\n%s", errs)
		}
		return ""
	})
}
