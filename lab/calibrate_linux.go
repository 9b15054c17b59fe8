package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
)

// startProbes starts every node's link probes (POST /probe), once every
// node runs, the first of them in the calibration's burst where the
// lab's links have a delay to calibrate (calibrateBurst), and records in the nodes' config files that a node started
// again probes at once.
func startProbes(ctx context.Context, p *Plan, st *State) error {
	path := "/probe"
	if p.Spec.Model().LinkDelay() > 0 {
		every, n := calibrateBurst(p.Spec, len(p.Links))
		path = fmt.Sprintf("/probe?every=%v&count=%d", every, n)
	}
	if err := eachNodeDo(ctx, st.Nodes, func(c context.Context, n NodeState) error {
		_, err := controlDo(c, n.Control, "POST", path, nil)
		return err
	}); err != nil {
		return fmt.Errorf("start probes: %w", err)
	}
	for i := range p.Nodes {
		p.Nodes[i].Config.ProbeAtStart = true
	}
	return writeConfigs(p)
}

// calibrate measures the emulator's per-hop latency on the idle lab from
// its links' probes, sets every node's delay compensation (POST /delay)
// and records it in the state and the nodes' config files, so a node
// started again keeps it.
func calibrate(ctx context.Context, p *Plan, st *State, log *slog.Logger) error {
	m := p.Spec.Model()
	want := max(uint64(calibrateSamples), uint64(2*len(p.Links)))
	deadline := time.Now().Add(calibrateMax)
	every, _ := calibrateBurst(p.Spec, len(p.Links))
	poll := max(2*every, calibratePollMin)
	var all api.RTT
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
		all = api.RTT{}
		var mu sync.Mutex
		if err := eachNodeDo(ctx, st.Nodes, func(c context.Context, n NodeState) error {
			s, err := FetchStats(c, n.Control)
			if err != nil {
				return err
			}
			mu.Lock() // eachNodeDo runs a few at a time
			defer mu.Unlock()
			for _, port := range s.Ports {
				if port.RTT != nil {
					all.Add(*port.RTT)
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
		if all.Count >= want {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("calibrate: %d probe round trips in %v, want %d: the links do not answer their probes", all.Count, calibrateMax, want)
		}
	}
	// The shortest, not the median: an idle engine sleeps between frames
	// and pays a wake-up per hop that a busy one, the one a run has, does
	// not; the round trip that met awake engines is the estimate of a
	// loaded hop (measured: the idle median over-compensates a loaded lab
	// by 2-19%, the idle 10th percentile by 10-15% at D = 1,000;
	// docs/BENCHMARKS.md, "Scale model"). The probes' steering corrects
	// what remains while the lab runs, idle or loaded.
	idle := time.Duration(all.MinNs)
	perHop := max(0, (idle-m.OneHopRTT())/2)
	c := &Calibration{IdleRTT: idle, PerHop: perHop, Samples: all.Count}
	log.Info("delay lines calibrated", "idle_rtt", idle, "model_rtt", m.OneHopRTT(), "per_hop", perHop, "samples", all.Count)
	body, _ := json.Marshal(api.DelayRequest{CompNs: perHop.Nanoseconds()})
	if err := eachNodeDo(ctx, st.Nodes, func(c context.Context, n NodeState) error {
		_, err := controlDo(c, n.Control, "POST", "/delay", bytes.NewReader(body))
		return err
	}); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	st.Spec.DelayComp = perHop
	st.Calibration = c
	for i := range p.Nodes {
		p.Nodes[i].Config.DelayComp = config.Duration(perHop)
	}
	return writeConfigs(p)
}

// eachNodeDo runs f for every node, a few at a time, each within 5 s of
// ctx, and returns the first error, naming its node.
func eachNodeDo(ctx context.Context, nodes []NodeState, f func(context.Context, NodeState) error) error {
	var (
		mu    sync.Mutex
		first error
	)
	eachNode(nodes, func(_ int, n NodeState) {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := f(c, n); err != nil {
			mu.Lock()
			if first == nil {
				first = fmt.Errorf("%s: %w", n.Name, err)
			}
			mu.Unlock()
		}
	})
	return first
}
