package lab

// The knob table: every parameter of a lab, declared once. lab up's
// flags, a lab file's keys (read and written), an experiment's lab
// section and lab inspect -o yaml are all generated from it.

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

// Knob is one lab parameter.
type Knob struct {
	// Name is its one spelling: lab up's flag (--Name) and the key of a
	// lab file and of an experiment's lab section.
	Name string
	// Units is what its value is (package units reads most), as lab up
	// -h names it: rate, rates, size, duration, probability, int,
	// float64, bool, string, network (a target), map (a DSCP map) or
	// weights (DRR weights).
	Units string
	// Default is its value when not given, as the flag would take it;
	// empty when it is the zero value, which Help says how the lab
	// derives (most from the target and D: "0: the target's 1 ms x D").
	Default string
	// Help is the flag's help; a `word` in it names the value.
	Help string
	// Reads is what reads it: a flow-control scheme (portfc, pfc, bfc,
	// ci, ...) or a part of the lab (links, hostd, workers, lab up).
	Reads string
	// Example is a value other than the default, for tests and docs.
	Example string
	// Scheme marks a knob an experiment's schemes set, not its lab
	// section.
	Scheme bool
	// Common marks a knob whose flag every lab command has (--run-root):
	// lab up does not declare it again.
	Common bool
	// Fill marks a knob whose zero value in a Spec means Default (a Spec
	// built in code may leave it zero); the others' zero is a value of
	// its own or their rule's.
	Fill bool

	// zeroIsValue marks a knob whose zero value is one of its own (rate
	// 0: unshaped), not the default: it is written as any other.
	zeroIsValue bool
	// derive resolves the knob's zero value by its rule (from the
	// target, D, the fabric), once the Spec has every knob.
	derive func(s *Spec) error

	parse func(v string) error
	// set lays value v (parsed) on s; given says whether another knob
	// was given with it.
	set func(s *Spec, v string, given func(name string) bool) error
	// get is the value s holds, as text; "" for its zero value (the
	// default or the rule).
	get func(s Spec) string
	// omit says s holds the knob's value through another knob (rate
	// with rates, dilation with a rate).
	omit func(s Spec) bool
}

// codec reads and writes a value of units type T.
type codec[T any] struct {
	units  string
	parse  func(string) (T, error)
	format func(T) string
}

var (
	// rateC reads a rate, or auto (RateAuto), which is 0 until Up
	// chooses the D.
	rateC = codec[uint64]{"rate", func(v string) (uint64, error) {
		if v == RateAuto {
			return 0, nil
		}
		return units.ParseRate(v)
	}, units.CompactRate}
	ratesC = codec[[]uint64]{"rates", units.ParseRates, formatRates}
	// sizeC is a size a node holds in an int: at most 2 GiB.
	sizeC = codec[int]{"size", func(v string) (int, error) {
		n, err := units.ParseSize(v)
		if err == nil && n > 1<<31-1 {
			err = fmt.Errorf("size %q: at most 2 GiB", v)
		}
		return int(n), err
	}, func(n int) string { return units.CompactSize(int64(n)) }}
	size64C = codec[int64]{"size", units.ParseSize, units.CompactSize}
	lossC   = codec[int]{"probability", units.ParseLoss, units.CompactLoss}
	durC    = codec[time.Duration]{"duration", units.ParseDuration, func(d time.Duration) string { return units.Duration(d).String() }}
	cdurC   = codec[config.Duration]{"duration", func(v string) (config.Duration, error) {
		d, err := units.ParseDuration(v)
		return config.Duration(d), err
	}, func(d config.Duration) string { return units.Duration(d).String() }}
	// goDurC reads Go's syntax only, negative durations too.
	goDurC = codec[time.Duration]{"duration", time.ParseDuration, time.Duration.String}
	intC   = codec[int]{"int", func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%q: want a whole number", v)
		}
		return n, nil
	}, strconv.Itoa}
	floatC = codec[float64]{"float64", func(v string) (float64, error) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, fmt.Errorf("%q: want a number", v)
		}
		return f, nil
	}, func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }}
	boolC = codec[bool]{"bool", func(v string) (bool, error) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%q: want true or false", v)
		}
		return b, nil
	}, strconv.FormatBool}
	wordC = codec[string]{"string", func(v string) (string, error) { return v, nil }, func(v string) string { return v }}
	dscpC = codec[config.DSCPMap]{"map", config.ParseDSCPMap, config.DSCPMap.String}
	// weightsC is DRR weights, one per data queue: 1,3.
	weightsC = codec[[]int]{"weights", config.ParseDRRWeights, config.FormatDRRWeights}
)

