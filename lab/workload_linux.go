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

	"github.com/bcfab/bcfab/api"
	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/transport"
)

// workloadPoll is the time between two polls of the NICs for the flows'
// outcomes, Interval or shorter, so a run ends soon after its last flow.
const workloadPoll = 250 * time.Millisecond

// RunWorkload runs the workload o describes on lab name (see
// WorkloadReport). It fails before starting anything when the workload
// is invalid or a daemon of the lab does not answer; once started, a run
// always ends with a report (flows that could not start count as failed)
// unless ctx is cancelled, which stops the flows still running.
func RunWorkload(ctx context.Context, runRoot, name string, o WorkloadOptions) (*WorkloadReport, error) {
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
	mtu := o.MTU
	if mtu == 0 {
		mtu = api.DefaultRDMAMTU
	}
	if mtu < api.MinRDMAMTU || mtu > api.MaxRDMAMTU {
		return nil, fmt.Errorf("mtu %d: want %d..%d payload bytes", mtu, api.MinRDMAMTU, api.MaxRDMAMTU)
	}
	flows, err := workload.Generate(c)
	if err != nil {
		return nil, err
	}
	if len(flows) == 0 {
		return nil, errors.New("workload: the schedule has no flows (raise the load or the duration)")
	}
	socks := make([]string, c.Hosts)
	for i := range socks {
		n, ok := st.Node(bcube.HostName(i))
		if !ok {
			return nil, fmt.Errorf("lab %s has no server h%d", st.Lab, i)
		}
		socks[i] = n.Control
	}
	before, stats0 := snapshot(st)
	for _, n := range before.Nodes {
		if n.Err != "" {
			return nil, fmt.Errorf("lab %s is not healthy: %s: %s", st.Lab, n.Node, n.Err)
		}
	}
	ideal := WorkloadIdeal(st.Spec, t, mtu)
	drain := o.Drain
	if drain == 0 {
		drain = defaultDrain(c.Duration, flows, ideal)
	}
	interval := o.Interval
	if interval <= 0 {
		interval = DefaultWorkloadInterval
	}
	r := &workloadRun{
		st:    st,
		o:     o,
		flows: flows,
		recs:  workload.Records(flows),
		rid:   make([]int, len(flows)),
		ended: make([]bool, len(flows)),
		socks: socks,
		req:   api.RDMARequest{Mode: mode.String(), MTU: mtu},
		ideal: ideal,
		lag:   make([]time.Duration, 0, len(flows)),
	}
	if o.PhaseWait && c.Pattern != nil {
		r.phases = phaseGroups(flows)
	}
	dcqcn := !o.NoDCQCN
	r.req.DCQCN = &dcqcn
	for i := range r.recs {
		r.recs[i].Start = -1 // not started
	}
	rep := &WorkloadReport{
		Lab: st.Lab, Topology: t.String(), RateBps: st.Spec.LevelRate(0), Rates: st.Spec.Rates, FC: st.Spec.FC, ECN: st.Spec.ECN, // defaulted: any ECN value sets it
		Load: c.Load, Basis: c.Basis.String(), Duration: c.Duration, Seed: c.Seed, Incast: c.Incast,
		Mode: mode, DCQCN: dcqcn, MTU: mtu,
	}
	if c.CDF != nil {
		rep.CDF = c.CDF.Name()
	}
	rep.Pattern = c.Pattern
	rep.PhaseWait = r.phases != nil
	end, err := r.run(ctx, interval, drain)
	if err != nil {
		return nil, err
	}
	after, stats1 := snapshot(st)
	rep.Started = r.t0
	rep.Elapsed = end.Sub(r.t0)
	rep.Health = after.Since(before, 0, o.Limits)
	rep.Fabric = fabricDelta(stats0, stats1)
	rep.Fabric.CNPs = r.cnps
	rep.StartLag = workload.DurationDist(r.lag)
	rep.StartErrors, rep.FirstError, rep.Aborted = r.startErrors, r.firstError, r.aborted
	for i := range r.recs {
		if r.recs[i].Start < 0 {
			r.recs[i].Start = flows[i].Start
		}
	}
	rep.Records = r.recs
	for _, n := range st.Nodes {
		rep.QueueNodes = append(rep.QueueNodes, n.Name)
	}
	rep.Queues = r.queues
	if rep.Summary, err = workload.Summarize(r.recs, rep.Elapsed, workload.DefaultBins); err != nil {
		return nil, err
	}
	return rep, nil
}

// workloadRun is the state of a run: the starters (one goroutine per
// source) and the poller share it under mu.
type workloadRun struct {
	st    *State
	o     WorkloadOptions
	flows []workload.Flow
	socks []string
	req   api.RDMARequest
	ideal workload.IdealFunc
	t0    time.Time

	mu          sync.Mutex
	recs        []workload.FlowRecord
	rid         []int  // the flow's id at its source's NIC; 0: not started
	ended       []bool // done, failed, aborted, or never started
	lag         []time.Duration
	startErrors int
	firstError  string
	aborted     int
	cnps        uint64
	acked       []int64 // by flow, bytes acknowledged at the last poll
	lastEnd     int64   // Unix ns of the latest flow end seen
	queues      []QueueRow
	// phases are the pattern events whose second phase waits for the
	// first (WorkloadOptions.PhaseWait), by group; nil when none waits.
	// launching counts the second phases being started. The drain time
	// counts from the last start, of the schedule or of a second phase,
	// so a first phase that never ends still ends the run.
	phases    map[int]*phaseGroup
	launching int
}

