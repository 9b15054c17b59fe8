package lab

// PortFC on real fabrics: real daemons, AF_XDP, signal frames on veths.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
)

// fcSpec is a real lab running PortFC on links of rateBps.
func fcSpec(t *testing.T, n, k int, rateBps uint64) Spec {
	s := realSpec(t, n, k)
	s.FC, s.RateBps = scheme.NamePortFC, rateBps
	return s
}

// Incast 3 -> 1 on BCube(4,1) under PortFC: three servers send at line rate
// to h0 through s0.0's port 0. Nothing is dropped anywhere, nothing is
// missing at h0, Pause and Resume frames cross the wire (captured with
// tcpdump inside s0.0's namespace and decoded by tshark with the project's
// dissector), and the B queue stays within X_off plus the headroom of the
// sources' reaction; h0 receives at the bottleneck's rate. The run must
// be valid (emulation health) for any of it to count.
func TestPortFCIncastLab(t *testing.T) {
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		s := fcSpec(t, 4, 1, 50e6)
		if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
			t.Fatal(err)
		}
		healthy := runHealth(t, s)
		pcap, capOut := incastCaptured(t, s, incastSources, 20)
		if !strings.Contains(capOut, "PortFC pause class=B port=0 origin=s0.0") {
			t.Errorf("no B pause in the capture of s0.0 p1:\n%s", capOut)
		}
		tsharkDecodes(t, pcap)

		sink, late := incastDelivered(t, s, incastSources, healthy)
		if late != "" {
			return late
		}
		sw, err := Stats(s.RunRoot, s.Name, "s0.0")
		if err != nil {
			t.Fatal(err)
		}
		var bmax int
		for _, q := range sw.Ports[0].Queues {
			if q.Name == "B" {
				bmax = q.MaxBytes
			}
		}
		cfg := nodeConfig(t, s, "s0.0")
		rate := cfg.PortRate("p0")
		xoff := cfg.PortThresholds("p0").XoffB
		// What the three line-rate sources send before they obey lands on
		// top of X_off: under the buffer that an incast without flow control
		// fills.
		headroom := len(incastSources) * reactionHeadroom(rate)
		if xoff+headroom >= cfg.BufferBytes {
			t.Fatalf("X_off %d + headroom %d reach the buffer's %d bytes: the bound would hold without flow control", xoff, headroom, cfg.BufferBytes)
		}
		t.Logf("s0.0 p0 B queue max %d B, X_off %d, headroom allowed %d; signals on p1: %v", bmax, xoff, headroom, sw.Ports[1].Signals)
		checkIncastGoodput(t, sink, 1, rate)
		if sw.Ports[1].Signals["tx_pause_B"] == 0 || sw.Ports[1].Signals["tx_resume_B"] == 0 {
			t.Errorf("s0.0 sent no B pause/resume: %v", sw.Ports[1].Signals)
		}
		if bmax > xoff+headroom {
			t.Errorf("B queue reached %d bytes: X_off %d + headroom %d", bmax, xoff, headroom)
		}
		return ""
	})
}

// incastSources are the senders of the 3 -> 1 incast.
var incastSources = []string{"h1", "h2", "h3"}

