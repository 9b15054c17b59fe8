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
