package fluid

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/wire/transport"
)

// papersLoop is τ* of n senders on one switch of the papers' network:
// four links of 1 µs, data out and CNPs back.
const papersLoop = 4 * time.Microsecond

// papers is the model of n flows of the papers' network (the
// repository's defaults) through one switch.
func papers(n int) DCQCN { return FromTarget(scale.Papers(), n, papersLoop) }

// TestOverheads: the packet's overheads repeated here are the
// transport's and the queues'.
func TestOverheads(t *testing.T) {
	if wireOverhead != transport.DefaultWireOverhead || wireOnly != queues.WireOverhead {
		t.Errorf("wireOverhead %d, wireOnly %d; transport.DefaultWireOverhead %d, queues.WireOverhead %d",
			wireOverhead, wireOnly, transport.DefaultWireOverhead, queues.WireOverhead)
	}
}

func TestFromTarget(t *testing.T) {
	d := papers(4)
	want := DCQCN{N: 4, CapacityBps: 100e9, LineRateBps: 100e9, MinRateBps: 100e6, LoopDelay: papersLoop,
		KminBytes: 100_000, KmaxBytes: 400_000, Pmax: 0.2, G: 1.0 / 256,
		CNPInterval: 50 * time.Microsecond, AlphaPeriod: 55 * time.Microsecond, IncreasePeriod: 55 * time.Microsecond,
		ByteCounter: 10_000_000, F: 5, AIRateBps: 100e6, HAIRateBps: 1e9,
		WireBytes: 1024 + 86, QueueBytes: 1024 + 86 - 24}
	if d != want {
		t.Errorf("FromTarget(Papers())\n got %+v\nwant %+v", d, want)
	}
	if err := d.Validate(); err != nil {
		t.Error(err)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*DCQCN)
		want string
	}{
		{"no flows", func(d *DCQCN) { d.N = 0 }, "0 flows"},
		{"no loop", func(d *DCQCN) { d.LoopDelay = 0 }, "loop delay"},
		{"kmin above kmax", func(d *DCQCN) { d.KminBytes = 500_000 }, "ecn"},
		{"g", func(d *DCQCN) { d.G = 1 }, "g 1"},
		{"floor above line", func(d *DCQCN) { d.MinRateBps = 200e9 }, "minimum rate"},
		{"no packet", func(d *DCQCN) { d.WireBytes = 0 }, "packet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := papers(2)
			c.mod(&d)
			err := d.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate() = %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestFixedPointQueue: q* lies on RED's slope for the papers' network
// and rises with N (the paper's observation after eq. (14)); one flow's
// point is above the line rate, and a P_max below p* puts q* at K_max.
func TestFixedPointQueue(t *testing.T) {
	prev := 0.0
	for _, n := range []int{2, 4, 8, 16} {
		d := papers(n)
		f, err := FixedPoint(d)
		if err != nil {
			t.Fatal(err)
		}
		kmin, kmax := float64(d.KminBytes), float64(d.KmaxBytes)
		if !(f.QueueBytes > kmin && f.QueueBytes < kmax) || f.AboveKmax || f.AboveLine {
			t.Errorf("N=%d: q* = %.1f B outside (K_min, K_max) = (%g, %g), or flagged: %+v", n, f.QueueBytes, kmin, kmax, f)
		}
		if f.QueueBytes <= prev {
			t.Errorf("N=%d: q* = %.1f B, not above the previous N's %.1f B", n, f.QueueBytes, prev)
		}
		prev = f.QueueBytes
		if math.Abs(f.RateBps/d.FairShareBps()-1) > 1e-12 || f.TargetBps <= f.RateBps || !(f.Alpha > 0 && f.Alpha < 1) {
			t.Errorf("N=%d: R_C* %.6g, R_T* %.6g, α* %g: want C/N, above it, in (0, 1)", n, f.RateBps, f.TargetBps, f.Alpha)
		}
	}

	f, err := FixedPoint(papers(1))
	if err != nil {
		t.Fatal(err)
	}
	if !f.AboveLine {
		t.Errorf("one flow: R_T* = %.4g Gb/s, not flagged above the line rate", f.TargetBps/1e9)
	}

	d := papers(8)
	d.Pmax = 1e-4 // p* far above P_max
	if f, err = FixedPoint(d); err != nil {
		t.Fatal(err)
	}
	if !f.AboveKmax || f.QueueBytes != float64(d.KmaxBytes) {
		t.Errorf("p* = %g above P_max: %+v", f.P, f)
	}
}

// TestWithQueueingDelay: marking on enqueue adds q* drained at C, about
// 8 µs at 100 KB and 100 Gb/s.
func TestWithQueueingDelay(t *testing.T) {
	d := papers(4)
	f, err := FixedPoint(d)
	if err != nil {
		t.Fatal(err)
	}
	e, err := WithQueueingDelay(d)
	if err != nil {
		t.Fatal(err)
	}
	want := f.QueueBytes / float64(d.QueueBytes) * float64(d.WireBytes) * 8 / float64(d.CapacityBps)
	if got := (e.LoopDelay - d.LoopDelay).Seconds(); math.Abs(got-want) > 1e-9 || got < 7e-6 || got > 9e-6 {
		t.Errorf("WithQueueingDelay adds %g s, want %g s", got, want)
	}
}

// TestApproxP: the paper's closed form (14) tends to the root of (11) as
// p* τ C/N goes to 0, here by taking R_AI down.
func TestApproxP(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		for _, scaleAI := range []float64{1, 1e-3, 1e-6} {
			d := papers(n)
			d.AIRateBps = int64(float64(d.AIRateBps) * scaleAI)
			f, err := FixedPoint(d)
			if err != nil {
				t.Fatal(err)
			}
			approx := ApproxP(d)
			x := f.P * d.CNPInterval.Seconds() * float64(d.CapacityBps) / 8 / float64(d.WireBytes) / float64(n)
			e := approx/f.P - 1
			t.Logf("N=%d R_AI=%g b/s: p*=%.5g, eq. (14) %.5g (%+.1f%%), p* τ C/N = %.3g", n, float64(d.AIRateBps), f.P, approx, 100*e, x)
			if math.Abs(e) > 3*x+0.01 {
				t.Errorf("N=%d R_AI=%g: eq. (14) is %.1f%% off the root of eq. (11), more than 3 p* τ C/N = %.1f%%", n, float64(d.AIRateBps), 100*e, 300*x)
			}
		}
	}
}
