package experiment

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/ns3"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/study/bench"
	"github.com/bcfab/bcfab/wire/transport"
)

// The kinds of experiment: what one point of it runs.
const (
	// KindWorkload runs lab.RunWorkload on a lab per point: Poisson
	// background from a CDF at a load, an incast, a pattern.
	KindWorkload = "workload"
	// KindLoop runs bench.Loop (the deadlock scenario, BCube(2,1)).
	KindLoop = "loop"
	// KindHoL runs bench.HoL (head-of-line blocking, BCube(4,1)).
	KindHoL = "hol"
)

// Config is an experiment file. Every duration reads as Go's syntax or
// plain seconds, every size as 1MB/256KiB, every rate as 20M. Parse
// fills in the defaults; Validate checks it whole, before any lab comes
// up.
type Config struct {
	// Name names the experiment and its output directory.
	Name string `yaml:"name"`
	// Title and Figure are for the report: what the experiment shows and
	// which figure of which paper it answers.
	Title  string `yaml:"title,omitempty"`
	Figure string `yaml:"figure,omitempty"`
	// Notes are printed in the report under the title.
	Notes string `yaml:"notes,omitempty"`
	Kind  string `yaml:"kind"`
	// Topology is BCube(N, K); loop and hol have their own (2,1) and
	// (4,1) and refuse another.
	Topology Topology `yaml:"topology"`
	// Fabric, in place of Topology, is a switch-to-switch fabric
	// (workload experiments only): leafspine, fattree, expander or
	// fcplus, with lab up's parameters.
	Fabric *FabricConfig `yaml:"fabric,omitempty"`
	Lab    LabConfig     `yaml:"lab"`
	// Contenders are compared at every point (the file's schemes): a
	// flow-control scheme (bench.SetScheme: none, portfc, pfc, pfcstar,
	// bfc, and the variants bfc:Q, bfc:hash and bfc:hash:Q for BFC with
	// Q queues and queues by flow hash, portfc:drr for PortFC's relay
	// queue in the servers' round robin) whose flows are lossless, irn
	// and gbn (no flow control, IRN's or Go-Back-N's loss recovery), or
	// FC/MODE for any other pairing (pfc/gbn); FC/nocc is FC's lossless
	// flows without congestion control (DCQCN off at their NICs), FC/CC
	// FC's lossless flows under congestion control CC (the lab's cc knob
	// for this contender: pfc/hpcc, sfq/hpcc, pfc/dctcp, pfc/dcqcn-win;
	// FC alone runs the file's lab.cc, DCQCN unless it says). On a
	// graph fabric a contender may name the switches' routing after an @,
	// in place of fabric.routing: pfc@dfksp2 is PFC on DF-KSP with two
	// lossless priorities, pfc@ksp on plain K shortest paths.
	Contenders []string `yaml:"schemes"`
	// Labels name contenders in the plots, tables and README where the
	// paper being reproduced prints a name other than the default one
	// (DefaultLabel: bfc/nocc is "BFC, no CC", BFC's paper's "BFC"); a
	// contender without one takes its default. A label may name a
	// contender schemes does not list (one the quick section leaves out).
	Labels map[string]string `yaml:"labels,omitempty"`
	// Seeds of the workload (one point each); loop and hol have no
	// randomness of their own and take only repetitions.
	Seeds []uint64 `yaml:"seeds,omitempty"`
	// Repetitions of every point (default 1).
	Repetitions int `yaml:"repetitions,omitempty"`
	// Health are the limits a run must keep to be valid.
	Health HealthConfig `yaml:"health,omitempty"`

	Workload *WorkloadConfig `yaml:"workload,omitempty"`
	Loop     *LoopConfig     `yaml:"loop,omitempty"`
	HoL      *HoLConfig      `yaml:"hol,omitempty"`
	// Conformance is a conformance experiment's cases.
	Conformance *ConformanceConfig `yaml:"conformance,omitempty"`
	// NS3 is how the reference simulator's contenders (ns3:...) model
	// what the lab's fabric has and the sim lacks.
	NS3 *NS3Config `yaml:"ns3,omitempty"`

	// Quick, when present, holds the keys that --quick replaces (any of
	// the above but name and kind): fewer schemes and loads, shorter runs.
	Quick yaml.Node `yaml:"quick,omitempty"`

	// IsQuick records that Quick was applied.
	IsQuick bool `yaml:"-"`

	// AutoD is the D lab.rate: auto chose for each point, by point ID
	// (ResolveAuto): the runner writes it into the experiment as run
	// (config.yaml), so that a rerun runs a point at the D it ran at.
	AutoD map[string]AutoChoice `yaml:"auto_d,omitempty"`
}

// NS3Config is the simulator's section of an experiment.
type NS3Config struct {
	// HostLink is a relaying server's link to its host in the sim
	// (ns3.HostLink): port (the default), the rate of its fastest port;
	// ports, their sum, every flow at one port's rate (a sim from
	// scripts/ns3/qp-rate.sh).
	HostLink string `yaml:"host_link,omitempty"`
}