// phaseGroup is one pattern event whose second phase starts when its
// first has ended.
type phaseGroup struct {
	first, second []int // flow indices
	launched      bool
}

// phaseGroups gathers the two phases of every pattern event of flows.
func phaseGroups(flows []workload.Flow) map[int]*phaseGroup {
	groups := map[int]*phaseGroup{}
	for i, f := range flows {
		if f.Kind != workload.KindPS && f.Kind != workload.KindMoE {
			continue
		}
		g := groups[f.Group]
		if g == nil {
			g = &phaseGroup{}
			groups[f.Group] = g
		}
		if f.Phase == 0 {
			g.first = append(g.first, i)
		} else {
			g.second = append(g.second, i)
		}
	}
	return groups
}

// waits reports whether flow i starts when its event's first phase ends
// rather than on schedule.
func (r *workloadRun) waits(i int) bool {
	f := &r.flows[i]
	return r.phases != nil && f.Phase == 1 && (f.Kind == workload.KindPS || f.Kind == workload.KindMoE)
}

// launchReady starts the second phase of every event whose first phase
// has ended and whose second has not been started, and returns how many
// it started; it returns at once, the flows being started by goroutines
// on launchers.
func (r *workloadRun) launchReady(ctx context.Context, launchers *sync.WaitGroup) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, g := range r.phases {
		if g.launched || !allEnded(r.ended, g.first) {
			continue
		}
		g.launched = true
		r.launching++
		n++
		ids := g.second
		launchers.Go(func() {
			for _, i := range ids {
				if ctx.Err() != nil {
					break
				}
				r.start(ctx, i, false)
			}
			r.mu.Lock()
			r.launching--
			r.mu.Unlock()
		})
	}
	return n
}

func allEnded(ended []bool, ids []int) bool {
	for _, i := range ids {
		if !ended[i] {
			return false
		}
	}
	return true
}

