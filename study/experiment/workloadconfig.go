package experiment

// An experiment's workload section: the traffic of its points, and the
// workload each point runs.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/units"
)

// WorkloadConfig is the traffic of a workload experiment's points.
type WorkloadConfig struct {
	// CDFs of the Poisson background (built-in names or files), one
	// point each; empty: no background (then Loads must be [0]).
	CDFs []string `yaml:"cdfs,omitempty"`
	// Loads of the background, fractions of one host link (see Basis).
	Loads []float64 `yaml:"loads"`
	Basis string    `yaml:"basis,omitempty"`
	// Duration is the window in which flows start; MinFlows, when set,
	// lengthens it for each CDF and load until the expected flows are at
	// least MinFlows, up to MaxDuration.
	Duration    units.Duration `yaml:"duration"`
	MinFlows    int            `yaml:"min_flows,omitempty"`
	MaxDuration units.Duration `yaml:"max_duration,omitempty"`
	// CDFRates give a CDF's points their own link rate in place of
	// lab.rate: a CDF of many small flows starts more flows a second at
	// the same load, and a machine drives only so many flow starts a
	// second validly (study/experiment/defs/fct.yaml runs storage at 5M where the
	// others run at 20M). Slowdowns compare across rates; the report and
	// plots name each CDF's rate.
	CDFRates map[string]units.Rate `yaml:"cdf_rates,omitempty"`
	Incast   *IncastConfig         `yaml:"incast,omitempty"`
	Pattern  *PatternConfig        `yaml:"pattern,omitempty"`
	// Pairing is how the background pairs its hosts: uniform (the
	// default), or a permutation of the racks of a graph fabric, random
	// or near-worst (workload.Pairing, lab.FabricSpec.Permutation).
	Pairing string `yaml:"pairing,omitempty"`
	// Long flows run through every point (workload.Long; size 0: what
	// a host link carries in the duration).
	Long *LongConfig `yaml:"long,omitempty"`
	// Scenarios, when given, are a dimension of the points: each runs
	// its own incast in place of Incast (none when it has none), and its
	// own pairing when it names one, under its name.
	Scenarios []ScenarioConfig `yaml:"scenarios,omitempty"`
	// NoDCQCN turns DCQCN off (it acts only where lab.ecn marks).
	NoDCQCN bool `yaml:"no_dcqcn,omitempty"`
	MTU     int  `yaml:"mtu,omitempty"`
	// Drain is how long a run waits for flows after the last start (0:
	// lab.RunWorkload's default).
	Drain units.Duration `yaml:"drain,omitempty"`
	// Interval between progress lines and queue samples (default 1s of
	// the lab, 1ms of the target under clock: target).
	Interval units.Duration `yaml:"interval,omitempty"`
	// Clock is the time the section's durations are in: "lab" (the
	// default), the lab's time at the experiment's D; or "target", the
	// target's, each point's lab running them x its own D. Under rate:
	// auto, where points run at different D, only "target" gives every
	// point the same window of the target and incasts and patterns the
	// same period in it.
	Clock string `yaml:"clock,omitempty"`
}

// The clocks a workload's durations may be in (WorkloadConfig.Clock).
const (
	ClockLab    = "lab"
	ClockTarget = "target"
)

// targetClock is whether w's durations are the target's time.
func (w *WorkloadConfig) targetClock() bool { return w != nil && w.Clock == ClockTarget }

// IncastConfig is a periodic N-to-1 incast, of Trees incasts with
// distinct receivers at each instant (workload.Incast).
type IncastConfig struct {
	Senders int            `yaml:"senders"`
	Size    units.Size     `yaml:"size"`
	Period  units.Duration `yaml:"period,omitempty"`
	Start   units.Duration `yaml:"start,omitempty"`
	Trees   int            `yaml:"trees,omitempty"`
}

