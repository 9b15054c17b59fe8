package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
)

// A workload on a real lab: every flow of the schedule runs as an RDMA
// flow from its source's NIC, in the schedule's order and identity, and
// completes (lossless under PortFC); the report has FCTs, ideal FCTs,
// the fabric's counters, a queue series and a valid emulation health. A
// bad workload is refused before any flow starts.
func TestWorkloadLab(t *testing.T) {
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		s := realSpec(t, 2, 1)
		s.FC, s.RateBps, s.ECN = scheme.NamePortFC, 10e6, true
		if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
			t.Fatal(err)
		}
		storage, err := workload.BuiltinCDF("storage")
		if err != nil {
			t.Fatal(err)
		}

		bad := workload.Config{Load: 1.5, CDF: storage, Duration: 3 * time.Second}
		if _, err := RunWorkload(t.Context(), s.RunRoot, s.Name, WorkloadOptions{Config: bad}); err == nil || !strings.Contains(err.Error(), "load 1.5") {
			t.Fatalf("load 1.5: %v", err)
		}
		for h := range 4 {
			if n := nicFlows(t, s, h); n != 0 {
				t.Fatalf("h%d runs %d flows after a refused workload", h, n)
			}
		}

		cfg := workload.Config{Load: 0.3, CDF: storage, Duration: 3 * time.Second, Seed: 7,
			Incast: &workload.Incast{Senders: 3, Size: 100_000, Period: time.Second}}
		_, sched, err := WorkloadSchedule(s.RunRoot, s.Name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var progress []WorkloadProgress
		rep, err := RunWorkload(t.Context(), s.RunRoot, s.Name, WorkloadOptions{Config: cfg, Interval: 500 * time.Millisecond, PortSeries: true,
			Progress: func(p WorkloadProgress) { progress = append(progress, p) }})
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		if err := rep.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d flows scheduled\n%s", len(sched), text.String())
		if why, late := rep.Health.Late(); late {
			// Timing means nothing in a run the machine was late for; the
			// lossless promise still holds where no ring overflowed.
			if rep.Health.RingDrops == 0 && rep.Fabric.Drops != 0 {
				t.Errorf("%d drops under PortFC in a late run whose rings dropped nothing", rep.Fabric.Drops)
			}
			return why
		}

		if len(rep.Records) != len(sched) || len(sched) < 50 {
			t.Fatalf("%d records of %d scheduled flows (want at least 50)", len(rep.Records), len(sched))
		}
		incast, faster := 0, 0
		st, err := LoadState(s.RunRoot, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		model := st.Spec.Model()
		wire, tp := WorkloadWire(st.Spec, api.DefaultRDMAMTU), mustTopology(t, s)
		for i, r := range rep.Records {
			f := sched[i]
			if r.ID != f.ID || r.Src != f.Src || r.Dst != f.Dst || r.Size != f.Size || r.Kind != f.Kind {
				t.Fatalf("record %d is %+v, the schedule's flow %+v", i, r, f)
			}
			if !r.Completed || r.Failed || r.FCT <= 0 || r.IdealFCT <= 0 || r.Slowdown <= 0 {
				t.Errorf("flow %d (h%d -> h%d, %d B): %+v", r.ID, r.Src, r.Dst, r.Size, r)
			}
			// A flow cannot end sooner than on an idle fabric at line rate, but
			// by what the links' delays fall short of the model's: the
			// fidelity monitor holds the links' median one-hop RTT within
			// scale.MaxRTTError of the model's, and a single flow's frames
			// may meet a shorter delay than the median; allow twice that on
			// each of its hops' round trips, and one frame's and one ACK's
			// serialisation per hop. Anything faster is a measuring or
			// pacing bug.
			frame := min(r.Size, int64(wire.Payload)) + int64(wire.Overhead)
			hops := float64(tp.Hops(r.Src, r.Dst))
			early := time.Duration(hops*float64((frame+int64(wire.Ack))*8)/float64(wire.Rate)*1e9) +
				time.Duration(2*scale.MaxRTTError*hops*float64(model.OneHopRTT()))
			if r.FCT < r.IdealFCT-early {
				t.Errorf("flow %d (h%d -> h%d, %d B): FCT %v, under its ideal %v by more than %v", r.ID, r.Src, r.Dst, r.Size, r.FCT, r.IdealFCT, early)
			}
			if r.Slowdown < 1 {
				faster++
			}
			if r.Start < f.Start {
				t.Errorf("flow %d started at %v, before its schedule's %v", r.ID, r.Start, f.Start)
			}
			if r.Kind == workload.KindIncast {
				incast++
			}
		}
		t.Logf("%d of %d flows ended before their ideal FCT (the links' delays a little short of the model's)", faster, len(rep.Records))
		if incast != 9 {
			t.Errorf("%d incast flows, want 3 incasts of 3", incast)
		}
		if sm := rep.Summary; sm.Completed != len(sched) || sm.Failed+sm.Incomplete != 0 || rep.StartErrors+rep.Aborted != 0 || sm.Goodput <= 0 {
			t.Errorf("summary %d completed, %d failed, %d incomplete, goodput %.0f; %d start errors, %d aborted",
				sm.Completed, sm.Failed, sm.Incomplete, sm.Goodput, rep.StartErrors, rep.Aborted)
		}
		if rep.Fabric.Drops != 0 {
			t.Errorf("%d drops under PortFC", rep.Fabric.Drops)
		}
		// Every data frame crosses a switch at least once.
		var frames uint64
		for _, f := range sched {
			frames += uint64((f.Size + int64(wire.Payload) - 1) / int64(wire.Payload))
		}
		if q := rep.Waits; q == nil || q.Frames < frames || !(q.P50 <= q.P99 && q.P99 <= q.P999 && q.P999 <= q.MaxBound) || q.MaxBound <= 0 {
			t.Errorf("switches' waits %+v, want at least %d frames and ordered quantiles", q, frames)
		} else {
			t.Logf("switches' waits: %d frames, mean %v, p50 %v, p99 %v, p99.9 %v, under %v (lab time)", q.Frames, q.Mean, q.P50, q.P99, q.P999, q.MaxBound)
		}
		if rep.StartLag.N != len(sched) {
			t.Errorf("start lag of %d flows, want %d", rep.StartLag.N, len(sched))
		}
		h := rep.Health
		if !h.Valid {
			t.Errorf("emulation health invalid: %v", h.Problems)
		}
		if h.Wall < 3*time.Second || h.CPUs < 1 || h.ProcCPU <= 0 || len(h.Busiest) == 0 || h.Busiest[0].CPU <= 0 {
			t.Errorf("health %+v", h)
		}
		if len(rep.QueueNodes) != 8 || len(rep.Queues) == 0 || len(rep.Queues[0].Bytes) != 8 {
			t.Errorf("queue series of %d nodes, %d rows", len(rep.QueueNodes), len(rep.Queues))
		}
		checkPortSeries(t, rep, len(rep.Queues))
		if len(progress) < 4 || progress[len(progress)-1].Completed != len(sched) {
			t.Errorf("%d progress reports, the last %+v", len(progress), progress[len(progress)-1:])
		}
		if !strings.Contains(text.String(), "emulation health: valid") {
			t.Error("the text report does not state the health")
		}
		// Every node's sample (the series above were made of them) has
		// the counters the health reads and none of the full stats'
		// maps, histograms and server's section.
		for _, n := range st.Nodes {
			full, err := FetchStats(t.Context(), n.Control)
			if err != nil {
				t.Fatal(err)
			}
			smp, err := FetchSample(t.Context(), n.Control)
			if err != nil {
				t.Fatal(err)
			}
			if smp.Node != n.Name || smp.BusyNs < full.BusyNs || smp.Host != nil || len(smp.Ports) != len(full.Ports) {
				t.Fatalf("%s: sample %+v after full stats %+v", n.Name, smp, full)
			}
			for i, p := range smp.Ports {
				f := full.Ports[i]
				if p.Name != f.Name || p.RateBps != f.RateBps || p.TxPackets < f.TxPackets || len(p.Queues) != len(f.Queues) || p.XSK["rx_dropped"] != f.XSK["rx_dropped"] ||
					p.XSK == nil || f.Drops == nil || p.Drops != nil || (f.XDP == nil) == (p.XDP == nil) || p.Signals != nil || p.FCTiming != nil {
					t.Errorf("%s/%s: sample %+v\nfull %+v", n.Name, p.Name, p, f)
				}
			}
		}
		// Its worker gives every node's sample in one answer.
		if len(st.Workers) != 1 {
			t.Fatalf("%d workers", len(st.Workers))
		}
		batch, err := FetchSamples(t.Context(), st.Workers[0].Control)
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) != len(st.Nodes) {
			t.Fatalf("%d samples from the worker for %d nodes", len(batch), len(st.Nodes))
		}
		for i, n := range st.Nodes {
			if b := batch[i]; b.Node != n.Name || len(b.Ports) == 0 || b.Ports[0].XSK == nil || b.Ports[0].Drops != nil || b.Host != nil {
				t.Errorf("the worker's sample %d: %+v, want %s's", i, b, n.Name)
			}
		}
		// Its worker answers GETs of its nodes' routes in one request
		// (the run's polls of the NICs came by it): each as the node's
		// own socket answers, and an error of its own for each bad one.
		gets := []api.NodeGet{{Node: "h0", Path: "/rdma"}, {Node: "h1", Path: "/rdma?id=x"}, {Node: "h9", Path: "/rdma"},
			{Node: "h0", Path: "/rdma"}, {Node: "s0.0", Path: "stats"}, {Node: "s0.1", Path: "/waits"}}
		as, err := WorkerGet(t.Context(), st.Workers[0].Control, gets)
		if err != nil {
			t.Fatal(err)
		}
		h0, _ := st.Node("h0")
		own, err := controlJSON[api.RDMAReport](t.Context(), h0.Control, "/rdma")
		if err != nil {
			t.Fatal(err)
		}
		var rep0 api.RDMAReport
		if err := json.Unmarshal(as[0].Body, &rep0); as[0].Status != 200 || err != nil || len(rep0.Flows) != len(own.Flows) || len(own.Flows) == 0 {
			t.Errorf("h0's /rdma by the worker: %+v (%v), %d flows; by its socket %d", as[0], err, len(rep0.Flows), len(own.Flows))
		}
		for i, want := range []int{200, 400, 404, 400, 400, 200} {
			if a := as[i]; a.Node != gets[i].Node || a.Status != want || (want == 200) != (a.Error == "") || (want == 200) != (a.Body != nil) {
				t.Errorf("GET %s%s by the worker: %+v, want status %d", gets[i].Node, gets[i].Path, a, want)
			}
		}
		return ""
	})
}

