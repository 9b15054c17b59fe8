package lab

import (
	"strings"
	"testing"
)

// SetLink with the fake daemons: both ends of a cable, one direction,
// refusals that change nothing, and a daemon refusing halfway put back.
func TestSetLink(t *testing.T) {
	t.Setenv("FAKED_LINKFAIL", "s1.1")
	s := testSpec(t, 2, 1)
	s.LossPPM = 10_000
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	rep, err := Status(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	// 8 cables, two ends each; bc0nic is never impaired.
	if len(rep.Impaired) != 16 {
		t.Errorf("%d impaired ports after up with 1%% loss, want 16: %v", len(rep.Impaired), rep.Impaired)
	}
	for _, im := range rep.Impaired {
		if im.Port == "bc0nic" || im.LossPPM != 10_000 {
			t.Errorf("impaired: %v", im)
		}
	}
	ppm := func(v int) *int { return &v }
	yes := true
	set := func(node, port string, c LinkConfig) []LinkEnd {
		t.Helper()
		ends, err := SetLink(s.RunRoot, s.Name, node, port, c)
		if err != nil {
			t.Fatalf("SetLink(%s %s %+v): %v", node, port, c, err)
		}
		return ends
	}
	str := func(ends []LinkEnd) string { return ends[0].String() + "; " + ends[1].String() }

	ends := set("h1", "eth0", LinkConfig{LossPPM: ppm(0)})
	if got, want := str(ends), "h1 eth0 (from s0.0 p1): loss none, up; s0.0 p1 (from h1 eth0): loss none, up"; got != want || !ends[0].Changed || !ends[1].Changed {
		t.Errorf("both: %s, want %s (%+v)", got, want, ends)
	}
	ends = set("s0.0", "p1", LinkConfig{LossPPM: ppm(20_000), Dir: DirTx})
	if got, want := str(ends), "s0.0 p1 (from h1 eth0): loss none, up; h1 eth0 (from s0.0 p1): loss 2%, up"; got != want || ends[0].Changed || !ends[1].Changed {
		t.Errorf("tx: %s, want %s", got, want)
	}
	ends = set("h1", "eth0", LinkConfig{Down: &yes, Dir: DirRx})
	if got, want := str(ends), "h1 eth0 (from s0.0 p1): loss 2%, down; s0.0 p1 (from h1 eth0): loss none, up"; got != want {
		t.Errorf("rx down: %s, want %s", got, want)
	}
	// An empty change reports.
	if got := str(set("h1", "eth0", LinkConfig{})); got != "h1 eth0 (from s0.0 p1): loss 2%, down; s0.0 p1 (from h1 eth0): loss none, up" {
		t.Errorf("report: %s", got)
	}

	for _, c := range []struct {
		node, port string
		cfg        LinkConfig
		want       string
	}{
		{"h9", "eth0", LinkConfig{}, `no node "h9"`},
		{"h0", "bc0nic", LinkConfig{LossPPM: ppm(1)}, "application port"},
		{"h0", "eth2", LinkConfig{LossPPM: ppm(1)}, `h0 has no fabric port "eth2" (eth0..eth1)`},
		{"s0.0", "p2", LinkConfig{LossPPM: ppm(1)}, `s0.0 has no fabric port "p2" (p0..p1)`},
		{"h0", "eth0", LinkConfig{LossPPM: ppm(1), Dir: "up"}, `link direction "up"`},
		{"h0", "eth0", LinkConfig{LossPPM: ppm(1_000_001)}, "loss 1000001 ppm: want 0..1000000"},
		// h3 eth1's peer is s1.1, which refuses: h3's end is put back.
		{"h3", "eth1", LinkConfig{LossPPM: ppm(0)}, "s1.1: refusing as told"},
	} {
		before, err := Status(s.RunRoot, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := SetLink(s.RunRoot, s.Name, c.node, c.port, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetLink(%s %s %+v) = %v, want an error with %q", c.node, c.port, c.cfg, err, c.want)
		}
		after, err := Status(s.RunRoot, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if b, a := impairedString(before), impairedString(after); a != b {
			t.Errorf("SetLink(%s %s %+v) failed but changed\n%s\ninto\n%s", c.node, c.port, c.cfg, b, a)
		}
	}
}

func impairedString(r *Report) string {
	var b strings.Builder
	for _, im := range r.Impaired {
		im.Dropped = 0
		b.WriteString(im.String() + "\n")
	}
	return b.String()
}
