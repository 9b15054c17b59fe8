package experiment

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/model/units"
)

// Result is what one point gave.
type Result struct {
	Point
	// Valid is false when the run failed or its emulation health was not
	// valid: its numbers are then not the fabric's, and no plot shows
	// them. Problems says why, one line each.
	Valid    bool     `json:"valid"`
	Problems []string `json:"problems,omitempty"`
	// Elapsed is the point's wall time, lab up and down included.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Target is the time the point emulated, on the target's clock (0:
	// not known): a workload's run from its start to its end, a bench's
	// from its first sample of the emulation health to its last.
	// WallPerTargetMs is Elapsed per ms of it, in seconds
	// (scale.WallPerTargetMs): what each ms of the target cost the
	// point, its lab's bring-up and removal included.
	Target          time.Duration `json:"target_ns,omitempty"`
	WallPerTargetMs float64       `json:"wall_s_per_target_ms,omitempty"`
	// Metrics are the point's numbers by name, in a fixed order (the
	// columns of summary.csv): see the metric names in this file and in
	// the runner.
	Metrics []Metric `json:"metrics"`
	// Bins is a workload's summary by flow-size class, of its
	// background's (Poisson) flows only (backgroundBins): bins.csv.
	Bins []workload.BinSummary `json:"bins,omitempty"`
	// Schedule is the digest of a workload's flows (ScheduleDigest):
	// the same config and seed give the same digest.
	Schedule string `json:"schedule_digest,omitempty"`
	// Queues are a workload's switch queue samples in bytes: every
	// switch's egress bytes at every sample (the queue-length CDF).
	Queues []float64 `json:"-"`
	// Slowdowns are a workload's completed flows' sizes and slowdowns
	// (the slowdown-by-size plots); records.csv keeps them.
	Slowdowns []FlowSlowdown `json:"-"`
	// Series are time series by name (throughput of the loop's flows
	// over time, say), each a list of (seconds, value), in the lab's time
	// and rates.
	Series map[string][][2]float64 `json:"series,omitempty"`
	// Dilation is the D of the point's lab (its scale model; 0: unknown,
	// a result from before the model): targetUnits reads the lab's rates
	// and times into the target's with it.
	Dilation float64 `json:"dilation,omitempty"`
	// Checks are a conformance point's figures against their closed
	// forms (ConformanceCase).
	Checks []CheckRow `json:"checks,omitempty"`
}

// targetUnits adds, for every metric of the lab's rates (name_mbps, Mb/s)
// and times (name_ms, ms), the same in the target's units: name_gbps, the
// rate x D in Gb/s, and name_us, the time / D in µs. Plots and reports
// show those; summary.csv has both. A flow's start lag reads so too: how
// much later than its schedule the target saw it start.
func (r *Result) targetUnits() {
	if r.Dilation <= 0 {
		return
	}
	n := len(r.Metrics)
	for _, m := range r.Metrics[:n] {
		switch {
		case strings.HasSuffix(m.Name, "_mbps"):
			r.add(strings.TrimSuffix(m.Name, "_mbps")+"_gbps", m.Value*r.Dilation/1e3)
		case strings.HasSuffix(m.Name, "_ms"):
			r.add(strings.TrimSuffix(m.Name, "_ms")+"_us", m.Value/r.Dilation*1e3)
		}
	}
}

// Metric is one named number of a point.
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// metricJSON is a Metric in JSON, where NaN (not measured) is null.
type metricJSON struct {
	Name  string   `json:"name"`
	Value *float64 `json:"value"`
}

