package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/internal/testkit/clocktest"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab"
)

// On a real lab at 20 Mb/s (the papers' network at D = 5,000), rperf -t,
// rperf --lat and lab gen --wait read every time and rate on the
// target's clock and label it: a round trip of a few µs, not ms; tens of
// Gb/s, not Mb/s.
func TestReportsTargetClock(t *testing.T) {
	spec := upLab(t, "ck", lab.Spec{RateBps: 20e6})
	check := func(what, out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", what, w, out)
			}
		}
		if bad := clocktest.Unlabelled(out); len(bad) > 0 {
			t.Errorf("%s: times and rates on no one's clock:\n%s\n\n%s", what, strings.Join(bad, "\n"), out)
		}
	}
	r := rperf(t, spec, "h0", "-c", "h3", "-t", "1")
	if r.code != 0 {
		t.Fatalf("rperf -t 1: exit %d: %s", r.code, r.stderr)
	}
	check("rperf -t 1", r.stdout, "1 second of lab time = 200µs in the target", "Bitrate (target)", "Gbits/sec", "in the target (", "In the target: link 100 Gbits/sec")

	r = rperf(t, spec, "h0", "-c", "h3", "--lat", "--iters", "50")
	if r.code != 0 {
		t.Fatalf("rperf --lat: exit %d: %s", r.code, r.stderr)
	}
	check("rperf --lat", r.stdout, "Times and rates in the target", "100 Gbits/sec (target)")
	// The row's minimum round trip: 4 one-µs links there and back, a few
	// µs of the target (the lab's is thousands of µs).
	rows := 0
	for _, line := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == "2" {
			rows++
			if !strings.HasPrefix(f[2], "7.") && !strings.HasPrefix(f[2], "8.") && !strings.HasPrefix(f[2], "9.") {
				t.Errorf("--lat's minimum round trip %s µs, want about 8 µs of the target", f[2])
			}
		}
	}
	if rows != 1 {
		t.Errorf("--lat printed %d rows of 2-byte messages, want 1:\n%s", rows, r.stdout)
	}

	labBin := filepath.Join(labBins(t), "lab")
	if out, err := exec.Command("go", "build", "-o", labBin, "github.com/bcfab/bcfab/cmd/lab").CombinedOutput(); err != nil {
		t.Fatalf("build lab: %v\n%s", err, out)
	}
	var out []byte
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		var err error
		out, err = exec.Command(labBin, "gen", "--run-root", spec.RunRoot, "--name", spec.Name, "h0", "h3", "--bytes", "1M", "--wait").CombinedOutput()
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 3 {
			if why, ok := lab.LateOutput(string(out)); ok {
				return why
			}
		}
		if err != nil {
			t.Fatalf("lab gen --wait: %v\n%s", err, out)
		}
		return ""
	})
	check("lab gen --wait", string(out), "Gbit/s in the target (", "Mbit/s in the lab)", "one-way delay avg ")
}
