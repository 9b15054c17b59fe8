package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/bcfab/bcfab/fabric/fcplus"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
)

// FCLoopResult is one routing's run of the fcplus-loop scenario.
type FCLoopResult struct {
	Routing string `json:"routing"`
	// Lossless is the PFC priorities its data used.
	Lossless int `json:"lossless"`
	// Flows are the loop flows, each with what its sink received per
	// second over the second half of the run (after the loop had time
	// to close), in bit/s.
	Flows []FCLoopFlow `json:"flows"`
	// Stalled are the queues the watchdog reported stalled at the end,
	// and Cycle the cycle of pauses among them, if any: a deadlock.
	Stalled []Stall `json:"stalled,omitempty"`
	Cycle   []Stall `json:"cycle,omitempty"`
	// Drops are the frames the fabric lost (a lossless run has none).
	Drops uint64 `json:"drops"`
}

// FCLoopFlow is one flow of a run.
type FCLoopFlow struct {
	Src, Dst string
	Bps      float64 `json:"bps"`
}

// Deadlocked reports whether the run ended in a cycle of paused queues.
func (r FCLoopResult) Deadlocked() bool { return len(r.Cycle) > 0 }

// RunFCLoop runs the fcplus-loop scenario (fcplus.Loop) once per routing
// on a lab of base (its name, rate, target, bin dir...), the same four
// flows each time: every flow from its server at line rate for d, PFC
// on. Routed by plain KSP the flows' paths close a cycle of buffers and
// PFC can pause it for ever; DF-KSP's cannot (with two priorities, the
// switches move a frame to the second at its down-up turn). Each lab is
// brought down before the next comes up.
func RunFCLoop(ctx context.Context, base Spec, routings []string, d time.Duration, log *slog.Logger) ([]FCLoopResult, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sc := fcplus.Loop()
	var out []FCLoopResult
	for _, r := range routings {
		s := base
		s.FC = scheme.NamePFC
		s.Fabric = &FabricSpec{Kind: TopologyFCPlus, Scenario: sc.Name, Routing: r}
		res, err := runFCLoop(ctx, s, sc, d, log)
		if err != nil {
			return out, fmt.Errorf("fcplus-loop, routing %s: %w", r, err)
		}
		out = append(out, *res)
	}
	return out, nil
}

func runFCLoop(ctx context.Context, s Spec, sc fcplus.Scenario, d time.Duration, log *slog.Logger) (res *FCLoopResult, err error) {
	st, err := Up(ctx, s, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		if derr := Down(s.RunRoot, s.Name, log); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	p := st.Spec
	res = &FCLoopResult{Routing: p.Fabric.routing(), Lossless: 1}
	if p.Fabric.routing() == RoutingDFKSP2 {
		res.Lossless = 2
	}
	idx := func(name string) int {
		var i int
		fmt.Sscanf(name, "h%d", &i)
		return i
	}
	for _, f := range sc.Flows {
		if _, err := StartFlow(s.RunRoot, s.Name, f.Src, api.GenRequest{Dst: idx(f.Dst), Duration: int64(d)}); err != nil {
			return nil, err
		}
		res.Flows = append(res.Flows, FCLoopFlow{Src: f.Src, Dst: f.Dst})
	}
	received := func() ([]uint64, error) {
		var b []uint64
		for _, f := range sc.Flows {
			rep, err := Flows(s.RunRoot, s.Name, f.Dst)
			if err != nil {
				return nil, err
			}
			var n uint64
			for _, k := range rep.Sink {
				if k.Src == idx(f.Src) {
					n += k.Bytes
				}
			}
			b = append(b, n)
		}
		return b, nil
	}
	wait := func(t time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(t):
			return nil
		}
	}
	if err := wait(d / 2); err != nil {
		return nil, err
	}
	first, err := received()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := wait(d/2 - d/10); err != nil { // before the flows end
		return nil, err
	}
	last, err := received()
	if err != nil {
		return nil, err
	}
	secs := time.Since(t0).Seconds()
	for i := range res.Flows {
		res.Flows[i].Bps = float64(last[i]-first[i]) * 8 / secs
	}
	rep, err := Status(s.RunRoot, s.Name)
	if err != nil {
		return nil, err
	}
	res.Stalled, res.Cycle = rep.Stalls, rep.Cycle
	for _, n := range rep.Nodes {
		if n.Stats != nil {
			res.Drops += n.Stats.Drops
		}
	}
	return res, nil
}
