//go:build linux

package bench

// The loop (deadlock) experiment of DESIGN §9 (the ToN paper's Fig. 19),
// on a real lab per flow-control scheme:
//
//  1. BCube(2,1); background 2-hop flows, one on each link of the cycle
//     below: h0->h1 (over s0.0), h1->h3 (s1.1), h3->h2 (s0.1), h2->h0
//     (s1.0);
//  2. after Warmup, the four 4-hop flows whose routes form a cycle:
//     h0->h3 via h1, h3->h0 via h2, h1->h2 via h3, h2->h1 via h0;
//  3. Settle later, the background flows' throughput over Measure, the
//     loop flows' too, the pauses every node sent and the time every
//     queue was paused in that window, and what the watchdogs report:
//     stalled queues and whether they close a cycle (a deadlock). Every
//     flow's throughput is also sampled every Interval over the whole
//     run (the series of the paper's figure).
//
// Plain PFC must deadlock (background throughput 0, a cycle of stalled
// queues through all eight nodes); PFC* and PortFC must not.
//
// Scenario LoopOversubscribed is the same cycle on BCube(4,1), where each
// switch egress of the cycle also takes two more one-hop flows from the
// other servers of its switch (LoopScenarios documents it): there the
// switch egresses are congested, as in the papers' larger runs, not
// only jittered.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
)

// LoopOptions of the experiment.
type LoopOptions struct {
	Lab     lab.Spec      // N, K and FC are set by the experiment
	FC      []string      // schemes, default pfc, pfcstar, portfc
	Warmup  time.Duration // background alone, default 1s
	Settle  time.Duration // after the loop flows start, default 1s
	Measure time.Duration // default 5s
	Log     *slog.Logger
	// Scenario is the fabric and flows: LoopBCube21 (empty: the
	// default) or LoopOversubscribed.
	Scenario string
	// Interval is the period of the throughput series (0: 250ms;
	// negative: no series).
	Interval time.Duration
	// Transport is what carries the flows: gen (empty: hostd's traffic
	// generator, a window of queued bytes per flow and no transport) or
	// rdma (the NIC's reliable-connected flows, lossless loss recovery,
	// DCQCN on: with Lab.ECN the switches mark and the flows slow down;
	// without, they send at the line rate). Throughput is what the sink
	// received (gen) or the sender saw acknowledged (rdma).
	Transport string
}

// Transports of the loop bench (LoopOptions.Transport).
const (
	LoopGen  = "gen"
	LoopRDMA = "rdma"
)

// Loop scenarios (LoopOptions.Scenario).
const (
	LoopBCube21        = "bcube21"
	LoopOversubscribed = "bcube41-over"
)

// LoopRoute is a flow of a loop scenario: its source and destination and,
// for a loop flow, the level order that routes it through its relay.
type LoopRoute struct {
	Src, Dst int
	Order    string
}

// LoopScenario is a loop experiment's fabric and flows.
type LoopScenario struct {
	Name string
	N, K int
	// Background flows, one on each link of the cycle, from the start.
	Background []LoopRoute
	// Loop flows, whose routes close the cycle, from Warmup on.
	Loop []LoopRoute
	// Incast flows, from the start: one-hop flows from servers off the
	// cycle into the cycle's switch egresses, which oversubscribe them.
	Incast []LoopRoute
}

