package experiment

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/units"
)

// autoCapacity is a capacity of a slow machine, whose reference point,
// WebSearch at 0.5 on BCube(4,1), runs at D = 2,000: its loads' points
// fall on both sides of the invariance study's floor of 1,000.
func autoCapacity() lab.Capacity {
	return lab.Capacity{
		Machine: lab.ThisMachine(), Measured: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC),
		RateBps: lab.CalibrateRate, D: 1000, Valid: true, FrameHops: 8e6, Wall: 29 * time.Second,
		TargetElapsed: 29 * time.Millisecond, DataFramesPerTargetMs: 95_000, WorkerPerHop: 4280 * time.Nanosecond,
		HopsPerTargetMs: 280_000, RTTErrorP99: 0.09,
	}
}

const autoFile = `
name: auto
kind: workload
topology: {n: 4, k: 1}
lab: {rate: auto, ecn: true}
schemes: [portfc, irn, pfc~d5000]
workload:
  cdfs: [websearch, storage]
  loads: [0.3, 0.7]
  duration: 2s
  cdf_rates: {storage: 5M}
`

// rate: auto: each point gets the D its schedule needs (heavier loads a
// larger one), its lab and workload run at it, the choice survives
// config.yaml, and what chooses its own rate (cdf_rates, a contender's
// D) keeps it.
func TestRateAuto(t *testing.T) {
	c, err := Parse([]byte(autoFile), false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Lab.Auto {
		t.Fatal("rate: auto not read")
	}
	if err := c.ResolveAuto(autoCapacity()); err != nil {
		t.Fatal(err)
	}
	d := map[string]float64{}
	for _, p := range c.Points() {
		d[p.ID] = c.autoD(p)
	}
	light, heavy := d["websearch-0.3-portfc-s1-r1"], d["websearch-0.7-portfc-s1-r1"]
	if light == 0 || heavy <= light {
		t.Fatalf("websearch at 0.3: D %g, at 0.7: D %g; want both chosen, the heavier larger", light, heavy)
	}
	if d["websearch-0.7-irn-s1-r1"] != heavy {
		t.Errorf("irn at 0.7: D %g, portfc's %g: the same schedule, the same D", d["websearch-0.7-irn-s1-r1"], heavy)
	}
	if id := "storage-0.3-portfc-s1-r1"; d[id] != 0 {
		t.Errorf("%s: D %g chosen; want its cdf_rates", id, d[id])
	}
	// A contender of its own D runs at it the flows the others run.
	own := "websearch-0.7-pfc-d5000-s1-r1"
	if d[own] != 5000 {
		t.Errorf("%s: D %g, want its own 5000 (points %v)", own, d[own], d)
	}
	sameFlows(t, c, pointByID(t, c, "websearch-0.7-portfc-s1-r1"), c, pointByID(t, c, own))
	p := c.Points()[0]
	if p.ID != "websearch-0.3-portfc-s1-r1" {
		t.Fatalf("first point %s", p.ID)
	}
	spec := c.PointLabSpec(p, Contender{FC: "portfc"}, "/")
	m, err := spec.ResolvedModel()
	if err != nil || m.D != light {
		t.Fatalf("the point's lab: D %g (%v), want %g", m.D, err, light)
	}
	wc, err := c.PointWorkload(p)
	if err != nil {
		t.Fatal(err)
	}
	if wc.LinkRate != m.LinkRateBps() {
		t.Errorf("the point's workload at %d b/s, its lab at %d", wc.LinkRate, m.LinkRateBps())
	}
	if s := c.LabSpec("portfc", "storage", ""); s.RateBps != 5e6 {
		t.Errorf("storage's lab at %d, want its cdf_rates 5M", s.RateBps)
	}
	if got := c.RateText("websearch"); !strings.HasSuffix(got, "(auto)") || !strings.Contains(got, "-") {
		t.Errorf("rate text %q, want the range of rates auto chose", got)
	}
	var b strings.Builder
	c.writeAuto(&b)
	if !strings.Contains(b.String(), "| websearch-0.7-portfc-s1-r1 | ") || !strings.Contains(b.String(), "lab calibrate of 2026-11-29") {
		t.Errorf("README section:\n%s", b.String())
	}

	// config.yaml keeps rate: auto and each point's D: a rerun runs a
	// point at the D it ran at, whatever the capacity says now.
	y, err := ConfigYAML(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "rate: auto") || !strings.Contains(string(y), "auto_d:") {
		t.Fatalf("config.yaml:\n%s", y)
	}
	again, err := Parse(y, false)
	if err != nil {
		t.Fatal(err)
	}
	faster := autoCapacity()
	faster.WorkerPerHop /= 4
	if err := again.ResolveAuto(faster); err != nil {
		t.Fatal(err)
	}
	for _, p := range again.Points() {
		if got := again.autoD(p); got != d[p.ID] {
			t.Errorf("%s read back at D %g, ran at %g", p.ID, got, d[p.ID])
		}
	}
}

const targetClockFile = `
name: clock
kind: workload
topology: {n: 4, k: 1}
lab: {rate: auto, ecn: true}
schemes: [portfc, portfc~d5000]
workload:
  cdfs: [websearch]
  loads: [0.3, 0.7]
  clock: target
  duration: 4ms
  incast: {senders: 8, size: 1MB, start: 500us, period: 2ms}
  drain: 3ms
`

// workload.clock: target: every point covers the same window of the
// target whatever its D (rate: auto's, a contender's own, a rerun's at
// a larger D), each lab running the file's durations x its D, and the
// same flows at every D of one load and seed.
func TestTargetClock(t *testing.T) {
	c, err := Parse([]byte(targetClockFile), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ResolveAuto(autoCapacity()); err != nil {
		t.Fatal(err)
	}
	check := func(id string, wantD float64) {
		t.Helper()
		p := pointByID(t, c, id)
		if d := c.pointD(p); d != wantD {
			t.Fatalf("%s: D %g, want %g", id, d, wantD)
		}
		wc, err := c.PointWorkload(p)
		if err != nil {
			t.Fatal(err)
		}
		lab := func(target time.Duration) time.Duration { return time.Duration(float64(target) * wantD) }
		if wc.Duration != lab(4*time.Millisecond) || wc.Incast.Start != lab(500*time.Microsecond) || wc.Incast.Period != lab(2*time.Millisecond) {
			t.Errorf("%s at D %g: duration %v, incast start %v, period %v; want 4ms, 500µs and 2ms of the target x D",
				id, wantD, wc.Duration, wc.Incast.Start, wc.Incast.Period)
		}
		if f := c.timeScale(p); scaled(c.Workload.Drain.D(), f) != lab(3*time.Millisecond) {
			t.Errorf("%s: drain %v in the lab, want 3ms x D", id, scaled(c.Workload.Drain.D(), f))
		}
	}
	light, heavy := c.autoD(pointByID(t, c, "websearch-0.3-portfc-s1-r1")), c.autoD(pointByID(t, c, "websearch-0.7-portfc-s1-r1"))
	if light <= 0 || heavy <= light {
		t.Fatalf("rate auto chose D %g at 0.3, %g at 0.7: want the heavier load the larger", light, heavy)
	}
	check("websearch-0.3-portfc-s1-r1", light)
	check("websearch-0.7-portfc-s1-r1", heavy)
	check("websearch-0.7-portfc-d5000-s1-r1", 5000)
	sameFlows(t, c, pointByID(t, c, "websearch-0.7-portfc-s1-r1"), c, pointByID(t, c, "websearch-0.7-portfc-d5000-s1-r1"))
	// A point run again at 2 x D: the same window of the target.
	id := "websearch-0.7-portfc-s1-r1"
	c.AutoD[id] = AutoChoice{D: 2 * heavy, Base: heavy, Why: "fell behind"}
	check(id, 2*heavy)
	// The defaults are the target's too.
	if c.Workload.Interval.D() != time.Millisecond || c.Workload.MaxDuration.D() != 600*time.Millisecond {
		t.Errorf("defaults under clock: target: interval %v, max_duration %v", c.Workload.Interval, c.Workload.MaxDuration)
	}
	var b strings.Builder
	writeScenario(&b, c)
	if !strings.Contains(b.String(), "4ms of the target's time") || !strings.Contains(b.String(), "workload.clock: target") {
		t.Errorf("scenario:\n%s", b.String())
	}
}

// --rate auto on the command line drops the file's own rates (each
// CDF's too) and chooses every point's; --rate 20M undoes auto; a loop
// experiment has no schedule to choose by.
func TestSetRate(t *testing.T) {
	c, err := Parse([]byte(strings.Replace(autoFile, "rate: auto", "rate: 20M", 1)), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetRate("auto"); err != nil {
		t.Fatal(err)
	}
	if !c.Lab.Auto || c.Workload.CDFRates != nil {
		t.Fatalf("--rate auto: auto %v, cdf_rates %v", c.Lab.Auto, c.Workload.CDFRates)
	}
	if err := c.ResolveAuto(autoCapacity()); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Points() {
		sc, _ := ParseContender(p.Contender)
		if c.autoD(p) == 0 && sc.D == 0 {
			t.Errorf("%s: no D chosen", p.ID)
		}
	}
	if err := c.SetRate("20M"); err != nil || c.Lab.Auto || c.AutoD != nil || c.Lab.Rate() != 20e6 {
		t.Errorf("--rate 20M: %v, auto %v, auto_d %v, rate %v", err, c.Lab.Auto, c.AutoD, c.Lab.Rate())
	}
	if err := c.SetRate("fast"); err == nil {
		t.Error("--rate fast: no error")
	}
	loop, _, err := Load("loop", "", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := loop.SetRate("auto"); err == nil || !strings.Contains(err.Error(), "workload experiment") {
		t.Errorf("loop at rate auto: %v", err)
	}
}

// The schedules rate: auto compares are the points' own: a heavier load
// is more data frames per target ms.
func TestAutoComparesSchedules(t *testing.T) {
	c, err := Parse([]byte(autoFile), false)
	if err != nil {
		t.Fatal(err)
	}
	frames := func(load float64) float64 {
		wc, err := c.WorkloadConfig("websearch", load, 1)
		if err != nil {
			t.Fatal(err)
		}
		flows, err := workload.Generate(wc)
		if err != nil {
			t.Fatal(err)
		}
		return lab.DataFramesPerTargetMs(flows, 1024, wc.Duration, 1000)
	}
	if a, b := frames(0.3), frames(0.7); b < 2*a || b > 2.7*a {
		t.Errorf("data frames per target ms: %g at 0.3, %g at 0.7; want about 7/3 as many", a, b)
	}
}

// A plot's title names the D its points ran at: one D, or the range
// when rate: auto ran its loads at several; a series plot of one load,
// that load's.
func TestPlotTitleDilations(t *testing.T) {
	c, err := Parse([]byte(autoFile), false)
	if err != nil {
		t.Fatal(err)
	}
	rs := []Result{
		{Point: Point{CDF: "websearch", Load: 0.3}, Dilation: 1000},
		{Point: Point{CDF: "websearch", Load: 0.7}, Dilation: 2000},
		{Point: Point{CDF: "storage", Load: 0.3}, Dilation: 20000},
	}
	pl := plots{c: c, results: rs, cdf: "websearch"}
	if got := pl.title("Average FCT"); !strings.Contains(got, "D = 1,000-2,000") {
		t.Errorf("title %q, want D = 1,000-2,000", got)
	}
	pl.load = 0.7
	if got := pl.title("CNPs"); !strings.Contains(got, "D = 2,000)") {
		t.Errorf("series title %q, want D = 2,000", got)
	}
	pl.cdf, pl.load = "storage", 0
	if got := pl.title("Average FCT"); !strings.Contains(got, "D = 20,000)") {
		t.Errorf("title %q, want D = 20,000", got)
	}
}

// pointByID is c's point id.
func pointByID(t *testing.T, c *Config, id string) Point {
	t.Helper()
	for _, p := range c.Points() {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no point %s", id)
	return Point{}
}

// pointFlows are point p's flows and the D they run at.
func pointFlows(t *testing.T, c *Config, p Point) ([]workload.Flow, float64) {
	t.Helper()
	wc, err := c.PointWorkload(p)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := workload.Generate(wc)
	if err != nil {
		t.Fatal(err)
	}
	return fl, c.autoD(p)
}

// sameFlows fails t unless point a of ca and point b of cb run the same
// flows on the target's clock, at whatever D each runs.
func sameFlows(t *testing.T, ca *Config, a Point, cb *Config, b Point) {
	t.Helper()
	fa, da := pointFlows(t, ca, a)
	fb, db := pointFlows(t, cb, b)
	if len(fa) != len(fb) || len(fa) == 0 {
		t.Fatalf("%d flows at D %g, %d at D %g: want the same flows", len(fa), da, len(fb), db)
	}
	for i := range fa {
		ta, tb := float64(fa[i].Start)/da, float64(fb[i].Start)/db
		if fa[i].Size != fb[i].Size || fa[i].Src != fb[i].Src || fa[i].Dst != fb[i].Dst || math.Abs(ta-tb) > 1 {
			t.Fatalf("flow %d: %+v at D %g, %+v at D %g: not the same on the target's clock", i, fa[i], da, fb[i], db)
		}
	}
}

const autoRatesFile = `
name: ro
kind: workload
topology: {n: 4, k: 1}
lab: {rate: auto, rates: "32M,20M", ecn: true}
schemes: [portfc, irn]
workload:
  loads: [0]
  clock: target
  duration: 400us
  pattern: {kind: moe, size: 64KB, period: 100us, skew: 1, wait: true}
`

// rate: auto with lab.rates (a Rail-only NDC): the levels keep the
// file's ratio, the slowest runs at the target's rate / the D chosen,
// the point's workload paces at those rates, and config.yaml reads back
// the same; --rate auto on such a file keeps the ratio too.
func TestRateAutoLevels(t *testing.T) {
	c, err := Parse([]byte(autoRatesFile), false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Lab.Auto || c.Lab.Rate() != 0 {
		t.Fatalf("auto %v, rate %v: want auto and no lab-wide rate", c.Lab.Auto, c.Lab.Rate())
	}
	// A machine slow enough that the D chosen is not the provisional
	// rate's.
	slow := autoCapacity()
	slow.WorkerPerHop *= 8
	if err := c.ResolveAuto(slow); err != nil {
		t.Fatal(err)
	}
	p := pointByID(t, c, "none-0-portfc-s1-r1")
	d := c.autoD(p)
	if prov := 100e9 / float64(lab.CalibrateRate); d == 0 || d == prov {
		t.Fatalf("D %g chosen; want one, not the provisional rate's", d)
	}
	spec := c.PointLabSpec(p, Contender{FC: "portfc"}, "/")
	m, err := spec.ResolvedModel()
	if err != nil {
		t.Fatal(err)
	}
	rails := float64(m.Target.LinkRateBps) / d
	if m.D != d || len(spec.Rates) != 2 || math.Abs(float64(spec.Rates[1])-rails) > 1 || math.Abs(float64(spec.Rates[0])-1.6*rails) > 1 {
		t.Fatalf("D %g: the lab at D %g, rates %v; want the rails at %g b/s and the HBD 1.6x", d, m.D, spec.Rates, rails)
	}
	wc, err := c.PointWorkload(p)
	if err != nil {
		t.Fatal(err)
	}
	if wc.LinkRate != spec.Rates[1] || wc.HostRate != spec.Rates[0]+spec.Rates[1] {
		t.Errorf("the point's workload: link %d, host %d b/s; its lab %v", wc.LinkRate, wc.HostRate, spec.Rates)
	}
	if got, want := c.RateText(""), units.Rates(spec.Rates).String()+" (auto)"; got != want {
		t.Errorf("rate text %q, want %q", got, want)
	}
	y, err := ConfigYAML(c)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(y, false)
	if err != nil {
		t.Fatalf("config.yaml:\n%s\n%v", y, err)
	}
	if err := again.ResolveAuto(autoCapacity()); err != nil {
		t.Fatal(err)
	}
	if s := again.PointLabSpec(p, Contender{FC: "portfc"}, "/"); !slices.Equal(s.Rates, spec.Rates) {
		t.Errorf("read back: rates %v, ran at %v\n%s", s.Rates, spec.Rates, y)
	}

	fixed, err := Parse([]byte(strings.Replace(autoRatesFile, "rate: auto, ", "", 1)), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixed.SetRate("auto"); err != nil {
		t.Fatal(err)
	}
	if err := fixed.ResolveAuto(slow); err != nil {
		t.Fatal(err)
	}
	if s := fixed.PointLabSpec(p, Contender{FC: "portfc"}, "/"); !slices.Equal(s.Rates, spec.Rates) {
		t.Errorf("--rate auto on rates 32M,20M: rates %v, want %v", s.Rates, spec.Rates)
	}
}
