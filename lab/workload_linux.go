package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/wire/transport"
)

// workloadPoll is the time between two polls of the NICs for the flows'
// outcomes, Interval or shorter, so a run ends soon after its last flow.
const workloadPoll = 250 * time.Millisecond

// A flow that waits for a group (a parameter server's pull) starts when
// a poll finds the group's first phase ended, so the wait between the
// phases is up to a poll. While a group is open its first phase's
// flows alone are polled every groupPollTarget of the target (its lab
// time at the run's D), at least groupPollMin and at most workloadPoll
// apart: at D = 1,000, 20 ms of the lab.
const (
	groupPollTarget = 20 * time.Microsecond
	groupPollMin    = 5 * time.Millisecond
)

// groupPoll is the period of the open groups' polls under model m.
func groupPoll(m scale.Model) time.Duration {
	return min(max(m.Time(groupPollTarget), groupPollMin), workloadPoll)
}

// startAhead is how long before their time the runner hands flows to
// their NICs (a batch's first flow, the rest up to twice that), which
// start them on time themselves; startBatch is the most flows one
// request hands over, which bounds how long it holds the NIC's engine
// (about a microsecond or two a flow).
const (
	startAhead = 500 * time.Millisecond
	startBatch = 64
)

// RunWorkload runs the workload o describes on lab name (see
// WorkloadReport). It fails before starting anything when the workload
// is invalid or a daemon of the lab does not answer; once started, a run
// always ends with a report (flows that could not start count as failed)
// unless ctx is cancelled, which stops the flows still running, or a
// node of the lab goes down — a process that hosts nodes dies, or a node
// is stopped (lab node stop): then the flows still running are stopped
// within about a second and the error is an *AbortedError naming the
// process and its nodes, or the node, and counting what became of every
// flow.
func RunWorkload(ctx context.Context, runRoot, name string, o WorkloadOptions) (*WorkloadReport, error) {
	start := time.Now()
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return nil, err
	}
	if st.Phase != PhaseUp {
		return nil, fmt.Errorf("lab %s is %s, not up", st.Lab, st.Phase)
	}
	t, c, err := resolveWorkload(st, o.Config)
	if err != nil {
		return nil, err
	}
	mode := transport.Lossless
	if o.Mode != "" {
		if mode, err = transport.ParseMode(o.Mode); err != nil {
			return nil, err
		}
	}
	cc, err := o.FlowCC(st.Spec.CC)
	if err != nil {
		return nil, err
	}
	mtu := o.MTU
	if mtu == 0 {
		mtu = api.DefaultRDMAMTU
	}
	if mtu < api.MinRDMAMTU || mtu > api.MaxRDMAMTU {
		return nil, fmt.Errorf("mtu %d: want %d..%d payload bytes", mtu, api.MinRDMAMTU, api.MaxRDMAMTU)
	}
	flows := o.Flows
	if flows == nil {
		if flows, err = workload.Generate(c); err != nil {
			return nil, err
		}
	} else if err := CheckFlows(flows, c); err != nil {
		return nil, err
	} else if err := CheckLose(flows, mode, mtu); err != nil {
		return nil, err
	}
	if len(flows) == 0 {
		return nil, errors.New("workload: the schedule has no flows (raise the load or the duration)")
	}
	socks, via := make([]string, c.Hosts), make([]string, c.Hosts)
	for i := range socks {
		n, ok := st.Node(bcube.HostName(i))
		if !ok {
			return nil, fmt.Errorf("lab %s has no server h%d", st.Lab, i)
		}
		socks[i] = n.Control
		if w, ok := st.Worker(n.Worker); ok && n.Worker != "" {
			via[i] = w.Control
		}
	}
	if d := notRunning(st); d != nil {
		return nil, fmt.Errorf("lab %s: %w", st.Lab, d)
	}
	before, stats0 := snapshot(st)
	waits0 := fetchWaits(st)
	for _, n := range before.Nodes {
		if n.Err != "" {
			return nil, fmt.Errorf("lab %s is not healthy: %s: %s", st.Lab, n.Node, n.Err)
		}
	}
	ideal := WorkloadIdeal(st.Spec, t, mtu)
	model := st.Spec.Model()
	drain := o.Drain
	if drain == 0 {
		drain = DefaultDrain(model, c.Duration, flows, ideal)
	}
	interval := o.Interval
	if interval <= 0 {
		interval = model.Runner().QueueSample
	}
	r := &workloadRun{
		st:       st,
		o:        o,
		before:   before,
		duration: c.Duration,
		drain:    drain,
		flows:    flows,
		recs:     workload.Records(flows),
		rid:      make([]int, len(flows)),
		started:  make([]bool, len(flows)),
		due:      make([]time.Duration, len(flows)),
		ended:    make([]bool, len(flows)),
		socks:    socks,
		via:      via,
		req:      api.RDMARequest{Mode: mode.String(), MTU: mtu, CC: cc.String()},
		ideal:    ideal,
		lag:      make([]time.Duration, 0, len(flows)),
	}
	dcqcn := cc.Rate()
	for i := range r.recs {
		r.recs[i].Start = -1 // not started
	}
	rep := &WorkloadReport{
		Lab: st.Lab, Topology: st.Spec.TopologyText(), RateBps: st.Spec.LevelRate(0), Rates: st.Spec.Rates, FC: st.Spec.FC, ECN: st.Spec.ECN, // defaulted: any ECN value sets it
		Load: c.Load, Basis: c.Basis.String(), Duration: c.Duration, Seed: c.Seed, Incast: c.Incast, Long: c.Long,
		Pairing: c.Pairing, Perm: c.Perm, HandMade: o.Flows != nil, Mode: mode, DCQCN: dcqcn, MTU: mtu, Model: model,
	}
	if c.CDF != nil {
		rep.CDF = c.CDF.Name()
	}
	rep.Pattern = c.Pattern
	r.inspect = func() {
		if sr, err := Status(runRoot, name); err == nil {
			r.stalls, r.cycle = sr.Stalls, sr.Cycle
		}
	}
	// A node that goes down mid-run (its process died, or it was
	// stopped) stops the run: its flows can neither end nor be measured,
	// and every flow through it would fail one by one, or wait, until the
	// drain time ended.
	wctx, stopWatch := watchLab(ctx, st)
	end, err := r.run(wctx, interval, drain)
	stopWatch()
	if err != nil {
		return nil, err
	}
	after, stats1 := snapshot(st)
	if rep.Waits, err = switchWaits(waits0, fetchWaits(st), switchNames(st)); err != nil {
		return nil, fmt.Errorf("lab %s: %w", st.Lab, err)
	}
	rep.Started = r.t0
	rep.Elapsed = end.Sub(r.t0)
	rep.Health = after.Since(before, 0, o.Limits)
	rep.Fabric = fabricDelta(stats0, stats1)
	rep.Fabric.CNPs = r.cnps
	rep.StartLag = workload.DurationDist(r.lag)
	rep.WallStep = r.wallStep
	if rep.StartLag.N > 0 && st.Spec.Target.Name != scale.NativeName {
		// As the links' RTT, judged against a target's model only: a
		// native lab's flows start when its machine can.
		rep.Health.JudgeStartLag(model.TargetTime(rep.StartLag.P99))
	}
	rep.StartErrors, rep.FirstError, rep.Aborted = r.startErrors, r.firstError, r.aborted
	rep.Stalls, rep.Cycle = r.stalls, r.cycle
	for i := range r.recs {
		if r.recs[i].Start < 0 {
			r.recs[i].Start = flows[i].Start
		}
	}
	for i := range r.recs {
		r.recs[i].SetTarget(model.D)
	}
	rep.Records = r.recs
	for _, n := range st.Nodes {
		rep.QueueNodes = append(rep.QueueNodes, n.Name)
	}
	rep.Queues = r.queues
	rep.FlowSeries = r.series
	for i := range rep.FlowSeries {
		rep.FlowSeries[i].TargetElapsed = model.TargetTime(rep.FlowSeries[i].Elapsed)
	}
	rep.PortSeries = r.ports
	for i := range rep.PortSeries {
		rep.PortSeries[i].TargetElapsed = model.TargetTime(rep.PortSeries[i].Elapsed)
	}
	if rep.Summary, err = workload.Summarize(r.recs, rep.Elapsed, workload.DefaultBins); err != nil {
		return nil, err
	}
	rep.Target = rep.Summary.Dilated(model.D)
	rep.TargetElapsed, rep.TargetDuration = model.TargetTime(rep.Elapsed), model.TargetTime(rep.Duration)
	rep.Wall = time.Since(start)
	rep.WallPerTargetMs = scale.WallPerTargetMs(rep.Wall, rep.TargetElapsed)
	return rep, nil
}

