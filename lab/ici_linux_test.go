package lab

// Congestion isolation on a real fabric: isolation frames between AF_XDP
// daemons, obeyed upstream.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/signaling"
)

// ICI on BCube(3,1) at 100 Mb/s: h1 -> h0 (into s0.0 by p1) and h5 -> h0
// relayed by h2 (s1.2, h2, then s0.0 by p2) meet at s0.0's port 0, which
// they offer twice its link. s0.0, the congestion root, isolates both
// flows and sends h2 an isolation of h5's flow (captured on p2, decoded
// by lab capture and by the project's dissector); h2 obeys: it isolates
// the flow at its eth0 and sends its frames by its congested queue (P2).
// Nothing is dropped or missing.
func TestICILab(t *testing.T) {
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		s := realSpec(t, 3, 1)
		s.Name = "ic" + s.Name[2:] // realSpec's cleanup takes down its own name
		t.Cleanup(func() {
			if err := Down(s.RunRoot, s.Name, testLogger(t)); err != nil {
				t.Errorf("cleanup: %v", err)
			}
			checkGone(t, s)
		})
		s.FC, s.RateBps, s.ECN = scheme.NameICI, 100e6, true
		if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
			t.Fatal(err)
		}
		names, err := ReadEthers(EthersPath(s.RunRoot, s.Name))
		if err != nil {
			t.Fatal(err)
		}
		healthy := runHealth(t, s)
		pcap := filepath.Join(t.TempDir(), "s0.0-p2.pcap")
		var out bytes.Buffer
		done := make(chan error, 1)
		listening := make(chan struct{})
		go func() {
			done <- Capture(t.Context(), s.Name, "s0.0", "p2", CaptureOptions{File: pcap, Count: 2000, Duration: 6 * time.Second, Names: names,
				OnListening: func() { close(listening) }}, &out)
		}()
		select {
		case <-listening:
		case err := <-done:
			t.Fatalf("capture: %v", err)
		}
		// The first isolation is sent at once: wait for s0.0 to send p2's
		// frames where the capture sees them.
		waitFor(t, 5*time.Second, "s0.0 p2 to transmit through the capture's path", func() bool {
			st, err := Stats(s.RunRoot, s.Name, "s0.0")
			return err == nil && st.Ports[2].Captured
		})
		for _, f := range []struct {
			src   string
			order string
		}{{"h1", ""}, {"h5", "1,0"}} {
			if _, err := StartFlow(s.RunRoot, s.Name, f.src, api.GenRequest{Dst: 0, Duration: int64(3 * time.Second), Order: f.order}); err != nil {
				t.Fatal(err)
			}
		}
		if err := <-done; err != nil {
			t.Fatalf("capture: %v\n%s", err, out.String())
		}
		// lab capture's line, from s0.0 to h2, naming h5's flow.
		if !strings.Contains(out.String(), "s0.0.p2 > h2.eth0 ICI isolate flow=198.18.0.5:") {
			t.Errorf("no isolation of h5's flow among the %d frames s0.0 sent h2:\n%s", strings.Count(out.String(), "\n"), out.String())
		}
		if _, late := incastDelivered(t, s, []string{"h1", "h5"}, healthy); late != "" {
			return late
		}

		root, err := Stats(s.RunRoot, s.Name, "s0.0")
		if err != nil {
			t.Fatal(err)
		}
		relay, err := Stats(s.RunRoot, s.Name, "h2")
		if err != nil {
			t.Fatal(err)
		}
		rs, hs := root.Ports[0].Signals, relay.Ports[0].Signals
		t.Logf("s0.0 p0: %d flows isolated, %d released, %d frames by P2; isolations sent on p1 %d, p2 %d; h2 eth0: %d received, %d flows isolated by them, %d frames by P2",
			rs["ici_isolated"], rs["ici_released"], root.Ports[0].Queues[signaling.PCPCongested].EnqPackets, root.Ports[1].Signals["tx_isolate"], root.Ports[2].Signals["tx_isolate"],
			hs["rx_isolate"], hs["ici_isolated_by_signal"], relay.Ports[0].Queues[signaling.PCPCongested].EnqPackets)
		if rs["ici_isolated"] < 2 {
			t.Errorf("s0.0 p0 isolated %d flows, want both", rs["ici_isolated"])
		}
		if cq := root.Ports[0].Queues[signaling.PCPCongested].EnqPackets; cq == 0 {
			t.Error("s0.0 sent nothing by p0's congested queue")
		}
		if root.Ports[2].Signals["tx_isolate"] == 0 || hs["rx_isolate"] == 0 || hs["ici_isolated_by_signal"] == 0 {
			t.Error("h2 was not told, or did not isolate the flow")
		}
		if relay.Ports[0].Queues[signaling.PCPCongested].EnqPackets == 0 {
			t.Error("h2 sent nothing by its congested queue")
		}
		if h1 := mustStats(t, s, "h1").Ports[0].Signals; h1["rx_isolate_own"] == 0 {
			t.Errorf("h1 heard no isolation of its own flow: %v", h1)
		}

		// The project's dissector decodes the isolations: h5's flow, from the
		// root (hops 0), nothing malformed.
		tshark := testtool.Require(t, "tshark", "check the isolations against the project's dissector")
		_, file, _, _ := runtime.Caller(0)
		lua := filepath.Join(filepath.Dir(file), "..", "scripts", "bcfab.lua")
		run := func(args ...string) string {
			cmd := exec.Command(tshark, append([]string{"-X", "lua_script:" + lua, "-r", pcap}, args...)...)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("tshark %v: %v", args, err)
			}
			return string(b)
		}
		lines := strings.Fields(run("-Y", "bcfab.scheme == 4", "-T", "fields", "-E", "separator=|",
			"-e", "bcfab.ici.src", "-e", "bcfab.ici.dst", "-e", "bcfab.ici.hops", "-e", "bcfab.ici.pcp"))
		if len(lines) == 0 {
			t.Fatal("tshark decoded no isolation frame")
		}
		// An isolation names the priority the flow's frames reached s0.0
		// with: 3, and 2 once h2 has isolated the flow too.
		var p2 int
		for _, l := range lines {
			switch l {
			case "198.18.0.5|198.18.0.0|0|2":
				p2++
			case "198.18.0.5|198.18.0.0|0|3":
			default:
				t.Errorf("tshark: isolation %q, want h5's flow to h0, from the root, priority 3 or 2", l)
			}
		}
		t.Logf("tshark: %d isolations of h5's flow, %d of them naming priority 2 (h2 had isolated it)", len(lines), p2)
		if p2 == 0 || p2 == len(lines) {
			t.Error("want isolations naming priority 3 (before h2 isolated the flow) and 2 (after)")
		}
		if bad := strings.TrimSpace(run("-Y", "_ws.malformed || _ws.expert.severity >= warning")); bad != "" {
			t.Errorf("tshark flags frames:\n%s", bad)
		}
		return ""
	})
}

func mustStats(t *testing.T, s Spec, node string) *api.Stats {
	t.Helper()
	st, err := Stats(s.RunRoot, s.Name, node)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
