package lab

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
)

// capacityOf is a valid capacity of this machine: the reference point
// measured at D = 1,000 with the given worker CPU per frame-hop.
func capacityOf(perHop time.Duration) Capacity {
	return Capacity{
		Machine: ThisMachine(), Measured: time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC),
		RateBps: CalibrateRate, D: 1000, Valid: true, FrameHops: 8_000_000,
		Wall: 29 * time.Second, TargetElapsed: 29 * time.Millisecond,
		DataFramesPerTargetMs: 95_000, WorkerPerHop: perHop, HopsPerTargetMs: 280_000,
		RTTErrorP99: 0.09,
	}
}

// Dilations round up to 1, 1.25, 2, 2.5, 4 and 5 times a power of ten,
// exact ones staying, and stop at scale.MaxDilation.
func TestRoundDilation(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{0.5, 1}, {1, 1}, {1.1, 1.25}, {3, 4}, {803, 1000}, {1000, 1000}, {1000.0000001, 1000},
		{1001, 1250}, {1300, 2000}, {2100, 2500}, {4500, 5000}, {6000, 10000}, {2e5, scale.MaxDilation},
	} {
		if got := RoundDilation(c.in); got != c.want {
			t.Errorf("RoundDilation(%g) = %g, want %g", c.in, got, c.want)
		}
	}
}

// The D chosen is the smallest round one at which the workload's
// frame-hops cost a worker at most scale.MaxWorkerLoad of a CPU: it
// grows with the workload's frames and the CPU a frame-hop costs, and
// is never below scale.MinAutoD, the invariance study's floor.
func TestAutoDilation(t *testing.T) {
	c := capacityOf(2140 * time.Nanosecond)
	ref := c.DataFramesPerTargetMs
	want := 1.4 * c.HopsPerTargetMs * 2140 / (scale.MaxWorkerLoad * 1e6)
	if f, bound := c.FaithfulD(1.4 * ref); math.Abs(f-want) > 1e-6 || bound != "load" {
		t.Fatalf("FaithfulD(1.4 x reference) = %g (%s), want %g (load)", f, bound, want)
	}
	if f, bound := c.FaithfulD(ref); f != scale.MinAutoD || bound != "invariance" {
		t.Fatalf("FaithfulD(reference) = %g (%s), want %g (invariance): its load alone gives 922", f, bound, scale.MinAutoD)
	}
	for _, x := range []struct {
		frames float64
		perHop time.Duration
		want   float64
		floor  bool // the invariance study's floor sets it
	}{
		{ref, 2140 * time.Nanosecond, 1000, true},        // 922: the reference point stays at 1,000
		{1.4 * ref, 2140 * time.Nanosecond, 2000, false}, // 1,291
		{0.5 * ref, 2140 * time.Nanosecond, 1000, true},  // 461: not below the floor
		{ref, 1070 * time.Nanosecond, 1000, true},        // half the CPU a frame-hop: 461, the floor
		{ref, 4280 * time.Nanosecond, 2000, false},       // 1,844
		{2.2 * ref, 1070 * time.Nanosecond, 1250, false}, // 1,014
	} {
		c := capacityOf(x.perHop)
		d, why := c.AutoDilation(x.frames)
		if d != x.want {
			t.Errorf("%.0f frames per target ms at %v a frame-hop: D = %g, want %g", x.frames, x.perHop, d, x.want)
		}
		if !strings.HasPrefix(why, "D = ") || !strings.Contains(why, "lab calibrate of 2026-11-29") || strings.Contains(why, "invariance study") != x.floor {
			t.Errorf("why %q (the floor named: want %v)", why, x.floor)
		}
	}
	// A jittery machine: its p99 one-hop delay beyond the model's, 3 x
	// the model's RTT at D = 1,000, needs D = 1,500 to stay within
	// scale.MaxRTTErrorP99 (2): the floor.
	c.RTTErrorP99 = 3
	if f, bound := c.FaithfulD(0.1 * ref); bound != "jitter" || math.Abs(f-1500) > 1e-6 {
		t.Errorf("FaithfulD with jitter = %g (%s), want 1500 (jitter)", f, bound)
	}
	if d, why := c.AutoDilation(0.1 * ref); d != 2000 || !strings.Contains(why, "jitter") {
		t.Errorf("AutoDilation with jitter = %g (%q), want 2000, the jitter named", d, why)
	}
}