// Topology is BCube(N, K).
type Topology struct {
	N int `yaml:"n"`
	K int `yaml:"k"`
}

// FabricConfig is a graph fabric (lab.FabricSpec, with lab up's flag
// names).
type FabricConfig struct {
	Kind             string  `yaml:"kind"`
	Leaves           int     `yaml:"leaves,omitempty"`
	Spines           int     `yaml:"spines,omitempty"`
	Oversubscription float64 `yaml:"oversubscription,omitempty"`
	K                int     `yaml:"k,omitempty"`
	ToRs             int     `yaml:"tors,omitempty"`
	Degree           int     `yaml:"degree,omitempty"`
	Seed             uint64  `yaml:"seed,omitempty"`
	Ports            int     `yaml:"ports,omitempty"`
	Virtual          int     `yaml:"virtual,omitempty"`
	Scenario         string  `yaml:"scenario,omitempty"`
	Hosts            int     `yaml:"hosts,omitempty"`
	Routing          string  `yaml:"routing,omitempty"`
	Paths            int     `yaml:"paths,omitempty"`
}

// Spec is f as the lab takes it.
func (f *FabricConfig) Spec() *lab.FabricSpec {
	return &lab.FabricSpec{Kind: f.Kind, Leaves: f.Leaves, Spines: f.Spines, Oversubscription: f.Oversubscription, K: f.K,
		ToRs: f.ToRs, Degree: f.Degree, Seed: f.Seed, Ports: f.Ports, Virtual: f.Virtual, Scenario: f.Scenario, Hosts: f.Hosts,
		Routing: f.Routing, Paths: f.Paths}
}

// TopologyText names c's fabric for titles: "BCube(4,1)", or the
// graph fabric's own name (lab up's).
func (c *Config) TopologyText() string {
	if c.Kind == KindConformance {
		return conformanceFabrics
	}
	if c.Fabric != nil {
		f := c.Fabric.Spec()
		rs := c.routings()
		if len(rs) == 0 {
			return f.String()
		}
		// The schemes route: name them all where the fabric's would be
		// (any routing by paths puts it there).
		f.Routing = lab.RoutingKSP
		return strings.Replace(f.String(), "--routing "+lab.RoutingKSP, "--routing "+strings.Join(rs, "|"), 1)
	}
	return fmt.Sprintf("BCube(%d,%d)", c.Topology.N, c.Topology.K)
}

// servers are the servers of c's fabric and the links each has.
func (c *Config) servers() (hosts, links int, err error) {
	if c.Fabric != nil {
		g, err := c.Fabric.Spec().Graph()
		if err != nil {
			return 0, 0, fmt.Errorf("fabric: %w", err)
		}
		return len(g.Servers()), 1, nil
	}
	t, err := bcube.New(c.Topology.N, c.Topology.K)
	if err != nil {
		return 0, 0, fmt.Errorf("topology: %w", err)
	}
	return t.Servers(), t.Levels(), nil
}

// HealthConfig are lab.HealthLimits in the file's units.
type HealthConfig struct {
	MaxLostShare float64        `yaml:"max_lost_share,omitempty"`
	MinLost      units.Duration `yaml:"min_lost,omitempty"`
	MaxRingDrops int64          `yaml:"max_ring_drops,omitempty"`
	// MaxRTTError bounds the links' median one-hop RTT's error against
	// the model's (0: 10%; negative: none).
	MaxRTTError float64 `yaml:"max_rtt_error,omitempty"`
	// MinRTTError is the error that never invalidates a point (0:
	// 300µs, scale.MinRTTError).
	MinRTTError units.Duration `yaml:"min_rtt_error,omitempty"`
	// MaxRTTErrorP99 bounds the links' p99 one-hop RTT's error (0: 200%,
	// scale.MaxRTTErrorP99; negative: none).
	MaxRTTErrorP99 float64 `yaml:"max_rtt_error_p99,omitempty"`
	// MaxStartLag bounds the flows' p99 start lag, in the target's time
	// (0: 5µs, scale.MaxStartLag; negative: none).
	MaxStartLag units.Duration `yaml:"max_start_lag,omitempty"`
	// MaxSkippedShare bounds the time of the model a worker may skip,
	// later than its replay reaches, as a share of the run (0:
	// scale.MaxSkippedShare; negative: none).
	MaxSkippedShare float64 `yaml:"max_skipped_share,omitempty"`
}

// Limits are h as lab.HealthLimits.
func (h HealthConfig) Limits() lab.HealthLimits {
	return lab.HealthLimits{MaxLostShare: h.MaxLostShare, MinLost: h.MinLost.D(), MaxRingDrops: h.MaxRingDrops, MaxRTTError: h.MaxRTTError, MinRTTError: h.MinRTTError.D(),
		MaxRTTErrorP99: h.MaxRTTErrorP99, MaxStartLag: h.MaxStartLag.D(), MaxSkippedShare: h.MaxSkippedShare}
}

