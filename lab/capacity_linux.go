package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/bcfab/bcfab/internal/buildinfo"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/node/api"
)

// CalibrateOptions are lab calibrate's: the reference point's lab (its
// name, run root and binaries) and how long it runs (0: the defaults).
type CalibrateOptions struct {
	Name     string
	RunRoot  string
	BinDir   string
	RateBps  uint64        // 0: CalibrateRate
	Duration time.Duration // 0: CalibrateDuration
	Seed     uint64        // 0: 1
	Log      *slog.Logger
	Progress func(WorkloadProgress)
}

// Calibrate measures this machine's capacity on the reference point: it
// brings the reference lab up, runs the workload, reads how much CPU its
// workers spent per frame-hop, and takes the lab down. It fails when a
// lab of that name exists; a run that was INVALID gives a Capacity that
// says so (and that Save refuses).
func Calibrate(ctx context.Context, o CalibrateOptions) (c Capacity, err error) {
	if o.Name == "" {
		o.Name = "calib"
	}
	if o.RateBps == 0 {
		o.RateBps = CalibrateRate
	}
	if o.Duration == 0 {
		o.Duration = CalibrateDuration
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	spec := Spec{Name: o.Name, N: CalibrateN, K: CalibrateK, RateBps: o.RateBps, FC: CalibrateFC, ECN: true, RunRoot: o.RunRoot, BinDir: o.BinDir}
	st, err := Up(ctx, spec, o.Log)
	if err != nil {
		return c, fmt.Errorf("calibrate: lab up: %w", err)
	}
	defer func() {
		if derr := Down(o.RunRoot, o.Name, o.Log); derr != nil {
			err = errors.Join(err, fmt.Errorf("calibrate: lab down: %w", derr))
		}
	}()
	cdf, err := workload.BuiltinCDF(CalibrateCDF)
	if err != nil {
		return c, fmt.Errorf("calibrate: %w", err)
	}
	wc := workload.Config{Load: CalibrateLoad, CDF: cdf, Duration: o.Duration, Seed: o.Seed}
	before, err := workerCPU(ctx, st)
	if err != nil {
		return c, fmt.Errorf("calibrate: %w", err)
	}
	t0 := time.Now()
	rep, err := RunWorkload(ctx, o.RunRoot, o.Name, WorkloadOptions{Config: wc, Progress: o.Progress})
	if err != nil {
		return c, fmt.Errorf("calibrate: %w", err)
	}
	wall := time.Since(t0)
	after, err := workerCPU(ctx, st)
	if err != nil {
		return c, fmt.Errorf("calibrate: %w", err)
	}
	h := rep.Health
	c = Capacity{
		Machine: ThisMachine(), Measured: time.Now().UTC().Truncate(time.Second), Build: buildinfo.Read().Revision,
		RateBps: o.RateBps, D: rep.Model.D, Valid: h.Valid, Problems: h.Problems,
		FrameHops: h.FrameHops, Wall: wall, TargetElapsed: rep.TargetElapsed,
	}
	if st.Calibration != nil {
		c.IdlePerHop = st.Calibration.PerHop
	}
	if h.Fidelity != nil {
		c.RTTErrorP99 = h.Fidelity.ErrorP99
	}
	c.StartLagP99 = time.Duration(float64(rep.StartLag.P99) / rep.Model.D)
	var busiest time.Duration
	for name, b := range after {
		d := b - before[name]
		c.WorkerCPU += d
		busiest = max(busiest, d)
	}
	if c.FrameHops > 0 {
		c.WorkerPerHop = c.WorkerCPU / time.Duration(c.FrameHops)
	}
	c.WorkerLoad = float64(busiest) / float64(wall)
	if ms := float64(rep.TargetElapsed) / float64(time.Millisecond); ms > 0 {
		c.HopsPerTargetMs = float64(c.FrameHops) / ms
	}
	_, flows, err := SpecSchedule(st.Spec, wc)
	if err != nil {
		return c, fmt.Errorf("calibrate: %w", err)
	}
	c.DataFramesPerTargetMs = DataFramesPerTargetMs(flows, api.DefaultRDMAMTU, o.Duration, rep.Model.D)
	return c, nil
}

// workerCPU is the CPU time (user and system) of each worker's engine
// thread of the lab of st, by worker name.
func workerCPU(ctx context.Context, st *State) (map[string]time.Duration, error) {
	out := make(map[string]time.Duration, len(st.Workers))
	for _, w := range st.Workers {
		r, err := FetchWorker(ctx, w.Control)
		if err != nil {
			return nil, fmt.Errorf("worker %s: %w", w.Name, err)
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(r.Pid) + "/task/" + strconv.Itoa(r.Tid) + "/stat")
		if err != nil {
			return nil, fmt.Errorf("worker %s: %w", w.Name, err)
		}
		cpu, err := parseProcCPU(b)
		if err != nil {
			return nil, fmt.Errorf("worker %s thread %d: %w", w.Name, r.Tid, err)
		}
		out[w.Name] = cpu
	}
	if len(out) == 0 {
		return nil, errors.New("the lab has no worker (a daemon per node): calibrate measures workers")
	}
	return out, nil
}