// incastCaptured starts srcs -> h0 for 3 s on lab s while capturing the
// first count flow-control frames s0.0 sends on p1 (to h1), and returns
// the pcap file and the capture's lines.
func incastCaptured(t *testing.T, s Spec, srcs []string, count int) (pcap string, lines string) {
	t.Helper()
	pcap = filepath.Join(t.TempDir(), "s0.0-p1.pcap")
	var out bytes.Buffer
	done := make(chan error, 1)
	listening := make(chan struct{})
	go func() {
		done <- Capture(t.Context(), s.Name, "s0.0", "p1", CaptureOptions{File: pcap, Count: count, Duration: 15 * time.Second,
			OnListening: func() { close(listening) }}, &out)
	}()
	select {
	case <-listening:
	case err := <-done:
		t.Fatalf("capture: %v", err)
	}
	for _, src := range srcs {
		if _, err := StartFlow(s.RunRoot, s.Name, src, api.GenRequest{Dst: 0, Duration: int64(3 * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("capture: %v\n%s", err, out.String())
	}
	return pcap, out.String()
}

// incastDelivered waits for incastCaptured's flows from srcs to end and
// drain, checks that h0 heard every frame of every one, none missing,
// and that nothing was dropped anywhere, and returns h0's sink flows.
func incastDelivered(t *testing.T, s Spec, srcs []string, healthy func() string) (sinks []api.SinkReport, late string) {
	t.Helper()
	sent := map[int]uint64{}
	waitFor(t, 15*time.Second, "end of the incast's flows", func() bool {
		for _, src := range srcs {
			r, err := Flows(s.RunRoot, s.Name, src)
			if err != nil || len(r.Flows) != 1 || !r.Flows[0].Done {
				return false
			}
			sent[hostIndex(src)] = r.Flows[0].Packets
		}
		return true
	})
	var sink *api.GenReport
	waitFor(t, 5*time.Second, "h0 to receive what the incast sent", func() bool {
		var err error
		sink, err = Flows(s.RunRoot, s.Name, "h0")
		if err != nil || len(sink.Sink) != len(srcs) {
			return false
		}
		for _, f := range sink.Sink {
			if f.Packets+f.Gaps < sent[f.Src] {
				return false
			}
		}
		return true
	})
	late = healthy()
	ringDrops := checkNoDrops(t, s, late != "")
	for _, f := range sink.Sink {
		if f.Gaps != 0 || f.Packets != sent[f.Src] {
			msg := fmt.Sprintf("flow from h%d: %d frames sent, %d received, %d missing", f.Src, sent[f.Src], f.Packets, f.Gaps)
			if late != "" && ringDrops > 0 {
				// The kernel's rings dropped them, not the scheme: the
				// run is invalid, its frames the machine's.
				t.Logf("%s (%d frames dropped by XSK rings in a late run)", msg, ringDrops)
				continue
			}
			t.Error(msg)
		}
	}
	return sink.Sink, late
}

// hostIndex is i of server name h<i>.
func hostIndex(name string) int {
	var i int
	fmt.Sscanf(name, "h%d", &i)
	return i
}

// tsharkDecodes checks that tshark, with the project's dissector, decodes
// every frame of the capture as a bcfab signal and flags none malformed.
func tsharkDecodes(t *testing.T, pcap string) {
	t.Helper()
	tshark := testtool.Require(t, "tshark", "check the signals against the project's dissector")
	_, file, _, _ := runtime.Caller(0)
	lua := filepath.Join(filepath.Dir(file), "..", "scripts", "bcfab.lua")
	run := func(args ...string) string {
		cmd := exec.Command(tshark, append([]string{"-X", "lua_script:" + lua, "-r", pcap}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("tshark %v: %v", args, err)
		}
		return string(out)
	}
	all := strings.Fields(run("-T", "fields", "-e", "frame.number"))
	decoded := strings.Fields(run("-Y", "bcfab", "-T", "fields", "-e", "bcfab.type"))
	if len(all) == 0 || len(decoded) != len(all) {
		t.Errorf("tshark decoded %d of %d frames as bcfab signals", len(decoded), len(all))
	}
	if bad := strings.TrimSpace(run("-Y", "_ws.malformed || _ws.expert.severity >= warning")); bad != "" {
		t.Errorf("tshark flags frames:\n%s", bad)
	}
}

// The loop scenario of DESIGN §9 on BCube(2,1) under PortFC, for 30 s:
// background flows, then four 4-hop flows whose routes form a cycle
// (h0->h3 via h1, h3->h0 via h2, h1->h2 via h3, h2->h1 via h0). Every flow
// keeps moving in every 5-second window, no queue stays paused longer than
// the 200 ms a deadlock watchdog waits, and nothing is dropped.
func TestPortFCLoopLab(t *testing.T) {
	if testing.Short() {
		t.Skip("short: skipping the 30 s loop scenario")
	}
	const rate = 100e6
	s := fcSpec(t, 2, 1, rate)
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	start := func(src, dst int, order string, d time.Duration) {
		t.Helper()
		f, err := StartFlow(s.RunRoot, s.Name, bcube.HostName(src), api.GenRequest{Dst: dst, Duration: int64(d), Order: order})
		if err != nil {
			t.Fatal(err)
		}
		if order != "" && f.Order != order {
			t.Fatalf("h%d->h%d routed %s, want %s", src, dst, f.Order, order)
		}
	}
	for _, fl := range [][2]int{{0, 1}, {2, 3}, {1, 3}, {2, 0}} {
		start(fl[0], fl[1], "", 32*time.Second)
	}
	time.Sleep(time.Second)
	for _, l := range []struct {
		src, dst int
		order    string
	}{{0, 3, "0,1"}, {3, 0, "0,1"}, {1, 2, "1,0"}, {2, 1, "1,0"}} {
		start(l.src, l.dst, l.order, 30*time.Second)
	}
	bytesNow := func() map[string]uint64 {
		m := map[string]uint64{}
		for i := 0; i < 4; i++ {
			r, err := Flows(s.RunRoot, s.Name, bcube.HostName(i))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range r.Sink {
				m[fmt.Sprintf("h%d->h%d", f.Src, i)] = f.Bytes
			}
		}
		return m
	}
	prev := bytesNow()
	for w := 1; w <= 6; w++ {
		time.Sleep(5 * time.Second)
		cur := bytesNow()
		var line []string
		for _, k := range []string{"h0->h1", "h2->h3", "h1->h3", "h2->h0", "h0->h3", "h3->h0", "h1->h2", "h2->h1"} {
			moved := cur[k] - prev[k]
			line = append(line, fmt.Sprintf("%s %.1f", k, float64(moved)*8/5/1e6))
			if moved == 0 {
				t.Errorf("window %d: %s did not move", w, k)
			}
		}
		t.Logf("window %d (Mb/s): %s", w, strings.Join(line, ", "))
		prev = cur
	}
	checkNoDrops(t, s)
	for _, node := range []string{"h0", "h1", "h2", "h3", "s0.0", "s0.1", "s1.0", "s1.1"} {
		st, err := Stats(s.RunRoot, s.Name, node)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Ports {
			for _, q := range p.Queues {
				if q.MaxPauseNs > int64(200*time.Millisecond) {
					t.Errorf("%s %s %s paused for %v at once", node, p.Name, q.Name, time.Duration(q.MaxPauseNs))
				}
			}
		}
	}
}