// LoopConfig is bench.LoopOptions: the scenarios, the timing, the
// series' period and the flows' transport.
type LoopConfig struct {
	// Scenarios are run each with every scheme (bench.LoopScenarios:
	// bcube21, the default, on BCube(2,1); bcube41-over, the same cycle
	// with oversubscribed switch egresses, on BCube(4,1)).
	Scenarios []string       `yaml:"scenarios,omitempty"`
	Warmup    units.Duration `yaml:"warmup,omitempty"`
	Settle    units.Duration `yaml:"settle,omitempty"`
	Measure   units.Duration `yaml:"measure,omitempty"`
	// Interval is the period of the throughput series (0: 250ms).
	Interval units.Duration `yaml:"interval,omitempty"`
	// Transport carries the flows: gen (empty: generated flows) or rdma.
	Transport string `yaml:"transport,omitempty"`
}

// loopScenarios are the loop scenarios bench.Loop has, by name, with
// their fabric (the experiment package builds on every platform;
// bench.Loop runs on Linux only).
var loopScenarios = map[string]Topology{"bcube21": {2, 1}, "bcube41-over": {4, 1}}

// HoLConfig is bench.HoLOptions' timing and victim group.
type HoLConfig struct {
	Phase      units.Duration `yaml:"phase,omitempty"`
	GroupFlows int            `yaml:"group_flows,omitempty"`
	GroupSize  units.Size     `yaml:"group_size,omitempty"`
	// Interval is the period of the victim's throughput series (0:
	// 250ms).
	Interval units.Duration `yaml:"interval,omitempty"`
}

// Contender is one compared configuration: a lab's flow-control scheme
// and the transport mode of the workload's flows, and on a graph fabric
// its switches' routing.
type Contender struct {
	Name string // as written in the file
	FC   string // lab flow control with its variants (bench.SetScheme)
	Mode string // lossless, irn or gbn
	// NoCC turns the flows' congestion control (DCQCN) off.
	NoCC bool
	// CC, when not empty, is the lab's congestion control (lab.Spec.CC,
	// the cc knob) for this contender, and so its flows': FC/CC.
	CC string
	// Routing, when not empty, replaces the fabric's (lab.FabricSpec's
	// Routing): the part after an @.
	Routing string
	// Sim, when not empty, is the reference simulator that runs the
	// point's flows instead of a lab (SimNS3: a name ns3:FC...): on the
	// fabric, rate and parameters of the lab FC... would run, its
	// schedule exported by package lab/ns3.
	Sim string
	// D, when not 0, is the dilation this contender's labs run at in
	// place of the experiment's (a name ending in ~dD: pfc~d1000): the
	// same target network, its links at the target's rate / D, and
	// every duration of the workload in lab time (its window, incast
	// period and start, drain, sample interval) scaled by D over the
	// experiment's D, so that every D runs the same flows over the same
	// time of the target. The invariance study compares them.
	D float64
	// Knobs, when not empty, are lab knobs this contender's labs set in
	// place of the lab section's, in the order its name gives them (a
	// name ending in ~KEY=VALUE, once a knob: portfc~xoff=12KB~xon=8KB):
	// a sweep of a knob is one contender a value, each running the same
	// flows. The knobs that set D (rate, rates, dilation, target), the
	// schemes' and the runner's are not among them.
	Knobs []KnobValue
}

// KnobValue is a lab knob and its value as a contender's name gives it.
type KnobValue struct{ Key, Value string }

// dPrefix separates a contender's dilation from its name: pfc~d1000.
const dPrefix = "~d"

// variantSep separates what follows a contender's scheme: its own D
// (~dD) and lab knobs (~KEY=VALUE).
const variantSep = "~"

// notContenderKnobs are lab knobs a contender may not set: those that
// set its D (its own D is ~dD, and the target is the experiment's), and
// its congestion control, which FC/CC names.
var notContenderKnobs = []string{"rate", "rates", "dilation", "target", "cc"}

// SimNS3 is Contender.Sim of the HPCC ns-3 simulator (package lab/ns3),
// and simPrefix what names such a contender: ns3:pfc, ns3:pfc/hpcc.
const (
	SimNS3    = "ns3"
	simPrefix = SimNS3 + ":"
)

// noCC is the pseudo-mode of FC/nocc.
const noCC = "nocc"

