package lab

import (
	"errors"
	"github.com/bcfab/bcfab/model/scale"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/clocktest"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/wire/transport"
)

func stats(node string, drops, ring, injected, marks uint64, signals map[string]uint64) *api.Stats {
	return &api.Stats{Node: node, Ports: []api.PortStats{{
		Name:    "p0",
		Drops:   map[string]uint64{"buffer_full": drops},
		XSK:     map[string]uint64{"rx_dropped": ring},
		XDP:     map[string]uint64{"loss": injected},
		Signals: signals,
		Queues:  []api.QueueStats{{ECNMarks: marks}},
	}}}
}

// The fabric's counters are differences over the run; PortFC and BFC
// pauses and PFC XOFFs all count as pauses, ideal-fq's shared queues and
// full tables as flows without a queue of their own, a NIC's injected
// RDMA losses as injected drops.
func TestFabricDelta(t *testing.T) {
	h2 := stats("h2", 0, 0, 0, 0, nil)
	h2.Ports[0].InjectedTx = 2
	before := map[string]*api.Stats{
		"s1.0": stats("s1.0", 5, 1, 0, 10, map[string]uint64{"tx_pause_A": 2}),
		"h10":  stats("h10", 0, 0, 0, 0, map[string]uint64{"tx_xoff_P3": 1, "rx_xoff_P3": 4}),
		"h2":   stats("h2", 0, 0, 0, 0, nil),
		"s0.1": stats("s0.1", 0, 0, 0, 0, nil),
		"s0.2": stats("s0.2", 0, 0, 0, 0, map[string]uint64{"tx_isolate": 3}),
		"s0.3": stats("s0.3", 0, 0, 0, 0, map[string]uint64{"fq_flows": 40, "fq_shared": 1}),
	}
	after := map[string]*api.Stats{
		"s1.0": stats("s1.0", 7, 2, 3, 15, map[string]uint64{"tx_pause_A": 4, "tx_state_A": 100, "rx_pause": 1}),
		"h10":  stats("h10", 0, 0, 0, 0, map[string]uint64{"tx_xoff_P3": 4, "rx_xoff_P3": 4, "tx_xon_P3": 9}),
		"h2":   h2,
		"s0.1": stats("s0.1", 0, 0, 0, 1, nil),
		"h3":   stats("h3", 9, 9, 9, 9, nil), // not in the first sample
		"s0.2": stats("s0.2", 0, 0, 0, 0, map[string]uint64{"tx_isolate": 10, "rx_isolate": 5, "ici_isolated": 2}),
		"s0.3": stats("s0.3", 0, 0, 0, 0, map[string]uint64{"fq_flows": 90, "fq_shared": 3, "fq_table_full": 1}),
	}
	f := fabricDelta(before, after)
	if f.Drops != 3 || f.Injected != 3+2 || f.Pauses != 5 || f.PausesRx != 1 || f.ECNMarks != 6 || f.Isolations != 7 || f.FQShared != 3 {
		t.Errorf("fabric %+v", f)
	}
	var nodes []string
	for _, n := range f.Nodes {
		nodes = append(nodes, n.Node)
	}
	if want := []string{"h2", "h10", "s0.1", "s0.2", "s0.3", "s1.0"}; !slices.Equal(nodes, want) {
		t.Errorf("nodes %q, want %q", nodes, want)
	}
}

func TestCompareNodes(t *testing.T) {
	names := []string{"s1.0", "h10", "s0.3", "h2", "x", "s0.10", "h0"}
	slices.SortFunc(names, compareNodes)
	if want := []string{"h0", "h2", "h10", "s0.3", "s0.10", "s1.0", "x"}; !slices.Equal(names, want) {
		t.Errorf("%q, want %q", names, want)
	}
}

