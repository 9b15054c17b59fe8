package lab

import (
	"strings"
	"testing"

	"github.com/bcfab/bcfab/bcube"
)

func TestPeer(t *testing.T) {
	tp := bcube.MustNew(4, 1)
	for _, c := range []struct{ node, port, want string }{
		{"h0", "eth0", "s0.0"},
		{"h0", "eth1", "s1.0"},
		{"h7", "eth0", "s0.1"}, // h7 = (1,3): level-0 switch 1
		{"h7", "eth1", "s1.3"},
		{"s0.1", "p3", "h7"},
		{"s1.3", "p1", "h7"},
		{"h0", "bc0nic", ""},
		{"h0", "eth2", ""},
		{"s0.0", "p4", ""},
		{"x", "p0", ""},
	} {
		if got := Peer(tp, c.node, c.port); got != c.want {
			t.Errorf("Peer(%s, %s) = %q, want %q", c.node, c.port, got, c.want)
		}
	}
}

func stallsOf(tp bcube.Topology, spec ...string) []Stall {
	var out []Stall
	for _, s := range spec {
		f := strings.Fields(s)
		out = append(out, Stall{Node: f[0], Port: f[1], Queue: f[2], Peer: Peer(tp, f[0], f[1])})
	}
	return out
}

func cycleString(c []Stall) string {
	var parts []string
	for _, s := range c {
		parts = append(parts, s.Node+" "+s.Port+" "+s.Queue)
	}
	return strings.Join(parts, ", ")
}

func TestFindCycle(t *testing.T) {
	tp := bcube.MustNew(2, 1)
	// The PFC deadlock of the loop scenario, plus a stall off the cycle.
	loop := stallsOf(tp, "s1.0 p0 P3", "h1 eth1 P3", "s0.1 p0 P3", "h0 eth0 P3", "s0.0 p1 P3",
		"h3 eth0 P3", "s1.1 p1 P3", "h2 eth1 P3", "h0 bc0nic P0")
	want := "h0 eth0 P3, s0.0 p1 P3, h1 eth1 P3, s1.1 p1 P3, h3 eth0 P3, s0.1 p0 P3, h2 eth1 P3, s1.0 p0 P3"
	if got := cycleString(FindCycle(loop)); got != want {
		t.Errorf("cycle\n%s\nwant\n%s", got, want)
	}
	// Break one link: no cycle.
	if c := FindCycle(append(loop[:3:3], loop[4:]...)); c != nil {
		t.Errorf("cycle without h0 eth0: %s", cycleString(c))
	}
	// A two-node cycle (both ends of one link paused by each other).
	if got := cycleString(FindCycle(stallsOf(tp, "s0.0 p0 P3", "h0 eth0 P3"))); got != "h0 eth0 P3, s0.0 p0 P3" {
		t.Errorf("two-node cycle: %s", got)
	}
	if FindCycle(nil) != nil || FindCycle(stallsOf(tp, "h0 eth0 P3")) != nil {
		t.Error("cycle out of one stall")
	}
}