// ParseContender reads a contender's name (see Config.Contenders): a registered
// scheme with its variants or a lossy transport (scheme.ParseName), or
// FC/MODE; either followed by @ROUTING.
func ParseContender(s string) (Contender, error) {
	if base, rest, ok := strings.Cut(s, variantSep); ok {
		sc, err := ParseContender(base)
		if err != nil {
			return sc, err
		}
		sc.Name = s
		for _, part := range strings.Split(rest, variantSep) {
			if key, val, ok := strings.Cut(part, "="); ok {
				if err := sc.addKnob(key, val); err != nil {
					return sc, fmt.Errorf("scheme %q: %w", s, err)
				}
				continue
			}
			d, isD := strings.CutPrefix(variantSep+part, dPrefix)
			v, err := strconv.ParseFloat(d, 64)
			switch {
			case !isD:
				return sc, fmt.Errorf("scheme %q: after %s a dilation (%s1000) or a lab knob (%sxoff=12KB), not %q", s, variantSep, dPrefix, variantSep, part)
			case err != nil || v < 1 || math.IsInf(v, 0) || sc.D != 0:
				return sc, fmt.Errorf("scheme %q: after %s a dilation D of at least 1 (pfc~d1000), once", s, dPrefix)
			case sc.Sim != "":
				return sc, fmt.Errorf("scheme %q: the simulator runs the target itself, at no dilation", s)
			}
			sc.D = v
		}
		return sc, nil
	}
	if rest, ok := strings.CutPrefix(s, simPrefix); ok {
		return parseSimContender(s, rest)
	}
	sc := Contender{Name: s, FC: s, Mode: transport.Lossless.String()}
	base, routing, routed := strings.Cut(s, "@")
	if routed {
		if routing == "" {
			return sc, fmt.Errorf("scheme %q: a routing after the @, or no @", s)
		}
		sc.FC, sc.Routing = base, routing
	}
	if fc, mode, ok := strings.Cut(base, "/"); ok && mode == noCC {
		sc.FC, sc.NoCC = fc, true
	} else if cc, err := transport.ParseCC(mode); ok && err == nil && cc != transport.CCNone {
		sc.FC, sc.CC = fc, cc.String()
	} else if ok {
		if _, err := transport.ParseMode(mode); err != nil {
			return sc, fmt.Errorf("scheme %q: %w", s, err)
		}
		sc.FC, sc.Mode = fc, mode
	}
	n, err := scheme.ParseName(sc.FC)
	if err != nil {
		return sc, err
	}
	if n.Transport != "" {
		if sc.NoCC || sc.CC != "" {
			return sc, fmt.Errorf("scheme %q: %s is a transport without flow control: nocc and a cc are for a flow-control scheme's lossless flows", s, sc.FC)
		}
		if sc.FC != base {
			return sc, fmt.Errorf("scheme %q: %s names its transport itself", s, sc.FC)
		}
		// The scheme it stands for keeps the name's variants: irn:drr
		// is none:drr's queues with IRN's flows.
		fc := n.FC
		if _, variants, ok := strings.Cut(sc.FC, ":"); ok {
			fc += ":" + variants
		}
		sc.FC, sc.Mode = fc, n.Transport
	}
	return sc, nil
}

// withoutKnobs is sc's name without its own lab knobs: the scheme,
// and its own D.
func (sc Contender) withoutKnobs() string {
	parts := strings.Split(sc.Name, variantSep)
	out := parts[:1]
	for _, p := range parts[1:] {
		if !strings.Contains(p, "=") {
			out = append(out, p)
		}
	}
	return strings.Join(out, variantSep)
}

// addKnob adds lab knob key at value v to sc's own.
func (sc *Contender) addKnob(key, v string) error {
	if err := lab.CheckKey(key); err != nil {
		return fmt.Errorf("%s%s=%s: %w", variantSep, key, v, err)
	}
	k, _ := lab.KnobByName(key)
	switch {
	case sc.Sim != "":
		return fmt.Errorf("%s%s: the simulator runs the experiment's parameters", variantSep, key)
	case k.Scheme, key == "cc":
		return fmt.Errorf("%s%s: the scheme's name sets it (FC:VARIANT, FC/CC)", variantSep, key)
	case k.Common, slices.Contains(notContenderKnobs, key):
		return fmt.Errorf("%s%s: not a contender's own (its D is %sD; the target, the rate and the runner's knobs are the experiment's)", variantSep, key, dPrefix)
	case slices.ContainsFunc(sc.Knobs, func(x KnobValue) bool { return x.Key == key }):
		return fmt.Errorf("%s%s twice", variantSep, key)
	}
	if err := k.Parse(v); err != nil {
		return fmt.Errorf("%s%s=%s: %w", variantSep, key, v, err)
	}
	sc.Knobs = append(sc.Knobs, KnobValue{key, v})
	return nil
}

// parseSimContender reads ns3:REST, the simulator running what the lab
// contender REST would: the sim's switches run PFC only, its flows are
// lossless, and it spreads them by ECMP.
func parseSimContender(s, rest string) (Contender, error) {
	sc, err := ParseContender(rest)
	if err != nil {
		return sc, err
	}
	sc.Name, sc.Sim = s, SimNS3
	if base, _, _ := strings.Cut(sc.FC, ":"); base != scheme.NamePFC || sc.FC != base || sc.Mode != transport.Lossless.String() || strings.HasPrefix(rest, simPrefix) {
		return sc, fmt.Errorf("scheme %q: the ns-3 simulator runs PFC with lossless flows: ns3:pfc, or ns3:pfc/CC (dcqcn, dcqcn-mlx, dcqcn-win, hpcc, dctcp, nocc)", s)
	}
	if sc.Routing != "" && sc.Routing != lab.RoutingECMP {
		return sc, fmt.Errorf("scheme %q: the ns-3 simulator routes by ECMP only", s)
	}
	return sc, nil
}

