package lab

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// Inside a lab's namespaces the servers have names: ping h3 from h0
// goes by the hosts file Up wrote, and Down leaves none behind.
func TestHostsByName(t *testing.T) {
	spec := realSpec(t, 2, 1)
	p, err := NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Up(t.Context(), spec, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	for _, ns := range p.Namespaces() {
		if _, err := os.Stat(HostsPath(ns)); err != nil {
			t.Errorf("%s: %v", ns, err)
		}
	}
	if err := ping(spec.Name, "h0", "h3"); err != nil {
		t.Fatalf("ping by name: %v", err)
	}
	if out := run(t, spec.Name, "s0.0", "getent", "hosts", "h2"); !strings.HasPrefix(out, "198.18.0.2 ") {
		t.Errorf("getent hosts h2 in s0.0's namespace: %q", out)
	}
	if err := Down(spec.RunRoot, spec.Name, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	for _, ns := range p.Namespaces() {
		if _, err := os.Lstat(HostsPath(ns)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s's hosts file after down: %v", ns, err)
		}
	}
}
