package lab

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

// Kernel traffic rides the class its DSCP names (the bc0 classifier and
// --dscp-map): iperf3 --dscp 26 into priority 3, the lossless data class
// of RoCE's convention, --dscp 46 into 5 as the map says, and an unmapped
// DSCP into best effort, 0. Under PFC every priority has its queue, so
// s0.0's egress toward h1 counts each run in that priority's queue, and a
// capture on the port shows the PCP tshark reads.
func TestClassifierLab(t *testing.T) {
	testtool.Require(t, "iperf3", "send kernel traffic of a DSCP through bc0")
	s := realSpec(t, 2, 1)
	s.RateBps, s.FC = 100e6, scheme.NamePFC
	s.DSCPMap = config.DSCPMap{26: 3, 46: 5}
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	queues := func() map[string]uint64 { // s0.0 p1 (toward h1): bytes out per priority queue
		st, err := Stats(s.RunRoot, s.Name, "s0.0")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]uint64{}
		for _, q := range st.Ports[1].Queues {
			out[q.Name] = q.DeqBytes
		}
		return out
	}
	classes := func() api.ClassifierStats {
		n, err := LoadState(s.RunRoot, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		h0, _ := n.Node("h0")
		c, err := FetchClassifier(context.Background(), h0.Control)
		if err != nil {
			t.Fatal(err)
		}
		return *c
	}
	if c := classes(); !c.Attached || c.DSCPMap != "26=3,46=5" {
		t.Fatalf("h0's classifier: %+v", c)
	}
	for i, c := range []struct {
		dscp  string
		queue string
		pcp   int
	}{{"26", "P3", 3}, {"46", "P5", 5}, {"10", "P0", 0}} {
		beforeQ, beforeC := queues(), classes()
		pcap := filepath.Join(t.TempDir(), "p1.pcap")
		port := fmt.Sprint(5301 + i)
		run(t, s.Name, "h1", "iperf3", "-s", "-1", "-D", "-p", port) // one test, then it exits
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		started := make(chan struct{})
		capErr := make(chan error, 1)
		go func() {
			capErr <- Capture(ctx, s.Name, "s0.0", "p1", CaptureOptions{File: pcap, All: true, Count: 400, Duration: 3 * time.Second,
				OnListening: func() { close(started) }}, &bytes.Buffer{})
		}()
		select {
		case <-started:
		case err := <-capErr:
			t.Fatalf("capture: %v", err)
		}
		cmd, err := Command(s.Name, "h0", "iperf3", "-c", "198.18.0.1", "-p", port, "-t", "1", "--dscp", c.dscp)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("iperf3 --dscp %s: %v\n%s", c.dscp, err, out)
		}
		if err := <-capErr; err != nil {
			t.Fatalf("capture: %v", err)
		}
		cancel()
		afterQ, afterC := queues(), classes()
		// Nearly all the run's bytes went through its class's queue.
		total := uint64(0)
		for q := range afterQ {
			total += afterQ[q] - beforeQ[q]
		}
		got := afterQ[c.queue] - beforeQ[c.queue]
		t.Logf("iperf3 --dscp %s: s0.0 p1 sent %d of %d bytes from queue %s; h0's classifier counted %d frames in class %d",
			c.dscp, got, total, c.queue, afterC.Classes[c.pcp].Packets-beforeC.Classes[c.pcp].Packets, c.pcp)
		if got < 5<<20 || float64(got) < 0.95*float64(total) {
			t.Errorf("iperf3 --dscp %s: %d of %d bytes through %s", c.dscp, got, total, c.queue)
		}
		if afterC.Classes[c.pcp].Bytes-beforeC.Classes[c.pcp].Bytes < 5<<20 {
			t.Errorf("iperf3 --dscp %s: h0's classifier counted %d bytes in class %d", c.dscp,
				afterC.Classes[c.pcp].Bytes-beforeC.Classes[c.pcp].Bytes, c.pcp)
		}
		tsharkPCP(t, pcap, c.dscp, c.pcp)
	}
}

// tsharkPCP checks that tshark reads every large data frame of the iperf3
// test (DSCP dscp) in the capture with 802.1Q priority pcp.
func tsharkPCP(t *testing.T, pcap, dscp string, pcp int) {
	t.Helper()
	tshark := testtool.Require(t, "tshark", "read the priorities of the captured frames")
	cmd := exec.Command(tshark, "-n", "-r", pcap, "-Y", "tcp.len > 1000 && ip.dsfield.dscp == "+dscp, "-T", "fields", "-e", "vlan.priority")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Fields(string(out))
	for _, l := range lines {
		if l != fmt.Sprint(pcp) {
			t.Errorf("DSCP %s: tshark reads a frame with priority %s, want %d", dscp, l, pcp)
			break
		}
	}
	t.Logf("tshark: %d data frames of DSCP %s, all of priority %d", len(lines), dscp, pcp)
	if len(lines) < 50 {
		t.Errorf("DSCP %s: only %d data frames in the capture", dscp, len(lines))
	}
}
