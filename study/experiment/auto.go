package experiment

// rate: auto: every point of a workload experiment at the smallest D at
// which this machine runs it faithfully (lab.Capacity.AutoDilation).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/api"
)

// AutoChoice is the D rate: auto chose for a point, and why. Base, when
// not 0, is the D its schedule was chosen at, which a point run again at
// a larger D keeps: the same flows, on slower links over a longer window
// (as a contender of its own D runs them), so its schemes still compare
// on one schedule.
type AutoChoice struct {
	D    float64 `yaml:"d" json:"d"`
	Base float64 `yaml:"base,omitempty" json:"base,omitempty"`
	Why  string  `yaml:"why" json:"why"`
}

// ResolveAuto chooses the D of every point of an experiment with rate:
// auto from this machine's capacity cp: the point's schedule (at the
// provisional rate, lab.CalibrateRate) gives its data frames per ms of
// the target, and cp the smallest D a worker carries them faithfully at.
// A point that has a choice already (a rerun's, read from config.yaml)
// or one of a CDF given its own rate (workload.cdf_rates) keeps its own;
// a contender of its own D (pfc~d1000) runs at it the flows its schedule
// has at the D chosen, as the simulator's points run those of the lab's
// points: every contender of a CDF, load and seed runs the same flows.
func (c *Config) ResolveAuto(cp lab.Capacity) error {
	if !c.Lab.Auto {
		return nil
	}
	if c.AutoD == nil {
		c.AutoD = map[string]AutoChoice{}
	}
	mtu := api.DefaultRDMAMTU
	if c.Workload.MTU > 0 {
		mtu = c.Workload.MTU
	}
	for _, p := range c.Points() {
		if _, ok := c.AutoD[p.ID]; ok || !c.autoApplies(p) {
			continue
		}
		wc, err := c.PointWorkload(p)
		if err != nil {
			return fmt.Errorf("rate auto: point %s: %w", p.ID, err)
		}
		flows, err := workload.Generate(wc)
		if err != nil {
			return fmt.Errorf("rate auto: point %s: %w", p.ID, err)
		}
		sc, err := ParseContender(p.Contender)
		if err != nil {
			return fmt.Errorf("rate auto: point %s: %w", p.ID, err)
		}
		// The lab the schedule was made for: the provisional rate's, or
		// a contender's own D.
		m, err := c.PointLabSpec(p, sc, "/").ResolvedModel()
		if err != nil {
			return fmt.Errorf("rate auto: point %s: %w", p.ID, err)
		}
		d, why := cp.AutoDilation(lab.DataFramesPerTargetMs(flows, mtu, wc.Duration, m.D))
		if sc.D != 0 {
			// Its own D, on the schedule its CDF, load and seed have at
			// the D chosen for them: the same flows as the others'.
			c.AutoD[p.ID] = AutoChoice{D: sc.D, Base: d, Why: fmt.Sprintf("its own D = %g, on the flows of D = %g (%s)", sc.D, d, why)}
			continue
		}
		c.AutoD[p.ID] = AutoChoice{D: d, Why: why}
	}
	return nil
}

// autoApplies is whether rate: auto chooses p's D.
func (c *Config) autoApplies(p Point) bool {
	if !c.Lab.Auto || c.Kind != KindWorkload {
		return false
	}
	_, own := c.Workload.CDFRates[p.CDF]
	return !own
}

// autoScale is what point p's lab-time durations become under rate:
// auto: its D over the D its schedule was chosen at (1 but for a point
// run again at a larger D).
func (c *Config) autoScale(p Point) float64 {
	if a := c.AutoD[p.ID]; c.autoApplies(p) && a.Base > 0 && a.D > 0 {
		return a.D / a.Base
	}
	return 1
}

// autoD is the D rate: auto chose for p (0: none).
func (c *Config) autoD(p Point) float64 {
	if !c.autoApplies(p) {
		return 0
	}
	return c.AutoD[p.ID].D
}

// PointLabSpec is the lab of point p under contender sc (ContenderLabSpec
// at p's CDF), at the D rate: auto chose for it.
func (c *Config) PointLabSpec(p Point, sc Contender, runRoot string) lab.Spec {
	s := c.ContenderLabSpec(sc, p.CDF, runRoot)
	if d := c.autoD(p); d > 0 {
		if len(s.Rates) > 0 {
			// Per-level rates keep their ratio: the slowest level at the
			// target's rate / D, as a uniform lab's links.
			s.Rates = scaleRates(s.Rates, s.Model().D/d)
		}
		// The target's rate / D (lab.Spec.Dilation with no rate).
		s.Dilation, s.RateBps = d, 0
	}
	return s
}

// autoRateText is the links' rates rate: auto chose for the points of
// cdf ("": every CDF's), slowest first: "50M-100M (auto)".
func (c *Config) autoRateText(cdf string) string {
	var ds []float64
	for _, p := range c.Points() {
		if d := c.autoD(p); d > 0 && (cdf == "" || p.CDF == cdf) && !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return RateAuto
	}
	slices.Sort(ds)
	m, err := c.LabSpec("", cdf, "/").ResolvedModel()
	if err != nil {
		return RateAuto
	}
	rate := func(d float64) string { return units.Rate(float64(m.Target.LinkRateBps) / d).String() }
	if rates := c.Lab.Rates(); len(rates) > 0 {
		// The levels' rates at each D: "32M,20M".
		rate = func(d float64) string { return scaleRates(rates, m.D/d).String() }
	}
	if len(ds) == 1 {
		return rate(ds[0]) + " (auto)"
	}
	return rate(ds[len(ds)-1]) + "-" + rate(ds[0]) + " (auto)"
}

// writeAuto writes the README's account of the D rate: auto chose, a
// line per point, with what made a point run again at a larger D.
func (c *Config) writeAuto(b *strings.Builder) {
	if !c.Lab.Auto || len(c.AutoD) == 0 {
		return
	}
	b.WriteString("## Rate: auto\n\nEach point ran at the smallest D at which this machine runs it faithfully (`lab calibrate`; docs/USAGE.md, \"Choosing D\"):\n\n")
	b.WriteString("| point | D | why |\n| --- | ---: | --- |\n")
	for _, p := range c.Points() {
		if a, ok := c.AutoD[p.ID]; ok && c.autoApplies(p) {
			fmt.Fprintf(b, "| %s | %g | %s |\n", p.ID, a.D, a.Why)
		}
	}
	b.WriteString("\n")
}

// SetRate gives every point link rate v (lab.rate; a CDF's own rate,
// workload.cdf_rates, goes), or with v "auto" the D rate: auto chooses
// (ResolveAuto; lab.rates then keep their ratio), and checks c again.
func (c *Config) SetRate(v string) error {
	if c.Lab.Values == nil {
		c.Lab.Values = lab.Values{}
	}
	c.Lab.Auto = v == RateAuto
	_, levels := c.Lab.Values["rates"]
	switch {
	case c.Lab.Auto && levels:
		// The levels keep their ratio (LabConfig.autoRates).
		if err := c.Lab.autoRates(); err != nil {
			return err
		}
	default:
		if c.Lab.Auto {
			v = units.Rate(lab.CalibrateRate).String()
		}
		k, _ := lab.KnobByName("rate")
		if err := k.Parse(v); err != nil {
			return err
		}
		c.Lab.Values["rate"] = v
		delete(c.Lab.Values, "rates")
	}
	if c.Workload != nil {
		c.Workload.CDFRates = nil
	}
	c.AutoD = nil
	return c.Validate()
}
