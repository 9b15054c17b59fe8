package transport

import (
	"math"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestDCQCNCutAndRecovery(t *testing.T) {
	p := testParams().DCQCN
	line := float64(simRate)
	d := NewDCQCN(p, simRate)
	if d.Rate() != line || d.Target() != line || d.NextTimer() != -1 || d.Alpha(0) != 1 {
		t.Fatalf("start: rate %v, target %v, timer %d, alpha %v", d.Rate(), d.Target(), d.NextTimer(), d.Alpha(0))
	}
	T := int64(p.IncreasePeriod)
	t0 := int64(time.Second)
	d.OnCNP(t0)
	// alpha was 1: the first cut halves the rate; alpha stays 1.
	if !near(d.Rate(), line/2) || d.Target() != line || d.Alpha(t0) != 1 || d.NextTimer() != t0+T {
		t.Fatalf("after the first CNP: rate %v, target %v, alpha %v, timer %d", d.Rate(), d.Target(), d.Alpha(t0), d.NextTimer())
	}
	// Fast recovery: F-1 timer events halve the distance to the target,
	// which stays.
	rc := d.Rate()
	for i := 1; i < p.F; i++ {
		d.OnTimer(t0 + int64(i)*T)
		rc = (line + rc) / 2
		if !near(d.Rate(), rc) || d.Target() != line {
			t.Fatalf("fast recovery step %d: rate %v want %v, target %v", i, d.Rate(), rc, d.Target())
		}
	}
	if d.C.FastRecovery != uint64(p.F-1) || d.C.Additive != 0 {
		t.Fatalf("counters %+v", d.C)
	}
	// A second cut, with alpha decayed over the periods since the first.
	t1 := t0 + int64(p.F-1)*T + T/2
	n := float64((t1 - t0) / int64(p.AlphaPeriod))
	a := math.Pow(1-p.G, n)
	if !near(d.Alpha(t1), a) {
		t.Fatalf("alpha %v, want %v", d.Alpha(t1), a)
	}
	before := d.Rate()
	d.OnCNP(t1)
	if !near(d.Rate(), before*(1-a/2)) || !near(d.Target(), before) || !near(d.Alpha(t1), (1-p.G)*a+p.G) {
		t.Fatalf("second cut: rate %v want %v, target %v want %v, alpha %v", d.Rate(), before*(1-a/2), d.Target(), before, d.Alpha(t1))
	}
	if tm, by := d.Stages(); tm != 0 || by != 0 {
		t.Fatalf("stages after a cut: %d, %d", tm, by)
	}
	// Timer stages beyond F with few bytes sent: additive increase.
	now := t1
	for i := 1; i <= p.F+3; i++ {
		now = t1 + int64(i)*T
		d.OnTimer(now)
	}
	if d.C.Additive != 4 || d.C.Hyper != 0 {
		t.Fatalf("after F+3 timer events: %+v", d.C)
	}
	wantRt := before + 4*float64(p.AIRateBps)
	if !near(d.Target(), wantRt) {
		t.Fatalf("target %v, want %v", d.Target(), wantRt)
	}
	// Byte-counter stages beyond F as well: hyper increase.
	for range p.F + 1 {
		d.OnSent(int(p.ByteCounter), now)
	}
	if d.C.Hyper != 1 {
		t.Fatalf("after F+1 byte-counter events: %+v", d.C)
	}
	wantRt += float64(p.F)*float64(p.AIRateBps) + float64(p.HAIRateBps)
	if !near(d.Target(), math.Min(wantRt, line)) {
		t.Fatalf("target %v, want %v", d.Target(), wantRt)
	}
	// With time the rate reaches the line rate, and the timer rests.
	for i := 0; d.NextTimer() >= 0; i++ {
		if i > 100000 {
			t.Fatal("the rate never recovers")
		}
		now = d.NextTimer()
		d.OnTimer(now)
	}
	if d.Rate() != line || d.Target() != line {
		t.Fatalf("recovered to %v (target %v), want %v", d.Rate(), d.Target(), line)
	}
}

func TestDCQCNMinRate(t *testing.T) {
	p := testParams().DCQCN
	d := NewDCQCN(p, simRate)
	for i := range 100 {
		d.OnCNP(int64(i))
	}
	if d.Rate() != float64(p.MinRateBps) {
		t.Fatalf("rate %v after 100 CNPs, want the minimum %d", d.Rate(), p.MinRateBps)
	}
}

// The Mellanox variant, as the HPCC simulator's rdma-hw.cc runs it with
// CLAMP_TARGET_RATE 0: a CNP is noted, not applied. The first sets alpha
// to 1 and starts alpha's clock (every AlphaPeriod: toward 1 if a CNP
// came since the last tick, else a decay) and the decrease check (every
// DecreasePeriod, 1 ns after the first CNP's period: a cut by alpha/2 if
// a CNP came since the last check). Cuts in a row keep the target the
// first CNP set; the timer alone counts stages (F fast recovery events,
// one additive, then hyper increase); bytes sent move nothing; a cut
// after increase events lowers the target to the rate it cuts.
func TestDCQCNMlx(t *testing.T) {
	p := testParams().DCQCN
	p.Mlx = true
	line, g := float64(simRate), p.G
	d := NewDCQCN(p, simRate)
	K, T, P := int64(p.AlphaPeriod), int64(p.IncreasePeriod), int64(p.DecreasePeriod)
	t0 := int64(time.Second)
	d.OnCNP(t0)
	d.OnCNP(t0 + 100) // a second before the check: one cut all the same
	if d.Rate() != line || d.Target() != line || d.Alpha(t0) != 1 || d.C.Cuts != 0 || d.NextTimer() != t0+P+1 {
		t.Fatalf("CNPs noted: rate %v, target %v, alpha %v, cuts %d, next timer %d; want the line rate, alpha 1, none, %d",
			d.Rate(), d.Target(), d.Alpha(t0), d.C.Cuts, d.NextTimer(), t0+P+1)
	}
	d.OnTimer(t0 + P)
	if d.C.Cuts != 0 {
		t.Fatal("cut before the check")
	}
	d.OnTimer(t0 + P + 1)
	if !near(d.Rate(), line/2) || d.Target() != line || d.C.Cuts != 1 || d.NextTimer() != t0+K {
		t.Fatalf("first check: rate %v, target %v, cuts %d, next %d; want half the line rate, the line rate, 1, alpha's tick %d",
			d.Rate(), d.Target(), d.C.Cuts, d.NextTimer(), t0+K)
	}
	// Alpha's first tick saw the second CNP: (1-g)1 + g.
	d.OnTimer(t0 + K)
	if !near(d.Alpha(t0+K), 1) {
		t.Fatalf("alpha after a tick with a CNP: %v, want 1", d.Alpha(t0+K))
	}
	// A CNP before the second check, and no increase event between the
	// cuts (the first comes T after the first cut, past the check): a
	// cut in a row, the target kept.
	d.OnCNP(t0 + K + 1)
	c2 := t0 + 2*P + 1
	if first := t0 + P + 1 + T; first <= c2 {
		t.Fatalf("test setup: an increase at %d before the check at %d", first, c2)
	}
	d.OnTimer(c2)
	if !near(d.Rate(), line/4) || d.Target() != line || d.C.Cuts != 2 {
		t.Fatalf("a cut in a row: rate %v, target %v, cuts %d; want a quarter of the line rate, the line rate, 2", d.Rate(), d.Target(), d.C.Cuts)
	}
	// Alpha's next tick sees that CNP (stays 1), the one after none.
	d.OnTimer(t0 + 2*K)
	d.OnTimer(t0 + 3*K)
	if !near(d.Alpha(t0+3*K), 1-g) {
		t.Fatalf("alpha after a tick without a CNP: %v, want %v", d.Alpha(t0+3*K), 1-g)
	}
	// Bytes sent count for nothing.
	for range 3 * p.F {
		d.OnSent(int(p.ByteCounter), t0+3*K)
	}
	if _, by := d.Stages(); by != 0 {
		t.Fatalf("after bytes: byte stage %d", by)
	}
	// F fast recovery events, then one additive, then hyper increase, on
	// the timer restarted by the second cut; the checks between cut
	// nothing.
	rc, rt := line/4, line
	for i := 1; i <= p.F+3; i++ {
		d.OnTimer(c2 + int64(i)*T)
		switch {
		case i == p.F+1:
			rt = math.Min(line, rt+float64(p.AIRateBps))
		case i > p.F+1:
			rt = math.Min(line, rt+float64(p.HAIRateBps))
		}
		rc = (rt + rc) / 2
		if !near(d.Target(), rt) || !near(d.Rate(), math.Min(rc, line)) {
			t.Fatalf("event %d: rate %v, target %v; want %v, %v", i, d.Rate(), d.Target(), rc, rt)
		}
	}
	if d.C.FastRecovery != uint64(p.F) || d.C.Additive != 1 || d.C.Hyper != 2 || d.C.Cuts != 2 {
		t.Fatalf("counters %+v, want %d fast recovery, 1 additive, 2 hyper, 2 cuts", d.C, p.F)
	}
	// A cut after increase events lowers the target to the rate it cuts,
	// by the alpha of the moment.
	tc := c2 + int64(p.F+3)*T + 1
	d.OnCNP(tc)
	check := t0 + P + 1 + ((tc-(t0+P+1))/P+1)*P
	d.OnTimer(check - 1)
	before, a := d.Rate(), d.Alpha(check)
	d.OnTimer(check)
	if !near(d.Target(), before) || !near(d.Rate(), before*(1-a/2)) || d.C.Cuts != 3 {
		t.Fatalf("a cut after increases: rate %v, target %v; want %v, the rate before it %v", d.Rate(), d.Target(), before*(1-a/2), before)
	}
	var q Params
	q.SetCC(CCDCQCNMlx)
	if !q.DCQCN.Enabled || !q.DCQCN.Mlx || q.DCQCN.Window || q.CC() != CCDCQCNMlx || !CCDCQCNMlx.Rate() {
		t.Errorf("SetCC(dcqcn-mlx): %+v, CC %v", q.DCQCN, q.CC())
	}
	if c, err := ParseCC("dcqcn-mlx"); err != nil || c != CCDCQCNMlx {
		t.Errorf("ParseCC(dcqcn-mlx) = %v, %v", c, err)
	}
}
