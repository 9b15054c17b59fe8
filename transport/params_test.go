package transport

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/queues"
)

// The fabric of the tests: the lab's 100 Mb/s links with its default
// one-hop RTT, packets of 1000 payload bytes.
const (
	simRate = 100_000_000 // bit/s
	simRTT  = 250_000     // ns
	simMTU  = 1000
)

func testParams() Params { return DefaultParams(simRate, simRTT) }

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

// DefaultParams at the papers' rate and RTT are the papers' constants;
// at the lab's 100 Mb/s and 250 µs, the package documentation's table.
func TestDefaultParams(t *testing.T) {
	us := time.Microsecond
	ms := time.Millisecond
	for _, c := range []struct {
		name string
		p    Params
		want Params
	}{
		{"paper", DefaultParams(0, PaperOneHopRTT), Params{
			LineRateBps: 100e9, RTO: 10 * ms, RTOLow: 100 * us, RTOHigh: 320 * us, BDPBytes: 100_000,
			AckDelay: us, CNPInterval: 50 * us,
			DCQCN: DCQCNParams{AlphaPeriod: 55 * us, IncreasePeriod: 55 * us, ByteCounter: 10e6,
				AIRateBps: 100e6, HAIRateBps: 1e9, MinRateBps: 100e6},
			ECN: ECNParams{KminBytes: 100_000, KmaxBytes: 400_000, Pmax: 0.2},
		}},
		{"lab", DefaultParams(100e6, 250*us), Params{
			LineRateBps: 100e6, RTO: 1250 * ms, RTOLow: 12500 * us, RTOHigh: 40 * ms, BDPBytes: 12_500,
			AckDelay: 125 * us, CNPInterval: 6250 * us,
			DCQCN: DCQCNParams{AlphaPeriod: 6875 * us, IncreasePeriod: 6875 * us, ByteCounter: 1_250_000,
				AIRateBps: 100e3, HAIRateBps: 1e6, MinRateBps: 100e3},
			ECN: ECNParams{KminBytes: 12_500, KmaxBytes: 50_000, Pmax: 0.2},
		}},
		// No RTT: the papers' slowed down with the rate, data unscaled.
		{"rate only", DefaultParams(100e6, 0), Params{
			LineRateBps: 100e6, RTO: 10 * time.Second, RTOLow: 100 * ms, RTOHigh: 320 * ms, BDPBytes: 100_000,
			AckDelay: ms, CNPInterval: 50 * ms,
			DCQCN: DCQCNParams{AlphaPeriod: 55 * ms, IncreasePeriod: 55 * ms, ByteCounter: 10e6,
				AIRateBps: 100e3, HAIRateBps: 1e6, MinRateBps: 100e3},
			ECN: ECNParams{KminBytes: 100_000, KmaxBytes: 400_000, Pmax: 0.2},
		}},
	} {
		w := c.want
		w.WireOverhead, w.RTOThreshold, w.AckEvery = DefaultWireOverhead, 3, DefaultAckEvery
		w.DCQCN.Enabled, w.DCQCN.G, w.DCQCN.F = true, 1.0/256, 5
		if c.p != w {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, c.p, w)
		}
		if err := c.p.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		// The switch side takes the thresholds as they are.
		if err := queues.ECNConfig(c.p.ECN).Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// The papers' one-hop BDP is 25 KB; Scale.Bytes maps it.
	if s := NewScale(500e6, 250*time.Microsecond); s.Size(25_000) != 500e6/8*250e-6 {
		t.Errorf("one-hop BDP at 500 Mb/s: %d", s.Size(25_000))
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