// FabricProblems are why a run of sc is invalid for what its fabric
// counted (f), or none. A scheme whose buffer no flow may fill
// (scheme.Unbounded: ideal-fq, sfq) is lossless by construction, so a
// drop means the buffer was too small for the run; Ideal-FQ is no longer
// itself once a flow had to share a queue (f.FQShared).
func (sc Contender) FabricProblems(f lab.FabricCounters) []string {
	n, err := scheme.ParseName(sc.FC)
	if err != nil || !scheme.Unbounded(n.FC) {
		return nil
	}
	var out []string
	if f.Drops > 0 {
		out = append(out, fmt.Sprintf("the fabric dropped %s under %s, whose buffer no flow may fill: the run outgrew the nodes' UMEM", units.Count(f.Drops, "frame", "frames"), n.FC))
	}
	if f.FQShared > 0 {
		out = append(out, fmt.Sprintf("%s found no queue of their own under %s (fq_shared, fq_table_full): not Ideal-FQ", units.Count(f.FQShared, "flow", "flows"), n.FC))
	}
	return out
}

// nameRE is what an experiment's name may be: it names a directory.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// List names the built-in experiments, sorted.
func List() []string {
	ents, _ := fs.ReadDir(defs, "defs")
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Builtin returns the file of the built-in experiment name.
func Builtin(name string) ([]byte, error) {
	if !nameRE.MatchString(name) || !slices.Contains(List(), name) {
		return nil, fmt.Errorf("experiment %q: not a built-in one (have %s; -f FILE runs a file)", name, strings.Join(List(), ", "))
	}
	return defs.ReadFile(path.Join("defs", name+".yaml"))
}

// Load reads the experiment file at file (or the built-in experiment
// name when file is empty) and parses it; quick applies its quick
// section.
func Load(name, file string, quick bool) (*Config, []byte, error) {
	var (
		data []byte
		err  error
	)
	src := name
	if file != "" {
		src = file
		data, err = os.ReadFile(file)
	} else {
		data, err = Builtin(name)
	}
	if err != nil {
		return nil, nil, err
	}
	c, err := Parse(data, quick)
	if err != nil {
		return nil, data, fmt.Errorf("%s: %w", src, err)
	}
	return c, data, nil
}

// Parse reads an experiment file strictly (a key the file format does
// not have is an error naming its line), applies the quick section when
// quick, fills in the defaults and validates the result.
func Parse(data []byte, quick bool) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if c.Quick.Kind != 0 {
		// The quick section is checked as strictly as the rest, then laid
		// over it: the keys it has replace the file's, nested maps key
		// by key, lists whole.
		var over Config
		if err := strictNode(&c.Quick, &over); err != nil {
			return nil, fmt.Errorf("parse quick: %w", err)
		}
		if over.Name != "" || over.Kind != "" || over.Quick.Kind != 0 {
			return nil, fmt.Errorf("quick (line %d): may not change name or kind, or hold another quick", c.Quick.Line)
		}
		if quick {
			if err := c.Quick.Decode(&c); err != nil {
				return nil, fmt.Errorf("parse quick: %w", err)
			}
			c.IsQuick = true
			if w := c.Workload; w != nil {
				// A quick run may run fewer CDFs than the rates name.
				maps.DeleteFunc(w.CDFRates, func(cdf string, _ units.Rate) bool { return !slices.Contains(w.CDFs, cdf) })
			}
		}
	} else if quick {
		return nil, errors.New("--quick: the file has no quick section")
	}
	c.setDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// strictNode decodes n into v with unknown keys refused, as the file's
// decoder does; the lines it reports are the file's.
func strictNode(n *yaml.Node, v any) error {
	// yaml.Node.Decode has no KnownFields: encode the node again (keeping
	// line numbers through a comment is not possible) and decode it with
	// a strict decoder, then name the section's first line in the error.
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("section starting at line %d: %w", n.Line, err)
	}
	return nil
}

