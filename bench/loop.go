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
//     loop flows' too, and what the watchdogs report: stalled queues and
//     whether they close a cycle (a deadlock).
//
// Plain PFC must deadlock (background throughput 0, a cycle of stalled
// queues through all eight nodes); PFC* and PortFC must not.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/bcfab/bcfab/api"
	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/lab"
)

// LoopOptions of the experiment.
type LoopOptions struct {
	Lab     lab.Spec      // N, K and FC are set by the experiment
	FC      []string      // schemes, default pfc, pfcstar, portfc
	Warmup  time.Duration // background alone, default 1s
	Settle  time.Duration // after the loop flows start, default 1s
	Measure time.Duration // default 5s
	Log     *slog.Logger
}

// LoopFlow is one flow's throughput in the measured window.
type LoopFlow struct {
	Flow string  `json:"flow"` // "h0->h1"
	Bps  float64 `json:"bps"`
}

// LoopResult is one scheme's outcome.
type LoopResult struct {
	FC            string     `json:"fc"`
	Background    []LoopFlow `json:"background"`
	Loop          []LoopFlow `json:"loop"`
	BackgroundBps float64    `json:"background_avg_bps"`
	LoopBps       float64    `json:"loop_avg_bps"`
	// Stalls are the queues the watchdogs report stalled at the end;
	// Cycle those of them that wait on each other around a loop.
	Stalls  []lab.Stall `json:"stalls"`
	Cycle   []lab.Stall `json:"cycle"`
	Drops   uint64      `json:"fabric_drops"`
	Missing uint64      `json:"frames_missing"`
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
		o.FC = []string{"pfc", "pfcstar", "portfc"}
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
	spec, root, err := upScheme(ctx, o.Lab, 2, 1, fc, "loop", o.Log)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, lab.Down(root, spec.Name, o.Log)) }()
	res.FC = fc
	health := healthSince(root, spec.Name)
	defer func() { res.Health = health() }()
	total := o.Warmup + o.Settle + o.Measure + time.Second
	start := func(src, dst int, order string, d time.Duration) error {
		f, err := lab.StartFlow(root, spec.Name, bcube.HostName(src), api.GenRequest{Dst: dst, Duration: int64(d), Order: order})
		if err != nil {
			return err
		}
		if order != "" && f.Order != order {
			return fmt.Errorf("h%d->h%d routed %s, want %s", src, dst, f.Order, order)
		}
		return nil
	}
	for _, f := range LoopBackground {
		if err := start(f[0], f[1], "", total); err != nil {
			return res, err
		}
	}
	if err := sleep(ctx, o.Warmup); err != nil {
		return res, err
	}
	for _, f := range LoopFlows {
		if err := start(f.Src, f.Dst, f.Order, total-o.Warmup); err != nil {
			return res, err
		}
	}
	if err := sleep(ctx, o.Settle); err != nil {
		return res, err
	}
	b0, err := sinkBytes(root, spec.Name)
	if err != nil {
		return res, err
	}
	if err := sleep(ctx, o.Measure); err != nil {
		return res, err
	}
	b1, err := sinkBytes(root, spec.Name)
	if err != nil {
		return res, err
	}
	rate := func(src, dst int) LoopFlow {
		k := fmt.Sprintf("h%d->h%d", src, dst)
		return LoopFlow{Flow: k, Bps: float64(b1[k]-b0[k]) * 8 / o.Measure.Seconds()}
	}
	for _, f := range LoopBackground {
		r := rate(f[0], f[1])
		res.Background = append(res.Background, r)
		res.BackgroundBps += r.Bps / float64(len(LoopBackground))
	}
	for _, f := range LoopFlows {
		r := rate(f.Src, f.Dst)
		res.Loop = append(res.Loop, r)
		res.LoopBps += r.Bps / float64(len(LoopFlows))
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
	for i := range 4 {
		r, err := lab.Flows(root, spec.Name, bcube.HostName(i))
		if err != nil {
			return res, err
		}
		for _, s := range r.Sink {
			res.Missing += s.Gaps
		}
	}
	return res, nil
}

// sinkBytes is what every flow delivered so far, by "h<src>->h<dst>".
func sinkBytes(root, name string) (map[string]uint64, error) {
	m := map[string]uint64{}
	for i := range 4 {
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
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
