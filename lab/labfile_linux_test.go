package lab

import (
	"testing"
)

// A lab file's cable overrides are in force from bring-up, at both ends:
// rate, injected loss, down.
func TestLabFileLab(t *testing.T) {
	s := realSpec(t, 2, 1)
	f, err := ReadFile("../examples/bcube21-pfc-lossy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f.Name, f.BinDir, f.RunRoot, f.HealthTimeout = s.Name, s.BinDir, s.RunRoot, s.HealthTimeout
	f.Links = append(f.Links, LinkSpec{Endpoints: []string{"h0:eth0", "s0.0:p0"}, RateBps: 50e6})
	if _, err := Up(t.Context(), f, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		node, port string
		rate       uint64
		loss       int
		down       bool
	}{
		{"h1", "eth0", 100e6, 10_000, false}, {"s0.0", "p1", 100e6, 10_000, false},
		{"h3", "eth1", 100e6, 0, true}, {"s1.1", "p1", 100e6, 0, true},
		{"h0", "eth0", 50e6, 0, false}, {"s0.0", "p0", 50e6, 0, false},
		{"h0", "eth1", 100e6, 0, false}, {"s1.0", "p1", 100e6, 0, false},
	} {
		st, err := Stats(s.RunRoot, s.Name, c.node)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range st.Ports {
			if p.Name == c.port {
				found = true
				if p.RateBps != c.rate || p.LossPPM != c.loss || p.LinkDown != c.down {
					t.Errorf("%s %s: rate %d, loss %d ppm, down %v; want %d, %d, %v", c.node, c.port, p.RateBps, p.LossPPM, p.LinkDown, c.rate, c.loss, c.down)
				}
			}
		}
		if !found {
			t.Errorf("%s has no port %s", c.node, c.port)
		}
	}
	// Every node's XDP program (one serves all its ports) and every
	// server's classifier are loaded (8 and 4 in BCube(2,1); other labs
	// may add to the count).
	if n := xdpPrograms(t); n < 12 {
		t.Errorf("%d daemon BPF programs loaded, want at least 12", n)
	}
	// The fabric carries traffic meanwhile: h0 reaches h2 (over level 1).
	if err := ping(s.Name, "h0", "198.18.0.2"); err != nil {
		t.Error(err)
	}
}
