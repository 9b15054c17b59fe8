package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/units"
)

// Point is one run of an experiment: one lab under one contender, and for a
// workload one CDF, load and seed; Rep counts repetitions from 1.
type Point struct {
	// ID names the point's directory: websearch-0.5-portfc-s1-r1,
	// portfc-r1.
	ID string `json:"id"`
	// Contender is the compared configuration's name (Config.Contenders).
	Contender string `json:"scheme"`
	// Scenario is a loop point's (bench.LoopScenarios), or a workload
	// point's (workload.scenarios).
	Scenario string  `json:"scenario,omitempty"`
	CDF      string  `json:"cdf,omitempty"`
	Load     float64 `json:"load"`
	Seed     uint64  `json:"seed"`
	Rep      int     `json:"rep"`
}

// Points are the runs of c, in the order the runner takes them: for a
// workload, every scheme at one CDF, load, seed and repetition before the
// next, so that a partial run already compares the schemes.
func (c *Config) Points() []Point {
	var ps []Point
	schemes := func(scn, cdf string, load float64, seed uint64, rep int) {
		for _, s := range c.Contenders {
			p := Point{Contender: s, Scenario: scn, CDF: cdf, Load: load, Seed: seed, Rep: rep}
			p.ID = p.id(c.Kind)
			ps = append(ps, p)
		}
	}
	if c.Kind == KindLoop {
		for _, sc := range c.Loop.Scenarios {
			for rep := 1; rep <= c.Repetitions; rep++ {
				for _, s := range c.Contenders {
					p := Point{Contender: s, Scenario: sc, Rep: rep}
					p.ID = p.id(c.Kind)
					ps = append(ps, p)
				}
			}
		}
		return ps
	}
	if c.Kind == KindConformance {
		for _, name := range c.Conformance.Cases {
			cc, ok := conformanceCase(name)
			if !ok {
				continue // Validate says so
			}
			for rep := 1; rep <= c.Repetitions; rep++ {
				for _, s := range c.Contenders {
					if sc, err := ParseContender(s); err != nil || !cc.runs(sc) {
						continue
					}
					p := Point{Contender: s, Scenario: name, Rep: rep}
					p.ID = p.id(c.Kind)
					ps = append(ps, p)
				}
			}
		}
		return ps
	}
	if c.Kind != KindWorkload {
		for rep := 1; rep <= c.Repetitions; rep++ {
			schemes("", "", 0, 0, rep)
		}
		return ps
	}
	for _, scn := range c.scenarioNames() {
		for _, cdf := range c.cdfNames() {
			for _, load := range c.Workload.Loads {
				for _, seed := range c.Seeds {
					for rep := 1; rep <= c.Repetitions; rep++ {
						schemes(scn, cdf, load, seed, rep)
					}
				}
			}
		}
	}
	return ps
}

func (p Point) id(kind string) string {
	r := strings.NewReplacer(":", "q", "/", "-", "@", "-", "~", "-", "=", "", ",", "_")
	s := r.Replace(p.Contender)
	if rest, ok := strings.CutPrefix(p.Contender, simPrefix); ok {
		s = SimNS3 + "-" + r.Replace(rest)
	}
	if kind == KindWorkload {
		id := fmt.Sprintf("%s-%s-%s-s%d-r%d", p.CDF, strconv.FormatFloat(p.Load, 'f', -1, 64), s, p.Seed, p.Rep)
		if p.Scenario != "" {
			id = p.Scenario + "-" + id
		}
		return id
	}
	if p.Scenario != "" {
		return fmt.Sprintf("%s-%s-r%d", p.Scenario, s, p.Rep)
	}
	return fmt.Sprintf("%s-r%d", s, p.Rep)
}

// Label is the point's setting: "websearch load 0.5, portfc, seed 1".
func (p Point) Label() string { return p.label(p.Contender) }

// PointLabel is p's setting for people, its contender named as the
// papers print it (Config.Label): "websearch load 0.5, PortFC, seed 1".
func (c *Config) PointLabel(p Point) string { return p.label(c.Label(p.Contender)) }

// label is p's setting with its contender called name.
func (p Point) label(name string) string {
	var parts []string
	if p.Scenario != "" {
		parts = append(parts, p.Scenario)
	}
	if p.CDF != "" {
		parts = append(parts, fmt.Sprintf("%s load %g", p.CDF, p.Load))
	}
	parts = append(parts, name)
	if p.Seed != 0 {
		parts = append(parts, fmt.Sprintf("seed %d", p.Seed))
	}
	if p.Rep > 1 {
		parts = append(parts, fmt.Sprintf("repetition %d", p.Rep))
	}
	return strings.Join(parts, ", ")
}

// Estimate is about how long p takes: its lab's bring-up and removal, and
// the run (for a workload, the schedule's window and a drain). Only the
// ETA uses it, scaled by what the points so far actually took.
func (c *Config) Estimate(p Point) time.Duration {
	const labUpDown = 8 * time.Second
	switch c.Kind {
	case KindLoop:
		l := c.Loop
		d := labUpDown + orDefault(l.Warmup.D(), time.Second) + orDefault(l.Settle.D(), time.Second) + orDefault(l.Measure.D(), 5*time.Second) + 2*time.Second
		if p.Scenario == "bcube41-over" {
			d += 10 * time.Second // 24 nodes to bring up and down, not 8
		}
		return d
	case KindHoL:
		ph := orDefault(c.HoL.Phase.D(), 5*time.Second)
		return labUpDown + 4*ph + 4*time.Second
	case KindConformance:
		return 2*labUpDown + 20*time.Second
	}
	wc, err := c.PointWorkload(p)
	if err != nil {
		return labUpDown
	}
	return labUpDown + wc.Duration + max(5*time.Second, wc.Duration/2)
}

// Describe is what p runs, for a dry run: a workload's flows and
// window ("1033 flows in 94s, schedule 3f2a9c01"), else "".
func (c *Config) Describe(p Point) string {
	if c.Kind != KindWorkload {
		return ""
	}
	wc, err := c.PointWorkload(p)
	if err != nil {
		return err.Error()
	}
	flows, err := workload.Generate(wc)
	if err != nil {
		return err.Error()
	}
	d := ""
	if x := c.autoD(p); x > 0 {
		d = fmt.Sprintf(", D = %g (rate auto)", x)
	}
	return fmt.Sprintf("%s in %v, schedule %.8s%s", units.Count(len(flows), "flow", "flows"), wc.Duration, ScheduleDigest(flows), d)
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// ScheduleDigest is the SHA-256 of a schedule as text: every flow's id,
// source, destination, size, start, kind, group and phase, one line
// each. Equal digests are equal schedules.
func ScheduleDigest(flows []workload.Flow) string {
	h := sha256.New()
	for _, f := range flows {
		fmt.Fprintf(h, "%d,%d,%d,%d,%d,%s,%d,%d\n", f.ID, f.Src, f.Dst, f.Size, int64(f.Start), f.Kind, f.Group, f.Phase)
	}
	return hex.EncodeToString(h.Sum(nil))
}
