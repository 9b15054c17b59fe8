package lab

// A machine's capacity (lab calibrate) and the dilation it allows: the
// smallest D at which a lab's worker carries a workload with the load
// the invariance study found faithful (--rate auto).

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
)

// DefaultCapacityFile is where lab calibrate stores the machine's
// capacity and --rate auto reads it.
const DefaultCapacityFile = "/var/lib/bcfab/capacity.json"

// The reference point lab calibrate runs: the capacity and jitter
// benchmarks' workload (docs/BENCHMARKS.md), PortFC with ECN on
// BCube(4,1), WebSearch at load 0.5, at 100 Mb/s (D = 1,000 of the
// papers' network) for 20 s of lab time.
const (
	CalibrateN, CalibrateK = 4, 1
	CalibrateFC            = "portfc"
	CalibrateCDF           = "websearch"
	CalibrateLoad          = 0.5
	CalibrateRate          = 100_000_000
	CalibrateDuration      = 20 * time.Second
)

// Capacity is what lab calibrate measured of this machine on the
// reference point: how much of a worker's CPU a frame-hop costs, and so
// how many frame-hops a worker carries at scale.MaxWorkerLoad.
type Capacity struct {
	Machine  Machine   `json:"machine"`
	Measured time.Time `json:"measured"`
	Build    string    `json:"build,omitempty"`
	// The reference run: its lab rate and D, its health, the frame-hops
	// its ports sent and the target time it covered.
	RateBps       uint64        `json:"rate_bps"`
	D             float64       `json:"dilation"`
	Valid         bool          `json:"valid"`
	Problems      []string      `json:"problems,omitempty"`
	FrameHops     uint64        `json:"frame_hops"`
	Wall          time.Duration `json:"wall_ns"`
	TargetElapsed time.Duration `json:"target_elapsed_ns"`
	// DataFrames is the schedule's data frames (each flow's size over
	// the MTU, rounded up) per ms of the target: what a point's
	// schedule is compared by.
	DataFramesPerTargetMs float64 `json:"data_frames_per_target_ms"`
	// WorkerCPU is the worker threads' CPU time over the run (user and
	// system, /proc), WorkerPerHop that per frame-hop, and WorkerLoad
	// the busiest worker's share of one CPU.
	WorkerCPU    time.Duration `json:"worker_cpu_ns"`
	WorkerPerHop time.Duration `json:"worker_per_hop_ns"`
	WorkerLoad   float64       `json:"worker_load"`
	// HopsPerTargetMs is the reference point's frame-hops per ms of the
	// target.
	HopsPerTargetMs float64 `json:"hops_per_target_ms"`
	// The emulator's own latency: per hop on the idle lab (lab up's
	// delay-line calibration), the run's p99 one-hop RTT error against
	// the model's, and its p99 flow-start lag in the target's time. A
	// worker replays what it was late for in the model's order
	// (up to twice its slack back), so within that the latency per hop
	// is 0.
	IdlePerHop  time.Duration `json:"idle_per_hop_ns"`
	RTTErrorP99 float64       `json:"rtt_error_p99"`
	StartLagP99 time.Duration `json:"start_lag_p99_target_ns"`
}

// Machine names the machine a capacity was measured on: a capacity
// holds for it alone.
type Machine struct {
	Host   string `json:"host"`
	CPU    string `json:"cpu"`
	CPUs   int    `json:"cpus"`
	Kernel string `json:"kernel"`
}

// ThisMachine is the machine the process runs on.
func ThisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU()}
	m.Host, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// ErrNoCapacity is LoadCapacity's error when the machine was never
// calibrated (or its capacity is another machine's).
var ErrNoCapacity = errors.New("this machine's capacity was not measured (lab calibrate)")

