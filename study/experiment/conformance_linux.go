package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/api"
)

// conformance runs a conformance point: its case's flows on a lab of its
// own, judged against the case's closed form.
func (x *runner) conformance(ctx context.Context, p Point, dir string, res *Result) (err error) {
	cc, ok := conformanceCase(p.Scenario)
	if !ok {
		return fmt.Errorf("conformance: no case %q", p.Scenario)
	}
	sc, err := ParseContender(p.Contender)
	if err != nil {
		return err
	}
	spec := x.spec(sc, "")
	cc.apply(&spec)
	m, err := spec.ResolvedModel()
	if err != nil {
		return err
	}
	t, err := spec.ServerTopology()
	if err != nil {
		return err
	}
	d := m.D
	if d <= 0 {
		return errors.New("conformance: the lab has no scale model (a rate and a target are needed)")
	}
	// The case's schedule in the target's time, the lab's D times it.
	labIdeal := lab.WorkloadIdeal(spec, t, api.DefaultRDMAMTU)
	targetIdeal := func(src, dst int, size int64) time.Duration {
		return time.Duration(math.Round(float64(labIdeal(src, dst, size)) / d))
	}
	w := lab.WorkloadWire(spec, api.DefaultRDMAMTU)
	tw := w
	tw.Rate = uint64(math.Round(float64(w.Rate) * d))
	tw.Prop = time.Duration(math.Round(float64(w.Prop) / d))
	pmax := spec.ECNPmax
	if pmax == 0 {
		pmax = m.Target.ECNPmax
	}
	env := conformanceEnv{wire: tw, ideal: targetIdeal, target: m.Target, pmax: pmax, d: d}
	flows, window := cc.flows(env)
	for i := range flows {
		flows[i].Start = time.Duration(math.Round(float64(flows[i].Start) * d))
	}
	window = time.Duration(math.Round(float64(window)*d)) + time.Millisecond
	// Time enough for every flow after the last start: all of the
	// schedule's bytes through one link, ten times over, and the
	// slowest flow's ideal (the run ends when the last flow does).
	var bytes time.Duration
	var slowest time.Duration
	for _, f := range flows {
		bytes += wireTime(f.Size, w)
		slowest = max(slowest, labIdeal(f.Src, f.Dst, f.Size))
	}
	drain := max(lab.DefaultDrain(m, window, flows, labIdeal), 10*(bytes+slowest))
	res.Schedule = ScheduleDigest(flows)

	fmt.Fprintf(x.progress, "  %s: %s; lab %s up (%s links in the lab, fc %s)\n", cc.Name, units.Count(len(flows), "flow", "flows"), spec.Name, x.c.RateText(""), sc.FC)
	st, err := lab.Up(ctx, spec, x.log)
	if err != nil {
		return fmt.Errorf("lab up: %w", err)
	}
	defer func() {
		if derr := lab.Down(x.runRoot, spec.Name, x.log); derr != nil {
			err = errors.Join(err, fmt.Errorf("lab down: %w", derr))
		}
	}()
	if err := writeJSONFile(filepath.Join(dir, "spec.json"), st.Spec); err != nil {
		return err
	}
	o := lab.WorkloadOptions{
		Config: workload.Config{Duration: window}, Flows: flows, FlowSeries: cc.series,
		Mode: sc.Mode, NoDCQCN: sc.NoCC, Drain: drain, Limits: x.c.Health.Limits(), Progress: x.workloadStatus,
	}
	if cc.cc != "" {
		o.CC = cc.cc
	}
	if cc.mode != "" {
		o.Mode = cc.mode
	}
	if cc.interval > 0 {
		o.Interval = time.Duration(math.Round(float64(cc.interval) * d))
	}
	var before map[string]api.ECNHist
	if cc.ecn {
		if before, err = ecnSnapshot(x.runRoot, st); err != nil {
			return err
		}
	}
	rep, err := lab.RunWorkload(ctx, x.runRoot, spec.Name, o)
	if err != nil {
		return err
	}
	var hists []api.ECNHist
	if cc.ecn {
		after, err := ecnSnapshot(x.runRoot, st)
		if err != nil {
			return err
		}
		hists = ecnRuns(before, after)
		if err := writeJSONFile(filepath.Join(dir, "ecn.json"), hists); err != nil {
			return err
		}
	}
	if err := writeWorkloadFiles(dir, rep); err != nil {
		return err
	}
	res.WorkloadMetrics(rep, flows)
	env.hists = hists
	if cc.pauses {
		if env.ports, err = fcSnapshot(x.runRoot, st); err != nil {
			return err
		}
		if err := writeJSONFile(filepath.Join(dir, "fc_timing.json"), env.ports); err != nil {
			return err
		}
	}
	res.Checks = cc.judge(rep, env)
	outside := 0
	for _, r := range res.Checks {
		if !r.Pass {
			outside++
		}
	}
	res.add("checks", float64(len(res.Checks)))
	res.add("outside", float64(outside))
	if !rep.Health.Valid {
		res.invalidate(rep.Health.Problems...)
	}
	return nil
}

// ecnSnapshot is every port's ECN histogram in lab st, by node/port.
func ecnSnapshot(runRoot string, st *lab.State) (map[string]api.ECNHist, error) {
	out := map[string]api.ECNHist{}
	for _, n := range st.Nodes {
		s, err := lab.Stats(runRoot, st.Lab, n.Name)
		if err != nil {
			return nil, fmt.Errorf("ecn histograms: %w", err)
		}
		for _, p := range s.Ports {
			if p.ECNHist != nil {
				out[n.Name+"/"+p.Name] = *p.ECNHist
			}
		}
	}
	return out, nil
}

// ecnRuns are the decisions between two snapshots, the ports' merged by
// their edges (ports of one rate mark alike), the most decided first.
func ecnRuns(before, after map[string]api.ECNHist) []api.ECNHist {
	var out []api.ECNHist
	for _, k := range slices.Sorted(maps.Keys(after)) {
		d := after[k].Sub(before[k])
		i := slices.IndexFunc(out, func(h api.ECNHist) bool { return slices.Equal(h.Edges, d.Edges) })
		if i < 0 {
			out = append(out, api.ECNHist{})
			i = len(out) - 1
		}
		_ = out[i].Add(d) // the same edges
	}
	total := func(h api.ECNHist) (n uint64) {
		for _, v := range h.Decided {
			n += v
		}
		return n
	}
	slices.SortStableFunc(out, func(a, b api.ECNHist) int { return cmp.Compare(total(b), total(a)) })
	return out
}

// fcSnapshot is every port's flow-control timing in lab st.
func fcSnapshot(runRoot string, st *lab.State) ([]fcPort, error) {
	var out []fcPort
	for _, n := range st.Nodes {
		s, err := lab.Stats(runRoot, st.Lab, n.Name)
		if err != nil {
			return nil, fmt.Errorf("flow-control timing: %w", err)
		}
		for _, p := range s.Ports {
			if p.FCTiming != nil {
				out = append(out, fcPort{Node: n.Name, Port: p.Name, Timing: *p.FCTiming, RTT: p.RTT})
			}
		}
	}
	return out, nil
}
