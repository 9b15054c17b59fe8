package experiment

import (
	"strings"
	"testing"
	"time"
)

// Every built-in experiment's README describes its scenario: the papers
// of its figure line named in full, its topology, traffic and phases,
// its durations in lab time and the target's, and what its plots show.
func TestREADMEScenarioUnit(t *testing.T) {
	for _, name := range List() {
		c, _, err := Load(name, "", false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Kind == KindConformance {
			// Closed forms, no paper's figure: its cases instead.
			var b strings.Builder
			if err := WriteREADME(&b, c, &Report{Experiment: name, Started: time.Now()}); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"## Scenario", "**Topology.**", "**Cases.**", "\n1. **alone** (alone check, BCube(2,2)): ", "## Run"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("%s: README lacks %q:\n%s", name, want, b.String())
				}
			}
			continue
		}
		ps := PapersOf(c.Figure)
		if len(ps) == 0 {
			t.Errorf("%s: figure %q names no paper of the papers table", name, c.Figure)
		}
		var b strings.Builder
		if err := WriteREADME(&b, c, &Report{Experiment: name, Started: time.Now()}); err != nil {
			t.Fatal(err)
		}
		readme := b.String()
		// Durations in lab time with the target's beside them, or the
		// target's on its clock.
		clock := "of lab time = "
		if c.Workload.targetClock() {
			clock = "of the target's time"
		}
		for _, want := range append(ps, "## Scenario", "**Reproduces** "+c.Figure, "**Topology.**", clock, "in the target",
			"**What the plots show**", "## Run") {
			if !strings.Contains(readme, want) {
				t.Errorf("%s: README lacks %q:\n%s", name, want, readme)
			}
		}
		if !strings.Contains(readme, "phases.**") || !strings.Contains(readme, "\n1. **") || !strings.Contains(readme, "\n2. **") {
			t.Errorf("%s: README lists no phases:\n%s", name, readme)
		}
	}
	// The hol README explains its two phases, and why PortFC's victim is
	// faster congested than alone.
	c, _, err := Load("hol", "", false)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteREADME(&b, c, &Report{Experiment: "hol"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**alone** (5s of lab time = 1ms in the target)", "**congested** (5s of lab time = 1ms in the target more)",
		"Why a victim can be faster congested than alone", "shares h1's uplink with h1 -> h0",
		"\"Backpressure Flow Control\"", "ACM International Conference on Supercomputing", "IEEE/ACM Transactions on Networking"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("hol README lacks %q:\n%s", want, b.String())
		}
	}
}

// The papers' short names expand in full; "both papers" is the two
// PortFC papers.
func TestPapersOfUnit(t *testing.T) {
	if got := PapersOf("Fig. 4 (both papers); BFC (NSDI 2022) Fig. 8"); len(got) != 3 {
		t.Errorf("both papers and BFC: %q", got)
	}
	if got := PapersOf("ICI (seed paper) Figs."); len(got) != 1 || !strings.Contains(got[0], "Merino") || !strings.Contains(got[0], "seed paper") {
		t.Errorf("ICI: %q", got)
	}
	if got := PapersOf("FC+ (seed paper) Table VIII"); len(got) != 1 || !strings.Contains(got[0], "Near-optimal Deadlock-free Expander") || !strings.Contains(got[0], "Zhang et al.") {
		t.Errorf("FC+: %q", got)
	}
}
