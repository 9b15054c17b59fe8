package fluid

import (
	"fmt"
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
			if _, err := Simulate(d, time.Millisecond, 0, nil); err == nil {
				t.Error("Simulate ran invalid parameters")
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

func gbps(r []float64) string {
	s := make([]string, len(r))
	for i, x := range r {
		s[i] = fmt.Sprintf("%.4g", x/1e9)
	}
	return "[" + strings.Join(s, " ") + "] Gb/s"
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

// TestFairness starts flows far apart: they must end at C/N each, as the
// paper proves (Theorem 2) and the fairness mode's roots say, within the
// ±10% band well before the horizon.
func TestFairness(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		d := papers(n)
		start := make([]float64, n)
		for i := range start {
			start[i] = float64(d.CapacityBps) * float64(i+1) / float64(n+1) // C/(N+1) .. C N/(N+1)
		}
		tr, err := Simulate(d, 100*time.Millisecond, 0, start)
		if err != nil {
			t.Fatal(err)
		}
		s := tr.Summary
		fair := d.FairShareBps()
		t.Logf("N=%d from %s: mean rates %s, Jain %.6f, within ±10%% of C/N from %v", n, gbps(start), gbps(s.MeanRateBps), s.Fairness, s.ConvergedAt)
		for i, r := range s.MeanRateBps {
			if e := math.Abs(r-fair) / fair; e > 0.01 {
				t.Errorf("N=%d: flow %d's mean rate %.4g Gb/s is %.2f%% off C/N", n, i, r/1e9, 100*e)
			}
		}
		if !s.Converged || s.ConvergedAt > s.From {
			t.Errorf("N=%d: flows within ±10%% of C/N from %v (converged %v), want before %v", n, s.ConvergedAt, s.Converged, s.From)
		}
		if s.Fairness < 0.9999 {
			t.Errorf("N=%d: Jain's index %.6f", n, s.Fairness)
		}
	}
}

// TestOneFlow: one flow whose line rate is C never builds a queue.
func TestOneFlow(t *testing.T) {
	d := papers(1)
	tr, err := Simulate(d, 10*time.Millisecond, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := tr.Summary; s.MaxQueueBytes != 0 || math.Abs(s.SumRateBps/float64(d.CapacityBps)-1) > 1e-9 || !s.Converged || s.ConvergedAt != 0 {
		t.Errorf("one flow: %+v, want an empty queue and the line rate throughout", s)
	}
}

// TestStep: the steady state does not depend on the step (the
// integration has converged), and a step smaller than the loop is kept.
func TestStep(t *testing.T) {
	for _, n := range []int{2, 8} {
		d := papers(n)
		a, err := Simulate(d, 60*time.Millisecond, DefaultStep, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Simulate(d, 60*time.Millisecond, DefaultStep/4, nil)
		if err != nil {
			t.Fatal(err)
		}
		sa, sb := a.Summary, b.Summary
		if math.Abs(sa.MeanQueueBytes-sb.MeanQueueBytes) > 1 || math.Abs(sa.AmplitudeBytes-sb.AmplitudeBytes) > 1 {
			t.Errorf("N=%d: step %v: mean q %.2f amplitude %.2f; step %v: %.2f, %.2f", n,
				DefaultStep, sa.MeanQueueBytes, sa.AmplitudeBytes, DefaultStep/4, sb.MeanQueueBytes, sb.AmplitudeBytes)
		}
	}
	d := papers(2)
	d.LoopDelay = 100 * time.Nanosecond
	in, err := NewIntegrator(d, time.Microsecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in.h != 100e-9 {
		t.Errorf("a 1 µs step with a 100 ns loop: step %g s, want the loop's", in.h)
	}
}

func TestTrajectory(t *testing.T) {
	d := papers(2)
	tr, err := Simulate(d, 50*time.Millisecond, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(tr.Time)
	if n < MaxSamples/2 || n > MaxSamples+1 || tr.Time[0] != 0 || tr.Time[n-1] > 50*time.Millisecond || tr.Time[n-1] < 50*time.Millisecond-tr.Every {
		t.Errorf("%d samples every %v from %v to %v", n, tr.Every, tr.Time[0], tr.Time[n-1])
	}
	for _, s := range [][]float64{tr.QueueBytes, tr.Marking, tr.RateBps[0], tr.RateBps[1], tr.TargetBps[1], tr.Alpha[1]} {
		if len(s) != n {
			t.Errorf("a series of %d samples, want %d", len(s), n)
		}
	}
	if tr.RateBps[0][0] != float64(d.CapacityBps) || tr.Alpha[0][0] != 1 || tr.QueueBytes[0] != 0 {
		t.Errorf("start: rate %g, alpha %g, queue %g; want the line rate, 1 and 0", tr.RateBps[0][0], tr.Alpha[0][0], tr.QueueBytes[0])
	}
	if _, err := Simulate(d, time.Millisecond, 0, []float64{1e9}); err == nil {
		t.Error("one start rate for two flows")
	}
}

// TestStepAllocs: a step allocates nothing.
func TestStepAllocs(t *testing.T) {
	in, err := NewIntegrator(papers(8), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(1000, in.Step); a != 0 {
		t.Errorf("%v allocations per step", a)
	}
}

func BenchmarkStep(b *testing.B) {
	in, err := NewIntegrator(papers(8), 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		in.Step()
	}
}

// BenchmarkSimulate is 50 ms of the target, eight flows.
func BenchmarkSimulate(b *testing.B) {
	d := papers(8)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Simulate(d, 50*time.Millisecond, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
}