// checkPortSeries checks a run's port series against what the ports
// must do: every port of every node, and each of its egress queues, at
// each of the run's samples, each dated by its node's counters in
// order, its bytes sent never falling, and no shaped link, nor a queue
// of one, carrying more than the link's rate from its first sample to
// its last (a late port catches up only what it lost). Some port
// carried traffic, and the switches' ports have their queues.
func checkPortSeries(t *testing.T, rep *WorkloadReport, samples int) {
	t.Helper()
	type key struct{ node, port, queue string }
	byPort := map[key][]PortPoint{}
	var order []key
	queues := 0
	for _, p := range rep.PortSeries {
		k := key{p.Node, p.Port, p.Queue}
		if p.Queue != "" && strings.HasPrefix(p.Node, "s") {
			queues++
		}
		if _, ok := byPort[k]; !ok {
			order = append(order, k)
		}
		byPort[k] = append(byPort[k], p)
	}
	nodes := map[string]bool{}
	moved, busiest := false, 0.0
	for _, k := range order {
		ps := byPort[k]
		nodes[k.node] = true
		if len(ps) != samples {
			t.Errorf("%s/%s %q: %d points, want one at each of the %d samples", k.node, k.port, k.queue, len(ps), samples)
		}
		for i := 1; i < len(ps); i++ {
			if ps[i].Elapsed <= ps[i-1].Elapsed || ps[i].TxBytes < ps[i-1].TxBytes || ps[i].TargetElapsed <= ps[i-1].TargetElapsed {
				t.Errorf("%s/%s %q: point %d %+v after %+v", k.node, k.port, k.queue, i, ps[i], ps[i-1])
			}
		}
		first, last := ps[0], ps[len(ps)-1]
		sent := last.TxBytes - first.TxBytes
		moved = moved || sent > 0
		if first.RateBps > 0 {
			// One frame of slack for a frame counted as it starts.
			limit := float64(first.RateBps)/8*(last.Elapsed-first.Elapsed).Seconds() + 1500
			busiest = max(busiest, float64(sent)*8/float64(first.RateBps)/(last.Elapsed-first.Elapsed).Seconds())
			if float64(sent) > limit {
				t.Errorf("%s/%s %q sent %d B in %v, more than its %d bit/s carry (%.0f B)", k.node, k.port, k.queue, sent, last.Elapsed-first.Elapsed, first.RateBps, limit)
			}
		}
	}
	t.Logf("port series: %d ports and queues; the busiest link carried %.0f%% of its rate over the run", len(order), 100*busiest)
	if len(nodes) != len(rep.QueueNodes) || !moved || queues == 0 {
		t.Errorf("port series of %d nodes (want %d), traffic seen: %v, %d points of the switches' queues", len(nodes), len(rep.QueueNodes), moved, queues)
	}
}

