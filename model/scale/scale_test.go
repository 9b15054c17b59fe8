package scale

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestPapersAtD5000 derives every parameter of the papers' network at D =
// 5,000 (20 Mb/s links) and checks it against the target: every amount of
// data the same bytes, every time x 5,000, every rate / 5,000.
func TestPapersAtD5000(t *testing.T) {
	m, err := Dilate(Papers(), 20_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if m.D != 5000 {
		t.Fatalf("D = %g, want 5000", m.D)
	}
	const D = 5000
	us := float64(time.Microsecond)
	// name -> the target's value and the lab's, written out.
	want := map[string][2]float64{
		"link rate":           {100e9, 100e9 / D},
		"link delay":          {1 * us, 1 * us * D},
		"one-hop RTT":         {2 * us, 2 * us * D},
		"one-hop BDP":         {25_000, 25_000},
		"buffer per node":     {5_000_000, 5_000_000},
		"MTU (payload)":       {1024, 1024},
		"X_off (PortFC, PFC)": {150_000, 150_000},
		"X_on (PortFC, PFC)":  {100_000, 100_000},
		"BFC Th's BDP":        {25_000, 25_000},
		"PFC dynamic threshold alpha (0: static)": {0, 0},
		"PFC headroom per port and priority":      {0, 0},
		"BFC sticky time":                         {4 * us, 4 * us * D},
		"flow-control refresh":                    {10 * us, 10 * us * D},
		"pause hold":                              {335 * us, 335 * us * D},
		"watchdog detect":                         {1000 * us, 1000 * us * D},
		"watchdog restore":                        {1000 * us, 1000 * us * D},
		"ECN K_min":                               {100_000, 100_000},
		"ECN K_max":                               {400_000, 400_000},
		"ECN P_max":                               {0.2, 0.2},
		"DCQCN g":                                 {1.0 / 256, 1.0 / 256},
		"DCQCN alpha period K":                    {55 * us, 55 * us * D},
		"DCQCN increase period T":                 {55 * us, 55 * us * D},
		"DCQCN decrease period":                   {50 * us, 50 * us * D},
		"DCQCN byte counter B":                    {10_000_000, 10_000_000},
		"DCQCN F":                                 {5, 5},
		"DCQCN R_AI":                              {100e6, 100e6 / D},
		"DCQCN R_HAI":                             {1e9, 1e9 / D},
		"DCQCN minimum rate":                      {100e6, 100e6 / D},
		"CNP interval":                            {50 * us, 50 * us * D},
		"DCTCP g":                                 {1.0 / 16, 1.0 / 16},
		"DCTCP K":                                 {100_000, 100_000},
		"HPCC eta":                                {0.95, 0.95},
		"HPCC max stage":                          {5, 5},
		"HPCC base RTT T":                         {8 * us, 8 * us * D},
		"HPCC W_AI":                               {50, 50},
		"Go-Back-N RTO":                           {10_000 * us, 10_000 * us * D},
		"IRN RTO_low":                             {100 * us, 100 * us * D},
		"IRN RTO_high":                            {320 * us, 320 * us * D},
		"IRN RTO threshold":                       {3, 3},
		"IRN in-flight cap":                       {100_000, 100_000},
		"ACK delay":                               {1 * us, 1 * us * D},
		"ACK every":                               {4, 4},
		"NIC queue per flow":                      {32 << 10, 32 << 10},
		"ECN at dequeue (1: yes)":                 {0, 0},
		"worker slack":                            {100, 100 * us * D / 1000},
		"queue sample interval":                   {200 * us, 200 * us * D},
		"least drain time":                        {2000 * us, 2000 * us * D},
		"CI table entries per port":               {8, 8},
		"CI detection threshold":                  {50_000, 50_000},
		"CI residency":                            {100 * us, 100 * us * D},
	}
	seen := map[string]bool{}
	for _, p := range m.Params() {
		t.Run(p.Name, func(t *testing.T) {
			seen[p.Name] = true
			w, ok := want[p.Name]
			if !ok {
				t.Fatalf("parameter %q has no expected value", p.Name)
			}
			if !near(p.Target, w[0]) || !near(p.Lab, w[1]) {
				t.Errorf("target %g, lab %g; want %g, %g", p.Target, p.Lab, w[0], w[1])
			}
			// The rule of its kind, from the target's value alone.
			var rule float64
			switch p.Kind {
			case KindTime, KindFloored, KindBounded: // within bounds at this D
				rule = p.Target * D
			case KindRate:
				rule = p.Target / D
			case KindBytes, KindCount:
				rule = p.Target
			}
			if !near(p.Lab, rule) {
				t.Errorf("%s: lab %g, the rule (%v) gives %g", p.Name, p.Lab, p.Kind, rule)
			}
		})
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("parameter %q is not derived", name)
		}
	}
}