// offC is c for a value whose zero means the default, read as 0 to turn
// it off, which it holds as off (negative).
func offC[T int | time.Duration](c codec[T], off T) codec[T] {
	return codec[T]{c.units, func(v string) (T, error) {
		x, err := c.parse(v)
		if err == nil && x == 0 {
			x = off
		}
		return x, err
	}, func(x T) string {
		if x < 0 {
			return "0"
		}
		return c.format(x)
	}}
}

// knob declares the knob of Spec field f (the rest of k as given).
func knob[T any](c codec[T], k Knob, f func(s *Spec) *T) Knob {
	k.Units = c.units
	k.parse = func(v string) error { _, err := c.parse(v); return err }
	set := k.set
	k.set = func(s *Spec, v string, given func(string) bool) error {
		x, err := c.parse(v)
		if err != nil {
			return err
		}
		*f(s) = x
		if set != nil {
			return set(s, v, given)
		}
		return nil
	}
	k.get = func(s Spec) string {
		x := f(&s)
		if reflect.ValueOf(x).Elem().IsZero() && !k.zeroIsValue {
			return ""
		}
		return c.format(*x)
	}
	return k
}

// RateAuto is the rate knob's value that has Up choose the D
// (Spec.RateAuto).
const RateAuto = "auto"

// autoKnob is the rate knob k, whose value is auto while Spec.RateAuto
// holds.
func autoKnob(k Knob) Knob {
	get := k.get
	k.get = func(s Spec) string {
		if s.RateAuto {
			return RateAuto
		}
		return get(s)
	}
	return k
}

