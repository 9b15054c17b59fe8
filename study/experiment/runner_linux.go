//go:build linux

package experiment

// Run is an experiment's pipeline:
//
//  1. Check the output directory is new and the lab name free; write the
//     file as given (source.yaml), the experiment as run (config.yaml)
//     and the build (build.json).
//  2. For each point, in order: bring its lab up, run it (a workload, or
//     the loop or hol bench, which bring their labs up themselves), take
//     the lab down whatever happened, and write the point's files under
//     runs/<point>/; judge it valid or not by its emulation health; after
//     every point rewrite summary.csv and results.json, so a stopped run
//     keeps what it measured. A line per point goes to o.Progress, the
//     run's state (points, the target's time, D, the ETA, the health) to
//     o.Status.
//  3. Draw the plots from the valid points, and write README.md.
//
// A cancelled ctx (Ctrl-C) stops the point running, takes its lab down,
// and still writes steps 2's files and 3.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bcfab/bcfab/internal/buildinfo"
	"github.com/bcfab/bcfab/internal/progress"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/ns3"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/study/bench"
)

// RunOptions are where and how Run runs an experiment.
type RunOptions struct {
	// Out is the output directory; it must not exist or be empty.
	Out string
	// Source is the experiment file as given (source.yaml).
	Source []byte
	// BinDir holds the daemons (empty: lab's default, the directory of
	// the running executable); RunRoot the labs' state (empty:
	// lab.DefaultRunRoot).
	BinDir, RunRoot string
	// Log receives the labs' logs (nil: none).
	Log *slog.Logger
	// Progress receives a line per point (nil: none).
	Progress io.Writer
	// NS3 is the checkout of the ns-3 simulator that runs the
	// simulator's contenders (ns3:pfc; scripts/ns3/fetch.sh, build.sh).
	NS3 string
	// Status, when not nil, receives the run's state: when a point
	// starts, and at every poll of a workload's flows (its Line is the
	// workload's progress line with the run's ETA).
	Status func(progress.State)
	// Capacity is the file of this machine's capacity that lab.rate:
	// auto reads (empty: lab.DefaultCapacityFile); a machine without one
	// is measured first (lab calibrate) and the file written.
	Capacity string
}

// Run runs every point of c and writes the output directory (see the
// pipeline above). It returns the report even when it stops early; the
// error says why it stopped. Invalid points are not an error: the
// report marks them.
func Run(ctx context.Context, c *Config, o RunOptions) (*Report, error) {
	if err := prepareOut(o.Out); err != nil {
		return nil, err
	}
	x, err := newRunner(c, o)
	if err != nil {
		return nil, err
	}
	if err := x.resolveAuto(ctx); err != nil {
		return nil, err
	}
	points := c.Points()
	rep := &Report{Experiment: c.Name, Title: c.Title, Figure: c.Figure, Quick: c.IsQuick, Build: buildinfo.Read(),
		Started: time.Now(), Points: len(points)}
	cfgYAML, err := ConfigYAML(c)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"source.yaml", o.Source}, {"config.yaml", cfgYAML}} {
		if err := os.WriteFile(filepath.Join(o.Out, f.name), f.data, 0o644); err != nil {
			return nil, err
		}
	}
	if err := writeJSONFile(filepath.Join(o.Out, "build.json"), rep.Build); err != nil {
		return nil, err
	}

	var total time.Duration
	for _, p := range points {
		total += c.Estimate(p)
	}
	x.total, x.t0 = total, time.Now()
	fmt.Fprintf(x.progress, "experiment %s: %s, about %v (build %s); output in %s\n",
		c.Name, units.Count(len(points), "point", "points"), roughly(total), rep.Build, o.Out)
	var runErr error
	x.n = len(points)
	for i, p := range points {
		x.start(i, p)
		fmt.Fprintf(x.progress, "[%d/%d] %s: %s%s\n", i+1, len(points), c.Name, p.Label(), x.eta(0))
		x.status(progress.State{Detail: p.ID})
		res := x.run(ctx, p)
		if again, err := x.slower(ctx, p, res); err != nil {
			runErr = err
			break
		} else if again {
			res = x.run(ctx, p)
		}
		rep.Results = append(rep.Results, res)
		if runErr = x.finished(ctx, i, len(points), p, res, rep); runErr != nil {
			break
		}
	}
	if runErr != nil {
		rep.Interrupted, rep.Error = true, runErr.Error()
	}
	rep.Elapsed = time.Since(rep.Started)
	plots, err := Plot(c, rep.Results, filepath.Join(o.Out, "plots"))
	rep.Plots = plots
	if err != nil {
		runErr = errors.Join(runErr, err)
	}
	if err := x.writeProgress(rep); err != nil {
		runErr = errors.Join(runErr, err)
	}
	if err := writeWith(filepath.Join(o.Out, "README.md"), func(w io.Writer) error { return WriteREADME(w, c, rep) }); err != nil {
		runErr = errors.Join(runErr, err)
	}
	fmt.Fprintf(x.progress, "experiment %s: %d of %d points valid, %v; %s\n", c.Name, rep.Valid(), len(points),
		rep.Elapsed.Round(time.Second), filepath.Join(o.Out, "README.md"))
	return rep, runErr
}