// LoopScenarios are the scenarios by name.
//
// bcube21 is DESIGN §9's: BCube(2,1), the cycle h0 -s0.0- h1 -s1.1- h3
// -s0.1- h2 -s1.0- h0. Every switch egress of the cycle has one input
// (the other port of a 2-port switch), so it is congested only by the
// emulation's jitter.
//
// bcube41-over is the same cycle on BCube(4,1), h0 -s0.0- h1 -s1.1- h5
// -s0.1- h4 -s1.0- h0, with background h0->h1, h1->h5, h5->h4, h4->h0
// and loop flows h0->h5 via h1, h5->h0 via h4, h1->h4 via h5, h4->h1 via
// h0; and two incast flows into each switch egress of the cycle from the
// other servers of that switch: h2, h3 -> h1 (s0.0), h9, h13 -> h5
// (s1.1), h6, h7 -> h4 (s0.1), h8, h12 -> h0 (s1.0). Each such egress
// then has three inputs carrying five flows — the cycle's background,
// the second hop of a loop flow and the two incast flows in its B queue,
// the first hop of a loop flow in an A queue — and three times the
// link's rate offered: a loop whose relays' switches are oversubscribed.
var LoopScenarios = map[string]LoopScenario{
	LoopBCube21: {Name: LoopBCube21, N: 2, K: 1,
		Background: routes(LoopBackground),
		Loop:       loopRoutes()},
	LoopOversubscribed: {Name: LoopOversubscribed, N: 4, K: 1,
		Background: []LoopRoute{{0, 1, ""}, {1, 5, ""}, {5, 4, ""}, {4, 0, ""}},
		Loop:       []LoopRoute{{0, 5, "0,1"}, {5, 0, "0,1"}, {1, 4, "1,0"}, {4, 1, "1,0"}},
		Incast: []LoopRoute{{2, 1, ""}, {3, 1, ""}, {9, 5, ""}, {13, 5, ""},
			{6, 4, ""}, {7, 4, ""}, {8, 0, ""}, {12, 0, ""}}},
}

func loopRoutes() []LoopRoute {
	var out []LoopRoute
	for _, f := range LoopFlows {
		out = append(out, LoopRoute{Src: f.Src, Dst: f.Dst, Order: f.Order})
	}
	return out
}

func routes(fs [][2]int) []LoopRoute {
	var out []LoopRoute
	for _, f := range fs {
		out = append(out, LoopRoute{Src: f[0], Dst: f[1]})
	}
	return out
}

// LoopFlow is one flow's throughput in the measured window.
type LoopFlow struct {
	Flow string  `json:"flow"` // "h0->h1"
	Bps  float64 `json:"bps"`
}

// LoopSeries is one flow's throughput over time: Bps[i] is its rate
// between LoopResult.SeriesT[i-1] (0 for i = 0) and SeriesT[i].
type LoopSeries struct {
	Flow string    `json:"flow"` // "h0->h1"
	Kind string    `json:"kind"` // background, loop or incast
	Bps  []float64 `json:"bps"`
}

// LoopPauses are the pauses one node sent in the measured window, by
// class: "A" and "B" (PortFC's classes), "P3", "P4", ... (PFC's
// priorities; X_off frames, not their refreshes) or "bfc" (BFC, which
// pauses upstream queues, not classes). Relayed counts the PortFC pauses
// a server relayed to its other switches, by class.
type LoopPauses struct {
	Node    string            `json:"node"`
	Sent    map[string]uint64 `json:"sent,omitempty"`
	Relayed map[string]uint64 `json:"relayed,omitempty"`
}

// LoopQueue is how long one egress queue was paused in the measured
// window, and what it sent then; only queues that were paused or sent
// anything are listed.
type LoopQueue struct {
	Node     string  `json:"node"`
	Port     string  `json:"port"`
	Queue    string  `json:"queue"`
	PausedMs float64 `json:"paused_ms"`
	// PausedFrac is PausedMs over the window.
	PausedFrac float64 `json:"paused_frac"`
	SentBytes  uint64  `json:"sent_bytes"`
}