// knobs is the table, in the order its values apply: a knob after those
// it reads (the target after the rate, ci after fc).
var knobs = []Knob{
	autoKnob(knob(rateC, Knob{Name: "rate", zeroIsValue: true, Default: units.CompactRate(config.DefaultRateBps), Reads: "links", Example: "100M",
		Help: "link rate in bit/s: 500M, 1G, 2.5G, 1000000000; 0 = unshaped; auto = the smallest D this machine keeps faithful (lab calibrate)",
		set: func(s *Spec, v string, _ func(string) bool) error { // every level's
			s.Rates, s.RateAuto = nil, v == RateAuto
			return nil
		},
		omit: func(s Spec) bool { return len(s.Rates) > 0 }},
		func(s *Spec) *uint64 { return &s.RateBps })),
	knob(ratesC, Knob{Name: "rates", Reads: "links", Example: "160M,100M",
		Help: "link rate of each level 0..k, comma-separated: 160M,100M (a Rail-only NDC's HBD and rails); replaces --rate"},
		func(s *Spec) *[]uint64 { return &s.Rates }),
	{Name: "target", derive: resolveModel, Units: "network", Default: scale.PapersName, Reads: "every node (package scale)", Example: scale.NativeName,
		Help:  "the `network` the lab emulates, at D = its link rate / --rate: papers (100 Gb/s, 1 µs links, 5 MB buffers), native (the emulator's own links at --rate, D = 1), or a target file (YAML)",
		parse: func(v string) error { _, err := ResolveTarget(v, 0); return err },
		set: func(s *Spec, v string, _ func(string) bool) (err error) {
			s.Target, err = ResolveTarget(v, s.RateBps)
			return err
		},
		get: func(s Spec) string { return s.Target.Name }},
	knob(floatC, Knob{Name: "dilation", Reads: "every node (package scale)", Example: "1000",
		Help: "the dilation `D` in place of --rate: every time of the target x D, every rate / D (the links run at the target's rate / D)",
		set: func(s *Spec, _ string, given func(string) bool) error {
			if s.Dilation != 0 && !given("rate") && !given("rates") {
				s.RateBps = 0 // the target's rate / D
			}
			return nil
		},
		omit: func(s Spec) bool { return len(s.Rates) > 0 || s.RateBps != 0 }},
		func(s *Spec) *float64 { return &s.Dilation }),
	knob(offC(durC, -1), Knob{Name: "probe-interval", Reads: "fidelity monitor", Example: "50ms",
		Help: "how often every fabric port probes its link's one-hop RTT, the fidelity monitor (default 100ms); 0 turns it off (and the delay lines' calibration)"},
		func(s *Spec) *time.Duration { return &s.ProbeInterval }),
	knob(sizeC, Knob{Name: "buffer", derive: func(s *Spec) error {
		if s.BufferBytes == 0 {
			s.BufferBytes = int(s.Target.BufferBytes)
		}
		return nil
	}, Reads: "every node", Example: "512K",
		Help: "shared buffer of each node, for all its egress queues: 4M, 512K, 100000 (0: the target's, 5 MB)"},
		func(s *Spec) *int { return &s.BufferBytes }),
	knob(lossC, Knob{Name: "loss", Reads: "links", Example: "0.5%",
		Help: "injected loss on every fabric link, each direction dropped on receive: a probability like 0.01, 1% or 100ppm"},
		func(s *Spec) *int { return &s.LossPPM }),
	knob(wordC, Knob{Name: "fc", Default: scheme.Default, Reads: "every node (package scheme)", Example: "pfc", Scheme: true,
		Help: "flow control of every node: " + scheme.List() + " (pfcstar: PFC with priority +1 at every relay)"},
		func(s *Spec) *string { return &s.FC }),
	knob(sizeC, Knob{Name: "xoff", Reads: "portfc, pfc", Example: "200K",
		Help: "X_off in bytes: PortFC's for both classes, PFC's per ingress port and priority (0: the target's, 6 one-hop BDPs)"},
		func(s *Spec) *int { return &s.Xoff }),
	knob(sizeC, Knob{Name: "xon", Reads: "portfc, pfc", Example: "30K",
		Help: "X_on in bytes (0: the target's, 4 one-hop BDPs)"},
		func(s *Spec) *int { return &s.Xon }),
	knob(intC, Knob{Name: "bfc-queues", Reads: "bfc", Example: "8", Scheme: true,
		Help: "BFC: queues per fabric port, the HQ included (0: 32; 2: a single data queue)"},
		func(s *Spec) *int { return &s.BFCQueues }),
	knob(intC, Knob{Name: "bfc-table", Reads: "bfc", Example: "400",
		Help: "BFC: flow-table `entries` per egress port (0: 100 x queues)"},
		func(s *Spec) *int { return &s.BFCTable }),
	knob(wordC, Knob{Name: "bfc-assign", Reads: "bfc", Example: "hash", Scheme: true,
		Help: "BFC: how flows get queues: dynamic (BFC's own; empty: dynamic) or hash (fixed by the flow's hash, stochastic fair queueing)"},
		func(s *Spec) *string { return &s.BFCAssign }),
	knob(wordC, Knob{Name: "relay-queue", Reads: "portfc", Example: "drr", Scheme: true,
		Help: "PortFC: how servers serve the relay queue: strict (before a and b; empty: strict) or drr (in their round robin)"},
		func(s *Spec) *string { return &s.RelayQueue }),
	knob(weightsC, Knob{Name: "drr-weights", Reads: "every fabric egress", Example: "1,3",
		Help: "DRR weight of each data queue of every fabric egress, in queue order, the HQ skipped: 1,3 (a queue's quantum is its weight in full frames; past the list 1; more than a port's data queues refused; docs/USAGE.md names each scheme's queues)"},
		func(s *Spec) *[]int { return &s.DRRWeights }),
	{Name: "ci", Units: "string", Reads: "lab up (sets fc)", Example: "ici", Scheme: true,
		Help:  "congestion isolation over PFC: ici (ECN marking coordinated with it), ci (DCQCN marking uncoordinated) or none; ici and ci are the scheme (--fc pfc or none)",
		parse: func(string) error { return nil },
		set: func(s *Spec, v string, _ func(string) bool) (err error) {
			s.FC, err = CIScheme(v, s.FC)
			return err
		},
		get: func(Spec) string { return "" }}, // the scheme is fc's
	knob(intC, Knob{Name: "ci-table", Reads: "ici, ci", Example: "16",
		Help: "congestion isolation: congested-flow table `entries` per egress port (0: the target's, 8)"},
		func(s *Spec) *int { return &s.CITable }),
	knob(sizeC, Knob{Name: "ci-detect", Reads: "ici, ci", Example: "20K",
		Help: "congestion isolation: a normal queue this long makes its port a congestion root, in bytes (0: the target's, 2 one-hop BDPs)"},
		func(s *Spec) *int { return &s.CIDetect }),
	knob(sizeC, Knob{Name: "ci-kmin", Reads: "ici, ci", Example: "5K",
		Help: "congestion isolation: the congested queue's ECN K_min in bytes (0: the ECN K_min)"},
		func(s *Spec) *int { return &s.CIKmin }),
	knob(sizeC, Knob{Name: "ci-kmax", Reads: "ici, ci", Example: "300K",
		Help: "congestion isolation: the congested queue's ECN K_max in bytes (0: the ECN K_max)"},
		func(s *Spec) *int { return &s.CIKmax }),
	knob(cdurC, Knob{Name: "ci-residency", Reads: "ici, ci", Example: "50ms",
		Help: "congestion isolation: how long an entry outlives its last refresh, in the lab's time (default: the target's 100us x D)"},
		func(s *Spec) *config.Duration { return &s.CIResidency }),
	knob(boolC, Knob{Name: "ecn", derive: func(s *Spec) error {
		// A threshold given turns marking on; those left zero are
		// scaled per port, to its rate.
		s.ECN = s.ECN || s.ECNKminBytes != 0 || s.ECNKmaxBytes != 0 || s.ECNPmax != 0
		return nil
	}, Reads: "every egress", Example: "true",
		Help: "ECN marking at every egress, K_min/K_max/P_max scaled from 100 KB/400 KB/0.2 at 100 Gb/s to the rate and one-hop RTT"},
		func(s *Spec) *bool { return &s.ECN }),
	knob(sizeC, Knob{Name: "ecn-kmin", Reads: "every egress", Example: "10K",
		Help: "ECN K_min in bytes (implies --ecn; 0: scaled default)"},
		func(s *Spec) *int { return &s.ECNKminBytes }),
	knob(sizeC, Knob{Name: "ecn-kmax", Reads: "every egress", Example: "500K",
		Help: "ECN K_max in bytes (implies --ecn; 0: scaled default)"},
		func(s *Spec) *int { return &s.ECNKmaxBytes }),
	knob(floatC, Knob{Name: "ecn-pmax", Reads: "every egress", Example: "0.5",
		Help: "ECN P_max, the marking `probability` at K_max (implies --ecn; 0: 0.2)"},
		func(s *Spec) *float64 { return &s.ECNPmax }),
	knob(wordC, Knob{Name: "cc", Reads: "hostd (every flow's transport), every egress (dctcp: marking; hpcc: INT)", Example: "hpcc",
		Help: "congestion control of the servers' flows: dcqcn (rate cut on CNPs, marking per --ecn; empty: dcqcn), dctcp (window cut on echoed marks; every egress marks at one threshold K, 100 KB at 100 Gb/s scaled to its rate, unless --ecn-kmin/--ecn-kmax/--ecn-pmax say otherwise), hpcc (window and rate from the INT records every egress stamps), dcqcn-win (DCQCN with a window of one BDP), dcqcn-mlx (DCQCN as Mellanox NICs and the HPCC simulator run it: CNPs noted and the rate cut on a 50 µs clock, cuts in a row keep the target, the timer alone raises the rate) or none"},
		func(s *Spec) *string { return &s.CC }),
	knob(offC(durC, -1), Knob{Name: "watchdog-detect", Reads: "watchdog (every scheme)", Example: "5ms",
		Help: "report a queue paused, not empty and sending nothing for this long (default: the target's 1 ms x D); 0 turns the watchdog off"},
		func(s *Spec) *time.Duration { return &s.WatchdogDetect }),
	knob(wordC, Knob{Name: "watchdog-action", Default: config.WatchdogNone, Reads: "watchdog (every scheme)", Example: "drop",
		Help: "what the watchdog does to a stalled queue: none (report), forward (ignore pauses) or drop (discard its frames)"},
		func(s *Spec) *string { return &s.WatchdogAction }),
	knob(durC, Knob{Name: "watchdog-restore", Reads: "watchdog (every scheme)", Example: "2ms",
		Help: "how long a watchdog action lasts before the queue obeys pauses again (0: the target's 1 ms x D)"},
		func(s *Spec) *time.Duration { return &s.WatchdogRestore }),
	knob(dscpC, Knob{Name: "dscp-map", Fill: true, Default: config.DefaultDSCPMap().String(), Reads: "servers' bc0 classifier", Example: "26=3,46=5",
		Help: "classes (802.1Q priorities) of kernel traffic on every server's bc0 by DSCP: DSCP=priority,... or none; unmapped: 0 (ICMP 6)"},
		func(s *Spec) *config.DSCPMap { return &s.DSCPMap }),
	knob(wordC, Knob{Name: "xdp-mode", Fill: true, Default: config.DefaultXDPMode, Reads: "every node's ports", Example: "generic",
		Help: "XDP attach `mode`: native, generic or auto"},
		func(s *Spec) *string { return &s.XDPMode }),
	knob(wordC, Knob{Name: "level-order", Fill: true, Default: "hash", Reads: "hostd (servers' routing)", Example: "1,0",
		Help: "servers' routing `policy`: hash, ate (Asymmetric Traffic Engineering: a new RDMA flow starts in level 0 unless its source's bytes in flight there reach --ate-p x --ate-cap), ascending, descending or a permutation like 1,0"},
		func(s *Spec) *string { return &s.LevelOrder }),
	knob(floatC, Knob{Name: "ate-p", Reads: "hostd (level order ate)", Example: "0.75",
		Help: "level order ate: the `fraction` p of B_H at which level 0 counts as full (0: 0.9)"},
		func(s *Spec) *float64 { return &s.ATEP }),
	knob(size64C, Knob{Name: "ate-cap", Reads: "hostd (level order ate)", Example: "8K",
		Help: "level order ate: B_H, a source's level-0 capacity in bytes (0: its eth0 rate x 4 one-hop RTTs)"},
		func(s *Spec) *int64 { return &s.ATECapBytes }),
	knob(wordC, Knob{Name: "bin-dir", derive: resolveBinDir, Reads: "lab up", Example: "/opt/bcfab/bin",
		Help: "`dir`ectory with swd and hostd (default: the directory of lab)",
		omit: func(s Spec) bool { def, err := DefaultBinDir(); return err == nil && def == s.BinDir }},
		func(s *Spec) *string { return &s.BinDir }),
	knob(wordC, Knob{Name: "run-root", Fill: true, Default: DefaultRunRoot, Reads: "lab up", Example: "/tmp/labs", Common: true,
		Help: "`dir`ectory of the labs' state, configs, sockets and logs"},
		func(s *Spec) *string { return &s.RunRoot }),
	knob(intC, Knob{Name: "max-nodes", Fill: true, Default: strconv.Itoa(DefaultMaxNodes), Reads: "lab up", Example: "40",
		Help: "refuse fabrics with more than `count` servers + switches"},
		func(s *Spec) *int { return &s.MaxNodes }),
	knob(durC, Knob{Name: "health-timeout", Fill: true, Default: units.Duration(DefaultHealthTimeout).String(), Reads: "lab up", Example: "2m0s",
		Help: "how long to wait for every daemon's /healthz"},
		func(s *Spec) *time.Duration { return &s.HealthTimeout }),
	knob(offC(intC, PerNode), Knob{Name: "workers", Fill: true, Default: strconv.Itoa(DefaultWorkers), Reads: "workers", Example: "0",
		Help: "worker processes that host the nodes, one engine thread each; 0: a daemon process per node (swd, hostd)"},
		func(s *Spec) *int { return &s.Workers }),
	knob(wordC, Knob{Name: "links", Fill: true, Default: DefaultLinkMode, Reads: "workers", Example: config.LinksVeth,
		Help: "how a cable between two nodes of one worker moves frames: patch (in memory) or veth (AF_XDP through the kernel)"},
		func(s *Spec) *string { return &s.LinkMode }),
	knob(durC, Knob{Name: "worker-slack", Reads: "workers", Example: "100us",
		Help: "how late a worker may serve a deadline so that close ones share a wake-up (0: the model's, a 20th of its one-hop RTT within 50us-1ms: lab model's worker slack)"},
		func(s *Spec) *time.Duration { return &s.WorkerSlack }),
	knob(goDurC, Knob{Name: "worker-poll", Reads: "workers", Example: "20us",
		Help: "how long a worker polls without sleeping after it last found work (0: 10us; negative: never)"},
		func(s *Spec) *time.Duration { return &s.WorkerPollBudget }),
	knob(intC, Knob{Name: "worker-priority", Reads: "workers", Example: "20",
		Help: "the real-time (SCHED_FIFO) priority at which a worker's thread keeps time, 1-99 (0: 10; negative: an ordinary thread)"},
		func(s *Spec) *int { return &s.WorkerPriority }),
	knob(intC, Knob{Name: "frames-per-port", derive: func(s *Spec) error {
		if servers, switches, ok := nodeCount(s.N, s.K); ok && s.FramesPerPort == 0 && servers+switches > BigFabric {
			s.FramesPerPort = BigFramesPerPort
		}
		return nil
	}, Reads: "every node's UMEM", Example: "2048",
		Help: "UMEM `frames` per port of every node (0: 4096, 1024 above 100 nodes)"},
		func(s *Spec) *int { return &s.FramesPerPort }),
	knob(intC, Knob{Name: "ring-size", derive: func(s *Spec) error {
		if s.RingSize == 0 && s.Workers != PerNode {
			s.RingSize = WorkerRingSize
		}
		return nil
	}, Reads: "every node's sockets", Example: "512",
		Help: "`entries` of every AF_XDP ring (0: 256 on workers, 1024 with a process per node)"},
		func(s *Spec) *int { return &s.RingSize }),
}