// workloadRun is the state of a run: the starters (one goroutine per
// source) and the poller share it under mu.
type workloadRun struct {
	st *State
	o  WorkloadOptions
	// before is the lab's health sample at the start; health the health
	// since, at the latest queue sample (the poller's alone).
	before *HealthSample
	health *Health
	// duration is the schedule's window, drain the drain time.
	duration, drain time.Duration
	flows           []workload.Flow
	socks           []string
	via             []string // the control socket of each source's worker ("": a daemon of its own)
	req             api.RDMARequest
	ideal           workload.IdealFunc
	// t0 is the schedule's time 0, and t0Mono the same instant on the
	// machine's monotonic clock (api.MonotonicNs), which the NICs are
	// told their flows' times in and report them in: a step of the wall
	// clock during a run moves neither.
	t0     time.Time
	t0Mono int64

	mu          sync.Mutex
	recs        []workload.FlowRecord
	rid         []int  // the flow's id at its source's NIC; 0: not handed to it
	started     []bool // its NIC reported it started
	due         []time.Duration
	ended       []bool // done, failed, aborted, or never started
	lag         []time.Duration
	startErrors int
	firstError  string
	aborted     int
	cnps        uint64
	acked       []int64  // by flow, bytes acknowledged at the last poll
	cnpsNow     []uint64 // by flow, CNPs its sender had received at the last poll
	lastEnd     int64    // the latest flow end seen, on the monotonic clock
	// wallOff0 is the wall clock less the monotonic one at t0 (ns;
	// wallOK: read), and wallStep the largest step from it a poll saw.
	wallOff0 int64
	wallOK   bool
	wallStep time.Duration
	queues   []QueueRow
	series   []FlowSample // with o.FlowSeries
	ports    []PortPoint  // with o.PortSeries
	// stalls and cycle are the lab's stalled queues when the drain time
	// ended with flows running (inspect sets them).
	stalls, cycle []Stall
	// inspect, when not nil, takes the lab's stalled queues.
	inspect func()
	// waits are the groups whose phase-0 flows other flows wait for
	// (Flow.After): how many have not ended, and a channel closed when
	// none is left.
	waits map[int]*groupWait
}