// LoopResult is one scheme's outcome.
type LoopResult struct {
	FC string `json:"fc"`
	// Scenario is LoopOptions.Scenario's (bcube21 or bcube41-over),
	// Transport LoopOptions.Transport's (gen or rdma).
	Scenario      string     `json:"scenario"`
	Transport     string     `json:"transport"`
	Background    []LoopFlow `json:"background"`
	Loop          []LoopFlow `json:"loop"`
	BackgroundBps float64    `json:"background_avg_bps"`
	LoopBps       float64    `json:"loop_avg_bps"`
	// Incast flows of the scenario (none in bcube21) and their mean.
	Incast    []LoopFlow `json:"incast,omitempty"`
	IncastBps float64    `json:"incast_avg_bps,omitempty"`
	// SeriesT are the sample times of Series, in seconds since the
	// background flows started (the loop flows start at Warmup);
	// Series is every flow's throughput between samples.
	SeriesT []float64    `json:"series_t_s,omitempty"`
	Series  []LoopSeries `json:"series,omitempty"`
	// Pauses are the pauses each node sent in the measured window;
	// PausesByClass their sum over the nodes, by class.
	Pauses        []LoopPauses      `json:"pauses"`
	PausesByClass map[string]uint64 `json:"pauses_by_class"`
	// Queues are the time each egress queue was paused in the measured
	// window (servers' and switches'), in node order.
	Queues []LoopQueue `json:"queues"`
	// DropsAt says where the fabric's drops happened, from the start of
	// the run to the end of the window: every port and reason with a
	// nonzero count, as "h0/eth0 buffer_full".
	DropsAt map[string]uint64 `json:"drops_at,omitempty"`
	// Stalls are the queues the watchdogs report stalled at the end;
	// Cycle those of them that wait on each other around a loop.
	Stalls []lab.Stall `json:"stalls"`
	Cycle  []lab.Stall `json:"cycle"`
	Drops  uint64      `json:"fabric_drops"`
	// Missing is the frames the sinks found missing (gen), or the RDMA
	// receivers that saw a gap (rdma, lossless: each failed its flow).
	Missing uint64 `json:"frames_missing"`
	// Health is the emulation's over the whole run of the scheme.
	Health lab.Health `json:"health"`
}

// Deadlocked reports whether every background flow stopped and the
// watchdogs found a cycle.
func (r *LoopResult) Deadlocked() bool {
	for _, f := range r.Background {
		if f.Bps > 0 {
			return false
		}
	}
	return len(r.Cycle) > 0
}

// LoopBackground and LoopFlows are the scenario's flows: source,
// destination and (for the loop) the level order that routes them
// through the named relay.
var (
	LoopBackground = [][2]int{{0, 1}, {1, 3}, {3, 2}, {2, 0}}
	LoopFlows      = []struct {
		Src, Dst int
		Order    string
	}{{0, 3, "0,1"}, {3, 0, "0,1"}, {1, 2, "1,0"}, {2, 1, "1,0"}}
)

