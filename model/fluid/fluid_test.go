package fluid

import (
	"errors"
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

// conext16 is the CoNEXT 2016 paper's setting for its stability study
// (§3.2, Table 1 and Figs. 4 and 5): 40 Gb/s, K_min 5 KB, K_max 200 KB,
// P_max 1%, R_AI 40 Mb/s, the timers of DCQCN, 1 KB packets.
func conext16(n int, loop time.Duration) DCQCN {
	return DCQCN{N: n, CapacityBps: 40e9, MinRateBps: 1e6, LoopDelay: loop,
		KminBytes: 5000, KmaxBytes: 200_000, Pmax: 0.01, G: 1.0 / 256,
		CNPInterval: 50 * time.Microsecond, AlphaPeriod: 55 * time.Microsecond, IncreasePeriod: 55 * time.Microsecond,
		ByteCounter: 10_000_000, F: 5, AIRateBps: 40e6, WireBytes: 1000, QueueBytes: 1000}
}

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

// TestFixedPoint holds the simulated steady state of the papers' network
// against the fixed point for N = 2, 4 and 8, and logs both. Where the
// linearized model says the fixed point is unstable, the flows cannot
// settle on it: the test then asks that the simulation oscillate, as the
// linear analysis predicts, and says how far from q* the queue's mean
// is, rather than holding it to q*.
func TestFixedPoint(t *testing.T) {
	const horizon = 100 * time.Millisecond
	for _, n := range []int{2, 4, 8} {
		d := papers(n)
		f, err := FixedPoint(d)
		if err != nil {
			t.Fatal(err)
		}
		st, err := LinearStability(d)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Simulate(d, horizon, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := tr.Summary
		t.Logf("N=%d, τ*=%v: fixed point p*=%.4g q*=%.1f B R_C*=%.4g Gb/s R_T*=%.4g Gb/s α*=%.4f; %s",
			n, d.LoopDelay, f.P, f.QueueBytes, f.RateBps/1e9, f.TargetBps/1e9, f.Alpha, describe(st))
		t.Logf("N=%d, simulated over [%v, %v]: mean q=%.1f B (min %.1f, max %.1f, amplitude %.1f B), mean p=%.4g, sum of rates %.4g Gb/s, per flow %s, Jain %.6f, within ±10%% of C/N from %v (converged %v)",
			n, s.From, s.To, s.MeanQueueBytes, s.MinQueueBytes, s.MaxQueueBytes, s.AmplitudeBytes, s.MeanMarking,
			s.SumRateBps/1e9, gbps(s.MeanRateBps), s.Fairness, s.ConvergedAt, s.Converged)

		// Whether it settles or not, the queue neither empties nor grows
		// in the window, so the flows' mean rates add up to C; and they
		// are alike.
		c := float64(d.CapacityBps)
		if e := math.Abs(s.SumRateBps-c) / c; e > 0.01 {
			t.Errorf("N=%d: the flows' mean rates add up to %.4g Gb/s, %.2f%% off C", n, s.SumRateBps/1e9, 100*e)
		}
		for i, r := range s.MeanRateBps {
			if e := math.Abs(r-f.RateBps) / f.RateBps; e > 0.01 {
				t.Errorf("N=%d: flow %d's mean rate %.4g Gb/s is %.2f%% off C/N", n, i, r/1e9, 100*e)
			}
		}

		above := f.QueueBytes - float64(d.KminBytes) // what RED works with
		off := (s.MeanQueueBytes - f.QueueBytes) / above
		if st.Stable() {
			// Settled: the queue's mean within 2% of its height above
			// K_min (tens of bytes), and still.
			if math.Abs(off) > 0.02 || s.AmplitudeBytes > 0.05*above {
				t.Errorf("N=%d: stable (%s), yet the mean queue %.1f B is %.1f%% of q* - K_min from q* = %.1f B, amplitude %.1f B",
					n, describe(st), s.MeanQueueBytes, 100*off, f.QueueBytes, s.AmplitudeBytes)
			}
			if e := math.Abs(s.MeanMarking-f.P) / f.P; e > 0.02 {
				t.Errorf("N=%d: mean marking %.4g is %.1f%% off p* = %.4g", n, s.MeanMarking, 100*e, f.P)
			}
			continue
		}
		if s.AmplitudeBytes < 0.25*above {
			t.Errorf("N=%d: the linearized model is unstable (%s), yet the queue's amplitude is only %.1f B", n, describe(st), s.AmplitudeBytes)
		}
		t.Logf("N=%d: the fixed point is unstable at τ* = %v (%s): the queue oscillates by ±%.0f B between %.0f and %.0f B; its mean, %.0f B, is %.2f%% of q* from q* = %.0f B but %.0f%% of q* - K_min, and the mean marking %.4g is %.1f%% from p*",
			n, d.LoopDelay, describe(st), s.AmplitudeBytes, s.MinQueueBytes, s.MaxQueueBytes, s.MeanQueueBytes,
			100*(s.MeanQueueBytes-f.QueueBytes)/f.QueueBytes, f.QueueBytes, 100*off, s.MeanMarking, 100*(s.MeanMarking-f.P)/f.P)
	}
}

// describe says where a fixed point's rightmost roots are.
func describe(st Stability) string {
	q := st.Queue
	stable := "stable"
	if !st.Stable() {
		stable = "unstable"
	}
	s := fmt.Sprintf("%s: queue mode %d roots right of the axis, rightmost %.4g/s", stable, q.Roots, q.Abscissa)
	if q.Frequency > 0 {
		s += fmt.Sprintf(" at %.4g rad/s (period %.4g µs)", q.Frequency, 2*math.Pi/q.Frequency*1e6)
	}
	return s + fmt.Sprintf("; fairness mode %d, rightmost %.4g/s", st.Fairness.Roots, st.Fairness.Abscissa)
}

func gbps(r []float64) string {
	s := make([]string, len(r))
	for i, x := range r {
		s[i] = fmt.Sprintf("%.4g", x/1e9)
	}
	return "[" + strings.Join(s, " ") + "] Gb/s"
}

// TestBcfabLoop logs what the fixed points of TestFixedPoint become with
// the loop bcfab's switches make, marking on enqueue (WithQueueingDelay),
// and with its reaction point's fast recovery of F-1 events.
func TestBcfabLoop(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		d, err := WithQueueingDelay(papers(n))
		if err != nil {
			t.Fatal(err)
		}
		st, err := LinearStability(d)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Simulate(d, 50*time.Millisecond, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := tr.Summary
		f1 := d
		f1.F--
		fx, err := FixedPoint(f1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("N=%d, τ*=%v (marking on enqueue): %s; simulated mean q %.0f B, amplitude %.0f B (%.0f..%.0f), sum of rates %.4g Gb/s; with F-1: p*=%.4g q*=%.1f B",
			n, d.LoopDelay, describe(st), s.MeanQueueBytes, s.AmplitudeBytes, s.MinQueueBytes, s.MaxQueueBytes, s.SumRateBps/1e9, fx.P, fx.QueueBytes)
	}
}

// TestPaperStability reproduces the paper's statements on DCQCN's
// stability (§3.2, Fig. 5): with its parameters, at a 4 µs loop 2 and 10
// flows settle; at 85 µs 10 flows oscillate and 2 settle. The linear
// analysis and the simulation must both say so.
func TestPaperStability(t *testing.T) {
	for _, c := range []struct {
		n      int
		loop   time.Duration
		stable bool
	}{
		{2, 4 * time.Microsecond, true},
		{10, 4 * time.Microsecond, true},
		{2, 85 * time.Microsecond, true},
		{10, 85 * time.Microsecond, false},
	} {
		d := conext16(c.n, c.loop)
		st, err := LinearStability(d)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := FixedPoint(d)
		tr, err := Simulate(d, 100*time.Millisecond, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := tr.Summary
		t.Logf("paper's setting, N=%d, τ*=%v: %s; q*=%.0f B, simulated mean %.0f B, amplitude %.0f B", c.n, c.loop, describe(st), f.QueueBytes, s.MeanQueueBytes, s.AmplitudeBytes)
		if st.Stable() != c.stable {
			t.Errorf("N=%d, τ*=%v: linear analysis says stable=%v (%s), the paper %v", c.n, c.loop, st.Stable(), describe(st), c.stable)
		}
		// Settled, the window's amplitude is a small part of the queue;
		// unsettled, a large one.
		if osc := s.AmplitudeBytes > 0.1*f.QueueBytes; osc == c.stable {
			t.Errorf("N=%d, τ*=%v: simulated amplitude %.0f B around q* = %.0f B, the paper says stable=%v", c.n, c.loop, s.AmplitudeBytes, f.QueueBytes, c.stable)
		}
	}
}

// TestLinearMatchesSimulation starts the simulation a hair off the fixed
// point and measures how the queue's deviation grows or decays and how
// fast it turns (successive peaks while it is small), against the
// rightmost root of the linearized model's characteristic equation: two
// independent computations of one number.
func TestLinearMatchesSimulation(t *testing.T) {
	for _, d := range []DCQCN{papers(2), papers(5), conext16(10, 85*time.Microsecond)} {
		name := fmt.Sprintf("N=%d,τ*=%v,C=%dG", d.N, d.LoopDelay, d.CapacityBps/1e9)
		t.Run(name, func(t *testing.T) {
			st, err := LinearStability(d)
			if err != nil {
				t.Fatal(err)
			}
			want := st.Queue
			f, _ := FixedPoint(d)
			in := atFixedPoint(t, d, f, 1e-7)
			q0, span := in.q, in.q-in.s.kmin
			var peaks, times []float64
			prev2, prev1 := 0.0, 0.0
			// 100 ms, for the other modes to fade, or until out of the
			// linear range.
			for k := 1; float64(k)*in.h < 0.1; k++ {
				in.Step()
				x := in.q - q0
				if k > 2 && prev1 > prev2 && prev1 >= x && prev1 > 0 {
					peaks, times = append(peaks, prev1), append(times, float64(k-1)*in.h)
				}
				prev2, prev1 = prev1, x
				if math.Abs(x) > 0.05*span {
					break
				}
			}
			if len(peaks) < 8 {
				t.Fatalf("%d peaks", len(peaks))
			}
			a, b := len(peaks)-7, len(peaks)-1
			period := (times[b] - times[a]) / float64(b-a)
			growth := math.Log(peaks[b]/peaks[a]) / (times[b] - times[a])
			omega := 2 * math.Pi / period
			t.Logf("simulated growth %.2f/s at %.0f rad/s; linear analysis %+v", growth, omega, want)
			if math.Abs(growth-want.Abscissa) > 0.03*math.Abs(want.Abscissa)+1 || math.Abs(omega-want.Frequency) > 0.01*want.Frequency {
				t.Errorf("simulation: growth %.2f/s at %.0f rad/s; linear analysis: %.2f/s at %.0f rad/s", growth, omega, want.Abscissa, want.Frequency)
			}
		})
	}
}

// atFixedPoint is an Integrator of d at its fixed point f, every flow's
// rate off by the factor 1+eps, the past at the fixed point.
func atFixedPoint(t *testing.T, d DCQCN, f Fixed, eps float64) *Integrator {
	t.Helper()
	in, err := NewIntegrator(d, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &in.s
	w := 8 * s.wireBytes
	for i := range in.rc {
		in.rc[i], in.rt[i], in.al[i] = f.RateBps/w*(1+eps), f.TargetBps/w, f.Alpha
	}
	in.q = f.QueueBytes / s.queueBytes
	sh := s.shared(s.mark(in.q))
	for j := range in.past {
		in.past[j] = s.rates(&sh, f.RateBps/w)
	}
	return in
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

func TestLinearStabilityAboveKmax(t *testing.T) {
	d := papers(8)
	d.Pmax = 1e-4 // p* far above P_max
	if _, err := LinearStability(d); !errors.Is(err, ErrNotLinear) {
		t.Errorf("LinearStability = %v, want ErrNotLinear", err)
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