type groupWait struct {
	left int
	done chan struct{}
	at   time.Duration // when it was released, since the run's start
}

// end records that flow i has ended, or will never start (with mu held),
// and releases the flows that wait for its group once all of the group's
// first phase has.
func (r *workloadRun) end(i int) {
	if r.ended[i] {
		return
	}
	r.ended[i] = true
	f := &r.flows[i]
	if w := r.waits[f.Group]; w != nil && f.Phase == 0 && f.Group != 0 {
		if w.left--; w.left == 0 {
			w.at = time.Since(r.t0)
			close(w.done)
		}
	}
}

// run starts the flows on schedule and polls the NICs until every flow
// has ended or the drain time after the last start has passed; it
// returns when the run ended. A flow that waits for a group
// (Flow.After) starts, on its schedule, once the group's first phase
// has ended; the drain time then runs again from the last such start.
func (r *workloadRun) run(ctx context.Context, interval, drain time.Duration) (time.Time, error) {
	r.acked = make([]int64, len(r.flows))
	r.cnpsNow = make([]uint64, len(r.flows))
	bySrc := make([][]int, len(r.socks))
	type dep struct{ group, src int }
	deps := map[dep][]int{}
	r.waits = map[int]*groupWait{}
	for i, f := range r.flows {
		if f.After != 0 {
			deps[dep{f.After, f.Src}] = append(deps[dep{f.After, f.Src}], i)
			if r.waits[f.After] == nil {
				r.waits[f.After] = &groupWait{done: make(chan struct{})}
			}
			continue
		}
		bySrc[f.Src] = append(bySrc[f.Src], i)
	}
	for _, f := range r.flows {
		if w := r.waits[f.Group]; w != nil && f.Phase == 0 {
			w.left++
		}
	}
	for _, w := range r.waits {
		if w.left == 0 {
			close(w.done)
		}
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	r.t0, r.t0Mono = time.Now().Add(workloadLead), api.MonotonicNs()+int64(workloadLead)
	r.wallOff0, r.wallOK = wallOffset()
	var starters, waiters sync.WaitGroup
	for src, ids := range bySrc {
		if len(ids) == 0 {
			continue
		}
		starters.Go(func() { r.starter(sctx, src, ids) })
	}
	for d, ids := range deps {
		done := r.waits[d.group].done
		waiters.Go(func() {
			select {
			case <-sctx.Done():
				return
			case <-done:
			}
			r.starter(sctx, d.src, ids)
		})
	}
	startersDone := make(chan struct{})
	go func() { starters.Wait(); close(startersDone) }()
	allDone := make(chan struct{})
	go func() { starters.Wait(); waiters.Wait(); close(allDone) }()

	period := min(workloadPoll, interval)
	tick := time.NewTicker(period)
	defer tick.Stop()
	lastSample := time.Now()
	var groupTick <-chan time.Time
	if len(r.waits) > 0 {
		t := time.NewTicker(groupPoll(r.st.Spec.Model()))
		defer t.Stop()
		groupTick = t.C
	}
	var deadline <-chan time.Time
	lastReport, lastAcked := time.Now(), int64(0)
	var at time.Time // the tick being served
	for {
		select {
		case <-ctx.Done():
			starters.Wait()
			waiters.Wait()
			r.abort()
			if d := downCause(ctx); d != nil {
				return time.Time{}, &AbortedError{Run: "workload", Down: d, Flows: r.tally()}
			}
			return time.Time{}, fmt.Errorf("workload interrupted: %w", ctx.Err())
		case <-startersDone:
			startersDone = nil
			deadline = time.After(drain)
			continue
		case <-allDone:
			allDone = nil
			deadline = time.After(drain)
			continue
		case <-deadline:
			// Flows still waiting for a group that did not end never
			// start.
			stop()
			waiters.Wait()
			r.poll()
			if r.running() > 0 && r.inspect != nil {
				// Why they are still running, before they are stopped.
				r.inspect()
			}
			r.abort()
			return time.Now(), nil
		case <-groupTick:
			r.pollWhere(r.inOpenGroup)
			continue
		case at = <-tick.C:
		}
		r.poll()
		r.mu.Lock()
		if off, ok := wallOffset(); ok && r.wallOK {
			r.watchWall(off)
		}
		p := WorkloadProgress{Elapsed: time.Since(r.t0), Flows: len(r.flows)}
		pending := 0
		for i := range r.flows {
			if r.started[i] {
				p.Started++
			}
			switch {
			case !r.ended[i]:
				pending++
				if r.started[i] {
					p.Running++
				}
			case r.recs[i].Failed:
				p.Failed++
			case r.recs[i].Completed:
				p.Completed++
			}
			p.AckedBytes += r.acked[i]
		}
		lastEnd := r.lastEnd
		r.mu.Unlock()
		if startersDone == nil && allDone == nil && pending == 0 {
			end := time.Now()
			if lastEnd > 0 {
				end = r.t0.Add(time.Duration(lastEnd - r.t0Mono))
			}
			r.report(p, lastAcked, lastReport)
			return end, nil
		}
		if sampleDue(at, lastSample, interval, period) {
			r.sampleQueues()
			lastAcked, lastReport = r.report(p, lastAcked, lastReport), time.Now()
			lastSample = at
		}
	}
}

// watchWall notes how far the wall clock has stepped against the
// monotonic one since t0, off being their difference now (wallOffset;
// with mu held).
func (r *workloadRun) watchWall(off int64) {
	if d := time.Duration(off - r.wallOff0); d.Abs() > r.wallStep.Abs() {
		r.wallStep = d
	}
}

// wallOffset is the wall clock less the monotonic one, in ns, read
// between two readings of the monotonic clock at most wallReadGap
// apart: a thread preempted between its reads of the two clocks (one
// time.Now reads both) would see them apart by the preemption, 118 µs
// under a lab's load. ok is false when no try of a few was that quick.
func wallOffset() (off int64, ok bool) {
	for range 5 {
		a := api.MonotonicNs()
		w := time.Now().UnixNano()
		b := api.MonotonicNs()
		if b-a <= int64(wallReadGap) {
			return w - (a+b)/2, true
		}
	}
	return 0, false
}

// report hands p to the progress callback with the goodput since the
// previous report; it returns p's acknowledged bytes.
func (r *workloadRun) report(p WorkloadProgress, lastAcked int64, last time.Time) int64 {
	if dt := time.Since(last); dt > 0 {
		p.Goodput = 8 * float64(p.AckedBytes-lastAcked) / dt.Seconds()
	}
	p.Model = r.st.Spec.Model()
	p.Duration, p.Drain, p.Health = r.duration, r.drain, r.health
	if r.o.Progress != nil {
		r.o.Progress(p)
	}
	return p.AckedBytes
}

// starter hands the flows ids (all from src, in order of start) to
// src's NIC ahead of their time, in batches of at most startBatch, each
// flow with its start time: the NIC starts it then
// (api.RDMARequest.AtMonoNs), late by an engine pass, not by a control
// round trip. A batch goes startAhead before its first flow is due and
// takes the flows due within startAhead after that one: a request per
// startAhead of a source's schedule or per startBatch flows, whichever
// comes first, not one per flow. A flow that waited for a group (Flow.After) is due when
// the group was released, if that is after its schedule's start. The
// starter returns once the last of its flows is due.
func (r *workloadRun) starter(ctx context.Context, src int, ids []int) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	wait := func(until time.Time) bool {
		if d := time.Until(until); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				return false
			case <-timer.C:
			}
		}
		return ctx.Err() == nil
	}
	due := func(i int) time.Duration {
		f := &r.flows[i]
		if w := r.waits[f.After]; f.After != 0 && w != nil {
			return max(f.Start, w.at)
		}
		return f.Start
	}
	for next := 0; next < len(ids); {
		if !wait(r.t0.Add(due(ids[next]) - startAhead)) {
			return
		}
		end := batchEnd(len(ids), next, func(k int) time.Duration { return due(ids[k]) }, time.Since(r.t0))
		batch := ids[next:end]
		next = end
		reqs := make([]api.RDMARequest, len(batch))
		for k, i := range batch {
			f := &r.flows[i]
			reqs[k] = r.req
			reqs[k].Dst, reqs[k].Bytes, reqs[k].Lose = f.Dst, f.Size, f.Lose
			reqs[k].AtMonoNs = r.t0Mono + int64(due(i))
		}
		got, err := startRDMA(ctx, r.socks[src], reqs)
		if err != nil && len(batch) > 1 && ctx.Err() == nil {
			// One wrong request fails its batch: each alone, so that
			// only it fails.
			for k, i := range batch {
				one, err := startRDMA(ctx, r.socks[src], reqs[k:k+1])
				r.scheduled(src, i, due(i), one, err)
			}
			continue
		}
		for k, i := range batch {
			var one []api.RDMAFlow
			if err == nil {
				one = got[k : k+1]
			}
			r.scheduled(src, i, due(i), one, err)
		}
	}
	if len(ids) > 0 {
		wait(r.t0.Add(due(ids[len(ids)-1])))
	}
}

