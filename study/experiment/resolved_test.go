package experiment

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/lab"
)

// Every built-in experiment's labs, full and quick, under every scheme,
// resolve to the specs and node configs they resolved to when the golden
// file was written (UPDATE_GOLDEN=1 writes it again).
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
	golden := "testdata/resolved-labs.txt"
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d:\n got %s\nwant %s\n(UPDATE_GOLDEN=1 writes what it gets, for a change meant to change it)", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines, want %d (UPDATE_GOLDEN=1 writes what it gets, for a change meant to change it)", len(gl), len(wl))
	}
}