// newRunner is a runner of c's points into o.Out, once c's lab name is
// known to be free.
func newRunner(c *Config, o RunOptions) (*runner, error) {
	runRoot := o.RunRoot
	if runRoot == "" {
		runRoot = lab.DefaultRunRoot
	}
	if _, err := os.Stat(filepath.Join(runRoot, c.Lab.Name)); err == nil {
		return nil, fmt.Errorf("lab name %q is in use (%s exists): lab down --name %s, or set lab.name in the experiment", c.Lab.Name, filepath.Join(runRoot, c.Lab.Name), c.Lab.Name)
	}
	for _, s := range c.Contenders {
		if sc, err := ParseContender(s); err == nil && sc.Sim != "" {
			if _, err := ns3.Program(o.NS3); err != nil {
				return nil, fmt.Errorf("scheme %s runs the ns-3 simulator: %w (lab experiment run --ns3 DIR)", s, err)
			}
			if c.NS3 != nil && c.NS3.HostLink == string(ns3.HostLinkPorts) {
				if err := ns3.Reads(o.NS3, ns3.QPMaxRateKey); err != nil {
					return nil, fmt.Errorf("ns3.host_link %s: %w", ns3.HostLinkPorts, err)
				}
			}
			break
		}
	}
	x := &runner{c: c, o: o, runRoot: runRoot, log: o.Log, progress: o.Progress}
	if x.log == nil {
		x.log = slog.New(slog.DiscardHandler)
	}
	if x.progress == nil {
		x.progress = io.Discard
	}
	return x, nil
}

// RunAgain runs points of the run in o.Out again: those named by ids, or,
// with none, every INVALID point and every point a stopped run never
// reached. Each runs on a fresh lab from the run's own config.yaml (with
// o's lab name, when set) as Run runs it; the attempt before's files move
// to runs/<point>.attempt<N>, the new result takes its place, and the
// report records the rerun (Report.Reruns). Then summary.csv,
// results.json, the plots and README.md are written again. It returns the
// report even when it stops early; the error says why it stopped.
func RunAgain(ctx context.Context, o RunOptions, ids []string, labName string) (*Report, error) {
	c, rep, err := readRun(o.Out)
	if err != nil {
		return nil, err
	}
	if labName != "" {
		c.Lab.Name = labName
	}
	points, err := rep.toRerun(c, ids)
	if err != nil {
		return nil, err
	}
	if len(points) == 0 {
		return rep, fmt.Errorf("every point of %s is valid: nothing to run again (name points with --points)", o.Out)
	}
	x, err := newRunner(c, o)
	if err != nil {
		return nil, err
	}
	if err := x.resolveAuto(ctx); err != nil {
		return nil, err
	}
	rep.Points = len(c.Points())
	for _, p := range points {
		x.total += c.Estimate(p)
	}
	x.t0 = time.Now()
	build := buildinfo.Read()
	fmt.Fprintf(x.progress, "experiment %s: %s to run again, about %v (build %s); in %s\n",
		c.Name, units.Count(len(points), "point", "points"), roughly(x.total), build, o.Out)
	var runErr error
	x.n = len(points)
	for i, p := range points {
		x.start(i, p)
		prev := rep.result(p.ID)
		rr := Rerun{Point: p.ID, Attempt: rep.attempts(p.ID) + 1, Build: build, Started: time.Now(), Replaced: replaced(prev)}
		dir := filepath.Join(o.Out, "runs", p.ID)
		if _, err := os.Stat(dir); err == nil {
			rr.Kept = filepath.Join("runs", fmt.Sprintf("%s.attempt%d", p.ID, rr.Attempt-1))
			if err := os.Rename(dir, filepath.Join(o.Out, rr.Kept)); err != nil {
				runErr = err
				break
			}
		}
		fmt.Fprintf(x.progress, "[%d/%d] %s: %s, attempt %d%s\n", i+1, len(points), c.Name, p.Label(), rr.Attempt, x.eta(0))
		x.status(progress.State{Detail: p.ID})
		res := x.run(ctx, p)
		if again, err := x.slower(ctx, p, res); err != nil {
			runErr = err
			break
		} else if again {
			res = x.run(ctx, p)
		}
		rr.Elapsed, rr.Valid = res.Elapsed, res.Valid
		rep.replace(c, res)
		rep.Reruns = append(rep.Reruns, rr)
		if runErr = x.finished(ctx, i, len(points), p, res, rep); runErr != nil {
			break
		}
	}
	if err := x.writeProgress(rep); err != nil {
		runErr = errors.Join(runErr, err)
	}
	if err := rewrite(o.Out, c, rep); err != nil {
		runErr = errors.Join(runErr, err)
	}
	fmt.Fprintf(x.progress, "experiment %s: %d of %d points valid; %s\n", c.Name, rep.Valid(), rep.Points, filepath.Join(o.Out, "README.md"))
	return rep, runErr
}

