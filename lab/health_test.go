package lab

import (
	"strings"
	"testing"
	"time"
)

// sample is a sample of nodes that each have a daemon of their own.
func sample(at time.Duration, busy, total uint64, nodes ...NodeSample) *HealthSample {
	s := &HealthSample{At: time.Unix(1000, 0).Add(at), CPUs: 2, Busy: busy, Total: total, Nodes: nodes}
	for _, n := range nodes {
		p := ProcSample{Name: n.Node, Pid: n.Pid, CPU: n.CPU}
		if n.Err != "" {
			p.Err = "not running"
		}
		s.Procs = append(s.Procs, p)
	}
	return s
}

func node(name string, pid int, cpu time.Duration, ports ...PortSample) NodeSample {
	return NodeSample{Node: name, Pid: pid, CPU: cpu, Ports: ports}
}

func TestHealthValid(t *testing.T) {
	before := sample(0, 1000, 4000,
		node("h0", 10, time.Second, PortSample{Name: "eth0", Late: 5, MaxLateNs: 300_000, LostNs: 7_000_000, TxFrames: 1000}),
		node("s0.0", 11, 2*time.Second, PortSample{Name: "p0", RingDrops: 3}))
	after := sample(10*time.Second, 2600, 6000,
		node("h0", 10, 3*time.Second, PortSample{Name: "eth0", Late: 105, MaxLateNs: 900_000, LostNs: 57_000_000, TxFrames: 401_000}),
		node("s0.0", 11, 2500*time.Millisecond, PortSample{Name: "p0", RingDrops: 3, TxFrames: 400_000}))
	h := after.Since(before, 0, HealthLimits{})
	if !h.Valid || len(h.Problems) != 0 {
		t.Fatalf("problems: %v", h.Problems)
	}
	if h.Wall != 10*time.Second || h.MachineBusy != 0.8 || h.ProcCPU != 2500*time.Millisecond || h.ProcShare != 0.125 {
		t.Errorf("wall %v busy %v daemons %v share %v", h.Wall, h.MachineBusy, h.ProcCPU, h.ProcShare)
	}
	if h.Busiest[0].Node != "h0" || h.Busiest[0].Share != 0.2 || h.Busiest[1].Node != "s0.0" {
		t.Errorf("busiest %+v", h.Busiest)
	}
	// Counters are differences; drops before the run are not the run's.
	if h.RingDrops != 0 || h.LateFrames != 100 || h.MaxLate != 900*time.Microsecond || h.Lost != 50*time.Millisecond ||
		h.WorstPort != "h0/eth0" || h.LostShare != 0.005 {
		t.Errorf("health %+v", h)
	}
	// 16 s of machine CPU (80% of 2 CPUs for 10 s) and 2.5 s of daemons'
	// over 800,000 frames sent in the run.
	if h.FrameHops != 800_000 || h.CPUPerHop != 20*time.Microsecond || h.ProcPerHop != 3125*time.Nanosecond {
		t.Errorf("frame-hops %d, machine %v and daemons %v per hop", h.FrameHops, h.CPUPerHop, h.ProcPerHop)
	}
	var b strings.Builder
	if err := h.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"emulation health: valid", "machine 80% busy", "800000 frame-hops, 20.00 µs of machine CPU each (3.12 µs in the lab's processes)", "h0 20%", "rings: 0 frames dropped",
		"100 late frames (largest lateness 900µs)", "worst h0/eth0 50ms = 0.50% of the run (limit 1.00%)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

func TestHealthInvalid(t *testing.T) {
	before := sample(0, 0, 0,
		node("h0", 10, 0, PortSample{Name: "eth0"}),
		node("h1", 12, 0),
		node("h2", 13, 0),
		node("s0.0", 11, 0, PortSample{Name: "p0"}))
	after := sample(time.Second, 0, 0,
		node("h0", 10, 0, PortSample{Name: "eth0", LostNs: 20_000_000}),
		node("h1", 14, 0),
		NodeSample{Node: "h2", Pid: 13, Err: "daemon not running"},
		node("s0.0", 11, 0, PortSample{Name: "p0", RingDrops: 7}))
	h := after.Since(before, 0, HealthLimits{})
	if h.Valid {
		t.Fatal("valid")
	}
	want := []string{
		"h1: daemon restarted (pid 12, then 14)",
		"h2: daemon not running",
		"XSK rings dropped 7 frames (most at s0.0/p0: 7)",
		"h0/eth0 lost 20ms of the lab's link time, 2.00% of the run (limit 1.00%)",
	}
	got := strings.Join(h.Problems, "\n")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("problems lack %q:\n%s", w, got)
		}
	}
	if len(h.Problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(h.Problems), len(want), got)
	}
	// Looser limits accept the same run's drops and lost time.
	after.Nodes = append(after.Nodes[:1], after.Nodes[3])
	before.Nodes = append(before.Nodes[:1], before.Nodes[3])
	if h := after.Since(before, 0, HealthLimits{MaxLostShare: 0.05, MaxRingDrops: 10}); !h.Valid {
		t.Errorf("looser limits: %v", h.Problems)
	}
	if h := after.Since(before, 0, HealthLimits{MaxLostShare: -1, MaxRingDrops: -1}); !h.Valid {
		t.Errorf("no limits: %v", h.Problems)
	}
	// A node that vanished is a problem too.
	after.Nodes = after.Nodes[:1]
	if h := after.Since(before, 0, HealthLimits{MaxLostShare: -1}); h.Valid || !strings.Contains(strings.Join(h.Problems, ";"), "s0.0: gone") {
		t.Errorf("vanished node: %v", h.Problems)
	}
}