func TestDefaultDrain(t *testing.T) {
	w := workload.Wire{Rate: 10e6, Payload: 1000, Overhead: 0}
	ideal := workload.IdealByHops(w, func(int, int) int { return 1 })
	short := []workload.Flow{{Size: 1000}}
	m := scale.Model{Target: scale.Papers(), D: 10_000} // 10 Mb/s: the least drain 2 ms x D = 20 s
	if d := DefaultDrain(m, 3*time.Second, short, ideal); d != 20*time.Second {
		t.Errorf("short flows: %v", d)
	}
	if d := DefaultDrain(m, time.Minute, short, ideal); d != time.Minute {
		t.Errorf("long run: %v", d)
	}
	// 25 MB at 10 Mb/s is 20 s alone: 200 s.
	if d := DefaultDrain(m, time.Second, append(short, workload.Flow{Size: 25e6}), ideal); d != 200*time.Second {
		t.Errorf("a 25 MB flow: %v", d)
	}
}

// A run samples every interval whatever its ticks' work takes: over 10 s
// of ticks (the run starting a little after its ticker) it takes one
// sample an interval, rounded to whole ticks.
func TestSampleDue(t *testing.T) {
	for _, c := range []struct {
		interval, period time.Duration
		want             int
	}{
		{100 * time.Millisecond, 100 * time.Millisecond, 100},
		{200 * time.Millisecond, 200 * time.Millisecond, 50},
		{time.Second, 250 * time.Millisecond, 10},
		{500 * time.Millisecond, 250 * time.Millisecond, 20},
		{400 * time.Millisecond, 250 * time.Millisecond, 20}, // 1.6 ticks: every second one
	} {
		t0 := time.Unix(1000, 0)
		last, n := t0.Add(3*time.Millisecond), 0
		for at := t0.Add(c.period); !at.After(t0.Add(10 * time.Second)); at = at.Add(c.period) {
			if sampleDue(at, last, c.interval, c.period) {
				n, last = n+1, at
			}
		}
		if n != c.want {
			t.Errorf("interval %v, ticks %v apart: %d samples in 10 s, want %d", c.interval, c.period, n, c.want)
		}
	}
}