// setDefaults fills in what the file leaves out.
func (c *Config) setDefaults() {
	switch c.Kind {
	case KindLoop:
		if c.Loop == nil {
			c.Loop = &LoopConfig{}
		}
		if len(c.Loop.Scenarios) == 0 {
			c.Loop.Scenarios = []string{"bcube21"}
		}
		if c.Topology == (Topology{}) {
			// The first scenario's: every other's is its own (Point's).
			c.Topology = loopScenarios[c.Loop.Scenarios[0]]
		}
	case KindHoL:
		if c.Topology == (Topology{}) {
			c.Topology = Topology{N: 4, K: 1}
		}
		if c.HoL == nil {
			c.HoL = &HoLConfig{}
		}
	case KindConformance:
		if c.Topology == (Topology{}) {
			// The lab every case's is made from (ConformanceCase.apply).
			c.Topology = Topology{N: 4, K: 1}
		}
		if c.Conformance == nil {
			c.Conformance = &ConformanceConfig{}
		}
		if len(c.Conformance.Cases) == 0 {
			c.Conformance.Cases = conformanceCaseNames()
		}
	}
	if c.Repetitions == 0 {
		c.Repetitions = 1
	}
	if len(c.Seeds) == 0 {
		c.Seeds = []uint64{1}
	}
	if c.Lab.Name == "" {
		c.Lab.Name = DefaultLabName(c.Name)
	}
	if w := c.Workload; w != nil {
		if w.Basis == "" {
			w.Basis = "link"
		}
		if len(w.CDFs) == 0 && len(w.Loads) == 0 {
			w.Loads = []float64{0}
		}
		if w.Clock == "" {
			w.Clock = ClockLab
		}
		// A second and 10 minutes of the lab; of the target, what they
		// are at D = 1,000.
		if w.Interval == 0 {
			w.Interval = units.Duration(time.Second)
			if w.targetClock() {
				w.Interval = units.Duration(time.Millisecond)
			}
		}
		if w.MaxDuration == 0 {
			w.MaxDuration = units.Duration(10 * time.Minute)
			if w.targetClock() {
				w.MaxDuration = units.Duration(600 * time.Millisecond)
			}
		}
	}
}

// DefaultLabName is "x" and the experiment's letters and digits, at
// most 8 characters: a lab name (^[a-z][a-z0-9]{0,7}$).
func DefaultLabName(exp string) string {
	b := []byte{'x'}
	for i := 0; i < len(exp) && len(b) < 8; i++ {
		if ch := exp[i]; ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' {
			b = append(b, ch)
		}
	}
	return string(b)
}

