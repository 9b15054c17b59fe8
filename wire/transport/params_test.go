package transport

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/queues"
)

// The fabric of the tests: 100 Mb/s links whose one-hop RTT is 250 µs,
// packets of 1000 payload bytes.
const (
	simRate = 100_000_000 // bit/s
	simMTU  = 1000
)

// testParams are the papers' constants counted in the test fabric's RTT
// (package scale's native target at 100 Mb/s: times x125, data x0.125,
// rates x0.001).
func testParams() Params {
	us, ms := time.Microsecond, time.Millisecond
	return Params{
		LineRateBps: simRate, WireOverhead: DefaultWireOverhead,
		RTO: 1250 * ms, RTOLow: 12500 * us, RTOHigh: 40 * ms, RTOThreshold: 3, BDPBytes: 12_500,
		AckEvery: 4, AckDelay: 125 * us, CNPInterval: 6250 * us,
		DCQCN: DCQCNParams{Enabled: true, G: 1.0 / 256, AlphaPeriod: 6875 * us, IncreasePeriod: 6875 * us,
			ByteCounter: 1_250_000, F: 5, AIRateBps: 100e3, HAIRateBps: 1e6, MinRateBps: 100e3, DecreasePeriod: 6250 * us},
		ECN: ECNParams{KminBytes: 12_500, KmaxBytes: 50_000, Pmax: 0.2},
	}
}

func TestPSN(t *testing.T) {
	for _, c := range []struct {
		a, b uint32
		d    int64
	}{
		{5, 3, 2}, {3, 5, -2}, {0, PSNMask, 1}, {PSNMask, 0, -1},
		{1 << 23, 0, -1 << 23}, {1<<23 - 1, 0, 1<<23 - 1}, {10, 10, 0},
	} {
		if d := PSNDiff(c.a, c.b); d != c.d {
			t.Errorf("PSNDiff(%d, %d) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
	if PSNAdd(PSNMask, 1) != 0 || PSNAdd(0, -1) != PSNMask || PSNAdd(7, 1<<24) != 7 {
		t.Error("PSNAdd does not wrap")
	}
	for _, c := range []struct {
		psn  uint32
		ref  int64
		want int64
	}{
		{0, PSNMask, PSNMask + 1},            // just after the wrap
		{PSNMask, PSNMask + 1, PSNMask},      // just before it
		{5, 3<<24 + 2, 3<<24 + 5},            // some wraps in
		{PSNMask - 1, 3 << 24, 3<<24 - 2},    // behind, across a wrap
		{100, 1 << 40, 1<<40 + 100},          // far into the flow
		{1<<23 + 10, 10, 10 + 1<<23 - 1<<24}, // as far behind as it can be
	} {
		if got := Unwrap(c.psn, c.ref); got != c.want {
			t.Errorf("Unwrap(%d, %d) = %d, want %d", c.psn, c.ref, got, c.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range []Mode{Lossless, GBN, IRN} {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
		b, err := json.Marshal(struct{ M Mode }{m})
		if err != nil {
			t.Fatal(err)
		}
		var back struct{ M Mode }
		if err := json.Unmarshal(b, &back); err != nil || back.M != m {
			t.Errorf("%s: round trip %v, %v", b, back.M, err)
		}
	}
	if _, err := ParseMode("sack"); err == nil {
		t.Error("ParseMode accepted sack")
	}
}

// The test fabric's parameters are valid, and the switch side takes the
// thresholds as they are.
func TestParamsValid(t *testing.T) {
	p := testParams()
	if err := p.Validate(); err != nil {
		t.Error(err)
	}
	if err := (queues.ECNConfig{KminBytes: p.ECN.KminBytes, KmaxBytes: p.ECN.KmaxBytes, Pmax: p.ECN.Pmax}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Params)
		want string
	}{
		{"ack every 0", func(p *Params) { p.AckEvery = 0 }, "ack every"},
		{"no RTO", func(p *Params) { p.RTOLow = 0 }, "timeouts"},
		{"window", func(p *Params) { p.Window = MaxWindow + 1 }, "window"},
		{"DCQCN without rate", func(p *Params) { p.LineRateBps = 0 }, "line rate"},
		{"g", func(p *Params) { p.DCQCN.G = 1 }, "g 1"},
		{"min rate", func(p *Params) { p.DCQCN.MinRateBps = p.LineRateBps + 1 }, "rates"},
		{"ecn", func(p *Params) { p.ECN.KminBytes = p.ECN.KmaxBytes + 1 }, "ECN"},
		{"bdp", func(p *Params) { p.BDPBytes = 0 }, "BDP"},
		{"catch-up", func(p *Params) { p.PacingCatchup = -1 }, "catch-up"},
	} {
		p := testParams()
		c.edit(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if _, err := NewSender(GBN, p, 0, 1, 1); err == nil {
			t.Errorf("%s: NewSender accepted it", c.name)
		}
	}
	p := testParams()
	p.DCQCN.Enabled, p.LineRateBps = false, 0
	if err := p.Validate(); err != nil {
		t.Errorf("unpaced without DCQCN: %v", err)
	}
	if _, err := NewSender(GBN, testParams(), 0, 1, 0); err == nil {
		t.Error("mtu 0 accepted")
	}
	if _, err := NewReceiver(Mode(9), testParams(), 0, 1000); err == nil {
		t.Error("mode 9 accepted")
	}
}

func TestCC(t *testing.T) {
	p := testParams()
	for _, c := range []CC{CCNone, CCDCQCN, CCDCTCP, CCHPCC, CCDCQCNWin} {
		v, err := ParseCC(c.String())
		if err != nil || v != c {
			t.Errorf("%v: parsed %v, %v", c, v, err)
		}
		p.SetCC(c)
		if p.CC() != c {
			t.Errorf("SetCC(%v): CC %v", c, p.CC())
		}
	}
	if _, err := ParseCC("cubic"); err == nil {
		t.Error("cubic parsed")
	}
}

// DCQCN+win: DCQCN's rate, and at most one BDP (the BDP cap) outstanding.
func TestDCQCNWindow(t *testing.T) {
	p := testParams()
	p.SetCC(CCDCQCNWin)
	p.BDPBytes = 10_500
	s, err := NewSender(Lossless, p, 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if s.CC() != CCDCQCNWin || s.DCQCN() == nil || s.Window() != 11 {
		t.Fatalf("cc %v, window %d", s.CC(), s.Window())
	}
	now, sent := int64(0), 0
	for at := s.NextSendTime(); at >= 0; at = s.NextSendTime() {
		now = max(now, at)
		if _, ok := s.Next(now); !ok {
			t.Fatal("Next refused")
		}
		sent++
	}
	if sent != 11 || s.Rate() != float64(p.LineRateBps) {
		t.Fatalf("sent %d before an ACK, rate %v", sent, s.Rate())
	}
	s.OnCNP(now)
	if s.Rate() >= float64(p.LineRateBps) {
		t.Fatalf("rate %v after a CNP", s.Rate())
	}
	p.SetCC(CCDCQCN)
	if p.DCQCN.Window || p.CC() != CCDCQCN {
		t.Fatal("SetCC(dcqcn) kept the window")
	}
}
