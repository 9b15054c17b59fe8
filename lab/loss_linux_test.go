package lab

// Injected loss on a real fabric: the XDP programs of the real daemons
// drop what they are told to, lab link changes it at run time, and what
// they drop is counted apart from the emulator's own drops.

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
)

// BCube(2,1) up with 0.5% loss on every fabric link; lab link then makes
// the cable h0–s0.0 clean and raises s0.0 -> h1 to 1%, so a flow h0 -> h1
// (h0 eth0, s0.0 p0 -> p1, h1 eth0) loses frames at one place only: h1
// eth0's receive. What the sink misses is exactly what that port's XDP
// program dropped, at about 1%, counted as injected and not as a drop.
// Loss set back to 0 stops; a link set down drops everything.
//
// Patched cables (the default: every node on one worker) and veths alike.
func TestLossLab(t *testing.T) {
	for _, mode := range []string{config.LinksPatch, config.LinksVeth} {
		t.Run(mode, func(t *testing.T) { testLossLab(t, mode) })
	}
}

func testLossLab(t *testing.T, mode string) {
	s := realSpec(t, 2, 1)
	// No link probes: the test counts every frame a link drops on purpose.
	s.ProbeInterval = -1
	s.LinkMode = mode
	s.LossPPM = 5_000
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	rep, err := Status(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range rep.Nodes {
		if n.Stats == nil {
			t.Fatalf("after up: %s has no stats: %s", n.Name, n.Err)
		}
		for _, l := range n.Stats.Links {
			if l.LossPPM != 5_000 || l.Down {
				t.Errorf("after up with 0.5%%: %v", l)
			}
		}
		if n.Name == "h1" {
			st, err := Stats(s.RunRoot, s.Name, "h1")
			if err != nil {
				t.Fatal(err)
			}
			if p := st.Ports[len(st.Ports)-1]; p.Name != "bc0nic" || p.LossPPM != 0 {
				t.Errorf("application port %s has loss %d ppm", p.Name, p.LossPPM)
			}
		}
	}

	ppm := func(v int) *int { return &v }
	link := func(node, port string, c LinkConfig) {
		t.Helper()
		if _, err := SetLink(s.RunRoot, s.Name, node, port, c); err != nil {
			t.Fatal(err)
		}
	}
	link("h0", "eth0", LinkConfig{LossPPM: ppm(0)})
	link("h1", "eth0", LinkConfig{LossPPM: ppm(10_000), Dir: DirRx})

	// xdp reads h1 eth0's XDP counter (loss or down).
	xdp := func(counter string) uint64 {
		t.Helper()
		st, err := Stats(s.RunRoot, s.Name, "h1")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Ports {
			if p.Name == "eth0" {
				return p.XDP[counter]
			}
		}
		t.Fatal("h1 has no eth0")
		return 0
	}

	before := xdp("loss")
	sent, got := flowTo(t, s, "h0", 1, 1500*time.Millisecond)
	injected := xdp("loss") - before
	if got == nil {
		t.Fatal("h1 heard nothing of the flow")
	}
	ratio := float64(injected) / float64(sent.Packets)
	t.Logf("1%% on s0.0 -> h1: sent %d frames, received %d, %d missing in sequence; h1 eth0 dropped %d on purpose (%.3f%%)",
		sent.Packets, got.Packets, got.Gaps, injected, 100*ratio)
	if got.Packets+injected != sent.Packets {
		t.Errorf("received %d + injected %d != sent %d: frames lost elsewhere", got.Packets, injected, sent.Packets)
	}
	// A frame dropped after the last one received leaves no gap.
	if got.Gaps > injected || got.Gaps+3 < injected {
		t.Errorf("sink counted %d missing, the XDP program dropped %d", got.Gaps, injected)
	}
	// 1% of about 60,000 frames: 600 ± 25 (one sigma); 0.5% would be 300.
	if ratio < 0.007 || ratio > 0.013 {
		t.Errorf("injected loss %.3f%%, want about 1%%", 100*ratio)
	}
	rep, err = Status(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range rep.Nodes {
		if n.Name == "h1" && n.Stats.Injected < injected {
			t.Errorf("h1's status counts %d injected, want at least %d", n.Stats.Injected, injected)
		}
	}
	// Injected loss is not a drop of the emulator.
	checkNoDrops(t, s)

	// Loss back to 0: nothing more is dropped.
	link("h1", "eth0", LinkConfig{LossPPM: ppm(0)})
	before = xdp("loss")
	sent, got = flowTo(t, s, "h0", 1, 500*time.Millisecond)
	if injected := xdp("loss") - before; got == nil || got.Gaps != 0 || got.Packets != sent.Packets || injected != 0 {
		t.Errorf("loss 0: sent %d, sink %+v, injected %d", sent.Packets, got, injected)
	}

	// The link down: every frame dropped, as down.
	yes, no := true, false
	link("s0.0", "p1", LinkConfig{Down: &yes, Dir: DirTx})
	before = xdp("down")
	sent, got = flowTo(t, s, "h0", 1, 300*time.Millisecond)
	down := xdp("down") - before
	link("s0.0", "p1", LinkConfig{Down: &no, Dir: DirTx})
	if got != nil || down != sent.Packets {
		t.Errorf("link down: sent %d, dropped as down %d, sink %+v", sent.Packets, down, got)
	}
	checkNoDrops(t, s)
}

// flowTo runs a generated flow from server src to server h<dst> for dur
// and returns it as its source saw it, and what dst's sink counted of it
// (nil: nothing).
func flowTo(t *testing.T, s Spec, src string, dst int, dur time.Duration) (api.GenFlow, *api.SinkReport) {
	t.Helper()
	f, err := StartFlow(s.RunRoot, s.Name, src, api.GenRequest{Dst: dst, Duration: int64(dur)})
	if err != nil {
		t.Fatal(err)
	}
	sent := *f
	for deadline := time.Now().Add(dur + 5*time.Second); !sent.Done; {
		if time.Now().After(deadline) {
			t.Fatalf("flow %d from %s not done after %v", f.ID, src, dur+5*time.Second)
		}
		time.Sleep(50 * time.Millisecond)
		r, err := Flows(s.RunRoot, s.Name, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range r.Flows {
			if g.ID == f.ID {
				sent = g
			}
		}
	}
	time.Sleep(200 * time.Millisecond) // the last frames' way
	r, err := Flows(s.RunRoot, s.Name, bcube.HostName(dst))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Sink {
		if r.Sink[i].SPort == sent.SPort && bcube.HostName(r.Sink[i].Src) == src {
			return sent, &r.Sink[i]
		}
	}
	return sent, nil
}
