package lab

import (
	"strings"
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
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

// Every cable's two ends name each other.
func TestPeerPort(t *testing.T) {
	for _, tp := range []bcube.Topology{bcube.MustNew(2, 1), bcube.MustNew(4, 1), bcube.MustNew(3, 2)} {
		p, err := NewPlan(Spec{N: tp.N(), K: tp.K(), BinDir: "/x"})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range p.Links {
			peer, port, ok := PeerPort(tp, l.A.Node, l.A.Ifname)
			if !ok || peer != l.B.Node || port != l.B.Ifname {
				t.Errorf("%v: PeerPort(A) = %s %s %v", l, peer, port, ok)
			}
			peer, port, ok = PeerPort(tp, l.B.Node, l.B.Ifname)
			if !ok || peer != l.A.Node || port != l.A.Ifname {
				t.Errorf("%v: PeerPort(B) = %s %s %v", l, peer, port, ok)
			}
		}
	}
	for _, c := range [][2]string{{"h0", "bc0nic"}, {"h0", "eth01"}, {"h0", "eth+0"}, {"s0.0", "p"}, {"s0.0", "eth0"}, {"h0", "p0"}} {
		if peer, port, ok := PeerPort(bcube.MustNew(2, 1), c[0], c[1]); ok {
			t.Errorf("PeerPort(%s, %s) = %s %s", c[0], c[1], peer, port)
		}
	}
}

// Frames dropped on purpose are summed apart from the emulator's drops.
func TestSummarizeInjected(t *testing.T) {
	st := &api.Stats{Node: "h1", Ports: []api.PortStats{
		{Name: "eth0", LossPPM: 10_000, Drops: map[string]uint64{"buffer_full": 1}, XDP: map[string]uint64{"loss": 40}},
		{Name: "eth1", LinkDown: true, XDP: map[string]uint64{"down": 7, "loss": 3}, XSK: map[string]uint64{"rx_dropped": 2}},
		{Name: "bc0nic"},
	}}
	s := Summarize(st)
	if s.Drops != 3 || s.Injected != 50 {
		t.Errorf("drops %d injected %d, want 3 and 50", s.Drops, s.Injected)
	}
	want := []string{"h1 eth0: loss 1%, 40 dropped", "h1 eth1: loss none, down, 10 dropped"}
	if len(s.Impaired) != 2 || s.Impaired[0].String() != want[0] || s.Impaired[1].String() != want[1] {
		t.Errorf("impaired %v, want %q", s.Impaired, want)
	}
}
