package experiment

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/bcfab/bcfab/internal/buildinfo"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/ns3"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/units"
)

// simDir is where a simulator's point keeps the export it ran, in the
// point's directory.
const simDir = "ns3"

// simulate runs a workload point of the simulator (sc.Sim): the lab
// sc's scheme would bring up is exported with the point's schedule
// (package lab/ns3), the sim built in RunOptions.NS3 runs it, and its
// per-flow output becomes the point's records, on the lab's clock as a
// lab's are, so that every table and plot takes the two alike. No lab
// comes up and nothing needs privileges. The sim has no emulation
// health: its run is valid when it ran; flows it did not complete are
// counted incomplete as a lab's; its drops are those its switches
// printed (ns3.Drops), its pauses those its devices received. Its wall time is the point's, so the
// result's wall time per target ms is the sim's.
func (x *runner) simulate(ctx context.Context, p Point, sc Contender, dir string, res *Result) error {
	wc, err := x.c.PointWorkload(p)
	if err != nil {
		return err
	}
	spec := x.c.PointLabSpec(p, sc, x.runRoot)
	spec.BinDir = x.o.BinDir
	plan, err := lab.NewPlan(spec)
	if err != nil {
		return err
	}
	w := x.c.Workload
	cc, err := lab.WorkloadOptions{CC: sc.CC, NoDCQCN: w.NoDCQCN || sc.NoCC}.FlowCC(spec.CC)
	if err != nil {
		return err
	}
	wc, flows, err := lab.SpecSchedule(plan.Spec, wc)
	if err != nil {
		return err
	}
	res.Schedule = ScheduleDigest(flows)
	exp := filepath.Join(dir, simDir)
	var hl ns3.HostLink
	if x.c.NS3 != nil {
		hl = ns3.HostLink(x.c.NS3.HostLink)
	}
	sim, err := ns3.New(ns3.Input{HostLink: hl, Plan: plan, Flows: flows, Duration: wc.Duration, CC: cc, MTU: w.MTU, Drain: scaled(w.Drain.D(), x.c.timeScale(p)),
		Build: buildinfo.Read().Line("lab"), Command: "lab experiment run " + x.c.Name + ", point " + p.ID})
	if err != nil {
		return err
	}
	if err := sim.Write(exp, false); err != nil {
		return err
	}
	fmt.Fprintf(x.progress, "  %s; the ns-3 simulator on %s (%d nodes, %d links, cc %s), to %v of its clock\n",
		units.Count(len(flows), "flow", "flows"), sim.Topology, len(sim.Nodes), len(sim.Links), sim.CC, sim.Stop)
	if err := ns3.Run(ctx, x.o.NS3, exp); err != nil {
		return err
	}
	_, simRecs, err := ns3.ReadSim(exp)
	if err != nil {
		return err
	}
	m := sim.Model
	recs := ns3.LabRecords(simRecs, m)
	rep := &lab.WorkloadReport{
		Lab: spec.Name, Topology: sim.Topology, RateBps: m.LinkRateBps(), FC: sim.FC, ECN: spec.ECN,
		CDF: p.CDF, Load: wc.Load, Duration: wc.Duration, Seed: wc.Seed,
		Model: m, Records: recs,
	}
	// The run's length is the last flow's end (the sim runs on to its
	// stop time, idle), on the lab's clock.
	for i := range recs {
		if r := &recs[i]; r.Completed {
			rep.Elapsed = max(rep.Elapsed, r.Start+r.FCT)
		}
	}
	rep.TargetElapsed = time.Duration(float64(rep.Elapsed) / m.D)
	if rep.Summary, err = workload.Summarize(recs, rep.Elapsed, workload.DefaultBins); err != nil {
		return err
	}
	rep.Target = rep.Summary.Dilated(m.D)
	pauses, _, err := ns3.Pauses(exp)
	if err != nil {
		return err
	}
	rep.Fabric.Pauses = uint64(pauses)
	drops, err := ns3.Drops(exp)
	if err != nil {
		return err
	}
	rep.Fabric.Drops = uint64(drops)
	rep.Health = lab.Health{Valid: true}
	if err := writeWith(filepath.Join(dir, "records.csv"), func(w io.Writer) error { return workload.WriteCSV(w, recs) }); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(dir, "report.json"), rep); err != nil {
		return err
	}
	res.WorkloadMetrics(rep, flows)
	// What the sim does not count is unknown, not 0.
	res.unknown("ecn_marks", "cnps", "isolations", "ici_isolated", "ici_table_full", "ecn_marks_cq", "retransmissions",
		"start_lag_avg_ms", "start_lag_p99_ms", "switch_queue_p50_kb", "switch_queue_p99_kb", "switch_queue_max_kb",
		"queue_delay_p99_ms", "switch_queue_p99_bdp", "switch_queue_max_bdp",
		"machine_busy", "daemon_share", "lost_share", "skipped_share", "ring_drops", "cnps_victim_per_flow", "cnps_incast_per_flow", "cnps_victim", "cnps_incast")
	delete(res.Series, "cnps_per_s")
	res.Dilation = m.D
	if s := rep.Summary; s.Completed < s.Flows {
		fmt.Fprintf(x.progress, "  the simulator completed %d of %s by its stop (%v)\n", s.Completed, units.Count(s.Flows, "flow", "flows"), sim.Stop)
	}
	return nil
}