// finished accounts for point p's result res, the i-th of n to run: its
// line of progress and the run's files. An error (the files, or ctx
// cancelled) stops the run.
func (x *runner) finished(ctx context.Context, i, n int, p Point, res Result, rep *Report) error {
	x.done += x.c.Estimate(p)
	x.target += res.Target
	verdict := "valid"
	if res.Valid {
		x.valid++
	} else {
		x.invalid++
		verdict = "INVALID: " + strings.Join(res.Problems, "; ")
	}
	fmt.Fprintf(x.progress, "[%d/%d] %s: %s in %v\n", i+1, n, p.ID, verdict, res.Elapsed.Round(time.Second))
	if err := x.writeProgress(rep); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("experiment %s interrupted: %w", x.c.Name, ctx.Err())
	}
	return nil
}

// roughly rounds an estimate: to the minute from ten minutes on.
func roughly(d time.Duration) time.Duration {
	if d >= 10*time.Minute {
		return d.Round(time.Minute)
	}
	return d.Round(10 * time.Second)
}

// prepareOut creates the output directory, refusing one that holds
// anything: two runs in one directory would mix their files.
func prepareOut(dir string) error {
	if dir == "" {
		return errors.New("no output directory")
	}
	ents, err := os.ReadDir(dir)
	switch {
	case err == nil && len(ents) > 0:
		return fmt.Errorf("output directory %s is not empty", dir)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return err
	}
	return os.MkdirAll(filepath.Join(dir, "runs"), 0o755)
}

// runner is the state of one Run.
type runner struct {
	c        *Config
	o        RunOptions
	runRoot  string
	log      *slog.Logger
	progress io.Writer

	total, done time.Duration // estimates: all points, those finished
	t0          time.Time
	n, index    int // the points to run, and the running one's index
	point       Point
	pointT0     time.Time
	pointD      float64 // the running point's D (0: not known)
	// valid and invalid count the points finished; target is the
	// target's time they emulated.
	valid, invalid int
	target         time.Duration
}

// start records that point p, the i-th to run, starts.
func (x *runner) start(i int, p Point) {
	x.index, x.point, x.pointT0, x.pointD = i, p, time.Now(), x.dilation(p)
}

// dilation is the D of point p's lab (0: not known).
func (x *runner) dilation(p Point) float64 {
	sc, err := ParseContender(p.Contender)
	if err != nil {
		return 0
	}
	m, err := x.c.PointLabSpec(p, sc, x.runRoot).ResolvedModel()
	if err != nil {
		return 0
	}
	return m.D
}

// left is the estimated wall time of the points left: their estimates
// scaled by how the points so far compared with theirs, less inPoint of
// the running point already spent.
func (x *runner) left(inPoint time.Duration) time.Duration {
	left := x.total - x.done - inPoint // nothing done yet: the estimates
	if r := progress.Remaining(time.Since(x.t0)-inPoint, float64(x.done), float64(x.total)); r >= 0 {
		left = r - inPoint
	}
	return max(0, left)
}

// eta is " (ETA 4m10s)": left, for a progress line.
func (x *runner) eta(inPoint time.Duration) string {
	return fmt.Sprintf(" (ETA %v)", x.left(inPoint).Round(time.Second))
}

