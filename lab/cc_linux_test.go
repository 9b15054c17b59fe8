package lab

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab/workload"
)

// The baselines end to end: on BCube(4,1) at 20 Mb/s a brief incast runs
// under --cc hpcc and --cc dctcp; the run is valid and every flow
// completes. Under hpcc the egresses stamp INT records (switches and
// servers count them) and a capture at the incast's destination, read by
// tshark with the project's dissector, shows them; under dctcp the
// egresses mark and no CNP is sent.
func TestWorkloadCC(t *testing.T) {
	for _, cc := range []string{"hpcc", "dctcp"} {
		t.Run(cc, func(t *testing.T) {
			testtool.RetryLate(t, 0, func(t *testing.T) string { return workloadCC(t, cc) })
		})
	}
}

// workloadCC is one attempt of TestWorkloadCC under cc: why its run was
// INVALID only because the machine was late, or "" after every check.
func workloadCC(t *testing.T, cc string) (late string) {
	s, cfg := upBaselineLab(t, "hp", "", cc)
	// The incast's destination under seed 1 is h0: capture what
	// its eth0 sends and receives.
	pcap := filepath.Join(t.TempDir(), "h0-eth0.pcap")
	var capOut bytes.Buffer
	done := make(chan error, 1)
	listening := make(chan struct{})
	if cc == "hpcc" {
		go func() {
			done <- Capture(t.Context(), s.Name, "h0", "eth0", CaptureOptions{File: pcap, All: true, Duration: 4 * time.Second,
				OnListening: func() { close(listening) }}, &capOut)
		}()
		select {
		case <-listening:
		case err := <-done:
			t.Fatalf("capture: %v", err)
		}
		waitFor(t, 5*time.Second, "h0 eth0 to transmit through the capture's path", func() bool {
			st, err := Stats(s.RunRoot, s.Name, "h0")
			return err == nil && st.Ports[0].Captured
		})
	}
	rep, err := RunWorkload(t.Context(), s.RunRoot, s.Name, WorkloadOptions{Config: cfg, CC: cc, Interval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if cc == "hpcc" {
		if err := <-done; err != nil {
			t.Fatalf("capture: %v\n%s", err, capOut.String())
		}
		checkINTCapture(t, pcap)
	}
	sm := rep.Summary
	t.Logf("%s: %d flows, %d completed; %d ECN marks, %d CNPs; health %v %v", cc, len(rep.Records), sm.Completed,
		rep.Fabric.ECNMarks, rep.Fabric.CNPs, rep.Health.Valid, rep.Health.Problems)
	if why := checkBaselineRun(t, rep); why != "" {
		return why
	}
	st, err := LoadState(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	var stamped, servers uint64
	for _, n := range st.Nodes {
		ns := mustStats(t, s, n.Name)
		for _, p := range ns.Ports {
			stamped += p.INTStamped
			if ns.Kind == "hostd" {
				servers += p.INTStamped
			}
		}
	}
	t.Logf("%s: %d INT records stamped, %d by servers", cc, stamped, servers)
	switch cc {
	case "hpcc":
		if stamped == 0 || servers == 0 || stamped == servers {
			t.Errorf("INT records: %d stamped, %d by servers", stamped, servers)
		}
	case "dctcp":
		if stamped != 0 || rep.Fabric.CNPs != 0 || rep.Fabric.ECNMarks == 0 {
			t.Errorf("%d INT records, %d CNPs, %d marks", stamped, rep.Fabric.CNPs, rep.Fabric.ECNMarks)
		}
	}
	return ""
}

// checkINTCapture reads pcap with tshark and the project's dissector:
// data frames and ACKs carry INT records (an ACK the records of the data
// it answers), every one with the link's rate, and nothing is malformed.
func checkINTCapture(t *testing.T, pcap string) {
	t.Helper()
	tshark := testtool.Require(t, "tshark", "read the INT records with the project's dissector")
	_, file, _, _ := runtime.Caller(0)
	lua := filepath.Join(filepath.Dir(file), "..", "scripts", "bcfab.lua")
	run := func(args ...string) string {
		cmd := exec.Command(tshark, append([]string{"-X", "lua_script:" + lua, "--disable-heuristic", "rpcrdma_infiniband", "-r", pcap}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("tshark %v: %v", args, err)
		}
		return string(b)
	}
	lines := strings.Fields(run("-Y", "bcfab.int", "-T", "fields", "-E", "separator=|",
		"-e", "infiniband.bth.opcode", "-e", "bcfab.int.hops", "-e", "bcfab.int.rate"))
	data, acks := 0, 0
	for _, l := range lines {
		f := strings.Split(l, "|")
		op, _ := strconv.Atoi(f[0])
		hops, _ := strconv.Atoi(f[1])
		if hops < 1 || strings.Count(f[2], "20000") != hops {
			t.Errorf("tshark: INT %q: want records of 20000 kbit/s links", l)
		}
		if op == 17 {
			acks++
		} else {
			data++
		}
	}
	t.Logf("tshark: %d data frames and %d ACKs with INT records; e.g. %v", data, acks, lines[:min(2, len(lines))])
	if data == 0 || acks == 0 {
		t.Errorf("tshark: %d data frames, %d ACKs with INT records", data, acks)
	}
	if bad := strings.TrimSpace(run("-Y", "_ws.malformed || bcfab.int.malformed")); bad != "" {
		t.Errorf("tshark flags frames:\n%s", bad)
	}
}

// upBaselineLab brings up a BCube(4,1) at 20 Mb/s under fc ("": the
// default) and cc ("none": none), named after prefix, taken down when t
// ends, and returns it with the baselines' brief workload: a 4-to-1
// incast of 64 KB every second for 2 s, seed 1.
func upBaselineLab(t *testing.T, prefix, fc, cc string) (Spec, workload.Config) {
	t.Helper()
	s := realSpec(t, 4, 1)
	s.Name = prefix + s.Name[2:] // realSpec's cleanup takes down its own name
	t.Cleanup(func() {
		if err := Down(s.RunRoot, s.Name, testLogger(t)); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		checkGone(t, s)
	})
	s.RateBps = 20e6
	if fc != "" {
		s.FC = fc
	}
	if cc != "none" {
		s.CC = cc
	}
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	// 256 KB a sender, 21 µs of the target's link each: the four overlap
	// and queue past ECN's K_min even when their starts spread by the
	// 5 µs at p99 a valid run allows (64 KB flows, 5 µs each, could then
	// pass one after another and never mark).
	return s, workload.Config{Duration: 2 * time.Second, Seed: 1,
		Incast: &workload.Incast{Senders: 4, Size: 256 << 10, Period: time.Second}}
}

// checkBaselineRun checks a run of upBaselineLab's workload: why it was
// INVALID when only because the machine was late (its counts are the
// machine's, and nothing else is checked), else "" after checking it was
// valid and all 8 flows completed.
func checkBaselineRun(t *testing.T, rep *WorkloadReport) (late string) {
	t.Helper()
	if why, ok := rep.Health.Late(); ok {
		return why
	}
	if !rep.Health.Valid {
		t.Errorf("emulation health invalid: %v", rep.Health.Problems)
	}
	sm := rep.Summary
	if len(rep.Records) != 8 || sm.Completed != 8 || sm.Failed+sm.Incomplete != 0 || rep.StartErrors+rep.Aborted != 0 {
		t.Errorf("%d records, %d completed, %d failed, %d incomplete", len(rep.Records), sm.Completed, sm.Failed, sm.Incomplete)
	}
	return ""
}
