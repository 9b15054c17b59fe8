//go:build linux

package bench

// The head-of-line blocking experiment (the papers' Fig. 4), on a real lab
// per flow-control scheme:
//
//  1. BCube(4,1); h1 sends two generated flows out of the same port eth0,
//     through switch s0.0: h1 -> h0 (to become congested) and the victim
//     h1 -> h2, which shares h1's link but leaves s0.0 by another port;
//  2. for Phase seconds only those two flows run: the victim's throughput
//     then is its uncongested throughput;
//  3. then h2 and h3 also send to h0, congesting s0.0's port toward h0, for
//     Phase seconds more: the victim's throughput now, against the first,
//     is how much head-of-line blocking the scheme causes.
//
// In each phase, after the throughput window, a group of FCTFlows finite
// flows of FCTBytes each (h1 -> h2 and h1 -> h3, alternately, all started
// at once) shares h1's link with the congested flow but not s0.0's
// congested egress: their mean flow completion time (first frame sent to
// last frame received), congested against uncongested, is the same
// question asked as BFC's evaluation asks it (its Fig. 8).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
)

// HoLOptions of the experiment.
type HoLOptions struct {
	Lab   lab.Spec      // N, K and FC are set by the experiment
	FC    []string      // schemes to compare, default portfc and none
	Phase time.Duration // each phase, default 5s
	// The victim group of each phase: FCTFlows flows (default 4) of
	// FCTBytes (default 256 KiB).
	FCTFlows int
	FCTBytes int64
	Log      *slog.Logger
	// Interval is the period of the victim's and the congested flow's
	// throughput series (0: 250ms; negative: none).
	Interval time.Duration
}

// HoLResult is one scheme's outcome.
type HoLResult struct {
	FC             string  `json:"fc"`
	VictimAloneBps float64 `json:"victim_uncongested_bps"`
	VictimBps      float64 `json:"victim_congested_bps"`
	Ratio          float64 `json:"ratio"`
	CongestedBps   float64 `json:"congested_flow_bps"`     // h1 -> h0 during the incast
	VictimPausedMs float64 `json:"victim_queue_paused_ms"` // -1: the victim has no fixed queue (BFC)
	// Mean FCT of the victim group, uncongested and congested, and their
	// ratio (1: unaffected); -1 when the group lost frames (a scheme that
	// drops: generated flows do not retransmit).
	FCTAloneMs float64 `json:"victim_group_fct_uncongested_ms"`
	FCTMs      float64 `json:"victim_group_fct_congested_ms"`
	FCTRatio   float64 `json:"victim_group_fct_ratio"`
	Drops      uint64  `json:"fabric_drops"`
	Missing    uint64  `json:"frames_missing"`
	// Health is the emulation's over the whole run of the scheme.
	Health lab.Health `json:"health"`
	// SeriesT are the sample times, in seconds since the victim and the
	// congested flow started, of VictimSeries and CongestedSeries: their
	// throughput between samples (the papers' Fig. 4 over time). The
	// incast (h2, h3 -> h0) starts at IncastT; each phase's victim group
	// runs after its throughput window.
	SeriesT         []float64 `json:"series_t_s,omitempty"`
	VictimSeries    []float64 `json:"victim_series_bps,omitempty"`
	CongestedSeries []float64 `json:"congested_series_bps,omitempty"`
	IncastT         float64   `json:"incast_start_s,omitempty"`
}