// status sends o.Status the run's state, with s's target time (the
// running point's so far), D (0: the point's), health (the running
// point's so far), detail and line: the points done of all, the
// target's time emulated, the ETA and the points' health.
func (x *runner) status(s progress.State) {
	if x.o.Status == nil {
		return
	}
	s.Done, s.Total, s.Unit = x.index, x.n, "points"
	s.Target += x.target
	if s.D == 0 {
		s.D = x.pointD
	}
	s.ETA = x.left(time.Since(x.pointT0))
	health := fmt.Sprintf("%d valid", x.valid)
	if x.invalid > 0 {
		health += fmt.Sprintf(", %d INVALID", x.invalid)
	}
	if s.Health != "" {
		health += "; this point's " + s.Health
	}
	s.Health = health
	x.o.Status(s)
}

// workloadStatus sends o.Status the state of the running point, a
// workload at pr.
func (x *runner) workloadStatus(pr lab.WorkloadProgress) {
	ws := pr.State()
	x.status(progress.State{Target: ws.Target, D: ws.D, Health: ws.Health,
		Detail: fmt.Sprintf("%s: %d/%d flows, %s", x.point.ID, ws.Done, ws.Total, ws.Detail),
		Line:   fmt.Sprintf("  %s%s", pr, x.eta(time.Since(x.pointT0)))})
}

// writeProgress rewrites summary.csv, bins.csv and results.json.
func (x *runner) writeProgress(rep *Report) error { return writeTables(x.o.Out, x.c, rep) }

// run runs point p and returns its result; a failure is an invalid
// result, not an error.
func (x *runner) run(ctx context.Context, p Point) Result {
	res := Result{Point: p, Valid: true}
	dir := filepath.Join(x.o.Out, "runs", p.ID)
	t0 := time.Now()
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		switch x.c.Kind {
		case KindWorkload:
			err = x.workload(ctx, p, dir, &res)
		case KindLoop:
			err = x.loop(ctx, p, dir, &res)
		case KindHoL:
			err = x.hol(ctx, p, dir, &res)
		case KindConformance:
			err = x.conformance(ctx, p, dir, &res)
		}
	}
	res.Elapsed = time.Since(t0)
	if err != nil {
		res.invalidate("run failed: " + err.Error())
	}
	if res.Dilation == 0 {
		res.Dilation = x.dilation(p)
	}
	res.targetUnits()
	res.cost()
	if err := writeJSONFile(filepath.Join(dir, "result.json"), res); err != nil {
		res.invalidate("result not written: " + err.Error())
	}
	return res
}

// spec is the lab of a point under scheme sc, and for a workload CDF
// cdf (else "").
func (x *runner) spec(sc Contender, cdf string) lab.Spec {
	s := x.c.ContenderLabSpec(sc, cdf, x.runRoot)
	s.BinDir = x.o.BinDir
	return s
}

// workload runs a workload point on a lab of its own.
func (x *runner) workload(ctx context.Context, p Point, dir string, res *Result) (err error) {
	wc, err := x.c.PointWorkload(p)
	if err != nil {
		return err
	}
	flows, err := workload.Generate(wc)
	if err != nil {
		return err
	}
	res.Schedule = ScheduleDigest(flows)
	sc, err := ParseContender(p.Contender)
	if err != nil {
		return err
	}
	if sc.Sim != "" {
		return x.simulate(ctx, p, sc, dir, res)
	}
	spec := x.c.PointLabSpec(p, sc, x.runRoot)
	spec.BinDir = x.o.BinDir
	routing := ""
	if sc.Routing != "" {
		routing = ", routing " + sc.Routing
	}
	over, rate := wc.Duration.String()+" of lab time", x.c.RateText(p.CDF)
	if m, merr := spec.ResolvedModel(); merr == nil {
		over = m.LabTimeText(wc.Duration)
		if x.c.autoD(p) > 0 {
			r := units.Rate(m.LinkRateBps()).String()
			if len(spec.Rates) > 0 {
				r = units.Rates(spec.Rates).String()
			}
			rate = fmt.Sprintf("%s (D = %g, rate auto)", r, m.D)
		}
	}
	fmt.Fprintf(x.progress, "  %s over %s; lab %s up (%s links in the lab, fc %s%s, transport %s)\n", units.Count(len(flows), "flow", "flows"), over, spec.Name, rate, sc.FC, routing, sc.Mode)
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
	w, f := x.c.Workload, x.c.timeScale(p)
	o := lab.WorkloadOptions{
		Config: wc, Mode: sc.Mode, NoDCQCN: w.NoDCQCN || sc.NoCC, MTU: w.MTU, Drain: scaled(w.Drain.D(), f), Interval: scaled(w.Interval.D(), f),
		Limits:   x.c.Health.Limits(),
		Progress: x.workloadStatus,
	}
	rep, err := lab.RunWorkload(ctx, x.runRoot, spec.Name, o)
	if err != nil {
		return err
	}
	if err := writeWorkloadFiles(dir, rep); err != nil {
		return err
	}
	res.WorkloadMetrics(rep, flows)
	if !rep.Health.Valid {
		res.invalidate(rep.Health.Problems...)
	}
	if p := sc.FabricProblems(rep.Fabric); len(p) > 0 {
		res.invalidate(p...)
	}
	// The lab ran the schedule generated here: the same flows, in order.
	same := len(rep.Records) == len(flows)
	for i := 0; same && i < len(flows); i++ {
		r, f := &rep.Records[i], &flows[i]
		same = r.Src == f.Src && r.Dst == f.Dst && r.Size == f.Size && r.Kind == f.Kind
	}
	if !same {
		res.invalidate("the lab ran another schedule than the experiment's")
	}
	return nil
}