// batchEnd is where the batch that begins with the next of n flows in
// order of start ends (exclusive), sent at now (since the run's t0):
// the flows due (due(k), k < n) by startAhead after the first of them,
// or by now + startAhead when the starter is behind, at most
// startBatch, at least the first.
func batchEnd(n, next int, due func(k int) time.Duration, now time.Duration) int {
	horizon := max(now, due(next)) + startAhead
	end := next + 1
	for end < n && end-next < startBatch && due(end) <= horizon {
		end++
	}
	return end
}

// scheduled records what src's NIC answered to flow i's request, due at
// due: its id there, or the error that failed it.
func (r *workloadRun) scheduled(src, i int, due time.Duration, got []api.RDMAFlow, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && len(got) != 1 {
		err = fmt.Errorf("rdma answer: %d flows, want 1", len(got))
	}
	if err != nil {
		f := &r.flows[i]
		r.end(i)
		r.recs[i].Failed = true
		if r.startErrors++; r.firstError == "" {
			r.firstError = fmt.Sprintf("h%d -> h%d: %v", src, f.Dst, err)
		}
		return
	}
	r.rid[i], r.due[i] = got[0].ID, due
	r.began(i, &got[0])
}

// began records flow i's start once its NIC reports it started (with mu
// held): when, and how late against its due time; a flow still
// scheduled has not.
func (r *workloadRun) began(i int, f *api.RDMAFlow) {
	if r.started[i] || f.State == api.RDMAScheduled || f.StartMonoNs == 0 {
		return // not started, or aborted before it did
	}
	r.started[i] = true
	at := time.Duration(f.StartMonoNs - r.t0Mono)
	r.recs[i].Start = at
	r.lag = append(r.lag, max(0, at-r.due[i]))
}