// Loop runs the experiment once per scheme.
func Loop(ctx context.Context, o LoopOptions) ([]LoopResult, error) {
	if len(o.FC) == 0 {
		o.FC = []string{scheme.NamePFC, scheme.NamePFCStar, scheme.NamePortFC}
	}
	if o.Warmup == 0 {
		o.Warmup = time.Second
	}
	if o.Settle == 0 {
		o.Settle = time.Second
	}
	if o.Measure == 0 {
		o.Measure = 5 * time.Second
	}
	if o.Interval == 0 {
		o.Interval = 250 * time.Millisecond
	}
	if o.Scenario == "" {
		o.Scenario = LoopBCube21
	}
	switch o.Transport {
	case "":
		o.Transport = LoopGen
	case LoopGen, LoopRDMA:
	default:
		return nil, fmt.Errorf("loop: transport %q: want %s or %s", o.Transport, LoopGen, LoopRDMA)
	}
	if _, ok := LoopScenarios[o.Scenario]; !ok {
		return nil, fmt.Errorf("loop: scenario %q: want %s or %s", o.Scenario, LoopBCube21, LoopOversubscribed)
	}
	var out []LoopResult
	for _, fc := range o.FC {
		r, err := loopOnce(ctx, o, fc)
		if err != nil {
			return out, fmt.Errorf("loop %s: %w", fc, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func loopOnce(ctx context.Context, o LoopOptions, fc string) (res LoopResult, err error) {
	sc := LoopScenarios[o.Scenario]
	spec, root, err := upScheme(ctx, o.Lab, sc.N, sc.K, fc, "loop", o.Log)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, lab.Down(root, spec.Name, o.Log)) }()
	res.FC, res.Scenario, res.Transport = fc, sc.Name, o.Transport
	health := healthSince(root, spec.Name)
	defer func() { res.Health = health() }()
	total := o.Warmup + o.Settle + o.Measure + time.Second
	start := func(f LoopRoute, d time.Duration) error {
		var order string
		if o.Transport == LoopRDMA {
			r, err := lab.StartRDMA(root, spec.Name, bcube.HostName(f.Src), api.RDMARequest{Dst: f.Dst, Duration: int64(d), Order: f.Order})
			if err != nil {
				return err
			}
			order = r.Order
		} else {
			g, err := lab.StartFlow(root, spec.Name, bcube.HostName(f.Src), api.GenRequest{Dst: f.Dst, Duration: int64(d), Order: f.Order})
			if err != nil {
				return err
			}
			order = g.Order
		}
		if f.Order != "" && order != f.Order {
			return fmt.Errorf("h%d->h%d routed %s, want %s", f.Src, f.Dst, order, f.Order)
		}
		return nil
	}
	srcs, dsts := map[int]bool{}, map[int]bool{}
	for _, f := range append(append(append([]LoopRoute(nil), sc.Background...), sc.Loop...), sc.Incast...) {
		srcs[f.Src], dsts[f.Dst] = true, true
	}
	sample := func() (map[string]uint64, error) { return sinkBytes(root, spec.Name, dsts) }
	if o.Transport == LoopRDMA {
		sample = func() (map[string]uint64, error) { return ackedBytes(root, spec.Name, srcs) }
	}

	// The series: a sampler from the start of the background flows to
	// the end of the measured window.
	t0 := time.Now()
	var series *loopSampler
	if o.Interval > 0 {
		series = startLoopSampler(ctx, o.Interval, t0, sample)
		defer func() {
			res.SeriesT, res.Series = series.stop(sc)
		}()
	}
	for _, f := range append(sc.Background, sc.Incast...) {
		if err := start(f, total); err != nil {
			return res, err
		}
	}
	if err := sleep(ctx, o.Warmup-time.Since(t0)); err != nil {
		return res, err
	}
	for _, f := range sc.Loop {
		if err := start(f, total-o.Warmup); err != nil {
			return res, err
		}
	}
	if err := sleep(ctx, o.Warmup+o.Settle-time.Since(t0)); err != nil {
		return res, err
	}
	// The counters' window runs from the middle of one snapshot of every
	// node to the middle of the other.
	c0 := time.Now()
	s0, err := lab.Snapshot(ctx, root, spec.Name)
	if err != nil {
		return res, err
	}
	c0 = c0.Add(time.Since(c0) / 2)
	b0, err := sample()
	if err != nil {
		return res, err
	}
	m0 := time.Now()
	if err := sleep(ctx, o.Measure); err != nil {
		return res, err
	}
	b1, err := sample()
	if err != nil {
		return res, err
	}
	window := time.Since(m0)
	c1 := time.Now()
	s1, err := lab.Snapshot(ctx, root, spec.Name)
	if err != nil {
		return res, err
	}
	c1 = c1.Add(time.Since(c1) / 2)
	if series != nil {
		series.finish()
	}
	res.Pauses, res.PausesByClass, res.Queues = loopCounters(s0, s1, c1.Sub(c0))
	for _, n := range s1 {
		if n.Stats == nil {
			continue
		}
		for _, p := range n.Stats.Ports {
			for reason, v := range p.Drops {
				if v > 0 {
					if res.DropsAt == nil {
						res.DropsAt = map[string]uint64{}
					}
					res.DropsAt[n.Node+"/"+p.Name+" "+reason] += v
				}
			}
		}
	}
	rate := func(f LoopRoute) LoopFlow {
		k := fmt.Sprintf("h%d->h%d", f.Src, f.Dst)
		return LoopFlow{Flow: k, Bps: float64(b1[k]-b0[k]) * 8 / window.Seconds()}
	}
	for _, f := range sc.Background {
		r := rate(f)
		res.Background = append(res.Background, r)
		res.BackgroundBps += r.Bps / float64(len(sc.Background))
	}
	for _, f := range sc.Loop {
		r := rate(f)
		res.Loop = append(res.Loop, r)
		res.LoopBps += r.Bps / float64(len(sc.Loop))
	}
	for _, f := range sc.Incast {
		r := rate(f)
		res.Incast = append(res.Incast, r)
		res.IncastBps += r.Bps / float64(len(sc.Incast))
	}
	rep, err := lab.Status(root, spec.Name)
	if err != nil {
		return res, err
	}
	res.Stalls, res.Cycle = rep.Stalls, rep.Cycle
	for _, n := range rep.Nodes {
		if n.Stats != nil {
			res.Drops += n.Stats.Drops
		}
	}
	if o.Transport == LoopRDMA {
		// Lossless RDMA fails a flow at its first gap: count the
		// receivers that saw one.
		for d := range dsts {
			r, err := lab.RDMAFlows(root, spec.Name, bcube.HostName(d))
			if err != nil {
				return res, err
			}
			for _, rc := range r.Receivers {
				if rc.Gap {
					res.Missing++
				}
			}
		}
		return res, nil
	}
	for d := range dsts {
		r, err := lab.Flows(root, spec.Name, bcube.HostName(d))
		if err != nil {
			return res, err
		}
		for _, s := range r.Sink {
			res.Missing += s.Gaps
		}
	}
	return res, nil
}

// ackedBytes is what every RDMA flow of the servers srcs had
// acknowledged so far, by "h<src>->h<dst>".
func ackedBytes(root, name string, srcs map[int]bool) (map[string]uint64, error) {
	m := map[string]uint64{}
	for i := range srcs {
		r, err := lab.RDMAFlows(root, name, bcube.HostName(i))
		if err != nil {
			return nil, err
		}
		for _, f := range r.Flows {
			m[fmt.Sprintf("h%d->h%d", i, f.Dst)] += uint64(max(f.AckedBytes, 0))
		}
	}
	return m, nil
}

// loopCounters are the pauses each node sent and the time each queue
// was paused between snapshots s0 and s1, window apart.
func loopCounters(s0, s1 []lab.NodeSnapshot, window time.Duration) ([]LoopPauses, map[string]uint64, []LoopQueue) {
	before := map[string]*api.Stats{}
	for _, n := range s0 {
		if n.Stats != nil {
			before[n.Node] = n.Stats
		}
	}
	byClass := map[string]uint64{}
	var pauses []LoopPauses
	var qs []LoopQueue
	for _, n := range s1 {
		a, b := n.Stats, before[n.Node]
		if a == nil || b == nil {
			continue
		}
		np := LoopPauses{Node: n.Node}
		for pi, p := range a.Ports {
			if pi >= len(b.Ports) || b.Ports[pi].Name != p.Name {
				continue
			}
			bp := b.Ports[pi]
			for k, v := range p.Signals {
				class, relayed, ok := pauseKey(k)
				if !ok || v <= bp.Signals[k] {
					continue
				}
				d := v - bp.Signals[k]
				if relayed {
					if np.Relayed == nil {
						np.Relayed = map[string]uint64{}
					}
					np.Relayed[class] += d
					continue
				}
				if np.Sent == nil {
					np.Sent = map[string]uint64{}
				}
				np.Sent[class] += d
				byClass[class] += d
			}
			for qi, q := range p.Queues {
				if qi >= len(bp.Queues) {
					continue
				}
				paused := q.PausedNs - bp.Queues[qi].PausedNs
				sent := q.DeqBytes - bp.Queues[qi].DeqBytes
				if paused <= 0 && sent == 0 {
					continue
				}
				qs = append(qs, LoopQueue{Node: n.Node, Port: p.Name, Queue: q.Name, PausedMs: float64(paused) / 1e6,
					PausedFrac: float64(paused) / float64(window), SentBytes: sent})
			}
		}
		pauses = append(pauses, np)
	}
	return pauses, byClass, qs
}

// pauseKey reads a signal counter's name: the class of a pause sent
// (tx_pause_A, tx_xoff_P3, tx_pause for BFC) or relayed (relayed_pause_B).
func pauseKey(k string) (class string, relayed, ok bool) {
	switch {
	case k == "tx_pause":
		return scheme.NameBFC, false, true
	case strings.HasPrefix(k, "tx_pause_"):
		return k[len("tx_pause_"):], false, true
	case strings.HasPrefix(k, "tx_xoff_"):
		return k[len("tx_xoff_"):], false, true
	case strings.HasPrefix(k, "relayed_pause_"):
		return k[len("relayed_pause_"):], true, true
	}
	return "", false, false
}

// loopSampler samples every flow's delivered bytes every interval.
type loopSampler struct {
	cancel context.CancelFunc
	done   chan struct{}
	t0     time.Time
	mu     sync.Mutex
	t      []float64
	bytes  []map[string]uint64
}

func startLoopSampler(ctx context.Context, interval time.Duration, t0 time.Time, sample func() (map[string]uint64, error)) *loopSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &loopSampler{cancel: cancel, done: make(chan struct{}), t0: t0}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			m, err := sample()
			if err != nil {
				continue // a missed sample widens the next interval
			}
			s.mu.Lock()
			s.t = append(s.t, time.Since(s.t0).Seconds())
			s.bytes = append(s.bytes, m)
			s.mu.Unlock()
		}
	}()
	return s
}

