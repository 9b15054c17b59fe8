package experiment

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/internal/testkit/golden"
	"github.com/bcfab/bcfab/lab"
)

// Every built-in experiment's labs, full and quick, under every scheme,
// resolve to the specs and node configs they resolved to when the golden
// file was written (-update writes it again).
func TestResolvedLabs(t *testing.T) {
	var b strings.Builder
	for _, name := range List() {
		for _, quick := range []bool{false, true} {
			c, _, err := Load(name, "", quick)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range c.Contenders {
				sc, err := ParseContender(s)
				if err != nil {
					t.Fatal(err)
				}
				p, err := lab.NewPlan(c.ContenderLabSpec(sc, "", "/run/x"))
				if err != nil {
					t.Fatalf("%s %s: %v", name, s, err)
				}
				p.Spec.BinDir = ""
				j, _ := json.Marshal(p.Spec)
				h := sha256.New()
				for _, n := range p.Nodes {
					j, _ := json.Marshal(n.Config)
					h.Write(j)
				}
				fmt.Fprintf(&b, "%s quick=%v %s: %s nodes %x\n", name, quick, s, j, h.Sum(nil))
			}
		}
	}
	golden.Check(t, "testdata/resolved-labs.txt", b.String())
}