// nicFlows is the number of RDMA flows server h's NIC has started.
func nicFlows(t *testing.T, s Spec, h int) int {
	t.Helper()
	st, err := LoadState(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := st.Node(bcube.HostName(h))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := controlGet(ctx, n.Control, "/rdma")
	if err != nil {
		t.Fatal(err)
	}
	var r api.RDMAReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return len(r.Flows)
}

// The flows that wait for a group are released when the last of its
// phase-0 flows ends, whether it completed or failed, and not before;
// ending a flow twice counts once.
func TestWorkloadGroupWait(t *testing.T) {
	flows := []workload.Flow{
		{ID: 0, Group: 1, Kind: workload.KindMoE},
		{ID: 1, Group: 1, Kind: workload.KindMoE},
		{ID: 2, Group: 1, Phase: 1, After: 1, Kind: workload.KindMoE},
		{ID: 3, Group: 2, Kind: workload.KindMoE},
	}
	w := &groupWait{left: 2, done: make(chan struct{})}
	r := &workloadRun{flows: flows, ended: make([]bool, len(flows)), waits: map[int]*groupWait{1: w}}
	released := func() bool {
		select {
		case <-w.done:
			return true
		default:
			return false
		}
	}
	r.end(0)
	r.end(0)
	r.end(3) // another group
	if released() {
		t.Fatal("released with one of two dispatch flows running")
	}
	r.end(2) // a waiting flow itself does not count
	if released() {
		t.Fatal("released by the second phase")
	}
	r.end(1)
	if !released() || w.left != 0 {
		t.Fatalf("not released when the phase ended: %d left", w.left)
	}
}

// The open groups' polls: 20 µs of the target at the run's D, within
// 5 ms and the ordinary poll; only a waited-for group's first phase,
// while it is open.
func TestGroupPoll(t *testing.T) {
	for _, c := range []struct {
		d    float64
		want time.Duration
	}{{1000, 20 * time.Millisecond}, {2000, 40 * time.Millisecond}, {1, groupPollMin}, {100, groupPollMin}, {50_000, workloadPoll}} {
		if got := groupPoll(scale.Model{Target: scale.Papers(), D: c.d}); got != c.want {
			t.Errorf("D = %g: %v, want %v", c.d, got, c.want)
		}
	}
	r := &workloadRun{
		flows: []workload.Flow{
			{Group: 1, Phase: 0}, {Group: 1, Phase: 0}, {Group: 1, Phase: 1, After: 1},
			{Group: 2, Phase: 0}, {Group: 0}, {Group: 3, Phase: 0}, {Group: 3, Phase: 1, After: 3},
		},
		waits: map[int]*groupWait{1: {left: 2}, 3: {left: 0}},
	}
	var got []int
	for i := range r.flows {
		if r.inOpenGroup(i) {
			got = append(got, i)
		}
	}
	if !slices.Equal(got, []int{0, 1}) {
		t.Errorf("polled while open: flows %v, want 0 and 1 (group 1's first phase; group 2 has no waiter, group 3 has ended)", got)
	}
}

// A source's flows go to its NIC a batch per startAhead of its schedule
// (or per startBatch flows), each flow handed startAhead to twice that
// before it is due, not a request per flow; a starter that fell behind
// hands everything then due, and more than startBatch due at once go in
// batches of startBatch.
func TestStartBatches(t *testing.T) {
	// A flow every 10 ms for 5 s: 500 flows, 100 a startAhead.
	const every = 10 * time.Millisecond
	dues := make([]time.Duration, 500)
	for k := range dues {
		dues[k] = time.Second + time.Duration(k)*every
	}
	due := func(k int) time.Duration { return dues[k] }
	batches, now := 0, time.Duration(0)
	for next := 0; next < len(dues); {
		now = max(now, due(next)-startAhead) // the starter's wait
		end := batchEnd(len(dues), next, due, now)
		if end <= next || end-next > startBatch {
			t.Fatalf("batch from %d ends at %d: want 1 to %d flows", next, end, startBatch)
		}
		for k := next; k < end; k++ {
			if lead := due(k) - now; lead < startAhead || lead > 2*startAhead {
				t.Fatalf("flow %d handed %v before it is due: want %v to %v", k, lead, startAhead, 2*startAhead)
			}
		}
		batches++
		next = end
	}
	// 51 flows a batch (a startAhead of them and the one at its end),
	// bounded by startBatch.
	if want := (len(dues) + 50) / 51; batches != want {
		t.Errorf("%d flows in %d batches, want %d", len(dues), batches, want)
	}
	// Behind: at 3 s every flow due by 3.5 s goes, startBatch at a time.
	if end := batchEnd(len(dues), 0, due, 3*time.Second); end != startBatch {
		t.Errorf("behind by 2.5 s: a batch of %d, want %d", end, startBatch)
	}
	// A lone flow goes alone.
	if end := batchEnd(1, 0, due, 0); end != 1 {
		t.Errorf("one flow: a batch of %d, want 1", end)
	}
}

// A poll asks a NIC for the flows it has that started or are due, not
// those handed to it ahead of their time, nor those that ended.
func TestPollAsksDueFlows(t *testing.T) {
	r := &workloadRun{
		flows: []workload.Flow{
			{Start: time.Second}, {Start: 2 * time.Second}, {Start: 3 * time.Second},
			{Start: 4 * time.Second}, {Start: 5 * time.Second}, {Start: 500 * time.Millisecond},
		},
		rid:     []int{1, 2, 3, 4, 0, 6},
		started: []bool{true, false, true, false, false, true},
		ended:   []bool{false, false, false, false, false, true},
	}
	var got []int
	for i := range r.flows {
		if r.asked(i, 2*time.Second) {
			got = append(got, i)
		}
	}
	// 0 runs; 1 is due now; 2 is reported started; 3 is not due; 4 has
	// no id at its NIC; 5 ended.
	if !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("a poll at 2 s asks flows %v, want 0, 1 and 2", got)
	}
}