// finish stops sampling (idempotent).
func (s *loopSampler) finish() {
	s.cancel()
	<-s.done
}

// stop stops sampling and returns the sample times and every flow of sc's
// rate between samples.
func (s *loopSampler) stop(sc LoopScenario) ([]float64, []LoopSeries) {
	s.finish()
	var out []LoopSeries
	add := func(kind string, fs []LoopRoute) {
		for _, f := range fs {
			k := fmt.Sprintf("h%d->h%d", f.Src, f.Dst)
			out = append(out, LoopSeries{Flow: k, Kind: kind, Bps: s.rates(k)})
		}
	}
	add("background", sc.Background)
	add("loop", sc.Loop)
	add("incast", sc.Incast)
	return s.t, out
}

// rates is key's rate in bit/s between samples (from 0 bytes at t0
// before the first); call it once sampling has finished.
func (s *loopSampler) rates(key string) []float64 {
	out := make([]float64, len(s.t))
	prevT, prevB := 0.0, uint64(0)
	for i, t := range s.t {
		b := s.bytes[i][key]
		if t > prevT && b >= prevB {
			out[i] = float64(b-prevB) * 8 / (t - prevT)
		}
		prevT, prevB = t, b
	}
	return out
}

// sinkBytes is what every flow into the servers dsts delivered so far,
// by "h<src>->h<dst>".
func sinkBytes(root, name string, dsts map[int]bool) (map[string]uint64, error) {
	m := map[string]uint64{}
	for i := range dsts {
		r, err := lab.Flows(root, name, bcube.HostName(i))
		if err != nil {
			return nil, err
		}
		for _, s := range r.Sink {
			m[fmt.Sprintf("h%d->h%d", s.Src, i)] += s.Bytes
		}
	}
	return m, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