// MarshalJSON writes NaN as null.
func (m Metric) MarshalJSON() ([]byte, error) {
	j := metricJSON{Name: m.Name}
	if !math.IsNaN(m.Value) && !math.IsInf(m.Value, 0) {
		j.Value = &m.Value
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads null as NaN.
func (m *Metric) UnmarshalJSON(b []byte) error {
	var j metricJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	m.Name, m.Value = j.Name, math.NaN()
	if j.Value != nil {
		m.Value = *j.Value
	}
	return nil
}

// Get is the metric called name and whether r has it.
func (r *Result) Get(name string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

func (r *Result) add(name string, v float64) { r.Metrics = append(r.Metrics, Metric{name, v}) }

// unknown sets the named metrics to NaN (an empty cell): a value the
// run's tool does not count (the simulator's ECN marks), not a 0.
func (r *Result) unknown(names ...string) {
	for i := range r.Metrics {
		if slices.Contains(names, r.Metrics[i].Name) {
			r.Metrics[i].Value = math.NaN()
		}
	}
}

// invalidate marks r invalid for the reasons given.
func (r *Result) invalidate(problems ...string) {
	r.Valid = false
	r.Problems = append(r.Problems, problems...)
}

// healthMetrics adds what every point reports of its emulation health.
func (r *Result) healthMetrics(h lab.Health) {
	r.add("machine_busy", h.MachineBusy)
	r.add("daemon_share", h.ProcShare)
	r.add("lost_share", h.LostShare)
	r.add("skipped_share", h.SkippedShare)
	r.add("ring_drops", float64(h.RingDrops))
	if f := h.Fidelity; f != nil {
		// The links' one-hop RTT the fidelity monitor measured, and its
		// error against the model's (Result.targetUnits adds the
		// target's µs).
		r.add("link_rtt_p50_ms", ms(f.P50))
		r.add("link_rtt_p99_ms", ms(f.P99))
		r.add("link_rtt_error", f.Error)
		r.add("link_rtt_error_p99", f.ErrorP99)
	}
}

// Rejudge judges h again by limits, which may be stricter than those it
// was judged by (a bench judges by the defaults): ring drops and the
// worst port's lost link time.
func Rejudge(h lab.Health, limits lab.HealthLimits) lab.Health {
	if limits == (lab.HealthLimits{}) {
		return h
	}
	if limits.MaxLostShare == 0 {
		limits.MaxLostShare = lab.DefaultMaxLostShare
	}
	if limits.MinLost == 0 {
		limits.MinLost = lab.DefaultMinLost
	}
	if limits.MaxRingDrops >= 0 && h.RingDrops > uint64(limits.MaxRingDrops) && !slices.ContainsFunc(h.Problems, func(p string) bool { return strings.Contains(p, "XSK rings") }) {
		h.Problems = append(h.Problems, fmt.Sprintf("XSK rings dropped %s (limit %d)", units.Count(h.RingDrops, "frame", "frames"), limits.MaxRingDrops))
	}
	if limits.MaxLostShare >= 0 && h.LostShare > limits.MaxLostShare && h.Lost > limits.MinLost && !slices.ContainsFunc(h.Problems, func(p string) bool { return strings.Contains(p, "of link time") }) {
		h.Problems = append(h.Problems, fmt.Sprintf("%s lost %v of link time, %.3g%% of the run (limit %.3g%%)", h.WorstPort, h.Lost.Round(time.Microsecond), 100*h.LostShare, 100*limits.MaxLostShare))
	}
	if limits.MaxSkippedShare == 0 {
		limits.MaxSkippedShare = scale.MaxSkippedShare
	}
	if limits.MaxSkippedShare >= 0 && h.SkippedShare > limits.MaxSkippedShare && !slices.ContainsFunc(h.Problems, func(p string) bool { return strings.Contains(p, "of the model's time") }) {
		h.Problems = append(h.Problems, fmt.Sprintf("worker %s skipped %v of the model's time, %.3g%% of the run (limit %.3g%%): the worker was later than its replay reaches", h.SkippedWorker, h.Skipped.Round(time.Microsecond), 100*h.SkippedShare, 100*limits.MaxSkippedShare))
	}
	h.Limits = limits
	h.Valid = len(h.Problems) == 0
	return h
}

// WorkloadMetrics fills r from a workload run's report; flows are the
// run's schedule (rep.Records in the same order), which says each
// pattern flow's phase.
func (r *Result) WorkloadMetrics(rep *lab.WorkloadReport, flows []workload.Flow) {
	s := &rep.Summary
	r.add("flows", float64(s.Flows))
	r.add("completed", float64(s.Completed))
	r.add("failed", float64(s.Failed))
	r.add("incomplete", float64(s.Incomplete))
	r.add("incomplete_pct", incompletePct(s.Incomplete, s.Flows))
	// Why flows never ended: the queues stalled when the drain time ran
	// out, and whether they paused each other around a loop.
	r.add("deadlocked", b2f(len(rep.Cycle) > 0))
	r.add("stalled_queues", float64(len(rep.Stalls)))
	r.add("cycle_queues", float64(len(rep.Cycle)))
	r.add("fct_avg_ms", ms(s.All.FCT.Mean))
	r.add("fct_p99_ms", ms(s.All.FCT.P99))
	r.add("slowdown_avg", s.All.Slowdown.Mean)
	r.add("slowdown_p99", s.All.Slowdown.P99)
	r.add("goodput_mbps", s.Goodput/1e6)
	var poisson int64
	for i := range rep.Records {
		if rc := &rep.Records[i]; rc.Kind == workload.KindPoisson && rc.Completed && !rc.Failed {
			poisson += rc.Size
		}
	}
	if rep.Elapsed > 0 {
		r.add("poisson_goodput_mbps", 8*float64(poisson)/rep.Elapsed.Seconds()/1e6)
	}
	r.victimMetrics(rep)
	if rep.Pairing.IsPermutation() {
		r.permutationMetrics(rep)
	}
	if rep.Long != nil {
		// What the long flows got: each one's bytes over its FCT.
		var bps []float64
		for i := range rep.Records {
			if rc := &rep.Records[i]; rc.Kind == workload.KindLong && rc.Completed && !rc.Failed && rc.FCT > 0 {
				bps = append(bps, 8*float64(rc.Size)/rc.FCT.Seconds())
			}
		}
		v := math.NaN()
		if len(bps) > 0 {
			v = 0
			for _, b := range bps {
				v += b / float64(len(bps))
			}
		}
		r.add("long_mbps", v/1e6)
		r.add("long_share", v/float64(rep.RateBps))
	}
	if rep.Incast != nil {
		g := groupStats(rep.Records, flows, workload.KindIncast)
		r.add("incast_goodput_mbps", g.goodput/1e6)
		r.add("incast_time_avg_ms", g.avg)
		r.add("incast_time_max_ms", g.max)
		r.add("incast_complete", float64(g.complete))
		r.add("incast_events", float64(g.events))
	}
	if p := rep.Pattern; p != nil {
		g := groupStats(rep.Records, flows, p.Kind)
		r.add("jct_avg_ms", g.avg)
		r.add("jct_p99_ms", g.p99)
		r.add("jct_complete", float64(g.complete))
		r.add("jct_events", float64(g.events))
		// The second phase against the first: when each event's pull
		// started after its push ended, in ms (negative: before).
		r.add("pull_after_push_min_ms", g.gapMin)
		r.add("pull_after_push_max_ms", g.gapMax)
		if p.Wait {
			// The push stage alone (the papers' figure): an event's first
			// push's start to its last push's end.
			r.add("push_avg_ms", g.firstAvg)
			r.add("push_p99_ms", g.firstP99)
		}
	}
	sw := make([]bool, len(rep.QueueNodes))
	for i, n := range rep.QueueNodes {
		sw[i] = isSwitch(n)
	}
	// Each sample's switches: their queued bytes, all ports together,
	// and their fullest port, the queue a frame waits behind there.
	r.Queues = r.Queues[:0]
	var port []float64
	for _, row := range rep.Queues {
		for i, b := range row.Bytes {
			if i < len(sw) && sw[i] {
				r.Queues = append(r.Queues, float64(b))
				if i < len(row.PortMax) {
					port = append(port, float64(row.PortMax[i]))
				}
			}
		}
	}
	q := slices.Clone(r.Queues)
	slices.Sort(q)
	r.add("switch_queue_p50_kb", workload.Percentile(q, 50)/1e3)
	r.add("switch_queue_p99_kb", workload.Percentile(q, 99)/1e3)
	r.add("switch_queue_max_kb", workload.Percentile(q, 100)/1e3)
	if rep.RateBps > 0 {
		// The wait of a frame behind a switch's p99 bytes at one link's
		// rate (the lab's ms; the target's µs beside it).
		r.add("queue_delay_p99_ms", workload.Percentile(q, 99)*8/float64(rep.RateBps)*1e3)
	}
	if len(port) > 0 {
		// The sums above bound the fullest port from above.
		slices.Sort(port)
		r.add("port_queue_p99_kb", workload.Percentile(port, 99)/1e3)
		if rep.RateBps > 0 {
			r.add("port_queue_delay_p99_ms", workload.Percentile(port, 99)*8/float64(rep.RateBps)*1e3)
		}
	}
	if w := rep.Waits; w != nil && w.Frames > 0 {
		// Every frame's wait in a switch's queue, timed frame by frame
		// (the lab's ms; the target's µs beside them).
		r.add("pkt_queue_delay_avg_ms", ms(w.Mean))
		r.add("pkt_queue_delay_p50_ms", ms(w.P50))
		r.add("pkt_queue_delay_p99_ms", ms(w.P99))
		r.add("pkt_queue_delay_p999_ms", ms(w.P999))
		// The frames a port catching up started before they arrived.
		r.add("pkt_early_share", float64(w.Early)/float64(w.Frames))
		r.add("pkt_early_avg_ms", ms(w.EarlyMean))
	}
	if bdp := rep.Model.Target.BDP(0); rep.Model.D > 0 && bdp > 0 {
		// The same queues in one-hop BDPs of the target's links.
		r.add("switch_queue_p99_bdp", workload.Percentile(q, 99)/float64(bdp))
		r.add("switch_queue_max_bdp", workload.Percentile(q, 100)/float64(bdp))
	}
	r.Dilation = rep.Model.D
	r.Target = rep.TargetElapsed
	f := &rep.Fabric
	r.add("drops", float64(f.Drops))
	r.add("pauses", float64(f.Pauses))
	r.add("ecn_marks", float64(f.ECNMarks))
	r.add("cnps", float64(f.CNPs))
	r.add("isolations", float64(f.Isolations))
	r.add("ici_isolated", float64(f.Isolated))
	r.add("ici_table_full", float64(f.TableFull))
	r.add("ecn_marks_cq", float64(f.ECNMarksCQ))
	r.add("retransmissions", float64(s.Retransmissions))
	r.add("start_lag_avg_ms", ms(rep.StartLag.Mean))
	r.add("start_lag_p99_ms", ms(rep.StartLag.P99))
	r.healthMetrics(rep.Health)
	r.Bins = backgroundBins(rep.Records)
	r.Slowdowns = flowSlowdowns(rep.Records)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// victimMetrics adds what congestion isolation is judged by: the CNPs
// of the background's flows (the victims, when incasts congest the
// fabric) and of the incasts' (the congesting flows), per flow; the
// background's FCT percentiles; and the CNPs over time (series
// cnps_per_s: each queue-sample interval's CNPs over its length).
func (r *Result) victimMetrics(rep *lab.WorkloadReport) {
	var n, cnps [2]float64 // [victims, congesting]
	var fct []float64
	for i := range rep.Records {
		rc := &rep.Records[i]
		k := 0
		switch rc.Kind {
		case workload.KindPoisson:
			if rc.Completed && !rc.Failed {
				fct = append(fct, ms(rc.FCT))
			}
		case workload.KindIncast:
			k = 1
		default:
			continue
		}
		n[k]++
		cnps[k] += float64(rc.CNPs)
	}
	per := func(k int) float64 {
		if n[k] == 0 {
			return math.NaN()
		}
		return cnps[k] / n[k]
	}
	r.add("cnps_victim_per_flow", per(0))
	r.add("cnps_incast_per_flow", per(1))
	r.add("cnps_victim", cnps[0])
	r.add("cnps_incast", cnps[1])
	slices.Sort(fct)
	for _, p := range []float64{50, 95, 99} {
		v := math.NaN()
		if len(fct) > 0 {
			v = workload.Percentile(fct, p)
		}
		r.add(fmt.Sprintf("bg_fct_p%g_ms", p), v)
	}
	var series [][2]float64
	var t0, c0 float64
	for _, row := range rep.Queues {
		t, c := row.Elapsed.Seconds(), float64(row.CNPs)
		if t > t0 {
			series = append(series, [2]float64{t, max(0, c-c0) / (t - t0)})
		}
		t0, c0 = t, c
	}
	if len(series) > 0 {
		if r.Series == nil {
			r.Series = map[string][][2]float64{}
		}
		r.Series["cnps_per_s"] = series
	}
}

// isSwitch says node name is a switch's: every server of every fabric
// is h<i> (BCube's switches are s<level>.<i>, a graph fabric's leaf<i>,
// spine<i>, tor<i> and the like).
func isSwitch(name string) bool { return name != "" && !strings.HasPrefix(name, "h") }

// groups is what groupStats found of a kind's events.
type groups struct {
	events, complete int
	// avg, p99 and max of the complete events' times, first start to
	// last end, in ms; goodput their mean bytes over that time in bit/s.
	avg, p99, max, goodput float64
	// gapMin, gapMax: over the complete two-phase events, the second
	// phase's first start less the first phase's last end, in ms.
	gapMin, gapMax float64
	// firstAvg, firstP99: over the complete two-phase events, the first
	// phase's time (a parameter server's push: its first start to its
	// last end), in ms; NaN without such events.
	firstAvg, firstP99 float64
}

// groupStats sums up the events (incasts, pattern events) of kind: an
// event is complete when every flow of it completed; its time runs from
// its first flow's start to its last flow's end (start plus FCT).
func groupStats(recs []workload.FlowRecord, flows []workload.Flow, kind workload.Kind) groups {
	type ev struct {
		start, end           time.Duration
		end0, start1         time.Duration
		bytes                int64
		incomplete, twoPhase bool
	}
	byGroup := map[int]*ev{}
	var order []int
	for i := range recs {
		rc := &recs[i]
		if rc.Kind != kind {
			continue
		}
		e := byGroup[rc.Group]
		if e == nil {
			e = &ev{start: math.MaxInt64, start1: math.MaxInt64}
			byGroup[rc.Group] = e
			order = append(order, rc.Group)
		}
		if !rc.Completed || rc.Failed {
			e.incomplete = true
			continue
		}
		end := rc.Start + rc.FCT
		e.start, e.end = min(e.start, rc.Start), max(e.end, end)
		e.bytes += rc.Size
		if i < len(flows) && flows[i].Phase == 1 {
			e.twoPhase = true
			e.start1 = min(e.start1, rc.Start)
		} else {
			e.end0 = max(e.end0, end)
		}
	}
	g := groups{events: len(order), gapMin: math.NaN(), gapMax: math.NaN(), firstAvg: math.NaN(), firstP99: math.NaN()}
	var times, firsts []float64
	for _, k := range order {
		e := byGroup[k]
		if e.incomplete {
			continue
		}
		g.complete++
		t := e.end - e.start
		times = append(times, ms(t))
		if t > 0 {
			g.goodput += 8 * float64(e.bytes) / t.Seconds()
		}
		if e.twoPhase {
			firsts = append(firsts, ms(e.end0-e.start))
			gap := ms(e.start1 - e.end0)
			if math.IsNaN(g.gapMin) || gap < g.gapMin {
				g.gapMin = gap
			}
			if math.IsNaN(g.gapMax) || gap > g.gapMax {
				g.gapMax = gap
			}
		}
	}
	if len(firsts) > 0 {
		slices.Sort(firsts)
		g.firstAvg = 0
		for _, t := range firsts {
			g.firstAvg += t / float64(len(firsts))
		}
		g.firstP99 = workload.Percentile(firsts, 99)
	}
	if len(times) == 0 {
		g.avg, g.p99, g.max, g.goodput = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return g
	}
	slices.Sort(times)
	for _, t := range times {
		g.avg += t / float64(len(times))
	}
	g.p99, g.max = workload.Percentile(times, 99), times[len(times)-1]
	g.goodput /= float64(len(times))
	return g
}

// WriteSummaryCSV writes one row per result of experiment c: the point
// (its contender by name, as the file writes it, and by label, as the
// plots do), its validity and problems, then every metric any result
// has, in the order first seen (empty where a result lacks it).
func WriteSummaryCSV(w io.Writer, c *Config, results []Result) error {
	var names []string
	for i := range results {
		for _, m := range results[i].Metrics {
			if !slices.Contains(names, m.Name) {
				names = append(names, m.Name)
			}
		}
	}
	cw := csv.NewWriter(w)
	head := append([]string{"experiment", "point", "scheme", "label", "scenario", "cdf", "load", "seed", "rep", "valid", "problems", "elapsed_s",
		"target_ms", "wall_s_per_target_ms", "schedule_digest"}, names...)
	if err := cw.Write(head); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	for i := range results {
		r := &results[i]
		row := []string{c.Name, r.ID, r.Contender, c.Label(r.Contender), r.Scenario, r.CDF, strconv.FormatFloat(r.Load, 'g', -1, 64), strconv.FormatUint(r.Seed, 10),
			strconv.Itoa(r.Rep), strconv.FormatBool(r.Valid), strings.Join(r.Problems, "; "),
			strconv.FormatFloat(r.Elapsed.Seconds(), 'f', 1, 64), orEmpty(float64(r.Target) / float64(time.Millisecond)), orEmpty(r.WallPerTargetMs), r.Schedule}
		for _, n := range names {
			v, ok := r.Get(n)
			switch {
			case !ok || math.IsNaN(v):
				row = append(row, "")
			default:
				row = append(row, strconv.FormatFloat(v, 'g', 6, 64))
			}
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write summary: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// orEmpty is v for a CSV cell, empty when 0 (not known).
func orEmpty(v float64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// benchTarget sets r's target time from a bench's health on a lab of
// spec: the lab's time from its first sample to its last, / D.
func (r *Result) benchTarget(spec lab.Spec, h lab.Health) {
	if m, err := spec.ResolvedModel(); err == nil && m.D > 0 {
		r.Target = m.TargetTime(h.Wall)
	}
}

// cost sets r's cost per ms of the target from its wall time.
func (r *Result) cost() { r.WallPerTargetMs = scale.WallPerTargetMs(r.Elapsed, r.Target) }

// WriteBinsCSV writes a workload's per-bin summaries: one row per point
// and size class, of the background's flows (backgroundBins).
func WriteBinsCSV(w io.Writer, c *Config, results []Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"point", "scheme", "label", "cdf", "load", "seed", "rep", "valid", "bin", "above_bytes", "up_to_bytes",
		"flows", "completed", "failed", "fct_avg_ms", "fct_p99_ms", "slowdown_avg", "slowdown_p50", "slowdown_p99",
		"fct_avg_us", "fct_p99_us"}); err != nil {
		return fmt.Errorf("write bins: %w", err)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for i := range results {
		r := &results[i]
		// The bins' FCTs in the target's µs (lab ms / D x 1000); empty
		// when the point's D is not known.
		target := func(labMs float64) string {
			if r.Dilation <= 0 {
				return ""
			}
			return f(labMs / r.Dilation * 1e3)
		}
		for _, b := range r.Bins {
			row := []string{r.ID, r.Contender, c.Label(r.Contender), r.CDF, f(r.Load), strconv.FormatUint(r.Seed, 10), strconv.Itoa(r.Rep), strconv.FormatBool(r.Valid),
				b.Label, strconv.FormatInt(b.Above, 10), strconv.FormatInt(b.UpTo, 10), strconv.Itoa(b.Flows), strconv.Itoa(b.Completed),
				strconv.Itoa(b.Failed), f(ms(b.FCT.Mean)), f(ms(b.FCT.P99)), f(b.Slowdown.Mean), f(b.Slowdown.P50), f(b.Slowdown.P99),
				target(ms(b.FCT.Mean)), target(ms(b.FCT.P99))}
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("write bins: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write bins: %w", err)
	}
	return nil
}

// b2f is 1 for true, 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// incompletePct is the share of flows that never ended, in percent.
func incompletePct(incomplete, flows int) float64 {
	if flows == 0 {
		return 0
	}
	return 100 * float64(incomplete) / float64(flows)
}

// bigFlow is the size from which a permutation's background flows count
// for its throughput: the largest size bin of the reports (> 1 MB),
// flows long enough to reach the rate their path leaves them, where a
// small flow's FCT is mostly its latency.
const bigFlow = 1_000_000

// permutationMetrics are what a permutation's background flows of over
// 1 MB got: each its bytes over its FCT, the mean (big_flow_mbps), and
// that as a share of a host link's rate (big_flow_share), which the
// fabric's throughput without packets (λ, the share of its line rate
// every server gets at once) bounds when every server sends.
func (r *Result) permutationMetrics(rep *lab.WorkloadReport) {
	sum, n := 0.0, 0
	for i := range rep.Records {
		if rc := &rep.Records[i]; rc.Kind == workload.KindPoisson && rc.Size > bigFlow && rc.Completed && !rc.Failed && rc.FCT > 0 {
			sum += 8 * float64(rc.Size) / rc.FCT.Seconds()
			n++
		}
	}
	v := math.NaN()
	if n > 0 {
		v = sum / float64(n)
	}
	r.add("big_flow_mbps", v/1e6)
	if rep.RateBps > 0 {
		r.add("big_flow_share", v/float64(rep.RateBps))
	}
}