// A flow's start is read on the monotonic clock: a step of the wall clock
// between its request and its report (the Unix times moved by 4 s) is
// not a late start, and the run names the step.
func TestStartLagIgnoresWallStep(t *testing.T) {
	now := time.Now()
	r := &workloadRun{
		flows:   []workload.Flow{{Start: time.Second}, {Start: 2 * time.Second}},
		recs:    make([]workload.FlowRecord, 2),
		started: make([]bool, 2),
		due:     []time.Duration{time.Second, 2 * time.Second},
		t0:      now,
		t0Mono:  1_000_000_000_000,
	}
	const step = 4 * time.Second
	wall := now.UnixNano() + int64(step)
	r.began(0, &api.RDMAFlow{State: api.RDMARunning, StartNs: wall + int64(time.Second), StartMonoNs: r.t0Mono + int64(time.Second)})
	r.began(1, &api.RDMAFlow{State: api.RDMARunning, StartNs: wall + int64(2*time.Second+3*time.Millisecond),
		StartMonoNs: r.t0Mono + int64(2*time.Second+3*time.Millisecond)})
	if !slices.Equal(r.lag, []time.Duration{0, 3 * time.Millisecond}) {
		t.Errorf("start lags %v, want 0 and 3ms", r.lag)
	}
	if r.recs[1].Start != 2*time.Second+3*time.Millisecond {
		t.Errorf("flow 1 started at %v, want 2.003s", r.recs[1].Start)
	}
	// Polls after a step of 4 s, then with the clock stepped back but
	// for 1 ms.
	r.wallOff0 = 1_700_000_000_000_000_000
	r.watchWall(r.wallOff0 + int64(step))
	r.watchWall(r.wallOff0 + int64(time.Millisecond))
	if r.wallStep != step {
		t.Errorf("wall clock step %v, want %v", r.wallStep, step)
	}
	// This machine's clocks, read as a run reads them: no step.
	off0, ok0 := wallOffset()
	off1, ok1 := wallOffset()
	if !ok0 || !ok1 || time.Duration(off1-off0).Abs() > wallReadGap {
		t.Errorf("the wall clock less the monotonic one read %d then %d (%v, %v)", off0, off1, ok0, ok1)
	}
}