// LongConfig is workload.Long.
type LongConfig struct {
	Flows int            `yaml:"flows"`
	Size  units.Size     `yaml:"size,omitempty"`
	Start units.Duration `yaml:"start,omitempty"`
}

// ScenarioConfig is one of a workload's scenarios: a name (a point ID's
// first word), its incast and its background's pairing (empty: the
// workload's).
type ScenarioConfig struct {
	Name    string        `yaml:"name"`
	Incast  *IncastConfig `yaml:"incast,omitempty"`
	Pairing string        `yaml:"pairing,omitempty"`
}

// scenarioNames are the workload's scenarios, or "" when it has none.
func (c *Config) scenarioNames() []string {
	if c.Workload == nil || len(c.Workload.Scenarios) == 0 {
		return []string{""}
	}
	var out []string
	for _, sc := range c.Workload.Scenarios {
		out = append(out, sc.Name)
	}
	return out
}

// hasIncast says some point of c's workload runs an incast.
func (c *Config) hasIncast() bool {
	w := c.Workload
	if w == nil {
		return false
	}
	if len(w.Scenarios) == 0 {
		return w.Incast != nil
	}
	return slices.ContainsFunc(w.Scenarios, func(s ScenarioConfig) bool { return s.Incast != nil })
}

// hasPermutation says some point of c's workload pairs its background
// by a permutation.
func (c *Config) hasPermutation() bool {
	w := c.Workload
	if w == nil {
		return false
	}
	perm := func(p string) bool { x, err := workload.ParsePairing(p); return err == nil && x.IsPermutation() }
	if perm(w.Pairing) {
		return true
	}
	return slices.ContainsFunc(w.Scenarios, func(s ScenarioConfig) bool { return perm(s.Pairing) })
}

// PatternConfig is a periodic two-phase collective (ps or moe).
type PatternConfig struct {
	Kind   string         `yaml:"kind"`
	Size   units.Size     `yaml:"size"`
	Period units.Duration `yaml:"period"`
	Start  units.Duration `yaml:"start,omitempty"`
	Gap    units.Duration `yaml:"gap,omitempty"`
	Many   int            `yaml:"many,omitempty"`
	Few    int            `yaml:"few,omitempty"`
	TopK   int            `yaml:"top_k,omitempty"`
	// Skew is MoE's Zipf exponent of the experts' popularity (0:
	// uniform).
	Skew float64 `yaml:"skew,omitempty"`
	// Wait starts an event's second phase when its first has ended (every
	// flow of it completed or failed) rather than Gap after its start
	// (workload.Pattern.Wait).
	Wait bool `yaml:"wait,omitempty"`
}

