package lab

// PFC on real fabrics: 802.1Qbb frames on veths between AF_XDP daemons.

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
)

// Incast 3 -> 1 on BCube(4,1) under PFC: s0.0 pauses priority 3 of the
// three sources before its buffer overflows. Nothing is dropped anywhere,
// nothing is missing at h0, and the frames s0.0 sends are 802.1Qbb as
// tshark decodes them (CBFC, class 3 enabled, quanta 0xFFFF to pause and
// 0 to resume), captured by tcpdump in s0.0's namespace. In a valid run,
// h0 receives at the bottleneck's rate, and s0.0's queue toward h0 holds
// no more than what its three ingress ports may hold: X_off each, plus
// what a source sends before it obeys.
func TestPFCIncastLab(t *testing.T) {
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		s := realSpec(t, 4, 1)
		s.FC, s.RateBps = scheme.NamePFC, 50e6
		if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
			t.Fatal(err)
		}
		healthy := runHealth(t, s)
		pcap, capOut := incastCaptured(t, s, incastSources, 20)
		for _, want := range []string{"> 01:80:c2:00:00:01 PFC enable=0x08 P3=65535", "> 01:80:c2:00:00:01 PFC enable=0x08 P3=0"} {
			if !strings.Contains(capOut, want) {
				t.Errorf("no %q in the capture of s0.0 p1:\n%s", want, capOut)
			}
		}
		tsharkCBFC(t, pcap)

		sink, late := incastDelivered(t, s, incastSources, healthy)
		if late != "" {
			return late
		}
		sw, err := Stats(s.RunRoot, s.Name, "s0.0")
		if err != nil {
			t.Fatal(err)
		}
		h1, err := Stats(s.RunRoot, s.Name, "h1")
		if err != nil {
			t.Fatal(err)
		}
		cfg := nodeConfig(t, s, "s0.0")
		var bound int
		for _, in := range []string{"p1", "p2", "p3"} {
			bound += cfg.PortPFC(in).Xoff + reactionHeadroom(cfg.PortRate(in))
		}
		if bound >= cfg.BufferBytes {
			t.Fatalf("the queue bound %d reaches the buffer's %d bytes: it would hold without flow control", bound, cfg.BufferBytes)
		}
		t.Logf("s0.0 p1 sent %v; h1 eth0 received %v; s0.0 p0 queue max %d B, bound %d", sw.Ports[1].Signals, h1.Ports[0].Signals, sw.Ports[0].MaxQueueBytes, bound)
		if q := int(sw.Ports[0].MaxQueueBytes); q > bound {
			t.Errorf("s0.0 p0 queued %d bytes: over 3 x (X_off + headroom) = %d", q, bound)
		}
		checkIncastGoodput(t, sink, 1, cfg.PortRate("p0"))
		if sw.Ports[1].Signals["tx_xoff_P3"] == 0 || sw.Ports[1].Signals["tx_xon_P3"] == 0 || h1.Ports[0].Signals["rx_xoff_P3"] == 0 {
			t.Error("no X_off/X_on crossed s0.0 p1 -> h1")
		}
		return ""
	})
}

// The same incast under a target whose PFC threshold is dynamic, alpha
// 0.02 of the free shared buffer: s0.0 reports an empty node's X_off of
// 0.02 x (5 MB less 1.5 one-hop BDPs of headroom on each of its four
// ports) = 97,000 bytes, and pauses each source at no more than that,
// below the target's static X_off (150,000): the three ingress ports'
// bytes lower each other's threshold. Nothing is lost.
func TestPFCDynamicIncastLab(t *testing.T) {
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		s := realSpec(t, 4, 1)
		s.FC, s.RateBps = scheme.NamePFC, 50e6
		s.Target = scale.Papers()
		s.Target.PFCAlpha, s.Target.PFCHeadroomBDPs = 0.02, 1.5
		if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
			t.Fatal(err)
		}
		healthy := runHealth(t, s)
		for _, src := range incastSources {
			if _, err := StartFlow(s.RunRoot, s.Name, src, api.GenRequest{Dst: 0, Duration: int64(3 * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, late := incastDelivered(t, s, incastSources, healthy); late != "" {
			return late
		}
		sw, err := Stats(s.RunRoot, s.Name, "s0.0")
		if err != nil {
			t.Fatal(err)
		}
		cfg := nodeConfig(t, s, "s0.0")
		empty := int(0.02 * float64(cfg.BufferBytes-4*37_500))
		static := cfg.PortPFC("p1").Xoff
		for _, p := range []int{1, 2, 3} {
			ft := sw.Ports[p].FCTiming
			if ft == nil || len(ft.Classes) != 1 {
				t.Fatalf("s0.0 port %d: timing %+v, want one class", p, ft)
			}
			c := ft.Classes[0]
			t.Logf("s0.0 p%d %s: X_off %d, %d pauses at %d-%d bytes, %d resumes at %d-%d", p, c.Class, c.XoffBytes, c.Pauses,
				c.AtPauseMinBytes, c.AtPauseMaxBytes, c.Resumes, c.AtResumeMinBytes, c.AtResumeMaxBytes)
			switch {
			case c.XoffBytes != empty:
				t.Errorf("s0.0 p%d: X_off %d, want the empty node's %d", p, c.XoffBytes, empty)
			case c.Pauses == 0 || c.Resumes == 0:
				t.Errorf("s0.0 p%d: %d pauses, %d resumes", p, c.Pauses, c.Resumes)
			case c.AtPauseMaxBytes > empty+1518 || c.AtPauseMaxBytes >= static:
				t.Errorf("s0.0 p%d: paused at up to %d bytes, over the dynamic X_off %d (the static one: %d)", p, c.AtPauseMaxBytes, empty, static)
			}
		}
		return ""
	})
}

// tsharkCBFC checks that tshark decodes every frame of the capture as an
// 802.1Qbb (CBFC) frame to 01:80:c2:00:00:01 with only class 3 enabled
// and quanta 65535 or 0, and flags none.
func tsharkCBFC(t *testing.T, pcap string) {
	t.Helper()
	tshark := testtool.Require(t, "tshark", "check the 802.1Qbb frames as Wireshark decodes them (CBFC)")
	run := func(args ...string) string {
		cmd := exec.Command(tshark, append([]string{"-n", "-r", pcap}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("tshark %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	// MAC control frames only: the link's timing probes (0x88B5, the
	// fidelity monitor) ride the same capture.
	lines := strings.Split(run("-Y", "eth.type == 0x8808", "-T", "fields", "-E", "separator=|", "-e", "eth.dst", "-e", "macc.opcode", "-e", "macc.cbfc.enbv",
		"-e", "macc.cbfc.pause_time.c3"), "\n")
	pause, resume := 0, 0
	for _, l := range lines {
		switch l {
		case "01:80:c2:00:00:01|0x0101|0x0008|65535":
			pause++
		case "01:80:c2:00:00:01|0x0101|0x0008|0":
			resume++
		default:
			t.Errorf("tshark reads a frame as %q", l)
		}
	}
	t.Logf("tshark: %d CBFC pauses (quanta 65535), %d resumes (quanta 0) for class 3", pause, resume)
	if pause == 0 || resume == 0 {
		t.Error("the capture holds no CBFC pause or no resume")
	}
	if bad := run("-Y", "_ws.malformed || _ws.expert.severity >= warning"); bad != "" {
		t.Errorf("tshark flags frames:\n%s", bad)
	}
}