// A run's abort reads how its stopped flows ended: a flow that started,
// or completed, after the run's last poll is counted as it went, not as
// never started. A fake NIC on a unix socket answers the abort's DELETE
// and the GET after it.
func TestAbortReadsFinalStates(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "h0.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var deleted string
	final := map[int]api.RDMAFlow{
		1: {ID: 1, State: api.RDMAAborted, StartMonoNs: 1_000_000_100},                             // known running
		2: {ID: 2, State: api.RDMAAborted, StartMonoNs: 1_000_000_200},                             // started after the last poll
		3: {ID: 3, State: api.RDMAAborted},                                                         // never started
		4: {ID: 4, State: api.RDMADone, StartMonoNs: 1_000_000_050, FCTNs: 5000, AckedBytes: 1000}, // ended after the last poll
	}
	mux := http.NewServeMux()
	mux.HandleFunc("DELETE /rdma", func(w http.ResponseWriter, r *http.Request) {
		deleted = r.URL.Query().Get("id")
		fmt.Fprintln(w, `{"stopped": 3}`)
	})
	mux.HandleFunc("GET /rdma", func(w http.ResponseWriter, r *http.Request) {
		var rep api.RDMAReport
		for _, s := range strings.Split(r.URL.Query().Get("id"), ",") {
			id, _ := strconv.Atoi(s)
			rep.Flows = append(rep.Flows, final[id])
		}
		_ = json.NewEncoder(w).Encode(rep)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	n := 4
	r := &workloadRun{
		flows:   make([]workload.Flow, n),
		recs:    make([]workload.FlowRecord, n),
		rid:     []int{1, 2, 3, 4},
		started: []bool{true, false, false, true},
		ended:   make([]bool, n),
		due:     make([]time.Duration, n),
		acked:   make([]int64, n),
		cnpsNow: make([]uint64, n),
		socks:   []string{sock},
		ideal:   func(int, int, int64) time.Duration { return time.Microsecond },
		t0Mono:  1_000_000_000,
	}
	for i := range r.flows {
		r.flows[i] = workload.Flow{ID: i + 1, Size: 1000}
		r.recs[i] = workload.FlowRecord{ID: i + 1, Size: 1000}
	}
	r.abort()
	if deleted != "1,2,3,4" {
		t.Errorf("the abort stopped flows %q, want 1,2,3,4", deleted)
	}
	got := r.tally()
	if want := (FlowTally{Total: 4, Completed: 1, Stopped: 2, NotStarted: 1}); got != want {
		t.Errorf("after the abort: %+v, want %+v", got, want)
	}
	if r.aborted != 3 || !slices.Equal(r.ended, []bool{true, true, true, true}) {
		t.Errorf("%d flows aborted, ended %v: want 3, all", r.aborted, r.ended)
	}
	if !r.recs[3].Completed || r.recs[3].FCT != 5*time.Microsecond {
		t.Errorf("the flow done before the abort: %+v", r.recs[3])
	}
}
