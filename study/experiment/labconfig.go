package experiment

import (
	"fmt"
	"math"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/units"
)

// LabConfig is what every point's lab shares: its name, and any knob of
// a lab file (lab.Knobs, lab up's flags without their dashes: rate,
// rates, target, buffer, ecn, workers, level-order, xoff, xon, ...) but
// those the schemes set (fc and its settings) and the run root, which is
// the runner's.
type LabConfig struct {
	// Name of the labs the runner brings up, one at a time (default "x"
	// and the experiment's name, cut to 8 characters).
	Name string
	// Values are the knobs given, as written.
	Values lab.Values
	// Auto is rate: auto: each point runs at the smallest D this machine
	// keeps it faithful at (Config.ResolveAuto, lab calibrate). Until the
	// points' D are chosen, Values holds lab.CalibrateRate as the rate.
	Auto bool
}

// RateAuto is lab.rate's value that chooses each point's D.
const RateAuto = lab.RateAuto

// UnmarshalYAML reads the lab section, laying its keys over those l
// has (a quick section replaces only the keys it names); an unknown
// key, or one the schemes set, is an error naming its line.
func (l *LabConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: lab: want a mapping of lab file keys (rate: 20M, ...)", n.Line)
	}
	if l.Values == nil {
		l.Values = lab.Values{}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, v := n.Content[i].Value, n.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: lab.%s: want one value", v.Line, key)
		}
		if key == "name" {
			l.Name = v.Value
			continue
		}
		if key == "rate" {
			l.Auto = v.Value == RateAuto
			if l.Auto {
				l.Values["rate"] = units.Rate(lab.CalibrateRate).String()
				continue
			}
		}
		if err := lab.CheckKey(key); err != nil {
			return fmt.Errorf("line %d: lab: %w; the keys are a lab file's (lab up's flags without their dashes), and name", n.Content[i].Line, err)
		}
		k, _ := lab.KnobByName(key)
		switch {
		case k.Scheme:
			return fmt.Errorf("line %d: lab.%s: the schemes set it (name it in schemes)", v.Line, key)
		case k.Common:
			return fmt.Errorf("line %d: lab.%s: the runner's (lab experiment run --%s)", v.Line, key, key)
		}
		if err := k.Parse(v.Value); err != nil {
			return fmt.Errorf("line %d: lab.%s: %w", v.Line, key, err)
		}
		l.Values[key] = v.Value
	}
	return l.autoRates()
}

// autoRates lays lab.rates under rate: auto at the provisional rate:
// the levels keep the ratio the file gives them, the slowest at
// lab.CalibrateRate until each point's D is chosen (PointLabSpec then
// runs the slowest at the target's rate / D, the others at their
// multiple of it: a Rail-only NDC's HBD and rails).
func (l *LabConfig) autoRates() error {
	v, ok := l.Values["rates"]
	if !l.Auto || !ok {
		return nil
	}
	rates, err := units.ParseRates(v)
	if err != nil {
		return fmt.Errorf("lab.rates: %w", err)
	}
	slow := slices.Min(rates)
	if slow == 0 {
		return fmt.Errorf("lab.rates %s: a level's rate is 0", v)
	}
	l.Values["rates"] = scaleRates(rates, float64(lab.CalibrateRate)/float64(slow)).String()
	delete(l.Values, "rate")
	return nil
}

// scaleRates is every rate of rates times f, to the bit/s.
func scaleRates(rates []uint64, f float64) units.Rates {
	out := make(units.Rates, len(rates))
	for i, r := range rates {
		out[i] = uint64(math.Round(float64(r) * f))
	}
	return out
}

// MarshalYAML writes the section as it reads: the name, then the knobs
// in the table's order.
func (l LabConfig) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k, v string) {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &yaml.Node{Kind: yaml.ScalarNode, Value: v})
	}
	if l.Name != "" {
		add("name", l.Name)
	}
	for _, k := range lab.Knobs() {
		if k.Name == "rate" && l.Auto {
			// With lab.rates, the rates keep their ratio (autoRates).
			add(k.Name, RateAuto)
			continue
		}
		if v, ok := l.Values[k.Name]; ok {
			add(k.Name, v)
		}
	}
	return n, nil
}

// spec is the lab the section gives, before the lab's own defaults.
func (l LabConfig) spec() (lab.Spec, error) {
	var s lab.Spec
	err := l.Values.Apply(&s)
	return s, err
}

// Rate is lab.rate (0: not given).
func (l LabConfig) Rate() units.Rate {
	s, _ := l.spec()
	return units.Rate(s.RateBps)
}

// Rates is lab.rates (nil: not given).
func (l LabConfig) Rates() units.Rates {
	s, _ := l.spec()
	return units.Rates(s.Rates)
}

// ECN is lab.ecn, or an ECN threshold given: whether the switches mark.
func (l LabConfig) ECN() bool {
	s, _ := l.spec()
	return s.ECN || s.ECNKminBytes != 0 || s.ECNKmaxBytes != 0 || s.ECNPmax != 0
}

// LevelOrder is lab.level-order ("": not given).
func (l LabConfig) LevelOrder() string { return l.Values["level-order"] }