// Validate checks c whole: every error it finds, joined.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !nameRE.MatchString(c.Name) {
		bad("name %q: want 1-40 lowercase letters, digits, '-' or '_'", c.Name)
	}
	if c.Repetitions < 1 {
		bad("repetitions %d: want at least 1", c.Repetitions)
	}
	if len(c.Contenders) == 0 {
		bad("schemes: name at least one")
	}
	seen := map[string]bool{}
	for i, s := range c.Contenders {
		sc, err := ParseContender(s)
		if err != nil {
			bad("schemes[%d]: %w", i, err)
			continue
		}
		if seen[s] {
			bad("schemes[%d]: %q twice", i, s)
		}
		seen[s] = true
		if c.Kind != KindWorkload && c.Kind != KindConformance && (sc.Mode != transport.Lossless.String() || sc.NoCC || sc.CC != "") {
			bad("schemes[%d]: %q: a %s experiment runs generated flows, which have no transport mode: name a flow-control scheme", i, s, c.Kind)
		}
		if sc.Sim != "" && c.Kind != KindWorkload {
			bad("schemes[%d]: %q: the simulator runs a workload experiment's flows only", i, s)
		}
		if sc.D != 0 && (c.Kind != KindWorkload || len(c.Lab.Rates()) > 0) {
			bad("schemes[%d]: %q: a scheme's own dilation is a workload experiment's, on a lab of one rate (not lab.rates)", i, s)
		}
		if len(sc.Knobs) > 0 {
			if c.Kind != KindWorkload {
				bad("schemes[%d]: %q: a scheme's own lab knobs are a workload experiment's", i, s)
			} else if _, err := lab.NewPlan(c.ContenderLabSpec(sc, "", "")); err != nil {
				bad("schemes[%d]: %q: %w", i, s, err)
			}
		}
		if sc.Routing != "" && c.Fabric == nil {
			bad("schemes[%d]: %q: a routing (@%s) is a graph fabric's", i, s, sc.Routing)
		}
		if c.Fabric != nil && c.Topology == (Topology{}) && c.Lab.Rate() != 0 {
			// Not every scheme runs on a graph fabric, nor every routing
			// on every fabric.
			if _, err := lab.NewPlan(c.ContenderLabSpec(sc, "", "")); err != nil {
				bad("schemes[%d]: %q: %w", i, s, err)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
		v := c.Labels[k]
		// A label may name a scheme the quick section leaves out.
		if _, err := ParseContender(k); err != nil {
			bad("labels: %w", err)
		}
		if v == "" {
			bad("labels: %q: an empty label", k)
		}
	}
	if h := c.Health; h.MaxLostShare > 1 || math.IsNaN(h.MaxLostShare) || h.MinLost < 0 {
		bad("health: max_lost_share %g (want at most 1; negative: no bound), min_lost %v (want >= 0)", h.MaxLostShare, h.MinLost)
	}
	spec := c.LabSpec("", "", "")
	switch {
	case c.Lab.Rate() == 0 && len(c.Lab.Rates()) == 0:
		bad("lab.rate: a rate is needed (the links are shaped at it; the rates a machine carries validly are measured in docs/BENCHMARKS.md, Emulation capacity)")
	case c.Lab.Rate() != 0 && len(c.Lab.Rates()) > 0:
		bad("lab.rate and lab.rates: give one (rates sets every level's)")
	case c.Lab.Auto && c.Kind != KindWorkload:
		bad("lab.rate: auto: a workload experiment's (its points' schedules say how much the machine must carry); give a rate")
	}
	if len(c.AutoD) > 0 && !c.Lab.Auto {
		bad("auto_d: the D that lab.rate: auto chose; the file's rate is not auto")
	}
	// The plan checks all a lab up would but whether the name is free,
	// which is the runner's to check (a file is valid while its lab runs).
	if _, err := lab.NewPlan(spec); err != nil {
		bad("lab: %w", err)
	}
	if c.Fabric != nil {
		switch {
		case c.Kind != KindWorkload:
			bad("fabric: only a workload experiment runs on a graph fabric (%s has its own BCube)", c.Kind)
		case c.Topology != (Topology{}):
			bad("fabric and topology: give one")
		case c.Lab.LevelOrder() != "":
			bad("lab.level-order: a graph fabric's switches route by their tables")
		case len(c.Lab.Rates()) > 0:
			bad("lab.rates: a graph fabric's links run at lab.rate (its uplinks at their multiple of it)")
		}
	}
	if c.NS3 != nil {
		if _, err := ns3.ParseHostLink(c.NS3.HostLink); err != nil {
			bad("ns3.host_link: %w", err)
		}
		if !slices.ContainsFunc(c.Contenders, func(s string) bool { return strings.HasPrefix(s, simPrefix) }) {
			bad("ns3: no scheme runs in the simulator (%spfc...)", simPrefix)
		}
	}
	if c.Lab.LevelOrder() != "" && c.Kind == KindLoop {
		bad("lab.level-order: the loop experiment routes its flows itself")
	}
	if c.Workload != nil && c.Kind != KindWorkload || c.Loop != nil && c.Kind != KindLoop || c.HoL != nil && c.Kind != KindHoL ||
		c.Conformance != nil && c.Kind != KindConformance {
		bad("kind %s: only its own section (workload, loop, hol or conformance) may be given", c.Kind)
	}
	switch c.Kind {
	case KindWorkload:
		if c.Workload == nil {
			bad("kind workload: the workload section is missing")
			break
		}
		if err := c.validateWorkload(); err != nil {
			errs = append(errs, err)
		}
	case KindLoop:
		for i, sc := range c.Loop.Scenarios {
			t, ok := loopScenarios[sc]
			switch {
			case !ok:
				bad("loop.scenarios[%d]: %q: want bcube21 or bcube41-over", i, sc)
			case slices.Contains(c.Loop.Scenarios[:i], sc):
				bad("loop.scenarios[%d]: %q twice", i, sc)
			case len(c.Loop.Scenarios) == 1 && t != c.Topology:
				bad("topology: the loop experiment's scenario %s runs on BCube(%d,%d)", sc, t.N, t.K)
			}
		}
		if tr := c.Loop.Transport; tr != "" && tr != "gen" && tr != "rdma" {
			bad("loop.transport %q: want gen or rdma", tr)
		}
		if c.Loop.Interval < 0 || c.Loop.Warmup < 0 || c.Loop.Settle < 0 || c.Loop.Measure < 0 {
			bad("loop: warmup, settle, measure and interval must not be negative")
		}
	case KindHoL:
		if c.Topology != (Topology{N: 4, K: 1}) {
			bad("topology: the hol experiment runs on BCube(4,1)")
		}
		if h := c.HoL; h.GroupFlows < 0 || h.GroupSize < 0 || h.Phase < 0 || h.Interval < 0 {
			bad("hol: phase, group_flows, group_size and interval must not be negative")
		} else if h.Phase != 0 && h.Phase.D() < 2*time.Second {
			bad("hol.phase %v: want at least 2s (one second of it settles)", h.Phase)
		}
	case KindConformance:
		for i, name := range c.Conformance.Cases {
			switch _, ok := conformanceCase(name); {
			case !ok:
				bad("conformance.cases[%d]: %q: want one of %s", i, name, strings.Join(conformanceCaseNames(), ", "))
			case slices.Contains(c.Conformance.Cases[:i], name):
				bad("conformance.cases[%d]: %q twice", i, name)
			}
		}
		if len(c.Points()) == 0 {
			bad("conformance: no case runs under any of the schemes (a graph fabric's cases run pfc or none)")
		}
	default:
		bad("kind %q: want workload, loop, hol or conformance", c.Kind)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("experiment %s: %w", c.Name, err)
	}
	return nil
}

// rate is the link rate of cdf's points: its workload.cdf_rates entry,
// else lab.rate (0 with lab.rates).
func (c *Config) rate(cdf string) units.Rate {
	if c.Workload != nil {
		if r, ok := c.Workload.CDFRates[cdf]; ok {
			return r
		}
	}
	return c.Lab.Rate()
}

// RateText is the links' rate for titles: "20M", per level "32M,20M";
// for cdf "" every CDF's ("20M (storage 5M)"), else cdf's.
func (c *Config) RateText(cdf string) string {
	if c.Lab.Auto {
		return c.autoRateText(cdf)
	}
	if len(c.Lab.Rates()) > 0 {
		return c.Lab.Rates().String()
	}
	if cdf != "" {
		return c.rate(cdf).String()
	}
	t := c.Lab.Rate().String()
	if c.Workload != nil && len(c.Workload.CDFRates) > 0 {
		var o []string
		for _, name := range c.Workload.CDFs {
			if r, ok := c.Workload.CDFRates[name]; ok {
				o = append(o, name+" "+r.String())
			}
		}
		t += " (" + strings.Join(o, ", ") + ")"
	}
	return t
}

// LabSpec is the lab of a point of c under scheme fc (empty: none set)
// and, for a workload, CDF cdf (empty: lab.rate's), with its run
// directory under runRoot, before the lab's own defaults.
func (c *Config) LabSpec(fc, cdf, runRoot string) lab.Spec {
	return c.labSpec(fc, cdf, runRoot, nil)
}

// labSpec is LabSpec with a contender's own knobs laid over the lab
// section's.
func (c *Config) labSpec(fc, cdf, runRoot string, own []KnobValue) lab.Spec {
	s := lab.Spec{Name: c.Lab.Name, N: c.Topology.N, K: c.Topology.K}
	v := c.Lab.Values
	r, perCDF := lab.Values(nil), false
	if w := c.Workload; w != nil {
		if rate, ok := w.CDFRates[cdf]; ok {
			r, perCDF = lab.Values{"rate": rate.String()}, true
		}
	}
	if perCDF || len(own) > 0 {
		v = maps.Clone(c.Lab.Values)
		if v == nil {
			v = lab.Values{}
		}
		maps.Copy(v, r)
		for _, k := range own {
			v[k.Key] = k.Value
		}
	}
	_ = v.Apply(&s) // Validate has checked it
	s.RunRoot = runRoot
	if c.Fabric != nil {
		s.Fabric = c.Fabric.Spec()
	}
	if fc != "" {
		// ParseContender has checked it.
		_ = bench.SetScheme(&s, fc)
	}
	return s
}

// ContenderLabSpec is LabSpec under scheme sc: its flow control, and its
// routing in place of the fabric's.
func (c *Config) ContenderLabSpec(sc Contender, cdf, runRoot string) lab.Spec {
	s := c.labSpec(sc.FC, cdf, runRoot, sc.Knobs)
	if sc.D != 0 {
		// The target's rate / D (lab.Spec.Dilation with no rate).
		s.Dilation, s.RateBps = sc.D, 0
	}
	if sc.CC != "" {
		s.CC = sc.CC
	}
	if sc.Routing != "" && s.Fabric != nil {
		f := *s.Fabric
		f.Routing = sc.Routing
		s.Fabric = &f
	}
	return s
}

// timeScale is what a duration of c's workload becomes in point p's
// lab: under clock: target, p's D; in lab time, its contender's D over
// the experiment's at p's CDF, or 1 when the contender has none.
func (c *Config) timeScale(p Point) float64 {
	if c.Workload.targetClock() {
		return c.pointD(p)
	}
	if f := c.autoScale(p); f != 1 {
		return f
	}
	sc, err := ParseContender(p.Contender)
	if err != nil || sc.D == 0 {
		return 1
	}
	m, err := c.LabSpec("", p.CDF, "/").ResolvedModel()
	if err != nil || m.D <= 0 {
		return 1
	}
	return sc.D / m.D
}

// pointD is the D point p's lab runs at: rate: auto's choice, its
// contender's own, or the experiment's at p's CDF (1 when the model
// does not resolve, which validation reports).
func (c *Config) pointD(p Point) float64 {
	if d := c.autoD(p); d > 0 {
		return d
	}
	if sc, err := ParseContender(p.Contender); err == nil && sc.D != 0 {
		return sc.D
	}
	m, err := c.LabSpec("", p.CDF, "/").ResolvedModel()
	if err != nil || m.D <= 0 {
		return 1
	}
	return m.D
}

// scaled is d x f, to the nanosecond.
func scaled(d time.Duration, f float64) time.Duration {
	return time.Duration(math.Round(float64(d) * f))
}

// routings are the routings of c's labs when its schemes name some after
// an @ (a scheme without one has the fabric's), in order, each once;
// none when no scheme names one.
func (c *Config) routings() []string {
	var out []string
	named := false
	for _, s := range c.Contenders {
		sc, err := ParseContender(s)
		if err != nil {
			continue
		}
		r := sc.Routing
		if r == "" && c.Fabric != nil {
			r = cmp.Or(c.Fabric.Routing, lab.RoutingECMP)
		}
		named = named || sc.Routing != ""
		if r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	if !named {
		return nil
	}
	return out
}