// LoadCapacity reads the capacity stored at file (DefaultCapacityFile
// when empty): ErrNoCapacity when there is none, or it is another
// machine's.
func LoadCapacity(file string) (Capacity, error) {
	if file == "" {
		file = DefaultCapacityFile
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return Capacity{}, fmt.Errorf("%s: %w", file, ErrNoCapacity)
	}
	if err != nil {
		return Capacity{}, fmt.Errorf("capacity: %w", err)
	}
	var c Capacity
	if err := json.Unmarshal(b, &c); err != nil {
		return Capacity{}, fmt.Errorf("capacity %s: %w", file, err)
	}
	if err := c.check(); err != nil {
		return Capacity{}, fmt.Errorf("capacity %s: %w", file, err)
	}
	if m := ThisMachine(); c.Machine != m {
		return Capacity{}, fmt.Errorf("%s holds %s's (%s, %d CPUs, kernel %s): %w", file, c.Machine.Host, c.Machine.CPU, c.Machine.CPUs, c.Machine.Kernel, ErrNoCapacity)
	}
	return c, nil
}

// Save writes c to file (DefaultCapacityFile when empty), making its
// directory.
func (c Capacity) Save(file string) error {
	if file == "" {
		file = DefaultCapacityFile
	}
	if err := c.check(); err != nil {
		return fmt.Errorf("capacity: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("capacity: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("capacity: %w", err)
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("capacity: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return errors.Join(fmt.Errorf("capacity: %w", err), os.Remove(tmp))
	}
	return nil
}

// check is whether c can choose a dilation: a valid reference run that
// carried frames and used its worker.
func (c Capacity) check() error {
	switch {
	case !c.Valid:
		return fmt.Errorf("the reference run was INVALID (%s): measure again on a quieter machine", strings.Join(c.Problems, "; "))
	case c.FrameHops == 0 || c.WorkerPerHop <= 0 || c.HopsPerTargetMs <= 0 || c.DataFramesPerTargetMs <= 0:
		return errors.New("the reference run measured no frame-hops or no worker CPU")
	}
	return nil
}

// FaithfulD is the smallest dilation at which this machine runs a
// workload of dataFramesPerTargetMs faithfully, not rounded
// (AutoDilation rounds it), and which of the two bounds set it:
//   - load: a worker carries the workload's frame-hops (the reference
//     point's, scaled by the schedules' data frames) at
//     scale.MaxWorkerLoad of a CPU;
//   - jitter: the emulator's own p99 one-hop delay beyond the model's,
//     as the reference run measured it in lab time, is at most
//     scale.MaxRTTErrorP99 of the model's one-hop RTT;
//   - invariance: never below scale.MinAutoD, the smallest D the
//     invariance study held at.
func (c Capacity) FaithfulD(dataFramesPerTargetMs float64) (d float64, bound string) {
	load := c.hops(dataFramesPerTargetMs) * float64(c.WorkerPerHop) / (scale.MaxWorkerLoad * float64(time.Millisecond))
	jitter := max(c.RTTErrorP99, 0) * c.D / scale.MaxRTTErrorP99
	switch {
	case scale.MinAutoD >= max(load, jitter):
		return scale.MinAutoD, "invariance"
	case jitter > load:
		return jitter, "jitter"
	}
	return load, "load"
}

// hops is the frame-hops per ms of the target of a workload of
// dataFramesPerTargetMs: the reference point's, scaled by the schedules'
// data frames.
func (c Capacity) hops(dataFramesPerTargetMs float64) float64 {
	return c.HopsPerTargetMs * dataFramesPerTargetMs / c.DataFramesPerTargetMs
}

// AutoDilation is the dilation --rate auto runs a workload of
// dataFramesPerTargetMs at: FaithfulD rounded up to a round value (1,
// 1.25, 2, 2.5, 4 or 5 times a power of ten), at most
// scale.MaxDilation; why says how it was chosen, in one sentence.
func (c Capacity) AutoDilation(dataFramesPerTargetMs float64) (d float64, why string) {
	f, bound := c.FaithfulD(dataFramesPerTargetMs)
	d = RoundDilation(f)
	hops := c.hops(dataFramesPerTargetMs)
	load := hops * float64(c.WorkerPerHop) / (d * float64(time.Millisecond))
	why = fmt.Sprintf("D = %s: %.0f data frames per ms of the target, about %.0f frame-hops, cost a worker %.0f%% of a CPU at D = %s (%v a frame-hop, lab calibrate of %s; at most %.0f%%)",
		formatD(d), dataFramesPerTargetMs, hops, 100*load, formatD(d), c.WorkerPerHop.Round(10*time.Nanosecond), c.Measured.Format("2006-01-02"), 100*scale.MaxWorkerLoad)
	switch bound {
	case "jitter":
		why += fmt.Sprintf("; the emulator's p99 one-hop jitter (%+.0f%% of the model's RTT at D = %s) sets the floor", 100*c.RTTErrorP99, formatD(c.D))
	case "invariance":
		why += fmt.Sprintf("; D = %s is the smallest the invariance study held at, the floor", formatD(scale.MinAutoD))
	}
	return d, why
}

// RoundDilation rounds d up to 1, 1.25, 2, 2.5, 4 or 5 times a power of
// ten: dilations whose rates are round (100 Gb/s / 1,250 = 80 Mb/s), at
// most scale.MaxDilation.
func RoundDilation(d float64) float64 {
	if d <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(d)))
	for _, m := range []float64{1, 1.25, 2, 2.5, 4, 5, 10} {
		if v := m * p; v >= d*(1-1e-9) {
			return min(v, scale.MaxDilation)
		}
	}
	return scale.MaxDilation
}