// Since(nil) judges everything since the daemons started.
func TestHealthSinceStart(t *testing.T) {
	s := sample(0, 0, 0, node("h0", 10, 4*time.Second, PortSample{Name: "eth0", LostNs: 1_000_000}))
	h := s.Since(nil, 8*time.Second, HealthLimits{})
	if !h.Valid || h.Wall != 8*time.Second || h.Busiest[0].Share != 0.5 || h.Lost != time.Millisecond {
		t.Errorf("%+v", h)
	}
}

func TestParseProcCPU(t *testing.T) {
	stat := "4242 (ho) (st d) S 1 4242 4242 0 -1 4194560 1270 0 0 0 250 130 0 0 20 0 9 0 1234 0 0\n"
	d, err := parseProcCPU([]byte(stat))
	if err != nil || d != 3800*time.Millisecond {
		t.Errorf("cpu %v, %v; want 3.8s", d, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 0"} {
		if _, err := parseProcCPU([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	busy, total, err := parseMachineCPU([]byte("cpu  100 5 50 800 20 3 7 0 0 0\ncpu0 1 2 3 4\n"))
	if err != nil || busy != 165 || total != 985 {
		t.Errorf("busy %d total %d %v; want 165 985", busy, total, err)
	}
	if _, _, err := parseMachineCPU([]byte("intr 1 2 3\n")); err == nil {
		t.Error("no cpu line: no error")
	}
}

// In a short run, a few milliseconds lost once are a warning; more than
// MinLost is a problem.
func TestHealthShortRun(t *testing.T) {
	before := sample(0, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0"}))
	for _, c := range []struct {
		lostNs int64
		valid  bool
	}{{2_000_000, true}, {15_000_000, false}} {
		after := sample(160*time.Millisecond, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0", LostNs: c.lostNs}))
		h := after.Since(before, 0, HealthLimits{})
		if h.Valid != c.valid || (c.valid && len(h.Warnings) != 1) {
			t.Errorf("lost %v of 160ms: valid %v (want %v), problems %v, warnings %v", time.Duration(c.lostNs), h.Valid, c.valid, h.Problems, h.Warnings)
		}
	}
}

// On workers, the daemons' CPU is the workers' and each node's its
// engine's busy time; a node stopped and started again, and a worker
// that died (one problem naming its nodes), invalidate the run.
func TestHealthWorkers(t *testing.T) {
	at := func(d time.Duration, w0, w1 time.Duration, nodes ...NodeSample) *HealthSample {
		s := &HealthSample{At: time.Unix(1000, 0).Add(d), CPUs: 2, Nodes: nodes,
			Procs: []ProcSample{{Name: "w0", Pid: 100, CPU: w0}, {Name: "w1", Pid: 101, CPU: w1}}}
		if w1 < 0 {
			s.Procs[1] = ProcSample{Name: "w1", Pid: 101, Err: "not running"}
		}
		return s
	}
	n := func(name string, pid int, started int64, busy time.Duration) NodeSample {
		return NodeSample{Node: name, Pid: pid, Started: started, CPU: busy}
	}
	before := at(0, time.Second, time.Second, n("h0", 100, 1, 0), n("h1", 100, 1, 0), n("s0.0", 101, 1, 0))
	after := at(10*time.Second, 5*time.Second, 3*time.Second,
		n("h0", 100, 1, 3*time.Second), n("h1", 100, 1, time.Second), n("s0.0", 101, 1, 1500*time.Millisecond))
	h := after.Since(before, 0, HealthLimits{})
	if !h.Valid || h.ProcCPU != 6*time.Second || h.ProcShare != 0.3 {
		t.Fatalf("valid %v cpu %v share %v problems %v", h.Valid, h.ProcCPU, h.ProcShare, h.Problems)
	}
	if h.Busiest[0].Node != "h0" || h.Busiest[0].Share != 0.3 || h.Busiest[1].Node != "s0.0" || h.Busiest[2].Node != "h1" {
		t.Errorf("busiest %+v", h.Busiest)
	}

	after = at(10*time.Second, 5*time.Second, -1,
		n("h0", 100, 1, 3*time.Second), n("h1", 100, 2, 0),
		NodeSample{Node: "s0.0", Pid: 101, Worker: "w1", Err: "worker w1 (pid 101) is not running"})
	h = after.Since(before, 0, HealthLimits{})
	got := strings.Join(h.Problems, "\n")
	for _, w := range []string{"h1: node restarted", "worker w1 (pid 101; nodes s0.0) is not running"} {
		if !strings.Contains(got, w) {
			t.Errorf("problems lack %q:\n%s", w, got)
		}
	}
	if h.Valid || len(h.Problems) != 2 || h.ProcCPU != 4*time.Second {
		t.Errorf("valid %v cpu %v problems %v", h.Valid, h.ProcCPU, h.Problems)
	}
}

// A worker that was busy for 5 ms without a sleep during the run is
// named: a warning in a valid run, and after what an invalid one missed,
// as why it fell behind. Its yields before the run are not the run's.
func TestHealthSaturatedWorker(t *testing.T) {
	before := sample(0, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0"}))
	after := sample(time.Second, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0"}))
	before.Procs = append(before.Procs, ProcSample{Name: "w0", Pid: 20, Yields: 3}, ProcSample{Name: "w1", Pid: 21, Yields: 5})
	after.Procs = append(after.Procs, ProcSample{Name: "w0", Pid: 20, Yields: 50}, ProcSample{Name: "w1", Pid: 21, Yields: 5})
	const want = "saturated workers (busy for 5 ms without a sleep, while every node they run waited): w0 47 times"
	h := after.Since(before, 0, HealthLimits{})
	if !h.Valid || h.Saturated != want || !strings.Contains(strings.Join(h.Warnings, "\n"), want) {
		t.Fatalf("valid %v, saturated %q, warnings %v; want a valid run warned of w0's 47 times", h.Valid, h.Saturated, h.Warnings)
	}
	after.Nodes[0].Ports[0].LostNs = 20_000_000
	h = after.Since(before, 0, HealthLimits{})
	if h.Valid || len(h.Problems) != 2 || !strings.Contains(h.Problems[0], "lost 20ms") || h.Problems[1] != want {
		t.Fatalf("problems %q, want the lost time and then the saturation", h.Problems)
	}
	after.Procs[1].Yields = 3
	if h := after.Since(before, 0, HealthLimits{MaxLostShare: -1}); h.Saturated != "" {
		t.Errorf("no yields in the run: %q", h.Saturated)
	}
}

// The time of the model a worker skipped in the run (later than its
// replay reaches) is judged as a share of the run, the worker that
// skipped the most named; what it skipped before the run is not the
// run's, nor is a restarted worker's.
func TestHealthSkipped(t *testing.T) {
	before := sample(0, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0"}))
	after := sample(10*time.Second, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0"}))
	before.Procs = append(before.Procs, ProcSample{Name: "w0", Pid: 20, Skipped: 500 * time.Millisecond}, ProcSample{Name: "w1", Pid: 21, Skipped: time.Millisecond})
	after.Procs = append(after.Procs, ProcSample{Name: "w0", Pid: 20, Skipped: 540 * time.Millisecond}, ProcSample{Name: "w1", Pid: 21, Skipped: 61 * time.Millisecond})
	limits := HealthLimits{MaxSkippedShare: 0.005}
	h := after.Since(before, 0, limits)
	if h.Skipped != 60*time.Millisecond || h.SkippedWorker != "w1" || h.SkippedShare != 0.006 {
		t.Fatalf("skipped %v by %q, %v of the run; want 60ms by w1, 0.006", h.Skipped, h.SkippedWorker, h.SkippedShare)
	}
	if h.Valid || len(h.Problems) != 1 || !strings.Contains(h.Problems[0], "worker w1 skipped 60ms of the model's time, 0.60% of the run (limit 0.50%)") {
		t.Fatalf("valid %v, problems %q; want w1's 60 ms (0.60%%) over the limit", h.Valid, h.Problems)
	}
	var b strings.Builder
	if err := h.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "workers: skipped 60ms of the model's time at most (w1), 0.60% of the run (limit 0.50%)"; !strings.Contains(b.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, b.String())
	}
	limits.MaxSkippedShare = 0.01
	if h := after.Since(before, 0, limits); !h.Valid || h.Skipped != 60*time.Millisecond || h.SkippedWorker != "w1" {
		t.Errorf("limit 1%%: valid %v, skipped %v by %q; want valid, 60ms by w1", h.Valid, h.Skipped, h.SkippedWorker)
	}
	after.Procs[2].Pid = 22 // w1 restarted: its nodes say so
	if h := after.Since(before, 0, limits); h.Skipped != 40*time.Millisecond || h.SkippedWorker != "w0" {
		t.Errorf("w1 restarted: skipped %v by %q; want 40ms by w0", h.Skipped, h.SkippedWorker)
	}
}