// A capacity saved is read back on this machine; none stored, another
// machine's or an invalid one is ErrNoCapacity or an error, and an
// invalid one is never written.
func TestCapacityFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sub", "capacity.json")
	if _, err := LoadCapacity(file); !errors.Is(err, ErrNoCapacity) {
		t.Fatalf("no file: %v, want ErrNoCapacity", err)
	}
	c := capacityOf(2 * time.Microsecond)
	if err := c.Save(file); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCapacity(file)
	if err != nil {
		t.Fatal(err)
	}
	if got.WorkerPerHop != c.WorkerPerHop || got.HopsPerTargetMs != c.HopsPerTargetMs || !got.Measured.Equal(c.Measured) {
		t.Errorf("read back %+v, saved %+v", got, c)
	}
	other := c
	other.Machine.Host += "-other"
	if err := other.Save(file); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCapacity(file); !errors.Is(err, ErrNoCapacity) || !strings.Contains(err.Error(), "-other") {
		t.Errorf("another machine's: %v, want ErrNoCapacity naming it", err)
	}
	bad := c
	bad.Valid, bad.Problems = false, []string{"s0.0/p1 was not scheduled in time"}
	if err := bad.Save(file); err == nil || !strings.Contains(err.Error(), "INVALID") {
		t.Errorf("an invalid capacity saved: %v", err)
	}
	if err := os.WriteFile(file, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCapacity(file); err == nil || errors.Is(err, ErrNoCapacity) {
		t.Errorf("a broken file: %v, want an error of its own", err)
	}
}

// A schedule's data frames: each flow's size over the MTU, rounded up,
// per ms of the target.
func TestDataFramesPerTargetMs(t *testing.T) {
	flows := []workload.Flow{{Size: 1}, {Size: 1024}, {Size: 1025}, {Size: 10 * 1024}}
	// 1 + 1 + 2 + 10 frames over 2 s of lab time at D = 1,000: 2 ms.
	if got := DataFramesPerTargetMs(flows, 1024, 2*time.Second, 1000); got != 7 {
		t.Errorf("got %g, want 7", got)
	}
	if got := DataFramesPerTargetMs(flows, 1024, 0, 1000); got != 0 {
		t.Errorf("no window: %g, want 0", got)
	}
}

// lab up --rate auto: the knob reads auto, a lab file writes it back,
// and ResolveAutoRate gives the lab the D the capacity chooses for
// WebSearch at 0.5 on it, saying why; without a capacity it fails.
func TestRateAutoKnob(t *testing.T) {
	var s Spec
	if err := (Values{"rate": "auto"}).Apply(&s); err != nil {
		t.Fatal(err)
	}
	if !s.RateAuto || s.RateBps != 0 {
		t.Fatalf("rate auto: RateAuto %v, RateBps %d", s.RateAuto, s.RateBps)
	}
	if v := ValuesOf(s)["rate"]; v != "auto" {
		t.Errorf("a lab file writes rate %q, want auto", v)
	}
	s.Name, s.N, s.K, s.FC, s.ECN = "auto", 4, 1, "portfc", true
	file := filepath.Join(t.TempDir(), "capacity.json")
	if _, err := ResolveAutoRate(s, file); !errors.Is(err, ErrNoCapacity) {
		t.Fatalf("no capacity: %v, want ErrNoCapacity", err)
	}
	if err := capacityOf(2140 * time.Nanosecond).Save(file); err != nil {
		t.Fatal(err)
	}
	r, err := ResolveAutoRate(s, file)
	if err != nil {
		t.Fatal(err)
	}
	if r.RateAuto || r.Dilation != 1000 || !strings.Contains(r.RateChoice, "WebSearch at load 0.5") {
		t.Errorf("resolved: auto %v, D %g, choice %q; want D = 1000 and why", r.RateAuto, r.Dilation, r.RateChoice)
	}
	if m, err := r.ResolvedModel(); err != nil || m.LinkRateBps() != 100_000_000 {
		t.Errorf("the lab's rate: %v, %v; want 100M", m.LinkRateBps(), err)
	}
	s.Rates = []uint64{160e6, 100e6}
	if _, err := ResolveAutoRate(s, file); err == nil {
		t.Error("rate auto with per-level rates: no error")
	}
}