// run starts the flows on schedule and polls the NICs until every flow
// has ended or the drain time after the last start has passed; it
// returns when the run ended.
func (r *workloadRun) run(ctx context.Context, interval, drain time.Duration) (time.Time, error) {
	r.acked = make([]int64, len(r.flows))
	bySrc := make([][]int, len(r.socks))
	for i, f := range r.flows {
		if !r.waits(i) {
			bySrc[f.Src] = append(bySrc[f.Src], i)
		}
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	r.t0 = time.Now().Add(workloadLead)
	var starters sync.WaitGroup
	for src, ids := range bySrc {
		if len(ids) == 0 {
			continue
		}
		starters.Go(func() { r.starter(sctx, src, ids) })
	}
	startersDone := make(chan struct{})
	go func() { starters.Wait(); close(startersDone) }()
	// Second phases that wait for their first are started by launchers;
	// the drain time counts from when the last of them has started.
	var launchers sync.WaitGroup
	scheduled := false

	tick := time.NewTicker(min(workloadPoll, interval))
	defer tick.Stop()
	var deadline <-chan time.Time
	lastReport, lastAcked := time.Now(), int64(0)
	for {
		select {
		case <-ctx.Done():
			starters.Wait()
			launchers.Wait()
			r.abort()
			return time.Time{}, fmt.Errorf("workload interrupted: %w", ctx.Err())
		case <-startersDone:
			startersDone, scheduled = nil, true
			deadline = time.After(drain)
		case <-deadline:
			r.poll()
			launchers.Wait()
			r.abort()
			return time.Now(), nil
		case <-tick.C:
			r.poll()
		}
		if r.phases != nil && r.launchReady(sctx, &launchers) > 0 && scheduled {
			deadline = time.After(drain) // from the latest start
		}
		r.mu.Lock()
		p := WorkloadProgress{Elapsed: time.Since(r.t0), Flows: len(r.flows)}
		pending := 0
		for i := range r.flows {
			if r.rid[i] > 0 {
				p.Started++
			}
			switch {
			case !r.ended[i]:
				pending++
				if r.rid[i] > 0 {
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
		if scheduled && pending == 0 { // a second phase not yet started is pending
			end := time.Now()
			if lastEnd > 0 {
				end = time.Unix(0, lastEnd)
			}
			r.report(p, lastAcked, lastReport)
			return end, nil
		}
		if time.Since(lastReport) >= interval {
			lastAcked, lastReport = r.report(p, lastAcked, lastReport), time.Now()
			r.sampleQueues()
		}
	}
}

// report hands p to the progress callback with the goodput since the
// previous report; it returns p's acknowledged bytes.
func (r *workloadRun) report(p WorkloadProgress, lastAcked int64, last time.Time) int64 {
	if dt := time.Since(last); dt > 0 {
		p.Goodput = 8 * float64(p.AckedBytes-lastAcked) / dt.Seconds()
	}
	if r.o.Progress != nil {
		r.o.Progress(p)
	}
	return p.AckedBytes
}

// starter starts the flows ids (all from src, in order of start) on
// schedule.
func (r *workloadRun) starter(ctx context.Context, src int, ids []int) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for _, i := range ids {
		f := &r.flows[i]
		if wait := time.Until(r.t0.Add(f.Start)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		if ctx.Err() != nil {
			return
		}
		r.start(ctx, i, true)
	}
}

// start asks flow i's source NIC to start it now and records the
// outcome; onSchedule counts its lateness against the schedule.
func (r *workloadRun) start(ctx context.Context, i int, onSchedule bool) {
	f := &r.flows[i]
	req := r.req
	req.Dst, req.Bytes = f.Dst, f.Size
	got, err := startRDMA(ctx, r.socks[f.Src], req)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.ended[i] = true
		r.recs[i].Failed = true
		if r.startErrors++; r.firstError == "" {
			r.firstError = fmt.Sprintf("h%d -> h%d: %v", f.Src, f.Dst, err)
		}
		return
	}
	r.rid[i] = got.ID
	at := time.Unix(0, got.StartNs).Sub(r.t0)
	r.recs[i].Start = at
	if onSchedule {
		r.lag = append(r.lag, max(0, at-f.Start))
	}
}

// poll asks every NIC about its flows that have not ended and records
// those that have.
func (r *workloadRun) poll() {
	r.mu.Lock()
	ask := make([][]int, len(r.socks)) // flow indices by source
	ids := make([][]int, len(r.socks)) // their ids at the NIC
	for i := range r.flows {
		if src := r.flows[i].Src; !r.ended[i] && r.rid[i] > 0 {
			ask[src] = append(ask[src], i)
			ids[src] = append(ids[src], r.rid[i])
		}
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for src, idx := range ask {
		if len(idx) == 0 {
			continue
		}
		wg.Go(func() {
			rep, err := rdmaFlows(r.socks[src], ids[src])
			if err != nil {
				return // asked again at the next poll
			}
			byID := make(map[int]*api.RDMAFlow, len(rep.Flows))
			for k := range rep.Flows {
				byID[rep.Flows[k].ID] = &rep.Flows[k]
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, i := range idx {
				if f, ok := byID[r.rid[i]]; ok {
					r.update(i, f)
				}
			}
		})
	}
	wg.Wait()
}

// update records what the NIC says of flow i (with mu held).
func (r *workloadRun) update(i int, f *api.RDMAFlow) {
	r.acked[i] = f.AckedBytes
	rec := &r.recs[i]
	rec.Retransmissions = f.RetxPackets
	if f.State == api.RDMARunning {
		return
	}
	r.ended[i] = true
	r.cnps += f.CNPs
	r.lastEnd = max(r.lastEnd, f.EndNs)
	switch f.State {
	case api.RDMADone:
		rec.Complete(time.Duration(f.FCTNs), r.ideal(rec.Src, rec.Dst, rec.Size))
	case api.RDMAFailed:
		rec.Failed = true
	}
}

// abort stops the flows still running; they stay incomplete.
func (r *workloadRun) abort() {
	r.mu.Lock()
	ask := make([][]int, len(r.socks))
	for i := range r.flows {
		if !r.ended[i] && r.rid[i] > 0 {
			ask[r.flows[i].Src] = append(ask[r.flows[i].Src], r.rid[i])
			r.ended[i] = true
			r.aborted++
		}
	}
	r.mu.Unlock()
	for src, ids := range ask {
		if len(ids) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = controlDo(ctx, r.socks[src], http.MethodDelete, "/rdma?id="+joinIDs(ids), nil)
			cancel()
		}
	}
}

// sampleQueues adds a row to the queue series: the bytes every node holds
// in its egress queues now.
func (r *workloadRun) sampleQueues() {
	row := QueueRow{Elapsed: time.Since(r.t0), Bytes: make([]uint64, len(r.st.Nodes))}
	eachNode(r.st.Nodes, func(i int, n NodeState) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := FetchStats(ctx, n.Control)
		if err != nil {
			return
		}
		for _, p := range st.Ports {
			row.Bytes[i] += p.QueueBytes
		}
	})
	r.queues = append(r.queues, row)
}

// startRDMA asks the NIC at control socket sock to start the one flow
// of req.
func startRDMA(ctx context.Context, sock string, req api.RDMARequest) (*api.RDMAFlow, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := controlDo(ctx, sock, http.MethodPost, "/rdma", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	var fs []api.RDMAFlow
	if err := json.Unmarshal(out, &fs); err != nil {
		return nil, fmt.Errorf("rdma answer: %w", err)
	}
	if len(fs) != 1 {
		return nil, fmt.Errorf("rdma answer: %d flows, want 1", len(fs))
	}
	return &fs[0], nil
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
