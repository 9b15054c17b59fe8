package main

import (
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/scheme"
)

// A cable on the flow's path (h0 eth0 - s0.0 p0) cut for half a second a
// second into an rperf test, then mended. IRN recovers what the cut lost
// by retransmitting and the test ends on time with every stream done;
// a lossless flow reports the gap as its failure and rperf exits 1
// saying so, both well within the test's time plus its drain.
func TestRperfLinkDown(t *testing.T) {
	spec := upLab(t, "rl", lab.Spec{FC: scheme.NamePortFC, RateBps: 20e6})
	cut := func() {
		down, up := true, false
		time.Sleep(time.Second)
		if _, err := lab.SetLink(spec.RunRoot, spec.Name, "h0", "eth0", lab.LinkConfig{Down: &down}); err != nil {
			t.Error(err)
			return
		}
		time.Sleep(500 * time.Millisecond)
		if _, err := lab.SetLink(spec.RunRoot, spec.Name, "h0", "eth0", lab.LinkConfig{Down: &up}); err != nil {
			t.Error(err)
		}
	}
	for _, c := range []struct {
		mode string
		code int
	}{{"irn", 0}, {"lossless", 1}} {
		t.Run(c.mode, func(t *testing.T) {
			// Each attempt cuts the cable again: one run again after a
			// late one must meet the same fault.
			var r result
			var took time.Duration
			testtool.RetryLate(t, 0, func(t *testing.T) string {
				done := make(chan struct{})
				go func() { defer close(done); cut() }()
				start := time.Now()
				var err error
				r, err = runRperf(spec, "h0", "-c", "h1", "-t", "3", "--mode", c.mode, "-J")
				took = time.Since(start)
				<-done
				if err != nil {
					t.Fatal(err)
				}
				return lateRperf(r)
			})
			t.Logf("%s: exit %d after %v; stderr: %s", c.mode, r.code, took.Round(time.Millisecond), strings.TrimSpace(r.stderr))
			if r.code != c.code {
				t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr: %s", c.mode, r.code, c.code, r.stdout, r.stderr)
			}
			if took > 15*time.Second {
				t.Errorf("%s: rperf took %v for a 3 s test", c.mode, took)
			}
			d := parseDoc(t, r)
			switch c.mode {
			case "irn":
				if d.End.Failures != 0 || d.End.RetxBytes == 0 {
					t.Errorf("irn: %d failures, %d bytes retransmitted: the cut's frames must be resent, none fail", d.End.Failures, d.End.RetxBytes)
				}
				for _, s := range d.End.Streams {
					if s.State != "done" {
						t.Errorf("irn: stream %d %s", s.ID, s.State)
					}
				}
			case "lossless":
				if d.End.Failures == 0 || !strings.Contains(r.stderr, "gap") {
					t.Errorf("lossless: %d failures; stderr %q: the cut must be reported as a gap", d.End.Failures, r.stderr)
				}
			}
		})
	}
}