// poll asks every NIC about its flows that have not ended and records
// those that have.
func (r *workloadRun) poll() { r.pollWhere(nil) }

// inOpenGroup says flow i is of the first phase of a group other flows
// still wait for (with mu held).
func (r *workloadRun) inOpenGroup(i int) bool {
	f := &r.flows[i]
	w := r.waits[f.Group]
	return f.Group != 0 && f.Phase == 0 && w != nil && w.left > 0
}

// pollWhere is poll of the flows that only says (nil: every flow;
// only is called with mu held); no NIC is asked that has none of them
// running or due.
func (r *workloadRun) pollWhere(only func(i int) bool) {
	r.mu.Lock()
	ask := make([][]int, len(r.socks)) // flow indices by source
	ids := make([][]int, len(r.socks)) // their ids at the NIC
	now := time.Since(r.t0)
	for i := range r.flows {
		if src := r.flows[i].Src; r.asked(i, now) && (only == nil || only(i)) {
			ask[src] = append(ask[src], i)
			ids[src] = append(ids[src], r.rid[i])
		}
	}
	r.mu.Unlock()
	// The answer of source src's NIC, however it came.
	take := func(src int, rep *api.RDMAReport) {
		byID := make(map[int]*api.RDMAFlow, len(rep.Flows))
		for k := range rep.Flows {
			byID[rep.Flows[k].ID] = &rep.Flows[k]
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, i := range ask[src] {
			if f, ok := byID[r.rid[i]]; ok {
				r.update(i, f)
			}
		}
	}
	// The NICs of a worker are asked in one POST /get of its socket, a
	// daemon of its own on its socket. A NIC that does not answer is
	// asked again at the next poll.
	byWorker := map[string][]int{}
	var wg sync.WaitGroup
	for src, idx := range ask {
		switch {
		case len(idx) == 0:
		case r.via[src] != "":
			byWorker[r.via[src]] = append(byWorker[r.via[src]], src)
		default:
			wg.Go(func() {
				if rep, err := rdmaFlows(r.socks[src], ids[src]); err == nil {
					take(src, rep)
				}
			})
		}
	}
	for sock, srcs := range byWorker {
		wg.Go(func() {
			reqs := make([]api.NodeGet, len(srcs))
			for k, src := range srcs {
				reqs[k] = api.NodeGet{Node: bcube.HostName(src), Path: "/rdma?id=" + joinIDs(ids[src])}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			as, err := WorkerGet(ctx, sock, reqs)
			if err != nil {
				return
			}
			for k, a := range as {
				var rep api.RDMAReport
				if a.Status == http.StatusOK && json.Unmarshal(a.Body, &rep) == nil {
					take(srcs[k], &rep)
				}
			}
		})
	}
	wg.Wait()
}

// asked is whether a poll at now (since t0) asks flow i's NIC for it
// (with mu held): a flow the NIC has, not known to have ended, that
// started or is due. One handed to its NIC ahead of its time is not
// asked for until then: its NIC reports them in its engine's goroutine,
// and under a workload of small flows (Storage at D = 1,000, 150 flows a
// second a source, handed half a second to a second ahead) those not
// due were most of what a poll asked.
func (r *workloadRun) asked(i int, now time.Duration) bool {
	return !r.ended[i] && r.rid[i] > 0 && (r.started[i] || r.flows[i].Start <= now)
}

// update records what the NIC says of flow i (with mu held).
func (r *workloadRun) update(i int, f *api.RDMAFlow) {
	r.began(i, f)
	if f.State == api.RDMAScheduled {
		return
	}
	r.acked[i] = f.AckedBytes
	r.cnpsNow[i] = f.CNPs
	if r.o.FlowSeries {
		r.series = append(r.series, FlowSample{Flow: i, Elapsed: time.Since(r.t0), Acked: f.AckedBytes})
	}
	rec := &r.recs[i]
	rec.Order = f.Order
	rec.Retransmissions, rec.CNPs = f.RetxPackets, f.CNPs
	rec.Timeouts, rec.Injected = f.Timeouts, f.Injected
	if f.State == api.RDMARunning {
		return
	}
	r.end(i)
	r.cnps += f.CNPs
	r.lastEnd = max(r.lastEnd, f.EndMonoNs)
	switch f.State {
	case api.RDMADone:
		rec.Complete(time.Duration(f.FCTNs), r.ideal(rec.Src, rec.Dst, rec.Size))
	case api.RDMAFailed:
		rec.Failed = true
	}
}

// running counts the flows started and not ended.
func (r *workloadRun) running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for i := range r.flows {
		if !r.ended[i] && r.started[i] {
			n++
		}
	}
	return n
}

// tally counts what became of the flows once the run was aborted: a flow
// is completed or failed only as its NIC reported it at a poll, and a
// flow running then was stopped (abort), whatever its NIC did after.
func (r *workloadRun) tally() FlowTally {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := FlowTally{Total: len(r.flows)}
	for i := range r.flows {
		switch rec := &r.recs[i]; {
		case rec.Failed:
			t.Failed++
		case rec.Completed:
			t.Completed++
		case !r.started[i]:
			t.NotStarted++
		default:
			t.Stopped++
		}
	}
	return t
}

// abort stops the flows still running, and those scheduled at their
// NICs, which then never start; they stay incomplete. Each NIC is then
// asked how its stopped flows ended, so one that started, completed or
// failed since the run's last poll is counted as it went, not as never
// started; a NIC that does not answer (its node stopped) leaves its
// flows as the last poll saw them.
func (r *workloadRun) abort() {
	r.mu.Lock()
	idx := make([][]int, len(r.socks)) // flow indices by source
	ids := make([][]int, len(r.socks)) // their ids at the NIC
	for i := range r.flows {
		if !r.ended[i] && r.rid[i] > 0 {
			src := r.flows[i].Src
			idx[src] = append(idx[src], i)
			ids[src] = append(ids[src], r.rid[i])
		}
	}
	r.mu.Unlock()
	final := make([]map[int]*api.RDMAFlow, len(r.socks))
	var wg sync.WaitGroup
	for src := range idx {
		if len(ids[src]) == 0 {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := controlDo(ctx, r.socks[src], http.MethodDelete, "/rdma?id="+joinIDs(ids[src]), nil); err != nil {
				return
			}
			rep, err := rdmaFlows(r.socks[src], ids[src])
			if err != nil {
				return
			}
			m := make(map[int]*api.RDMAFlow, len(rep.Flows))
			for k := range rep.Flows {
				m[rep.Flows[k].ID] = &rep.Flows[k]
			}
			final[src] = m
		})
	}
	wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for src, is := range idx {
		for _, i := range is {
			if f, ok := final[src][r.rid[i]]; ok {
				r.update(i, f)
			}
			if rec := &r.recs[i]; !rec.Completed && !rec.Failed {
				r.end(i)
				r.aborted++
			}
		}
	}
}