// HoL runs the experiment once per scheme.
func HoL(ctx context.Context, o HoLOptions) ([]HoLResult, error) {
	if len(o.FC) == 0 {
		o.FC = []string{scheme.NamePortFC, scheme.NameNone}
	}
	if o.Phase == 0 {
		o.Phase = 5 * time.Second
	}
	if o.FCTFlows == 0 {
		o.FCTFlows = 4
	}
	if o.FCTBytes == 0 {
		o.FCTBytes = 256 << 10
	}
	if o.Interval == 0 {
		o.Interval = 250 * time.Millisecond
	}
	var out []HoLResult
	for _, fc := range o.FC {
		r, err := holOnce(ctx, o, fc)
		if err != nil {
			return out, fmt.Errorf("hol %s: %w", fc, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func holOnce(ctx context.Context, o HoLOptions, fc string) (res HoLResult, err error) {
	spec, root, err := upScheme(ctx, o.Lab, 4, 1, fc, "hol", o.Log)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, lab.Down(root, spec.Name, o.Log)) }()
	res.FC = fc
	health := healthSince(root, spec.Name)
	defer func() { res.Health = health() }()
	flow := func(src string, dst int, d time.Duration) (*api.GenFlow, error) {
		return lab.StartFlow(root, spec.Name, src, api.GenRequest{Dst: dst, Duration: int64(d)})
	}
	sinkBytes := func(node string, src int, sport uint16) (uint64, error) {
		r, err := lab.Flows(root, spec.Name, node)
		if err != nil {
			return 0, err
		}
		for _, s := range r.Sink {
			if s.Src == src && s.SPort == sport {
				return s.Bytes, nil
			}
		}
		return 0, nil
	}
	// Each phase: the throughput window, then the victim group.
	group := func() (float64, error) {
		return groupFCT(root, spec.Name, o.FCTFlows, o.FCTBytes, o.Phase)
	}
	total := 2*o.Phase + 2*(o.Phase+time.Second) + time.Second
	cong, err := flow("h1", 0, total)
	if err != nil {
		return res, err
	}
	victim, err := flow("h1", 2, total)
	if err != nil {
		return res, err
	}
	if victim.Port != cong.Port {
		return res, fmt.Errorf("victim leaves by eth%d, the congested flow by eth%d: no shared link", victim.Port, cong.Port)
	}
	t0 := time.Now()
	if o.Interval > 0 {
		series := startLoopSampler(ctx, o.Interval, t0, func() (map[string]uint64, error) {
			v, err := sinkBytes("h2", 1, victim.SPort)
			if err != nil {
				return nil, err
			}
			c, err := sinkBytes("h0", 1, cong.SPort)
			return map[string]uint64{"victim": v, "congested": c}, err
		})
		defer func() {
			series.finish()
			res.SeriesT, res.VictimSeries, res.CongestedSeries = series.t, series.rates("victim"), series.rates("congested")
		}()
	}
	measure := func() (victimBps, congBps float64, err error) {
		v0, err := sinkBytes("h2", 1, victim.SPort)
		if err != nil {
			return 0, 0, err
		}
		c0, err := sinkBytes("h0", 1, cong.SPort)
		if err != nil {
			return 0, 0, err
		}
		time.Sleep(o.Phase - time.Second)
		v1, err := sinkBytes("h2", 1, victim.SPort)
		if err != nil {
			return 0, 0, err
		}
		c1, err := sinkBytes("h0", 1, cong.SPort)
		secs := (o.Phase - time.Second).Seconds()
		return float64(v1-v0) * 8 / secs, float64(c1-c0) * 8 / secs, err
	}
	time.Sleep(time.Second) // past the start
	if res.VictimAloneBps, _, err = measure(); err != nil {
		return res, err
	}
	if res.FCTAloneMs, err = group(); err != nil {
		return res, err
	}
	res.IncastT = time.Since(t0).Seconds()
	for _, src := range []string{"h2", "h3"} {
		if _, err := flow(src, 0, total-o.Phase); err != nil {
			return res, err
		}
	}
	time.Sleep(time.Second)
	if res.VictimBps, res.CongestedBps, err = measure(); err != nil {
		return res, err
	}
	if res.FCTMs, err = group(); err != nil {
		return res, err
	}
	res.Ratio = res.VictimBps / res.VictimAloneBps
	res.FCTRatio = -1
	if res.FCTMs > 0 && res.FCTAloneMs > 0 {
		res.FCTRatio = res.FCTMs / res.FCTAloneMs
	}
	st, err := lab.Stats(root, spec.Name, "h1")
	if err != nil {
		return res, err
	}
	res.VictimPausedMs = -1 // BFC assigns queues per packet: no one queue is the victim's
	for _, q := range st.Ports[victim.Port].Queues {
		if q.Name == victim.Queue {
			res.VictimPausedMs = float64(q.PausedNs) / 1e6
		}
	}
	time.Sleep(time.Second)
	rep, err := lab.Status(root, spec.Name)
	if err != nil {
		return res, err
	}
	for _, n := range rep.Nodes {
		if n.Stats != nil {
			res.Drops += n.Stats.Drops
		}
	}
	for _, node := range []string{"h0", "h2"} {
		r, err := lab.Flows(root, spec.Name, node)
		if err != nil {
			return res, err
		}
		for _, s := range r.Sink {
			res.Missing += s.Gaps
		}
	}
	return res, nil
}

// groupFCT starts n flows of size bytes from h1, to h2 and h3 alternately,
// waits (at most limit) until each has been received whole, and returns
// their mean completion time in ms: first frame sent to last received.
// Generated flows do not retransmit: when a flow lost frames (a scheme
// that drops), it returns -1 once everything sent has arrived or been
// lost.
func groupFCT(root, name string, n int, size int64, limit time.Duration) (float64, error) {
	var flows []*api.GenFlow
	for i := range n {
		f, err := lab.StartFlow(root, name, "h1", api.GenRequest{Dst: 2 + i%2, Bytes: size})
		if err != nil {
			return 0, err
		}
		flows = append(flows, f)
	}
	deadline := time.Now().Add(limit)
	for {
		src, err := lab.Flows(root, name, "h1")
		if err != nil {
			return 0, err
		}
		var sum float64
		done, lossy := 0, 0
		for _, f := range flows {
			sent := src.Flows[f.ID-1]
			r, err := lab.Flows(root, name, bcube.HostName(f.Dst))
			if err != nil {
				return 0, err
			}
			for _, s := range r.Sink {
				if s.Src != 1 || s.SPort != f.SPort || !sent.Done {
					continue
				}
				switch {
				case s.Bytes >= sent.Bytes:
					done++
					sum += float64(s.LastNs-sent.StartNs) / 1e6
				case s.Gaps > 0 && time.Since(time.Unix(0, s.LastNs)) > 500*time.Millisecond:
					lossy++ // the rest was dropped
				}
			}
		}
		switch {
		case done+lossy == n && lossy > 0:
			return -1, nil
		case done == n:
			return sum / float64(n), nil
		case time.Now().After(deadline):
			return 0, fmt.Errorf("victim group: %d of %d flows complete after %v", done, n, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