// validateWorkload checks the workload section by building every point's
// workload and its schedule.
func (c *Config) validateWorkload() error {
	w := c.Workload
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if _, _, err := c.servers(); err != nil {
		bad("%w", err)
		return errors.Join(errs...)
	}
	for i, sc := range w.Scenarios {
		switch {
		case !nameRE.MatchString(sc.Name):
			bad("workload.scenarios[%d]: name %q: want lower-case letters, digits, - and _", i, sc.Name)
		case slices.ContainsFunc(w.Scenarios[:i], func(o ScenarioConfig) bool { return o.Name == sc.Name }):
			bad("workload.scenarios[%d]: %q twice", i, sc.Name)
		}
	}
	if len(w.Scenarios) > 0 && w.Incast != nil {
		bad("workload.incast and workload.scenarios: give the incast in each scenario")
	}
	if len(w.Loads) == 0 {
		bad("workload.loads: name at least one")
	}
	for _, l := range w.Loads {
		if len(w.CDFs) == 0 && l != 0 {
			bad("workload.loads: %g without cdfs (a background needs a flow-size distribution)", l)
		}
	}
	if w.Duration <= 0 {
		bad("workload.duration: must be positive")
	}
	if w.MinFlows < 0 {
		bad("workload.min_flows %d: must not be negative", w.MinFlows)
	}
	if w.Clock != "" && w.Clock != ClockLab && w.Clock != ClockTarget {
		bad("workload.clock %q: want %s or %s", w.Clock, ClockLab, ClockTarget)
	}
	for _, cdf := range slices.Sorted(maps.Keys(w.CDFRates)) {
		switch r := w.CDFRates[cdf]; {
		case !slices.Contains(w.CDFs, cdf):
			bad("workload.cdf_rates: %q is not one of workload.cdfs %v", cdf, w.CDFs)
		case r <= 0:
			bad("workload.cdf_rates: %s: a rate is needed", cdf)
		case len(c.Lab.Rates()) > 0:
			bad("workload.cdf_rates: not with lab.rates (a CDF's rate replaces lab.rate)")
		default:
			if _, err := lab.NewPlan(c.LabSpec("", cdf, "")); err != nil {
				bad("workload.cdf_rates: %s: %w", cdf, err)
			}
		}
	}
	if w.Pattern != nil && w.Pattern.Wait && w.Pattern.Gap != 0 {
		bad("workload.pattern: gap and wait together (wait starts the second phase when the first ends)")
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, scn := range c.scenarioNames() {
		for _, cdf := range c.cdfNames() {
			for _, load := range w.Loads {
				what := fmt.Sprintf("workload %s load %g", cdf, load)
				if scn != "" {
					what = fmt.Sprintf("workload scenario %s, %s load %g", scn, cdf, load)
				}
				wc, err := c.PointWorkload(Point{Scenario: scn, CDF: cdf, Load: load, Seed: c.Seeds[0]})
				if err != nil {
					bad("%s: %w", what, err)
					continue
				}
				if _, err := workload.Generate(wc); err != nil {
					bad("%s: %w", what, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// cdfNames are the workload's CDFs, or "none" when it has no background.
func (c *Config) cdfNames() []string {
	if len(c.Workload.CDFs) == 0 {
		return []string{"none"}
	}
	return c.Workload.CDFs
}

// WorkloadConfig is the workload of a point: the CDF (or "none"), load
// and seed, for c's fabric, every default resolved as the lab would
// (hosts, link rate, links per host, the incast's period, the pattern),
// so that the schedule is known before any lab comes up; its duration
// is lengthened for MinFlows.
func (c *Config) WorkloadConfig(cdf string, load float64, seed uint64) (workload.Config, error) {
	return c.PointWorkload(Point{Scenario: c.scenarioNames()[0], CDF: cdf, Load: load, Seed: seed})
}

// PointWorkload is the workload of point p (see WorkloadConfig): its
// scenario's, CDF, load and seed.
func (c *Config) PointWorkload(p Point) (workload.Config, error) {
	w := c.Workload
	cdf, load, seed := p.CDF, p.Load, p.Seed
	hosts, links, err := c.servers()
	if err != nil {
		return workload.Config{}, err
	}
	// A contender of its own D (pfc~d1000) runs the same flows on links
	// D/D' slower over a window D/D' longer: every lab-time duration
	// scaled by f.
	f := c.timeScale(p)
	rate, rates := uint64(c.rate(cdf)), []uint64(c.Lab.Rates())
	if f != 1 || c.autoD(p) > 0 {
		sc, _ := ParseContender(p.Contender) // timeScale has parsed it
		spec := c.PointLabSpec(p, sc, "/")
		m, err := spec.ResolvedModel()
		if err != nil {
			return workload.Config{}, err
		}
		rate, rates = m.LinkRateBps(), spec.Rates
	}
	wc := workload.Config{
		Hosts: hosts, LinkRate: rate, LinksPerHost: links,
		Load: load, Duration: scaled(w.Duration.D(), f), Seed: seed,
	}
	incast, pairing := w.Incast, w.Pairing
	if p.Scenario != "" {
		i := slices.IndexFunc(w.Scenarios, func(s ScenarioConfig) bool { return s.Name == p.Scenario })
		if i < 0 {
			return wc, fmt.Errorf("scenario %q: not one of workload.scenarios", p.Scenario)
		}
		incast = w.Scenarios[i].Incast
		if sp := w.Scenarios[i].Pairing; sp != "" {
			pairing = sp
		}
	}
	if wc.Pairing, err = workload.ParsePairing(pairing); err != nil {
		return wc, err
	}
	if wc.Pairing.IsPermutation() {
		if c.Fabric == nil {
			return wc, fmt.Errorf("pairing %s: a permutation of racks needs a graph fabric (fabric:)", wc.Pairing)
		}
		// As lab.RunWorkload would make it from the lab's fabric.
		if wc.Perm, err = c.Fabric.Spec().Permutation(wc.Pairing, seed); err != nil {
			return wc, err
		}
	}
	if len(rates) > 0 {
		// As lab.RunWorkload resolves it: the slowest level's links, and
		// every link of a host where they differ.
		wc.LinkRate = slices.Min(rates)
		if slices.Max(rates) != wc.LinkRate {
			for _, r := range rates {
				wc.HostRate += r
			}
		}
	}
	if wc.Basis, err = workload.ParseBasis(w.Basis); err != nil {
		return wc, err
	}
	if cdf != "none" {
		if wc.CDF, err = workload.OpenCDF(cdf); err != nil {
			return wc, err
		}
	}
	if in := incast; in != nil {
		x := workload.Incast{Senders: in.Senders, Size: int64(in.Size), Period: scaled(in.Period.D(), f), Start: scaled(in.Start.D(), f), Trees: in.Trees}
		if x.Period == 0 {
			x.Period = workload.DefaultIncastPeriod(wc.LinkRate, x.Senders, x.Size)
		}
		wc.Incast = &x
	}
	if l := w.Long; l != nil {
		x := workload.Long{Flows: l.Flows, Size: int64(l.Size), Start: scaled(l.Start.D(), f)}
		if x.Size == 0 {
			x.Size = int64(float64(wc.LinkRate) / 8 * wc.Duration.Seconds())
		}
		wc.Long = &x
	}
	if p := w.Pattern; p != nil {
		k, err := workload.ParseKind(p.Kind)
		if err != nil || (k != workload.KindPS && k != workload.KindMoE) {
			return wc, fmt.Errorf("pattern kind %q: want ps or moe", p.Kind)
		}
		x := workload.Pattern{Kind: k, Size: int64(p.Size), Period: scaled(p.Period.D(), f), Start: scaled(p.Start.D(), f), Gap: scaled(p.Gap.D(), f), Many: p.Many, Few: p.Few, TopK: p.TopK, Skew: p.Skew, Wait: p.Wait}
		x = x.Resolved(wc.Hosts)
		wc.Pattern = &x
	}
	if err := wc.Validate(); err != nil {
		return wc, err
	}
	if w.MinFlows > 0 {
		// The count grows about linearly with the duration: scale it by
		// the shortfall of the schedule itself (not of the expected
		// count, which a Poisson draw misses by a few percent), in whole
		// seconds, up to the cap. The schedule is a function of the
		// config, so the duration found is too.
		for range 6 {
			flows, err := workload.Generate(wc)
			if err != nil {
				return wc, err
			}
			if len(flows) >= w.MinFlows || wc.Duration >= scaled(w.MaxDuration.D(), f) {
				break
			}
			d := time.Duration(float64(wc.Duration) * float64(w.MinFlows) / float64(max(len(flows), 1)) * 1.03)
			// Whole steps of the file's clock (a second of the lab, a
			// millisecond of the target), as at f = 1.
			step := time.Second
			if w.targetClock() {
				step = time.Millisecond
			}
			base := time.Duration(float64(d) / f).Round(step)
			wc.Duration = min(scaled(w.MaxDuration.D(), f), scaled(base+step, f))
		}
	}
	return wc, nil
}