// An invalid run says so before anything else; the queue series has its
// peak and its CSV.
func TestWorkloadReportText(t *testing.T) {
	recs := []workload.FlowRecord{{ID: 0, Src: 0, Dst: 1, Size: 5000}}
	recs[0].Complete(2*time.Millisecond, time.Millisecond)
	sum, err := workload.Summarize(recs, time.Second, workload.DefaultBins)
	if err != nil {
		t.Fatal(err)
	}
	r := &WorkloadReport{Lab: "x", Topology: "BCube(2,1)", RateBps: 10e6, FC: scheme.NamePortFC, CDF: "storage", Load: 0.3, Basis: "link",
		Duration: time.Second, Seed: 7, Incast: &workload.Incast{Senders: 3, Size: 1e6, Period: time.Second}, MTU: 1024,
		Records: recs, Summary: sum, QueueNodes: []string{"h0", "s0.0"},
		Queues: []QueueRow{{Elapsed: time.Second, Bytes: []uint64{10, 20}}, {Elapsed: 2 * time.Second, Bytes: []uint64{3000, 5}}},
		Health: Health{Problems: []string{"XSK rings dropped 7 frames"}}, Aborted: 4,
		Stalls: []Stall{{Node: "h0", Port: "eth0", Queue: "P3", Peer: "s0.0"}, {Node: "s0.0", Port: "p0", Queue: "P3", Peer: "h0"}, {Node: "h1", Port: "eth1", Queue: "P3", Peer: "s1.0"}},
		Waits: &QueueWaits{Frames: 900, Mean: 2 * time.Millisecond, P50: time.Millisecond, P99: 9 * time.Millisecond, P999: 11 * time.Millisecond,
			MaxBound: 12 * time.Millisecond, Early: 1, EarlyMean: 300 * time.Microsecond}}
	r.Cycle = r.Stalls[:2]
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"INVALID RUN", "storage at load 0.3 (per link), incast 3 x 1 MB every 1s", "DCQCN off",
		"queues: largest 3 kB at h0, 2.0s into the run", "emulation health: INVALID", "problem: XSK rings dropped 7 frames",
		"switches' queueing delay, frame by frame (900 frames): mean 2ms, p50 1ms, p99 9ms, p99.9 11ms, at most 12ms\n",
		"of them 1 frame started on its link before it arrived, by 300µs on average",
		"4 flows were still running", "deadlock: at the end a cycle of 2 stalled queues, each paused by the next: h0 eth0 P3 -> s0.0 p0 P3 -> back to h0 (3 queues stalled in all)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasPrefix(out, "INVALID RUN") {
		t.Error("an invalid run does not say so first")
	}
	// A hand-made schedule (lab workload --flows) has no load or seed.
	hand := *r
	hand.HandMade, hand.CDF, hand.Load, hand.Incast = true, "", 0, nil
	b.Reset()
	if err := hand.WriteText(&b); err != nil || !strings.Contains(b.String(), "fc portfc: a hand-made schedule of 1 flow starting within 1s\n") || strings.Contains(b.String(), "seed") {
		t.Errorf("a hand-made schedule's report %v:\n%s", err, b.String())
	}
	b.Reset()
	if err := r.WriteQueuesCSV(&b); err != nil || b.String() != "elapsed_target_us,elapsed_lab_s,cnps,h0,s0.0\n,1.000,0,10,20\n,2.000,0,3000,5\n" {
		t.Errorf("queues CSV %v:\n%s", err, b.String())
	}
	// On a dilated lab the first column is the target's clock: 1 s of the
	// lab at D = 1,000 is 1,000 target µs.
	r.Model = scale.Model{D: 1000}
	b.Reset()
	if err := r.WriteQueuesCSV(&b); err != nil || b.String() != "elapsed_target_us,elapsed_lab_s,cnps,h0,s0.0\n1000.000,1.000,0,10,20\n2000.000,2.000,0,3000,5\n" {
		t.Errorf("queues CSV on a dilated lab %v:\n%s", err, b.String())
	}
	r.FlowSeries = []FlowSample{{Flow: 3, Elapsed: 50 * time.Millisecond, Acked: 1024}, {Flow: 3, Elapsed: 100 * time.Millisecond, Acked: 9000}}
	b.Reset()
	if err := r.WriteSeriesCSV(&b); err != nil || b.String() != "flow,elapsed_target_us,elapsed_lab_s,acked_bytes\n3,50.000,0.050000,1024\n3,100.000,0.100000,9000\n" {
		t.Errorf("series CSV on a dilated lab %v:\n%s", err, b.String())
	}
	r.PortSeries = []PortPoint{{Node: "s0.0", Port: "p1", Elapsed: 50 * time.Millisecond, TxBytes: 1500, QueueBytes: 3000}, {Node: "s0.0", Port: "p1", Queue: "B", Elapsed: 50 * time.Millisecond, TxBytes: 500, QueueBytes: 1000}, {Node: "h0", Port: "eth0", Elapsed: 51500 * time.Microsecond, TxBytes: 0}}
	b.Reset()
	if err := r.WritePortsCSV(&b); err != nil || b.String() != "node,port,queue,elapsed_target_us,elapsed_lab_s,tx_bytes,queue_bytes\ns0.0,p1,,50.000,0.050000,1500,3000\ns0.0,p1,B,50.000,0.050000,500,1000\nh0,eth0,,51.500,0.051500,0,0\n" {
		t.Errorf("ports CSV on a dilated lab %v:\n%s", err, b.String())
	}
}

// A port sample is dated by its node's counters, not by the sample that
// read them; a node with no instant, or one past what a sample may take,
// is dated by the sample.
func TestCountedElapsed(t *testing.T) {
	const unix = 1_800_000_000_000_000_000
	for _, c := range []struct {
		counted int64
		want    time.Duration
	}{
		{unix + 3_000_000, 1003 * time.Millisecond}, // read 3 ms into the sample
		{unix - 250_000, 999750 * time.Microsecond}, // copied just before the sample began
		{0, time.Second}, // no instant
		{unix + int64(3*time.Second), time.Second}, // a wall-clock step
		{unix - int64(5*time.Second), time.Second},
	} {
		if got := countedElapsed(time.Second, unix, c.counted); got != c.want {
			t.Errorf("counted %d: %v, want %v", c.counted-unix, got, c.want)
		}
	}
}

