//go:build linux

package bench

// The fairness experiment, on a real lab:
//
//  1. BCube(4,1), every flow correcting level 0 first (level order 0,1);
//  2. two TCP flows (iperf3) into switch s0.0's egress p0 toward h0, in two
//     different queues: h1 -> h0 (the B queue: h0 is the destination) and
//     h2 -> h4 (A queue 0: h0 relays it to s1.0 port 1);
//  3. ping h1 -> h0 (ICMP rides the HQ) before and during the flows;
//  4. report each flow's throughput, the split, the ping RTTs and the
//     depth the data queues reached.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/bcfab/bcfab/lab"
)

// FairnessOptions of the experiment.
type FairnessOptions struct {
	Lab      lab.Spec      // N, K and LevelOrder are set by the experiment
	Duration time.Duration // of the flows, default 10s
	Log      *slog.Logger
}

// FairnessResult is what the experiment measured.
type FairnessResult struct {
	RateBps     uint64  `json:"rate_bps"`
	FlowB       float64 `json:"flow_b_bps"`  // h1 -> h0, s0.0 p0 queue B
	FlowA       float64 `json:"flow_a0_bps"` // h2 -> h4, s0.0 p0 queue A0
	ShareB      float64 `json:"share_b"`     // FlowB / (FlowA + FlowB)
	PingIdleMs  float64 `json:"ping_idle_avg_ms"`
	PingLoadMs  float64 `json:"ping_load_avg_ms"`
	PingLoadMax float64 `json:"ping_load_max_ms"`
	MaxQueueB   int     `json:"max_queue_b_bytes"`
	MaxQueueA0  int     `json:"max_queue_a0_bytes"`
	DataDelayMs float64 `json:"data_queue_delay_ms"` // the deeper data queue's depth at the link rate
	HQPackets   uint64  `json:"hq_packets"`
	FabricDrops uint64  `json:"fabric_drops"`
	// Health is the emulation's over the whole experiment.
	Health lab.Health `json:"health"`
}

// Fairness runs the experiment on a fresh lab, removed at the end.
func Fairness(ctx context.Context, o FairnessOptions) (res FairnessResult, err error) {
	if o.Duration == 0 {
		o.Duration = 10 * time.Second
	}
	spec := o.Lab
	spec.N, spec.K, spec.LevelOrder = 4, 1, "0,1"
	if spec.Name == "" {
		spec.Name = "fair"
	}
	if _, err := lab.Up(ctx, spec, o.Log); err != nil {
		return res, err
	}
	st, err := lab.LoadState(runRoot(spec), spec.Name)
	if err != nil {
		return res, errors.Join(err, lab.Down(runRoot(spec), spec.Name, o.Log))
	}
	defer func() { err = errors.Join(err, lab.Down(runRoot(spec), spec.Name, o.Log)) }()
	res.RateBps = st.Spec.RateBps
	health := healthSince(runRoot(spec), spec.Name)
	defer func() { res.Health = health() }()

	run := func(node string, args ...string) ([]byte, error) {
		cmd, err := lab.Command(spec.Name, node, args...)
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err = cmd.Run()
		return out.Bytes(), err
	}
	if res.PingIdleMs, _, err = pingRTT(run, "h1", "198.18.0.0", 10); err != nil {
		return res, err
	}
	for _, srv := range []struct{ node, port string }{{"h0", "5201"}, {"h4", "5202"}} {
		if out, err := run(srv.node, "iperf3", "-s", "-1", "-D", "-p", srv.port); err != nil {
			return res, fmt.Errorf("iperf3 server on %s: %v: %s", srv.node, err, out)
		}
	}
	time.Sleep(300 * time.Millisecond)
	secs := strconv.Itoa(int(o.Duration.Seconds()))
	var wg sync.WaitGroup
	var bps [2]float64
	var errs [3]error
	for i, c := range []struct{ node, dst, port string }{{"h1", "198.18.0.0", "5201"}, {"h2", "198.18.0.4", "5202"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := run(c.node, "iperf3", "-c", c.dst, "-p", c.port, "-t", secs, "-O", "2", "-J")
			if err != nil {
				errs[i] = fmt.Errorf("iperf3 %s -> %s: %v: %s", c.node, c.dst, err, out)
				return
			}
			var r struct {
				End struct {
					SumReceived struct {
						BitsPerSecond float64 `json:"bits_per_second"`
					} `json:"sum_received"`
				} `json:"end"`
			}
			if err := json.Unmarshal(out, &r); err != nil {
				errs[i] = fmt.Errorf("iperf3 %s: %w", c.node, err)
				return
			}
			bps[i] = r.End.SumReceived.BitsPerSecond
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(3 * time.Second) // past slow start and the omitted seconds
		n := int(o.Duration.Seconds()*5) - 20
		res.PingLoadMs, res.PingLoadMax, errs[2] = pingRTT(run, "h1", "198.18.0.0", max(n, 10))
	}()
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return res, err
	}
	res.FlowB, res.FlowA = bps[0], bps[1]
	res.ShareB = res.FlowB / (res.FlowA + res.FlowB)

	sw, err := lab.Stats(runRoot(spec), spec.Name, "s0.0")
	if err != nil {
		return res, err
	}
	for _, q := range sw.Ports[0].Queues {
		switch q.Name {
		case "B":
			res.MaxQueueB = q.MaxBytes
		case "A0":
			res.MaxQueueA0 = q.MaxBytes
		case "HQ":
			res.HQPackets = q.DeqPackets
		}
	}
	deeper := max(res.MaxQueueA0, res.MaxQueueB)
	if res.RateBps > 0 {
		res.DataDelayMs = float64(deeper) * 8 / float64(res.RateBps) * 1e3
	}
	rep, err := lab.Status(runRoot(spec), spec.Name)
	if err != nil {
		return res, err
	}
	for _, n := range rep.Nodes {
		if n.Stats != nil {
			res.FabricDrops += n.Stats.Drops
		}
	}
	return res, nil
}

var rttLine = regexp.MustCompile(`= ([0-9.]+)/([0-9.]+)/([0-9.]+)/`)

// pingRTT pings count times, 0.2 s apart, and returns the average and
// maximum RTT in ms.
func pingRTT(run func(string, ...string) ([]byte, error), node, dst string, count int) (avg, mx float64, err error) {
	out, err := run(node, "ping", "-q", "-c", strconv.Itoa(count), "-i", "0.2", dst)
	if err != nil {
		return 0, 0, fmt.Errorf("ping %s -> %s: %v: %s", node, dst, err, out)
	}
	m := rttLine.FindSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("ping %s -> %s: no summary in %q", node, dst, out)
	}
	avg, _ = strconv.ParseFloat(string(m[2]), 64)
	mx, _ = strconv.ParseFloat(string(m[3]), 64)
	return avg, mx, nil
}
