//go:build linux

package experiment

import (
	"maps"
	"slices"
	"strings"

	"github.com/bcfab/bcfab/study/bench"
)

// LoopMetrics fills r from a loop run: the mean throughput of the
// background, loop and incast flows and of each background flow, the
// pauses the nodes sent in the measured window by class (pauses_A,
// pauses_B, pauses_P3, pauses_bfc ...) and those the servers relayed
// (relayed_B ...), how long the servers' egress queues were paused in the
// window, by queue (servers_paused_pct_b0: the mean over the servers'
// ports that have a b0 queue and paused or sent anything, in percent of
// the window; servers_paused_max_pct_b0 the most of any; BFC's data
// queues Q0, Q1 ... count as one, Q), whether the
// fabric deadlocked, and the series of the background, loop and incast
// flows' mean throughput over the run (the ToN paper's Fig. 19).
func (r *Result) LoopMetrics(lr *bench.LoopResult) {
	r.add("background_mbps", lr.BackgroundBps/1e6)
	r.add("loop_mbps", lr.LoopBps/1e6)
	if len(lr.Incast) > 0 {
		r.add("incast_mbps", lr.IncastBps/1e6)
	}
	for _, f := range lr.Background {
		r.add("bg_"+flowKey(f.Flow)+"_mbps", f.Bps/1e6)
	}
	for _, f := range lr.Loop {
		r.add("loop_"+flowKey(f.Flow)+"_mbps", f.Bps/1e6)
	}
	r.add("deadlocked", b2f(lr.Deadlocked()))
	r.add("stalled_queues", float64(len(lr.Stalls)))
	r.add("cycle_queues", float64(len(lr.Cycle)))
	r.add("drops", float64(lr.Drops))
	r.add("missing", float64(lr.Missing))
	var total float64
	for _, class := range slices.Sorted(maps.Keys(lr.PausesByClass)) {
		v := float64(lr.PausesByClass[class])
		r.add("pauses_"+class, v)
		total += v
	}
	r.add("pauses", total)
	relayed := map[string]uint64{}
	for _, p := range lr.Pauses {
		for class, v := range p.Relayed {
			relayed[class] += v
		}
	}
	for _, class := range slices.Sorted(maps.Keys(relayed)) {
		r.add("relayed_"+class, float64(relayed[class]))
	}
	type acc struct {
		sum, max float64
		n        int
	}
	byQueue := map[string]*acc{}
	for _, q := range lr.Queues {
		if !strings.HasPrefix(q.Node, "h") {
			continue
		}
		name := q.Queue
		if len(name) > 1 && name[0] == 'Q' && strings.Trim(name[1:], "0123456789") == "" {
			name = "Q" // BFC's data queues, together
		}
		a := byQueue[name]
		if a == nil {
			a = &acc{}
			byQueue[name] = a
		}
		a.sum += 100 * q.PausedFrac
		a.max = max(a.max, 100*q.PausedFrac)
		a.n++
	}
	for _, name := range slices.Sorted(maps.Keys(byQueue)) {
		a := byQueue[name]
		r.add("servers_paused_pct_"+name, a.sum/float64(a.n))
		r.add("servers_paused_max_pct_"+name, a.max)
	}
	r.healthMetrics(lr.Health)
	if len(lr.SeriesT) == 0 {
		return
	}
	r.Series = map[string][][2]float64{}
	for _, kind := range []string{"background", "loop", "incast"} {
		var flows [][]float64
		for _, s := range lr.Series {
			if s.Kind == kind {
				flows = append(flows, s.Bps)
			}
		}
		if len(flows) == 0 {
			continue
		}
		avg := make([]float64, len(lr.SeriesT))
		for i := range avg {
			for _, f := range flows {
				if i < len(f) {
					avg[i] += f[i] / float64(len(flows))
				}
			}
		}
		r.Series[kind+"_mbps"] = timeSeries(lr.SeriesT, avg)
	}
}

// timeSeries pairs sample times (s) with rates in bit/s as (s, Mb/s).
func timeSeries(t, bps []float64) [][2]float64 {
	out := make([][2]float64, 0, len(t))
	for i := range min(len(t), len(bps)) {
		out = append(out, [2]float64{t[i], bps[i] / 1e6})
	}
	return out
}

// flowKey makes "h0->h1" a metric name's part: "h0_h1".
func flowKey(f string) string { return strings.ReplaceAll(f, "->", "_") }