// loop runs the loop bench for one scheme and scenario (it brings its
// lab up and down).
func (x *runner) loop(ctx context.Context, p Point, dir string, res *Result) error {
	spec := x.spec(Contender{FC: p.Contender}, "")
	t := loopScenarios[p.Scenario]
	spec.N, spec.K = t.N, t.K
	if err := writeJSONFile(filepath.Join(dir, "spec.json"), spec); err != nil {
		return err
	}
	l := x.c.Loop
	rs, err := bench.Loop(ctx, bench.LoopOptions{Lab: spec, FC: []string{p.Contender}, Scenario: p.Scenario, Warmup: l.Warmup.D(), Settle: l.Settle.D(),
		Measure: l.Measure.D(), Interval: l.Interval.D(), Transport: l.Transport, Log: x.log})
	if err != nil {
		return err
	}
	if len(rs) != 1 {
		return fmt.Errorf("loop: %d results, want 1", len(rs))
	}
	r := &rs[0]
	r.Health = Rejudge(r.Health, x.c.Health.Limits())
	if err := writeJSONFile(filepath.Join(dir, "report.json"), r); err != nil {
		return err
	}
	res.benchTarget(spec, r.Health)
	res.LoopMetrics(r)
	if !r.Health.Valid {
		res.invalidate(r.Health.Problems...)
	}
	return nil
}

// hol runs the hol bench for one scheme (it brings its lab up and down).
func (x *runner) hol(ctx context.Context, p Point, dir string, res *Result) error {
	spec := x.spec(Contender{FC: p.Contender}, "")
	spec.N, spec.K = 4, 1
	if err := writeJSONFile(filepath.Join(dir, "spec.json"), spec); err != nil {
		return err
	}
	h := x.c.HoL
	rs, err := bench.HoL(ctx, bench.HoLOptions{Lab: spec, FC: []string{p.Contender}, Phase: h.Phase.D(), FCTFlows: h.GroupFlows, FCTBytes: int64(h.GroupSize),
		Interval: h.Interval.D(), Log: x.log})
	if err != nil {
		return err
	}
	if len(rs) != 1 {
		return fmt.Errorf("hol: %d results, want 1", len(rs))
	}
	r := &rs[0]
	r.Health = Rejudge(r.Health, x.c.Health.Limits())
	if err := writeJSONFile(filepath.Join(dir, "report.json"), r); err != nil {
		return err
	}
	res.benchTarget(spec, r.Health)
	nonneg := func(v float64) float64 { // the bench's -1: not measured
		if v < 0 {
			return math.NaN()
		}
		return v
	}
	res.add("victim_alone_mbps", r.VictimAloneBps/1e6)
	res.add("victim_congested_mbps", r.VictimBps/1e6)
	res.add("victim_ratio", r.Ratio)
	res.add("congested_flow_mbps", r.CongestedBps/1e6)
	res.add("victim_paused_ms", nonneg(r.VictimPausedMs))
	res.add("group_fct_alone_ms", nonneg(r.FCTAloneMs))
	res.add("group_fct_congested_ms", nonneg(r.FCTMs))
	res.add("group_fct_ratio", nonneg(r.FCTRatio))
	res.add("drops", float64(r.Drops))
	res.add("missing", float64(r.Missing))
	res.healthMetrics(r.Health)
	if len(r.SeriesT) > 0 {
		res.Series = map[string][][2]float64{"victim_mbps": timeSeries(r.SeriesT, r.VictimSeries)}
		res.add("incast_start_s", r.IncastT)
	}
	if !r.Health.Valid {
		res.invalidate(r.Health.Problems...)
	}
	return nil
}