// renamed are keys spelt otherwise before, by their old spelling.
var renamed = map[string]string{"link-mode": "links", "level_order": "level-order"}

// Knobs is the table: every lab parameter, in the order they apply.
func Knobs() []Knob { return knobs }

// KnobByName is the knob named name.
func KnobByName(name string) (Knob, bool) {
	for _, k := range knobs {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}

// Parse checks that v reads as the knob's value.
func (k Knob) Parse(v string) error { return k.parse(v) }

// Get is the value s holds as text; "" for none to write: the default
// (Defaults'), the zero value (the rule's) or one another knob gives.
func (k Knob) Get(s Spec) string {
	v := k.get(s)
	if v == "" || (k.omit != nil && k.omit(s)) || v == k.get(defaults()) {
		return ""
	}
	return v
}

// Values are knobs' values as given, by name, in the knobs' syntax.
type Values map[string]string

// Apply lays v over s in the table's order; the error names the knob.
func (v Values) Apply(s *Spec) error {
	given := func(name string) bool { _, ok := v[name]; return ok }
	for _, k := range knobs {
		if x, ok := v[k.Name]; ok {
			if err := k.set(s, x, given); err != nil {
				return fmt.Errorf("%s: %w", k.Name, err)
			}
		}
	}
	return nil
}

// ValuesOf are the values of s that a lab file says: every knob whose
// value is not its default.
func ValuesOf(s Spec) Values {
	v := Values{}
	for _, k := range knobs {
		if x := k.Get(s); x != "" {
			v[k.Name] = x
		}
	}
	return v
}

// CheckKey says whether key is a knob, naming the new spelling of an
// old one and the nearest knob to a typo.
func CheckKey(key string) error { return checkKey(key) }

// checkKey is CheckKey for a place that takes the keys also as well.
func checkKey(key string, also ...string) error {
	if _, ok := KnobByName(key); ok || slices.Contains(also, key) {
		return nil
	}
	if n, ok := renamed[key]; ok {
		return fmt.Errorf("key %s is now spelt %s", key, n)
	}
	names := slices.Clone(also)
	for _, k := range knobs {
		names = append(names, k.Name)
	}
	hint := ""
	if k := closestKey(key, names); k != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", k)
	}
	return fmt.Errorf("unknown key %s%s", key, hint)
}

// defaults is Defaults, made once (read only).
var defaults = sync.OnceValue(Defaults)

// Defaults is the Spec lab up starts from: every knob at its Default
// (unlike Spec's zero values, the rate is config.DefaultRateBps, not
// unshaped), and the name and the target's buffer.
func Defaults() Spec {
	s := Spec{Name: DefaultName}
	for _, k := range knobs {
		if k.Default != "" {
			if err := k.set(&s, k.Default, func(string) bool { return false }); err != nil {
				panic(fmt.Sprintf("knob %s: default %q: %v", k.Name, k.Default, err))
			}
		}
	}
	s.BufferBytes = int(s.Target.BufferBytes)
	return s
}