// DataFramesPerTargetMs is a schedule's data frames per ms of the
// target: every flow's size over mtu, rounded up, over the window its
// flows start in (window, lab time) at dilation d.
func DataFramesPerTargetMs(flows []workload.Flow, mtu int, window time.Duration, d float64) float64 {
	if window <= 0 || d <= 0 || mtu <= 0 {
		return 0
	}
	var frames int64
	for _, f := range flows {
		frames += (f.Size + int64(mtu) - 1) / int64(mtu)
	}
	targetMs := float64(window) / d / float64(time.Millisecond)
	return float64(frames) / targetMs
}

func formatD(d float64) string {
	if d == math.Trunc(d) {
		return fmt.Sprintf("%.0f", d)
	}
	return fmt.Sprintf("%g", d)
}

// ResolveAutoRate is s with the D --rate auto chooses (s.RateAuto) and
// the reason in s.RateChoice: the smallest at which this machine's
// capacity (file; DefaultCapacityFile when empty) carries WebSearch at
// load 0.5 of the fabric's hosts faithfully. s itself when it asks for no
// choice.
func ResolveAutoRate(s Spec, file string) (Spec, error) {
	if !s.RateAuto {
		return s, nil
	}
	if len(s.Rates) > 0 || s.Dilation != 0 {
		return s, errors.New("rate auto: not with rates or a dilation (auto chooses the D)")
	}
	cp, err := LoadCapacity(file)
	if err != nil {
		return s, fmt.Errorf("rate auto: %w", err)
	}
	prov := s
	prov.RateAuto, prov.RateBps = false, CalibrateRate
	cdf, err := workload.BuiltinCDF(CalibrateCDF)
	if err != nil {
		return s, fmt.Errorf("rate auto: %w", err)
	}
	const window = 10 * time.Second
	_, flows, err := SpecSchedule(prov, workload.Config{Load: CalibrateLoad, CDF: cdf, Duration: window, Seed: 1})
	if err != nil {
		return s, fmt.Errorf("rate auto: %w", err)
	}
	m, err := prov.ResolvedModel()
	if err != nil {
		return s, fmt.Errorf("rate auto: %w", err)
	}
	d, why := cp.AutoDilation(DataFramesPerTargetMs(flows, api.DefaultRDMAMTU, window, m.D))
	s.RateAuto, s.RateBps, s.Dilation = false, 0, d
	s.RateChoice = "rate auto for WebSearch at load 0.5: " + why
	return s, nil
}