// sampleQueues adds a row to the queue series, the bytes every node
// holds in its egress queues now, and judges the emulation health so
// far from the same sample.
func (r *workloadRun) sampleQueues() {
	now := time.Now()
	row := QueueRow{Elapsed: now.Sub(r.t0), Bytes: make([]uint64, len(r.st.Nodes)), PortMax: make([]uint64, len(r.st.Nodes))}
	row.TargetElapsed = r.st.Spec.Model().TargetTime(row.Elapsed)
	r.mu.Lock()
	for _, n := range r.cnpsNow {
		row.CNPs += n
	}
	r.mu.Unlock()
	s, stats := snapshotWithin(r.st, sampleTimeout, true)
	for i, n := range r.st.Nodes {
		if st := stats[n.Name]; st != nil {
			for _, p := range st.Ports {
				row.Bytes[i] += p.QueueBytes
				row.PortMax[i] = max(row.PortMax[i], p.QueueBytes)
			}
			if r.o.PortSeries {
				at := countedElapsed(row.Elapsed, now.UnixNano(), st.CountedUnixNs)
				for _, p := range st.Ports {
					r.ports = append(r.ports, PortPoint{Node: n.Name, Port: p.Name, Elapsed: at, TxBytes: p.TxBytes, QueueBytes: p.QueueBytes, RateBps: p.RateBps})
					for _, q := range p.Queues {
						r.ports = append(r.ports, PortPoint{Node: n.Name, Port: p.Name, Queue: q.Name, Elapsed: at, TxBytes: q.DeqBytes, QueueBytes: uint64(q.Bytes), RateBps: p.RateBps})
					}
				}
			}
		}
	}
	r.queues = append(r.queues, row)
	if r.before != nil {
		h := s.Since(r.before, 0, r.o.Limits)
		r.health = &h
	}
}