// writeWorkloadFiles writes a workload point's files in dir: its flows'
// records, its queue series, its report as text and as JSON.
func writeWorkloadFiles(dir string, rep *lab.WorkloadReport) error {
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"records.csv", func(w io.Writer) error { return workload.WriteCSV(w, rep.Records) }},
		{"queues.csv", rep.WriteQueuesCSV},
		{"report.txt", rep.WriteText},
	} {
		if err := writeWith(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	return writeJSONFile(filepath.Join(dir, "report.json"), rep)
}

// resolveAuto chooses the D of the points of an experiment with rate:
// auto (Config.ResolveAuto), from this machine's capacity: the stored one
// (o.Capacity), or one measured now and stored when there is none.
func (x *runner) resolveAuto(ctx context.Context) error {
	c := x.c
	if !c.Lab.Auto {
		return nil
	}
	cp, err := lab.LoadCapacity(x.o.Capacity)
	if errors.Is(err, lab.ErrNoCapacity) {
		fmt.Fprintf(x.progress, "rate auto: %v; measuring it first (lab calibrate, about %v)\n", err, roughly(lab.CalibrateDuration*2))
		cp, err = lab.Calibrate(ctx, lab.CalibrateOptions{Name: c.Lab.Name, RunRoot: x.runRoot, BinDir: x.o.BinDir, Log: x.log})
		if err == nil && !cp.Valid {
			err = fmt.Errorf("lab calibrate: the reference run was INVALID (%s): run the experiment on a quieter machine, or give lab.rate", strings.Join(cp.Problems, "; "))
		}
		if err == nil {
			err = cp.Save(x.o.Capacity)
		}
	}
	if err != nil {
		return fmt.Errorf("rate auto: %w", err)
	}
	if err := c.ResolveAuto(cp); err != nil {
		return err
	}
	count := map[float64]int{}
	var ds []float64
	for _, p := range c.Points() {
		if d := c.autoD(p); d > 0 {
			if count[d] == 0 {
				ds = append(ds, d)
			}
			count[d]++
		}
	}
	slices.Sort(ds)
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("D = %g for %s", d, units.Count(count[d], "point", "points")))
	}
	fmt.Fprintf(x.progress, "rate auto: %s (lab calibrate of %s: %v of a worker's CPU per frame-hop)\n", strings.Join(parts, ", "),
		cp.Measured.Format("2006-01-02"), cp.WorkerPerHop.Round(10*time.Nanosecond))
	return nil
}

// slower is whether point p, whose D rate: auto chose, runs again at 2x
// its D because res fell behind at it (and only that): the attempt's
// files move to runs/<point>.d<D>, the choice says so, and config.yaml
// is written again.
func (x *runner) slower(ctx context.Context, p Point, res Result) (bool, error) {
	c := x.c
	d := c.autoD(p)
	why, late := lab.Lateness(res.Problems)
	if sc, err := ParseContender(p.Contender); err != nil || sc.D != 0 || sc.Sim != "" {
		return false, nil // its own D; the simulator is never late
	}
	if !late || d == 0 || 2*d > scale.MaxDilation || ctx.Err() != nil {
		return false, nil
	}
	dir := filepath.Join(x.o.Out, "runs", p.ID)
	to := fmt.Sprintf("%s.d%g", dir, d)
	if err := os.Rename(dir, to); err != nil {
		return false, err
	}
	a := c.AutoD[p.ID]
	base := a.Base
	if base == 0 {
		base = a.D
	}
	c.AutoD[p.ID] = AutoChoice{D: 2 * d, Base: base, Why: fmt.Sprintf("%s; it fell behind at D = %g (%s; kept in runs/%s) and ran the same flows again at twice that", a.Why, d, why, filepath.Base(to))}
	fmt.Fprintf(x.progress, "  fell behind at D = %g (%s): running it again at D = %g\n", d, why, 2*d)
	cfg, err := ConfigYAML(c)
	if err != nil {
		return false, err
	}
	return true, os.WriteFile(filepath.Join(x.o.Out, "config.yaml"), cfg, 0o644)
}