// With per-level rates the load counts the slowest level's links (the
// rails), the per-host basis all of a host's, and a flow's ideal FCT
// runs at the slowest link of its path.
func TestWorkloadLevelRates(t *testing.T) {
	s := RailOnly(Spec{Name: "r"})
	s.Rates = []uint64{32e6, 20e6}
	st := &State{Lab: "r", Spec: s}
	cdf, err := workload.BuiltinCDF("websearch")
	if err != nil {
		t.Fatal(err)
	}
	tp, c, err := resolveWorkload(st, workload.Config{Load: 0.5, CDF: cdf, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if c.LinkRate != 20e6 || c.HostRate != 52e6 || c.LinksPerHost != 2 || c.Hosts != 16 {
		t.Errorf("link rate %d, host rate %d, %d links, %d hosts", c.LinkRate, c.HostRate, c.LinksPerHost, c.Hosts)
	}
	if c.Capacity() != 20e6 {
		t.Errorf("per-link capacity %g, want the rails' 20e6", c.Capacity())
	}
	c.Basis = workload.PerHost
	if c.Capacity() != 52e6 {
		t.Errorf("per-host capacity %g, want 52e6", c.Capacity())
	}
	const mtu = 1000
	w := WorkloadWire(s, mtu)
	ideal := WorkloadIdeal(s, tp, mtu)
	for _, c := range []struct {
		dst   int
		rates []uint64
	}{
		{1, []uint64{32e6, 32e6}},             // h0 -> h1: the HBD only
		{4, []uint64{20e6, 20e6}},             // h0 -> h4: one rail
		{5, []uint64{32e6, 32e6, 20e6, 20e6}}, // both
	} {
		want := workload.IdealPath(100_000, c.rates, w)
		if got := ideal(0, c.dst, 100_000); got != want || got == 0 {
			t.Errorf("h0 -> h%d: ideal %v, want %v", c.dst, got, want)
		}
	}
	// The HBD's 2-hop flow is faster than a rail's; a 4-hop flow is
	// slower than a rail's 2-hop one but faster than four rail hops.
	hbd, rail, both := ideal(0, 1, 100_000), ideal(0, 4, 100_000), ideal(0, 5, 100_000)
	four := workload.Ideal(100_000, 4, w)
	if !(hbd < rail && rail < both && both < four) {
		t.Errorf("ideals: HBD %v, rail %v, both %v, four rail hops %v", hbd, rail, both, four)
	}
	st.Spec.Rates = []uint64{32e6, 0}
	if _, _, err := resolveWorkload(st, workload.Config{Load: 0.5, CDF: cdf, Duration: time.Second}); err == nil {
		t.Error("an unshaped level accepted")
	}
}

// On a lab of D = 5,000 the report reads every time and rate on the
// target's clock and labels it; a duration the user gave is the lab's,
// with the target's beside it; the health is the lab's own, and says so.
func TestWorkloadReportTargetClockUnit(t *testing.T) {
	recs := []workload.FlowRecord{{ID: 0, Src: 0, Dst: 1, Size: 5000}}
	recs[0].Complete(10*time.Millisecond, 5*time.Millisecond)
	sum, err := workload.Summarize(recs, 16*time.Second, workload.DefaultBins)
	if err != nil {
		t.Fatal(err)
	}
	m := scale.Model{Target: scale.Papers(), D: 5000}
	r := &WorkloadReport{Lab: "x", Topology: "BCube(4,1)", RateBps: 20e6, FC: scheme.NamePortFC, CDF: "websearch", Load: 0.5, Basis: "link",
		Duration: 8 * time.Second, Seed: 1, Incast: &workload.Incast{Senders: 8, Size: 1e6, Period: 2 * time.Second}, MTU: 1024,
		Elapsed: 16429 * time.Millisecond, TargetElapsed: m.TargetTime(16429 * time.Millisecond), Wall: 21430 * time.Millisecond, StartLag: workload.Dist[time.Duration]{N: 1, Mean: 2486 * time.Microsecond, P99: 3 * time.Millisecond, Max: 4 * time.Millisecond},
		Model: m, Records: recs, Summary: sum, Target: sum.Dilated(m.D), QueueNodes: []string{"h0"},
		Queues: []QueueRow{{Elapsed: 4 * time.Second, Bytes: []uint64{3000}}},
		Health: Health{Valid: true, Wall: 16 * time.Second, CPUs: 2, ProcCPU: 3 * time.Second, LostTotal: time.Millisecond, MaxLate: 3 * time.Millisecond,
			Fidelity: &Fidelity{P50: 10 * time.Millisecond, P99: 11 * time.Millisecond, Model: 10 * time.Millisecond, Samples: 100}}}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"for 8s of lab time = 1.6ms in the target",
		"incast 8 x 1 MB every 2s of lab time = 400µs in the target",
		"ran 3.286ms in the target (16.43s of lab time)",
		"cost: 6.522s of wall time per ms in the target (21.43s of wall time for 3.286ms in the target; at D = 5000 no less than 5s of wall time)\n",
		"flows started late by 497ns in the target on average",
		"in 3.20ms in the target, goodput 12.5 Mbit/s in the target",
		"FCT in the target",
		"800µs in the target (4.0s of lab time) into the run",
		"times of lab time, the emulator's own",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if bad := clocktest.Unlabelled(out); len(bad) > 0 {
		t.Errorf("times and rates on no one's clock:\n%s\n\n%s", strings.Join(bad, "\n"), out)
	}
	p := WorkloadProgress{Elapsed: 3 * time.Second, Flows: 9, Started: 4, Goodput: 41.2e6, Model: m}
	if got, want := p.String(), "600µs in the target (3.0s of lab time): 4/9 started, 0 running, 0 done, 0 failed, 206 Gbit/s in the target"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
	if bad := clocktest.Unlabelled(p.String()); len(bad) > 0 {
		t.Errorf("progress: %q", bad)
	}
}

// A run's congestion control: the lab's by default, none with DCQCN off,
// and dctcp or hpcc only on a lab whose egresses run them.
func TestWorkloadFlowCC(t *testing.T) {
	for _, c := range []struct {
		o     WorkloadOptions
		lab   string
		want  string
		fails bool
	}{
		{WorkloadOptions{}, "", "dcqcn", false},
		{WorkloadOptions{}, "hpcc", "hpcc", false},
		{WorkloadOptions{NoDCQCN: true}, "dctcp", "none", false},
		{WorkloadOptions{CC: "hpcc"}, "hpcc", "hpcc", false},
		{WorkloadOptions{CC: "none"}, "hpcc", "none", false},
		{WorkloadOptions{CC: "dcqcn"}, "hpcc", "dcqcn", false},
		{WorkloadOptions{CC: "dcqcn"}, "dctcp", "", true},
		{WorkloadOptions{CC: "dcqcn-win"}, "", "dcqcn-win", false},
		{WorkloadOptions{CC: "dcqcn-win", NoDCQCN: true}, "", "", true},
		{WorkloadOptions{CC: "hpcc"}, "", "", true},
		{WorkloadOptions{CC: "dctcp"}, "hpcc", "", true},
		{WorkloadOptions{CC: "dcqcn", NoDCQCN: true}, "", "", true},
		{WorkloadOptions{CC: "cubic"}, "", "", true},
	} {
		cc, err := c.o.FlowCC(c.lab)
		if (err != nil) != c.fails || (err == nil && cc.String() != c.want) {
			t.Errorf("%+v on a %q lab: %v, %v", c.o, c.lab, cc, err)
		}
	}
}

func TestCheckFlows(t *testing.T) {
	c := workload.Config{Hosts: 4, Duration: time.Second}
	ok := []workload.Flow{{ID: 0, Src: 0, Dst: 1, Size: 1000}, {ID: 1, Src: 3, Dst: 0, Size: 1, Start: 999 * time.Millisecond}}
	if err := CheckFlows(ok, c); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []workload.Flow{
		{ID: 2, Src: 0, Dst: 1, Size: 1},
		{ID: 1, Src: 0, Dst: 4, Size: 1},
		{ID: 1, Src: 2, Dst: 2, Size: 1},
		{ID: 1, Src: 0, Dst: 1},
		{ID: 1, Src: 0, Dst: 1, Size: 1, Start: time.Second},
	} {
		// The error names the flow, after a good one.
		err := CheckFlows([]workload.Flow{ok[0], bad}, c)
		var fe *FlowError
		if !errors.As(err, &fe) || fe.Flow != 1 {
			t.Errorf("%+v: %v, want a FlowError of flow 1", bad, err)
		}
	}
}

// A hand-made schedule on a lab of a spec: the lab's hosts, the
// window c gives, and no generated flows beside it.
func TestSpecFlows(t *testing.T) {
	spec := Spec{Name: "sf", N: 4, K: 1, RateBps: 20e6}
	flows := []workload.Flow{{ID: 0, Src: 1, Dst: 0, Size: 1000, Kind: workload.KindIncast, Group: 1}, {ID: 1, Src: 15, Dst: 0, Size: 1000, Start: 5, Kind: workload.KindIncast, Group: 1}}
	c, err := SpecFlows(spec, workload.Config{Duration: 6}, flows)
	if err != nil || c.Hosts != 16 || c.LinkRate != 20e6 {
		t.Fatalf("SpecFlows: %d hosts at %d bit/s, %v", c.Hosts, c.LinkRate, err)
	}
	var fe *FlowError
	if _, err := SpecFlows(spec, workload.Config{Duration: 5}, flows); !errors.As(err, &fe) || fe.Flow != 1 || !strings.Contains(err.Error(), "outside the window [0, 5ns)") {
		t.Errorf("a start out of the window: %v", err)
	}
	far := slices.Clone(flows)
	far[1].Src = 16
	if _, err := SpecFlows(spec, workload.Config{Duration: 6}, far); !errors.As(err, &fe) || fe.Flow != 1 || !strings.Contains(err.Error(), "h16 -> h0, want servers h0..h15") {
		t.Errorf("h16 of 16 servers: %v", err)
	}
	if _, err := SpecFlows(spec, workload.Config{Duration: 6, Incast: &workload.Incast{Senders: 2, Size: 1}}, flows); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("with an incast: %v", err)
	}
	if _, err := SpecFlows(spec, workload.Config{Duration: 6}, nil); err == nil {
		t.Error("no flows accepted")
	}
	if _, err := SpecFlows(Spec{Name: "u", N: 4, K: 1}, workload.Config{Duration: 6}, flows); err == nil {
		t.Error("an unshaped lab accepted")
	}
}

// A hand-made schedule's injected losses are checked as the NICs will:
// in packets of the run's MTU, and only in a lossy mode (flows without
// one pass in any).
func TestCheckLose(t *testing.T) {
	for _, c := range []struct {
		mode  transport.Mode
		mtu   int
		lose  []int
		fails bool
	}{
		{transport.GBN, 1024, nil, false},
		{transport.IRN, 1024, []int{9}, false},
		{transport.Lossless, 1024, []int{9}, true},
		{transport.GBN, 1400, []int{7}, false},
		{transport.GBN, 1400, []int{8}, true}, // 8 packets
		{transport.IRN, 1024, []int{10}, true},
		{transport.GBN, 1024, []int{4, 4}, true},
	} {
		fs := []workload.Flow{{Size: 10_000}, {Size: 10_240, Lose: c.lose}}
		if err := CheckLose(fs, c.mode, c.mtu); (err != nil) != c.fails {
			t.Errorf("lose %v in %v at mtu %d: %v", c.lose, c.mode, c.mtu, err)
		}
	}
}