// startRDMA asks the NIC at control socket sock to start, or schedule,
// the flows of reqs (POST /rdma/batch): one flow each, listed in order.
func startRDMA(ctx context.Context, sock string, reqs []api.RDMARequest) ([]api.RDMAFlow, error) {
	body, err := json.Marshal(reqs)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := controlDo(ctx, sock, http.MethodPost, "/rdma/batch", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	var fs []api.RDMAFlow
	if err := json.Unmarshal(out, &fs); err != nil {
		return nil, fmt.Errorf("rdma answer: %w", err)
	}
	if len(fs) != len(reqs) {
		return nil, fmt.Errorf("rdma answer: %d flows, want %d", len(fs), len(reqs))
	}
	return fs, nil
}

// rdmaFlows reports the flows ids of the NIC at control socket sock.
func rdmaFlows(sock string, ids []int) (*api.RDMAReport, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := controlGet(ctx, sock, "/rdma?id="+joinIDs(ids))
	if err != nil {
		return nil, err
	}
	var rep api.RDMAReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("rdma report: %w", err)
	}
	return &rep, nil
}

func joinIDs(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

// fetchWaits reads GET /waits of every switch of the lab, by node; a
// switch that does not answer is left out.
func fetchWaits(st *State) map[string]*api.Waits {
	ws := make([]*api.Waits, len(st.Nodes))
	eachNode(st.Nodes, func(i int, n NodeState) {
		if n.Kind != KindSwitch {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ws[i], _ = FetchWaits(ctx, n.Control)
	})
	m := make(map[string]*api.Waits, len(ws))
	for i, w := range ws {
		if w != nil {
			m[st.Nodes[i].Name] = w
		}
	}
	return m
}

// switchNames is the set of st's switches.
func switchNames(st *State) map[string]bool {
	m := map[string]bool{}
	for _, n := range st.Nodes {
		if n.Kind == KindSwitch {
			m[n.Name] = true
		}
	}
	return m
}
