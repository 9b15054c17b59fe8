package experiment

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A point whose D rate: auto chose and that fell behind at it (INVALID
// by lateness alone) runs again at twice the D: its attempt moves to
// runs/<point>.d<D>, its choice says why, and config.yaml keeps the new
// D. A point INVALID for any other reason, or whose D was not chosen,
// does not.
func TestSlowerAfterLateness(t *testing.T) {
	c, err := Parse([]byte(autoFile), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ResolveAuto(autoCapacity()); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var progress bytes.Buffer
	x := &runner{c: c, o: RunOptions{Out: out}, progress: &progress}
	p := c.Points()[0]
	d := c.autoD(p)
	if d == 0 {
		t.Fatalf("%s: no D chosen", p.ID)
	}
	if err := os.MkdirAll(filepath.Join(out, "runs", p.ID), 0o755); err != nil {
		t.Fatal(err)
	}
	late := Result{Point: p, Problems: []string{"s0.0/p1 lost 52ms of the lab's link time, 1.49% of the run (limit 1.00%): its daemon was not scheduled in time"}}
	died := Result{Point: p, Problems: []string{"run failed: worker w0 died"}}
	ctx := context.Background()

	// The config as it was, to compare the flows with after the rerun.
	was, err := Parse(mustYAML(t, c), false)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := x.slower(ctx, p, died); again || err != nil {
		t.Fatalf("a point whose worker died: again %v (%v), want not", again, err)
	}
	again, err := x.slower(ctx, p, late)
	if err != nil || !again {
		t.Fatalf("a late point: again %v (%v), want again", again, err)
	}
	if got := c.autoD(p); got != 2*d {
		t.Errorf("D %g after falling behind at %g, want %g", got, d, 2*d)
	}
	// The same flows, on the target's clock: its schemes still compare.
	sameFlows(t, was, p, c, p)
	kept := filepath.Join(out, "runs", fmt.Sprintf("%s.d%g", p.ID, d))
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("the attempt is not kept in %s: %v", kept, err)
	}
	if !strings.Contains(c.AutoD[p.ID].Why, "fell behind at D = ") || !strings.Contains(progress.String(), "running it again at D = ") {
		t.Errorf("why %q, progress %q: want the lateness named", c.AutoD[p.ID].Why, progress.String())
	}
	cfg, err := os.ReadFile(filepath.Join(out, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(cfg, false)
	if err != nil || back.autoD(p) != 2*d {
		t.Errorf("config.yaml: D %g (%v), want %g", back.autoD(p), err, 2*d)
	}

	// A contender of its own D keeps it, late or not.
	for _, q := range c.Points() {
		if sc, _ := ParseContender(q.Contender); sc.D != 0 {
			if again, _ := x.slower(ctx, q, Result{Point: q, Problems: late.Problems}); again {
				t.Errorf("%s: ran again at another D than its own", q.ID)
			}
			break
		}
	}
}

// mustYAML is c as config.yaml writes it.
func mustYAML(t *testing.T, c *Config) []byte {
	t.Helper()
	y, err := ConfigYAML(c)
	if err != nil {
		t.Fatal(err)
	}
	return y
}
