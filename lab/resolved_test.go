package lab

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/internal/testkit/golden"
)

// resolvedText is what a lab of s runs: its spec with defaults applied
// and every node's config, one line each, as JSON (the bin dir, which
// depends on the test binary, left out).
func resolvedText(t *testing.T, s Spec) string {
	t.Helper()
	p, err := NewPlan(s)
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.BinDir = ""
	var b strings.Builder
	j, _ := json.Marshal(p.Spec)
	fmt.Fprintf(&b, "spec %s\n", j)
	for _, n := range p.Nodes {
		j, _ := json.Marshal(n.Config)
		fmt.Fprintf(&b, "%s %x\n", n.Name, sha256.Sum256(j))
	}
	return b.String()
}

// The example lab files resolve to the specs and node configs they
// resolved to when the golden file was written (-update writes
// it again).
func TestResolvedExamples(t *testing.T) {
	examples, _ := filepath.Glob("../examples/*.yaml")
	var b strings.Builder
	for _, e := range examples {
		s, err := ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "# %s\n%s", filepath.Base(e), resolvedText(t, s))
	}
	golden.Check(t, "testdata/resolved-examples.txt", b.String())
}