// near is equality up to the rounding of a value to whole ns, bytes or
// bit/s.
func near(a, b float64) bool { return math.Abs(a-b) <= max(1, 1e-9*math.Abs(b)) }

// TestPortRates: a Rail-only port at 1.6x the target links' lab rate
// counts its BDP, thresholds, ECN K and DCQCN steps at 160 Gb/s of the
// target; its times are the same.
func TestPortRates(t *testing.T) {
	m, err := Dilate(Papers(), 20_000_000)
	if err != nil {
		t.Fatal(err)
	}
	fast := uint64(32_000_000)
	if got := m.BDP(fast); got != 40_000 {
		t.Errorf("BDP at 32 Mb/s = %d, want 40000 (160 Gb/s x 2 µs)", got)
	}
	if th := m.Thresholds(fast); th.Xoff != 240_000 || th.Xon != 160_000 {
		t.Errorf("thresholds %+v, want 240000/160000", th)
	}
	m.Target.PFCAlpha, m.Target.PFCHeadroomBDPs = 0.125, 1.5
	if th := m.Thresholds(fast); th.Alpha != 0.2 || th.Headroom != 60_000 {
		t.Errorf("PFC's dynamic threshold %+v, want alpha 0.2 and 60000 bytes of headroom", th)
	}
	if e := m.ECN(fast); e.KminBytes != 160_000 || e.KmaxBytes != 640_000 {
		t.Errorf("ECN %+v, want 160000/640000", e)
	}
	tr := m.Transport(fast)
	if tr.LineRateBps != 32_000_000 || tr.AIRate != 32_000 || tr.BDPBytes != 160_000 {
		t.Errorf("transport: line %d, R_AI %d, cap %d; want 32000000, 32000, 160000", tr.LineRateBps, tr.AIRate, tr.BDPBytes)
	}
	if tr.RTO != m.Transport(0).RTO {
		t.Errorf("RTO %v differs from a target link's %v", tr.RTO, m.Transport(0).RTO)
	}
}

func TestDilation(t *testing.T) {
	for _, tc := range []struct {
		rate uint64
		d    float64
	}{{100_000_000_000, 1}, {500_000_000, 200}, {20_000_000, 5000}, {0, 1}} {
		m, err := Dilate(Papers(), tc.rate)
		if err != nil || m.D != tc.d {
			t.Errorf("rate %d: D %g, %v; want %g", tc.rate, m.D, err, tc.d)
		}
	}
	for _, rate := range []uint64{200_000_000_000, 100_000} {
		if _, err := Dilate(Papers(), rate); err == nil {
			t.Errorf("rate %d: no error", rate)
		}
	}
	m, _ := WithDilation(Papers(), 5000)
	if m.LinkRateBps() != 20_000_000 || m.TargetTime(10*time.Second) != 2*time.Millisecond || m.TargetRate(20e6) != 100e9 {
		t.Errorf("D 5000: rate %d, 10 s is %v, 20 Mb/s is %g", m.LinkRateBps(), m.TargetTime(10*time.Second), m.TargetRate(20e6))
	}
	if s := m.String(); !strings.Contains(s, "papers' network") || !strings.Contains(s, "D = 5000") {
		t.Errorf("String() = %q", s)
	}
}

// TestHoldFloor: at small D the pause hold stays at the emulator's floor.
func TestHoldFloor(t *testing.T) {
	m, _ := Dilate(Papers(), 1_000_000_000) // D = 100
	if h := m.FlowControl().Hold; h != HoldFloor {
		t.Errorf("hold at D 100 = %v, want the floor %v", h, HoldFloor)
	}
}

// TestNative is the emulator's own network: the papers' constants counted
// in its 250 µs one-hop RTT at the lab's rate, run at D = 1.
func TestNative(t *testing.T) {
	m, err := Dilate(Native(100_000_000), 100_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if m.D != 1 || m.OneHopRTT() != NativeOneHopRTT {
		t.Fatalf("D %g, RTT %v", m.D, m.OneHopRTT())
	}
	if bdp := m.BDP(0); bdp != 3125 { // 100 Mb/s x 250 µs
		t.Errorf("BDP %d, want 3125", bdp)
	}
	tr := m.Transport(0)
	if tr.RTOLow != 12500*time.Microsecond || tr.AIRate != 100_000 || tr.ByteCounter != 1_250_000 {
		t.Errorf("transport %+v", tr)
	}
	if e := m.ECN(0); e.KminBytes != 12500 {
		t.Errorf("ECN K_min %d, want 12500", e.KminBytes)
	}
}

func TestTargetValidate(t *testing.T) {
	bad := Papers()
	bad.XonBDPs = 7
	bad.LinkDelay = 0
	err := bad.Validate()
	if err == nil || !strings.Contains(err.Error(), "xon") || !strings.Contains(err.Error(), "link delay") {
		t.Errorf("Validate() = %v", err)
	}
	if err := Papers().Validate(); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		alpha, headroom float64
		ok              bool
	}{{0.125, 1.5, true}, {0.125, 0, true}, {0, 1.5, false}, {-1, 0, false}, {9, 0, false}, {0.125, -1, false}} {
		p := Papers()
		p.PFCAlpha, p.PFCHeadroomBDPs = c.alpha, c.headroom
		if err := p.Validate(); (err == nil) != c.ok || err != nil && !strings.Contains(err.Error(), "pfc alpha") {
			t.Errorf("pfc alpha %g, headroom %g: %v", c.alpha, c.headroom, err)
		}
	}
	if err := Native(0).Validate(); err != nil {
		t.Error(err)
	}
}

// Resolve fills in the target and D a lab leaves zero, as lab up and
// every node resolve them.
func TestResolve(t *testing.T) {
	for _, c := range []struct {
		t      Target
		d      float64
		rate   uint64
		name   string
		wantD  float64
		wantLR uint64
	}{
		{Target{}, 0, 0, NativeName, 1, 0},
		{Target{}, 0, 500_000_000, PapersName, 200, 500_000_000},
		{Target{}, 1000, 0, PapersName, 1000, 100_000_000},
		{Papers(), 50, 500_000_000, PapersName, 50, 2_000_000_000},
		{Native(10_000_000), 0, 10_000_000, NativeName, 1, 10_000_000},
	} {
		m := Resolve(c.t, c.d, c.rate)
		if m.Target.Name != c.name || m.D != c.wantD || (c.wantLR != 0 && m.LinkRateBps() != c.wantLR) {
			t.Errorf("Resolve(%q, %g, %d) = %s at D %g, link %d; want %s at D %g, link %d", c.t.Name, c.d, c.rate, m.Target.Name, m.D, m.LinkRateBps(), c.name, c.wantD, c.wantLR)
		}
	}
}

// A lab's times and rates read on the target's clock, labelled.
func TestClockTextUnit(t *testing.T) {
	m := Model{Target: Papers(), D: 5000}
	for _, c := range []struct{ got, want string }{
		{m.TimeText(8 * time.Second), "1.6ms in the target"},
		{m.TimeBoth(16429171 * time.Microsecond), "3.286ms in the target (16.43s of lab time)"},
		{m.LabTimeText(8 * time.Second), "8s of lab time = 1.6ms in the target"},
		{m.RateText(18.3e6), "91.5 Gbit/s in the target"},
		{m.RateBoth(18.3e6), "91.5 Gbit/s in the target (18.3 Mbit/s in the lab)"},
		{FormatMeasuredRate(0), "0 bit/s"},
		{RoundTime(7775 * time.Microsecond).String(), "7.775ms"},
		{RoundTime(1555).String(), "1.555µs"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// A run's cost: its wall time per ms of the target it emulated, the
// number and its text.
func TestWallPerTargetMsUnit(t *testing.T) {
	for _, c := range []struct {
		wall, target time.Duration
		want         float64
		text         string
	}{
		{21430 * time.Millisecond, 3286 * time.Microsecond, 21.43 / 3.286, "6.522s of wall time per ms in the target (21.43s of wall time for 3.286ms in the target)"},
		{10 * time.Second, 2 * time.Millisecond, 5, "5s of wall time per ms in the target (10s of wall time for 2ms in the target)"},
		{time.Hour, 0, 0, ""},
	} {
		got := WallPerTargetMs(c.wall, c.target)
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("WallPerTargetMs(%v, %v) = %g, want %g", c.wall, c.target, got, c.want)
		}
		if text := CostText(c.wall, c.target); text != c.text {
			t.Errorf("CostText(%v, %v) = %q, want %q", c.wall, c.target, text, c.text)
		}
	}
	// A run of the model's own time costs D ms per ms: the least.
	m := Model{Target: Papers(), D: 5000}
	if got := WallPerTargetMs(8*time.Second, m.TargetTime(8*time.Second)); math.Abs(got-m.D/1000) > 1e-12 {
		t.Errorf("a run of lab time alone: %g s per ms, want D/1000 = %g", got, m.D/1000)
	}
}

// A worker's slack is a 20th of the model's one-hop RTT, the same share
// of the target's time at every D, within 50 µs and 1 ms of the lab's.
func TestWorkerSlack(t *testing.T) {
	for _, c := range []struct {
		d    float64
		want time.Duration
	}{{100, 50 * time.Microsecond}, {1000, 100 * time.Microsecond}, {5000, 500 * time.Microsecond}, {50_000, time.Millisecond}} {
		if got := Resolve(Papers(), c.d, 0).WorkerSlack(); got != c.want {
			t.Errorf("D = %g: slack %v, want %v", c.d, got, c.want)
		}
	}
}
