//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/config"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/scale"
	"github.com/bcfab/bcfab/scheme"
	"github.com/bcfab/bcfab/units"
)

// upFlags are lab up's flags: each sets a field of the lab.Spec, on top
// of lab.Defaults or of a lab file's spec.
type upFlags struct {
	c        *common
	file     string
	topology string
	target   string
	asJSON   bool
	ci       *string
	fields   []specFlag
	fabric   lab.FabricSpec // a graph fabric's parameters, from their flags
}

// graphFlags are the flags of fabrics given as a graph; BCube takes none.
var graphFlags = []string{"leaves", "spines", "oversubscription", "hosts", "tors", "degree", "ports", "virtual", "scenario", "seed", "routing", "paths"}

// upFlagsOf finds an up command's flags (tests build the spec without
// running the command).
var upFlagsOf = map[*cobra.Command]*upFlags{}

// specFlag is a flag that sets a spec field.
type specFlag struct {
	name string
	set  func(*lab.Spec)
}

func upCmd() *cobra.Command {
	f := &upFlags{}
	cmd := &cobra.Command{
		Use:   "up bcube --n N --k K | up railonly [--n N] | up leafspine --leaves L --spines S --hosts H | up fattree --k K | up expander --tors T --degree D --hosts H [--seed S] | up -f FILE",
		Short: "create the namespaces and links, start the daemons",
		Long: `Creates a lab: a network namespace per node, veth pairs for the cables, and a
daemon per node (hostd for servers, swd for switches); returns once every
daemon answers.

Topologies: bcube, BCube(n,k); railonly, the Rail-only NDC preset:
BCube(n,1), n 4 unless given, whose level-0 cables (the high-bandwidth
domain) run faster than its level-1 cables (the rails), 160:100 as in the
PortFC papers, scaled to 32M,20M (--rates sets others). --rates gives
each level its own rate in any BCube; every threshold counted in one-hop
BDPs (PortFC's X_off/X_on, PFC's, BFC's Th, ECN's K_min/K_max) is then
counted at each port's own rate.

Fabrics whose switches are cabled to each other, given as a graph:
leafspine (--leaves leaf switches of --hosts servers each, every leaf
cabled to each of --spines spines; --oversubscription, host capacity over
uplink capacity, default 1), fattree (the k-ary fat-tree, --k even) and
expander (--tors ToRs of --hosts servers each, cabled as a random
--degree-regular graph drawn from --seed). Their servers have one port,
eth0, and never relay; their switches forward by tables computed from
the graph at bring-up: --routing ecmp (equal-cost next hops, one per flow
by its hash; the default) or ksp (--paths K shortest paths between every
pair of ToRs, one per flow by its hash). Each cable runs at its capacity
x --rate (a leaf-spine's uplinks carry hosts/(spines x oversubscription)).
They run --fc none or pfc. fcplus is an FC+ fabric (--tors ToRs of --ports
fabric ports split into --virtual virtual switches, --hosts servers each,
wired from --seed; or --scenario fcplus-loop), routed by ksp, dfksp1,
dfksp2 or fc (DF-KSP with one or two lossless priorities, FC's up-down
paths); dfksp2 under --fc pfc moves a frame from priority 3 to 4 at its
down-up turn.

-f reads the lab from a lab file (YAML; see examples/ and the README): its
keys are these flags without their dashes, plus the topology and per-cable
overrides; flags given as well override the file. Nothing is created when
the file or a flag is bad.`,
		Example: `  lab up bcube --n 4 --k 1
  lab up bcube --n 4 --k 1 --name pf --fc portfc --rate 100M
  lab up bcube --n 2 --k 1 --name ls --loss 0.5%
  lab up railonly --name ro --fc portfc
  lab up bcube --n 4 --k 1 --rates 160M,100M
  lab up leafspine --leaves 4 --spines 2 --hosts 4
  lab up fattree --k 4 --fc pfc
  lab up expander --tors 8 --degree 3 --hosts 2 --seed 1 --routing ksp --paths 4
  lab up -f examples/bcube41-portfc.yaml
  lab up -f examples/bcube41-portfc.yaml --name pf2 --rate 200M`,
		GroupID:   groupLab,
		ValidArgs: append([]string{lab.TopologyBCube, lab.TopologyRailOnly}, lab.GraphKinds...),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUp(cmd, f, args)
		},
	}
	f.c = addCommon(cmd)
	upFlagsOf[cmd] = f
	d := lab.Defaults()
	fs := cmd.Flags()
	add := func(name string, set func(*lab.Spec)) { f.fields = append(f.fields, specFlag{name, set}) }
	fs.StringVarP(&f.file, "file", "f", "", "read the lab from this lab `file` (YAML)")
	fs.StringVar(&f.topology, "topology", "", "the topology, as the argument: bcube, railonly, leafspine, fattree or expander")
	_ = cmd.MarkFlagFilename("file", "yaml", "yml")
	n := fs.IntP("n", "n", 0, "BCube `n`: ports per switch (servers per level-0 group)")
	add("n", func(s *lab.Spec) { s.N = *n })
	k := fs.IntP("k", "k", 0, "BCube `k`: levels above 0 (servers have k+1 ports); fattree: the fat-tree's k, ports per switch (even)")
	add("k", func(s *lab.Spec) { s.K = *k })
	fs.IntVar(&f.fabric.Leaves, "leaves", 0, "leafspine: leaf `switches`")
	fs.IntVar(&f.fabric.Spines, "spines", 0, "leafspine: spine `switches`, each cabled to every leaf")
	fs.Float64Var(&f.fabric.Oversubscription, "oversubscription", 0, "leafspine: a leaf's host capacity over its uplink capacity (0: 1, non-blocking)")
	fs.IntVar(&f.fabric.Hosts, "hosts", 0, "leafspine, expander: `servers` per leaf or ToR")
	fs.IntVar(&f.fabric.ToRs, "tors", 0, "expander: top-of-rack `switches`")
	fs.IntVar(&f.fabric.Degree, "degree", 0, "expander: cables from each ToR to other ToRs")
	fs.IntVar(&f.fabric.Ports, "ports", 0, "fcplus: fabric `ports` per ToR (even)")
	fs.IntVar(&f.fabric.Virtual, "virtual", 0, "fcplus: virtual `switches` per ToR")
	fs.StringVar(&f.fabric.Scenario, "scenario", "", "fcplus: a named `scenario`'s fabric and paths (fcplus-loop)")
	fs.Uint64Var(&f.fabric.Seed, "seed", 1, "expander: the `seed` the random cabling is drawn from (the same fabric for the same seed); ksp: ties among paths")
	fs.StringVar(&f.fabric.Routing, "routing", lab.RoutingECMP, "how a graph fabric's switches route: ecmp or ksp; on fcplus also dfksp1, dfksp2 (DF-KSP with 1 or 2 lossless priorities; with --fc pfc, 2 rewrite at the down-up turn) or fc")
	fs.IntVar(&f.fabric.Paths, "paths", 0, "routing ksp: paths per pair of ToRs (0: 4)")
	rate := rateFlag(fs, "rate", units.CompactRate(d.RateBps), "link rate in bit/s: 500M, 1G, 2.5G, 1000000000; 0 = unshaped")
	add("rate", func(s *lab.Spec) { s.RateBps = uint64(*rate) })
	rates := new(units.Rates)
	fs.Var(rates, "rates", "link rate of each level 0..k, comma-separated: 160M,100M (a Rail-only NDC's HBD and rails); replaces --rate")
	add("rates", func(s *lab.Spec) { s.Rates = append([]uint64(nil), (*rates)...) })
	fs.StringVar(&f.target, "target", scale.PapersName, "the `network` the lab emulates, at D = its link rate / --rate: papers (100 Gb/s, 1 µs links, 5 MB buffers), native (the emulator's own links at --rate, D = 1), or a target file (YAML)")
	dilation := fs.Float64("dilation", 0, "the dilation `D` in place of --rate: every time of the target x D, every rate / D (the links run at the target's rate / D)")
	add("dilation", func(s *lab.Spec) {
		if *dilation != 0 {
			s.Dilation = *dilation
			if !fs.Changed("rate") && !fs.Changed("rates") {
				s.RateBps = 0 // the target's rate / D
			}
		}
	})
	probe := durationFlag(fs, "probe-interval", "", "0", "how often every fabric port probes its link's one-hop RTT, the fidelity monitor (default 100ms); 0 turns it off (and the delay lines' calibration)")
	add("probe-interval", func(s *lab.Spec) {
		if fs.Changed("probe-interval") {
			s.ProbeInterval = probe.D()
			if s.ProbeInterval == 0 {
				s.ProbeInterval = -1 // off
			}
		}
	})
	buffer := sizeFlag(fs, "buffer", "0", "shared buffer of each node, for all its egress queues: 4M, 512K, 100000 (0: the target's, 5 MB)")
	add("buffer", func(s *lab.Spec) { s.BufferBytes = int(*buffer) })
	xdpMode := fs.String("xdp-mode", d.XDPMode, "XDP attach `mode`: native, generic or auto")
	add("xdp-mode", func(s *lab.Spec) { s.XDPMode = *xdpMode })
	levelOrder := fs.String("level-order", d.LevelOrder, "servers' routing `policy`: hash, ate (Asymmetric Traffic Engineering: a new RDMA flow starts in level 0 unless its source's bytes in flight there reach --ate-p x --ate-cap), ascending, descending or a permutation like 1,0")
	add("level-order", func(s *lab.Spec) { s.LevelOrder = *levelOrder })
	ateP := fs.Float64("ate-p", 0, "level order ate: the `fraction` p of B_H at which level 0 counts as full (0: 0.9)")
	add("ate-p", func(s *lab.Spec) { s.ATEP = *ateP })
	ateCap := sizeFlag(fs, "ate-cap", "0", "level order ate: B_H, a source's level-0 capacity in bytes (0: its eth0 rate x 4 one-hop RTTs)")
	add("ate-cap", func(s *lab.Spec) { s.ATECapBytes = int64(*ateCap) })
	binDir := fs.String("bin-dir", "", "`dir`ectory with swd and hostd (default: the directory of lab)")
	add("bin-dir", func(s *lab.Spec) { s.BinDir = *binDir })
	maxNodes := fs.Int("max-nodes", d.MaxNodes, "refuse fabrics with more than `count` servers + switches")
	add("max-nodes", func(s *lab.Spec) { s.MaxNodes = *maxNodes })
	timeout := durationFlag(fs, "health-timeout", "", d.HealthTimeout.String(), "how long to wait for every daemon's /healthz")
	add("health-timeout", func(s *lab.Spec) { s.HealthTimeout = timeout.D() })
	fc := fs.String("fc", d.FC, "flow control of every node: "+scheme.List()+" (pfcstar: PFC with priority +1 at every relay)")
	add("fc", func(s *lab.Spec) { s.FC = *fc })
	ci := fs.String("ci", "", "congestion isolation over PFC: ici (ECN marking coordinated with it), ci (DCQCN marking uncoordinated) or none; ici and ci are the scheme (--fc pfc or none)")
	f.ci = ci // checked and set with --fc (runUp)
	ciTable := fs.Int("ci-table", 0, "congestion isolation: congested-flow table `entries` per egress port (0: the target's, 8)")
	add("ci-table", func(s *lab.Spec) { s.CITable = *ciTable })
	ciDetect := sizeFlag(fs, "ci-detect", "0", "congestion isolation: a normal queue this long makes its port a congestion root, in bytes (0: the target's, 2 one-hop BDPs)")
	add("ci-detect", func(s *lab.Spec) { s.CIDetect = int(*ciDetect) })
	ciKmin := sizeFlag(fs, "ci-kmin", "0", "congestion isolation: the congested queue's ECN K_min in bytes (0: the ECN K_min)")
	add("ci-kmin", func(s *lab.Spec) { s.CIKmin = int(*ciKmin) })
	ciKmax := sizeFlag(fs, "ci-kmax", "0", "congestion isolation: the congested queue's ECN K_max in bytes (0: the ECN K_max)")
	add("ci-kmax", func(s *lab.Spec) { s.CIKmax = int(*ciKmax) })
	ciResidency := durationFlag(fs, "ci-residency", "", "0", "congestion isolation: how long an entry outlives its last refresh, in the lab's time (default: the target's 100us x D)")
	add("ci-residency", func(s *lab.Spec) { s.CIResidency = config.Duration(ciResidency.D()) })
	bfcQueues := fs.Int("bfc-queues", 0, "BFC: queues per fabric port, the HQ included (0: 32; 2: a single data queue)")
	add("bfc-queues", func(s *lab.Spec) { s.BFCQueues = *bfcQueues })
	bfcTable := fs.Int("bfc-table", 0, "BFC: flow-table `entries` per egress port (0: 100 x queues)")
	add("bfc-table", func(s *lab.Spec) { s.BFCTable = *bfcTable })
	bfcAssign := fs.String("bfc-assign", "", "BFC: how flows get queues: dynamic (BFC's own; empty: dynamic) or hash (fixed by the flow's hash, stochastic fair queueing)")
	add("bfc-assign", func(s *lab.Spec) { s.BFCAssign = *bfcAssign })
	relayQueue := fs.String("relay-queue", "", "PortFC: how servers serve the relay queue: strict (before a and b; empty: strict) or drr (in their round robin)")
	add("relay-queue", func(s *lab.Spec) { s.RelayQueue = *relayQueue })
	xoff := sizeFlag(fs, "xoff", "0", "X_off in bytes: PortFC's for both classes, PFC's per ingress port and priority (0: the target's, 6 one-hop BDPs)")
	add("xoff", func(s *lab.Spec) { s.Xoff = int(*xoff) })
	xon := sizeFlag(fs, "xon", "0", "X_on in bytes (0: the target's, 4 one-hop BDPs)")
	add("xon", func(s *lab.Spec) { s.Xon = int(*xon) })
	wdDetect := durationFlag(fs, "watchdog-detect", "", "0", "report a queue paused, not empty and sending nothing for this long (default: the target's 1 ms x D); 0 turns the watchdog off")
	add("watchdog-detect", func(s *lab.Spec) {
		if !fs.Changed("watchdog-detect") {
			return // the model's
		}
		s.WatchdogDetect = wdDetect.D()
		if s.WatchdogDetect == 0 {
			s.WatchdogDetect = -1 // off
		}
	})
	wdAction := fs.String("watchdog-action", d.WatchdogAction, "what the watchdog does to a stalled queue: none (report), forward (ignore pauses) or drop (discard its frames)")
	add("watchdog-action", func(s *lab.Spec) { s.WatchdogAction = *wdAction })
	wdRestore := durationFlag(fs, "watchdog-restore", "", "0", "how long a watchdog action lasts before the queue obeys pauses again (0: the target's 1 ms x D)")
	add("watchdog-restore", func(s *lab.Spec) { s.WatchdogRestore = wdRestore.D() })
	loss := lossFlag(fs, "loss", "0", "injected loss on every fabric link, each direction dropped on receive: a probability like 0.01, 1% or 100ppm")
	add("loss", func(s *lab.Spec) { s.LossPPM = int(*loss) })
	ecn := fs.Bool("ecn", false, "ECN marking at every egress, K_min/K_max/P_max scaled from 100 KB/400 KB/0.2 at 100 Gb/s to the rate and one-hop RTT")
	add("ecn", func(s *lab.Spec) { s.ECN = *ecn })
	ecnKmin := sizeFlag(fs, "ecn-kmin", "0", "ECN K_min in bytes (implies --ecn; 0: scaled default)")
	add("ecn-kmin", func(s *lab.Spec) { s.ECNKminBytes = int(*ecnKmin) })
	ecnKmax := sizeFlag(fs, "ecn-kmax", "0", "ECN K_max in bytes (implies --ecn; 0: scaled default)")
	add("ecn-kmax", func(s *lab.Spec) { s.ECNKmaxBytes = int(*ecnKmax) })
	ecnPmax := fs.Float64("ecn-pmax", 0, "ECN P_max, the marking `probability` at K_max (implies --ecn; 0: 0.2)")
	add("ecn-pmax", func(s *lab.Spec) { s.ECNPmax = *ecnPmax })
	workers := fs.Int("workers", lab.DefaultWorkers, "worker processes that host the nodes, one engine thread each; 0: a daemon process per node (swd, hostd)")
	add("workers", func(s *lab.Spec) {
		s.Workers = *workers
		if s.Workers == 0 {
			s.Workers = lab.PerNode
		}
	})
	links := fs.String("links", d.LinkMode, "how a cable between two nodes of one worker moves frames: patch (in memory) or veth (AF_XDP through the kernel)")
	add("links", func(s *lab.Spec) { s.LinkMode = *links })
	wSlack := durationFlag(fs, "worker-slack", "", "0", "how late a worker may serve a deadline so that close ones share a wake-up (0: 50us)")
	add("worker-slack", func(s *lab.Spec) { s.WorkerSlack = wSlack.D() })
	wPoll := fs.Duration("worker-poll", 0, "how long a worker polls without sleeping after it last found work (0: 10us; negative: never)")
	add("worker-poll", func(s *lab.Spec) { s.WorkerPollBudget = *wPoll })
	wPrio := fs.Int("worker-priority", 0, "the real-time (SCHED_FIFO) priority at which a worker's thread keeps time, 1-99 (0: 10; negative: an ordinary thread)")
	add("worker-priority", func(s *lab.Spec) { s.WorkerPriority = *wPrio })
	framesPerPort := fs.Int("frames-per-port", 0, "UMEM `frames` per port of every node (0: 4096, 1024 above 100 nodes)")
	add("frames-per-port", func(s *lab.Spec) { s.FramesPerPort = *framesPerPort })
	ringSize := fs.Int("ring-size", 0, "`entries` of every AF_XDP ring (0: 256 on workers, 1024 with a process per node)")
	add("ring-size", func(s *lab.Spec) { s.RingSize = *ringSize })
	dscp := d.DSCPMap
	fs.Var(&dscp, "dscp-map", "classes (802.1Q priorities) of kernel traffic on every server's bc0 by DSCP: DSCP=priority,... or none; unmapped: 0 (ICMP 6)")
	add("dscp-map", func(s *lab.Spec) { s.DSCPMap = dscp })
	fs.BoolVar(&f.asJSON, "json", false, "print the lab's state (nodes, pids, sockets) as JSON instead of the summary")
	var fcs []string
	for _, n := range scheme.Names() {
		fcs = append(fcs, n+"\t"+scheme.About(n)) // shells that can show what it is
	}
	completeWords(cmd, "fc", fcs...)
	completeWords(cmd, "ci", "ici", "ci", lab.CINone)
	completeWords(cmd, "xdp-mode", "native", "generic", "auto")
	completeWords(cmd, "links", config.LinksPatch, config.LinksVeth)
	completeWords(cmd, "level-order", "hash", "ate", "ascending", "descending")
	completeWords(cmd, "watchdog-action", "none", "forward", "drop")
	_ = cmd.MarkFlagDirname("bin-dir")
	return cmd
}

// spec is the lab.Spec of the file (if any) and the flags.
func (f *upFlags) spec(cmd *cobra.Command, args []string) (lab.Spec, error) {
	fs := cmd.Flags()
	var spec lab.Spec
	if f.file != "" {
		if len(args) > 0 {
			return spec, fmt.Errorf("up: unexpected arguments %q: the topology is the file's", args)
		}
		var err error
		if spec, err = lab.ReadFile(f.file); err != nil {
			return spec, err
		}
		if fs.Changed("name") {
			spec.Name = f.c.name
		}
		if fs.Changed("run-root") {
			spec.RunRoot = f.c.runRoot
		}
	} else {
		kind := f.topology
		switch {
		case len(args) > 1:
			return spec, fmt.Errorf("up: unexpected arguments %q", args[1:])
		case len(args) == 1 && kind != "" && args[0] != kind:
			return spec, fmt.Errorf("up: topology %s and --topology %s: give one", args[0], kind)
		case len(args) == 1:
			kind = args[0]
		}
		graph := slices.Contains(lab.GraphKinds, kind)
		for _, name := range graphFlags {
			if fs.Changed(name) && !graph {
				return spec, fmt.Errorf("up %s: --%s is for leafspine, fattree, expander or fcplus", kind, name)
			}
		}
		switch kind {
		case "":
			return spec, errors.New("up: name the topology: lab up bcube --n N --k K, lab up railonly, lab up leafspine|fattree|expander ..., or lab up -f FILE")
		case lab.TopologyLeafSpine, lab.TopologyFatTree, lab.TopologyExpander, lab.TopologyFCPlus:
			if err := f.graphSpec(fs, kind); err != nil {
				return spec, err
			}
		case lab.TopologyBCube:
			if !fs.Changed("n") || !fs.Changed("k") {
				return spec, errors.New("up bcube: --n and --k are required (e.g. --n 4 --k 1)")
			}
		case lab.TopologyRailOnly:
			if k, _ := fs.GetInt("k"); fs.Changed("k") && k != 1 {
				return spec, fmt.Errorf("up railonly: --k %d: a Rail-only NDC is BCube(n,1)", k)
			}
		default:
			return spec, fmt.Errorf("up: unknown topology %q: want bcube, railonly, leafspine, fattree, expander or fcplus", kind)
		}
		f.topology = kind
		spec = lab.Defaults()
		spec.Name, spec.RunRoot = f.c.name, f.c.runRoot
	}
	if fs.Changed("rate") && fs.Changed("rates") {
		return spec, errors.New("--rate and --rates: give one (--rates sets every level's)")
	}
	for _, sf := range f.fields {
		if f.file == "" || fs.Changed(sf.name) {
			sf.set(&spec)
		}
	}
	if fs.Changed("ci") {
		fc := ""
		if fs.Changed("fc") || f.file != "" {
			fc = spec.FC
		}
		var err error
		if spec.FC, err = lab.CIScheme(*f.ci, fc); err != nil {
			return spec, err
		}
	}
	if f.file != "" && fs.Changed("rate") {
		spec.Rates = nil // the flag's rate for every level, over the file's rates
	}
	if f.file == "" && slices.Contains(lab.GraphKinds, f.topology) {
		fab := f.fabric
		fab.Kind = f.topology
		if fab.Kind == lab.TopologyFatTree {
			fab.K = spec.K
		}
		if fab.Kind != lab.TopologyExpander && !(fab.Kind == lab.TopologyFCPlus && fab.Scenario == "") && !(fab.Routing == lab.RoutingKSP && fs.Changed("seed")) {
			fab.Seed = 0 // the default seed of a flag only the expander takes
		}
		if fab.Routing == lab.RoutingECMP {
			fab.Routing = "" // the default
		}
		spec.Fabric, spec.N, spec.K = &fab, 0, 0
	}
	if f.file == "" || fs.Changed("target") {
		t, err := lab.ResolveTarget(f.target, spec.RateBps)
		if err != nil {
			return spec, fmt.Errorf("--target: %w", err)
		}
		spec.Target = t
	}
	if fs.Changed("dilation") && (fs.Changed("rate") || fs.Changed("rates")) {
		return spec, errors.New("--dilation and --rate: give one (the rate is the target's / D)")
	}
	if f.file == "" && f.topology == lab.TopologyRailOnly {
		if !fs.Changed("n") {
			spec.N = 0
		}
		spec = lab.RailOnly(spec)
	}
	for _, s := range []struct {
		flag string
		v    int
	}{{"buffer", spec.BufferBytes}, {"xoff", spec.Xoff}, {"xon", spec.Xon}, {"ecn-kmin", spec.ECNKminBytes}, {"ecn-kmax", spec.ECNKmaxBytes}} {
		if s.v > 1<<31-1 || s.v < 0 {
			return spec, fmt.Errorf("--%s %s: at most 2 GiB", s.flag, units.CompactSize(int64(s.v)))
		}
	}
	return spec, nil
}

// graphSpec checks that the flags of a graph fabric of kind give it what
// it needs and nothing BCube's.
func (f *upFlags) graphSpec(fs *pflag.FlagSet, kind string) error {
	need := map[string][]string{
		lab.TopologyLeafSpine: {"leaves", "spines", "hosts"},
		lab.TopologyFatTree:   {"k"},
		lab.TopologyExpander:  {"tors", "degree", "hosts"},
		lab.TopologyFCPlus:    {"tors", "ports", "virtual", "hosts"},
	}[kind]
	if kind == lab.TopologyFCPlus && fs.Changed("scenario") {
		need = nil
	}
	var missing []string
	for _, n := range need {
		if !fs.Changed(n) {
			missing = append(missing, "--"+n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("up %s: %s required (e.g. lab up %s)", kind, strings.Join(missing, ", "), map[string]string{
			lab.TopologyLeafSpine: "leafspine --leaves 4 --spines 2 --hosts 4",
			lab.TopologyFatTree:   "fattree --k 4",
			lab.TopologyExpander:  "expander --tors 8 --degree 3 --hosts 2 --seed 1",
			lab.TopologyFCPlus:    "fcplus --tors 8 --ports 4 --virtual 3 --hosts 2 --seed 2, or fcplus --scenario fcplus-loop",
		}[kind])
	}
	for _, n := range []string{"n", "rates", "level-order", "ate-p", "ate-cap"} {
		if fs.Changed(n) {
			return fmt.Errorf("up %s: --%s is BCube's (its servers relay; these have one port each)", kind, n)
		}
	}
	if kind != lab.TopologyFatTree && fs.Changed("k") {
		return fmt.Errorf("up %s: --k is BCube's or a fat-tree's", kind)
	}
	return nil
}

func runUp(cmd *cobra.Command, f *upFlags, args []string) error {
	spec, err := f.spec(cmd, args)
	if err != nil {
		return inputUsage(cmd, f.file, err)
	}
	if err := checkRates(spec); err != nil {
		return usagef(cmd, "%w", err)
	}
	plan, err := lab.NewPlan(spec)
	var choice *lab.ChoiceError
	if errors.As(err, &choice) && f.file == "" {
		return usagef(cmd, "--%v", choice)
	}
	if err != nil {
		return inputUsage(cmd, f.file, err)
	}
	// Ctrl-C during up removes what was created; the daemons themselves
	// run in their own sessions and never see the terminal's signals.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	st, err := lab.Up(ctx, spec, f.c.logger(cmd.ErrOrStderr()))
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSON(cmd.OutOrStdout(), st)
	}
	printUp(cmd.OutOrStdout(), plan, st, time.Since(start))
	return nil
}

func printUp(w io.Writer, p *lab.Plan, st *lab.State, took time.Duration) {
	if p.Graph != nil {
		printGraphUp(w, p, st, took)
		return
	}
	t, s, L := p.Topology, p.Spec, p.Spec.Name
	last := t.Servers() - 1
	lastSw := bcube.SwitchName(t.K(), t.SwitchesPerLevel()-1)
	fmt.Fprintf(w, "lab %s: %v up in %v\n", L, t, took.Round(time.Millisecond))
	fmt.Fprintf(w, "  namespaces  %d: %s .. %s (servers), %s .. %s (switches)\n", len(p.Nodes),
		lab.Namespace(L, "h0"), lab.Namespace(L, bcube.HostName(last)), lab.Namespace(L, "s0.0"), lab.Namespace(L, lastSw))
	rate := "rate " + s.RatesText()
	if len(s.Rates) > 0 {
		rate = "rates " + s.RatesText()
	}
	m := p.Spec.Model()
	fmt.Fprintf(w, "  emulates    %s\n", m)
	fmt.Fprintf(w, "  links       %d fabric veth pairs + %d bc0 pairs; %s, delay %v (one-hop RTT %v = %v of the target), buffer %s per node\n",
		len(p.Links), len(p.AppLinks), rate, m.LinkDelay(), m.OneHopRTT(), m.Target.OneHopRTT(), lab.FormatSize(s.BufferBytes))
	if c := st.Calibration; c != nil {
		fmt.Fprintf(w, "  delay line  %v per hop after the emulator's own %v (measured: shortest idle one-hop RTT %v of %d probes; the probes steer it while the lab runs)\n",
			max(0, m.LinkDelay()-c.PerHop), c.PerHop, c.IdleRTT, c.Samples)
	}
	if s.LossPPM > 0 {
		fmt.Fprintf(w, "  loss        %s injected on every fabric link, each direction, on receive (lab status: INJECTED)\n", lab.FormatLoss(s.LossPPM))
	}
	printFlowControl(w, p)
	printECN(w, p)
	printCables(w, p)
	printCapacity(w, s)
	if s.LevelOrder == "ate" {
		p := s.ATEP
		if p == 0 {
			p = config.DefaultATEP
		}
		capText := "eth0's rate x 4 one-hop RTTs"
		if s.ATECapBytes > 0 {
			capText = lab.FormatSize(int(s.ATECapBytes))
		}
		fmt.Fprintf(w, "  ate         a new RDMA flow starts in level 0 unless its source has %g x B_H in flight there (B_H: %s); lab stats h<i> shows the choices\n", p, capText)
	}
	fmt.Fprintf(w, "  classes     kernel traffic by DSCP %s (unmapped: priority 0, ICMP 6), on every server's bc0\n", s.DSCPMap)
	if len(st.Workers) > 0 {
		fmt.Fprintf(w, "  nodes       %d servers + %d switches on %s (bcfabd), all healthy; xdp mode %s, level order %s\n",
			t.Servers(), t.Switches(), units.Count(len(st.Workers), "worker process", "worker processes"), s.XDPMode, s.LevelOrder)
	} else {
		fmt.Fprintf(w, "  daemons     %d hostd + %d swd, a process each, all healthy; xdp mode %s, level order %s\n",
			t.Servers(), t.Switches(), s.XDPMode, s.LevelOrder)
	}
	fmt.Fprintf(w, "  addresses   h<i> is %s + i on its bc0 (%v .. %v)\n", bcube.Base, bcube.ServerIP(0), bcube.ServerIP(last))
	fmt.Fprintf(w, "  run dir     %s (state.json, configs, sockets, logs/)\n", st.RunDir)
	nameFlag := ""
	if L != lab.DefaultName {
		nameFlag = " --name " + L
	}
	fmt.Fprintf(w, "\nTry:\n")
	fmt.Fprintf(w, "  ip netns exec %s ping -c3 %v    # h0 -> h1, %d hops\n", lab.Namespace(L, "h0"), bcube.ServerIP(1), t.Hops(0, 1))
	fmt.Fprintf(w, "  ip netns exec %s ping -c3 %v    # h0 -> %s, %d hops\n", lab.Namespace(L, "h0"), bcube.ServerIP(last), bcube.HostName(last), t.Hops(0, last))
	fmt.Fprintf(w, "  lab exec%s h0 -- ip -br addr\n", nameFlag)
	fmt.Fprintf(w, "  lab status%s\n", nameFlag)
	fmt.Fprintf(w, "  lab stats%s s0.0\n", nameFlag)
	fmt.Fprintf(w, "  lab down%s\n", nameFlag)
}

// printGraphUp is printUp for a fabric given as a graph.
func printGraphUp(w io.Writer, p *lab.Plan, st *lab.State, took time.Duration) {
	g, s, L := p.Graph, p.Spec, p.Spec.Name
	servers := len(g.Servers())
	fmt.Fprintf(w, "lab %s: %s up in %v\n", L, g.Name, took.Round(time.Millisecond))
	fmt.Fprintf(w, "  namespaces  %d: %s .. %s (servers), %s .. %s (switches)\n", len(p.Nodes),
		lab.Namespace(L, "h0"), lab.Namespace(L, g.Nodes[servers-1].Name), lab.Namespace(L, g.Nodes[servers].Name), lab.Namespace(L, g.Nodes[len(g.Nodes)-1].Name))
	m := s.Model()
	fmt.Fprintf(w, "  emulates    %s\n", m)
	byRate := map[uint64]int{}
	for _, l := range g.Links {
		byRate[uint64(math.Round(l.Capacity*float64(s.RateBps)))]++
	}
	var rates []string
	for _, r := range slices.Sorted(maps.Keys(byRate)) {
		rates = append(rates, fmt.Sprintf("%d at %s", byRate[r], lab.FormatRate(r)))
	}
	fmt.Fprintf(w, "  links       %d fabric veth pairs (%s) + %d bc0 pairs; delay %v (one-hop RTT %v = %v of the target), buffer %s per node\n",
		len(p.Links), strings.Join(rates, ", "), len(p.AppLinks), m.LinkDelay(), m.OneHopRTT(), m.Target.OneHopRTT(), lab.FormatSize(s.BufferBytes))
	if c := st.Calibration; c != nil {
		fmt.Fprintf(w, "  delay line  %v per hop after the emulator's own %v (measured: shortest idle one-hop RTT %v of %d probes; the probes steer it while the lab runs)\n",
			max(0, m.LinkDelay()-c.PerHop), c.PerHop, c.IdleRTT, c.Samples)
	}
	if s.LossPPM > 0 {
		fmt.Fprintf(w, "  loss        %s injected on every fabric link, each direction, on receive (lab status: INJECTED)\n", lab.FormatLoss(s.LossPPM))
	}
	route := "ECMP: equal-cost next hops over shortest paths, one per flow by its hash"
	if r := s.Fabric.Routing; r != "" && r != lab.RoutingECMP {
		route = fmt.Sprintf("%s: %s between every pair of ToRs, one per flow by its hash", r, pathCount(p))
	}
	if n := &p.Nodes[servers]; n.Config.Fabric.Lossless > 1 {
		route += "; PFC priorities 3 and 4 lossless, a frame moved from 3 to 4 at its down-up turn"
	}
	if len(s.Links) > 0 {
		var over []string
		for _, l := range s.Links {
			var what []string
			if l.RateBps != 0 {
				what = append(what, "rate "+lab.FormatRate(l.RateBps))
			}
			if l.LossPPM != nil {
				what = append(what, "loss "+lab.FormatLoss(*l.LossPPM)+" each way")
			}
			if l.Down {
				what = append(what, "down")
			}
			over = append(over, strings.Join(l.Endpoints, "-")+" "+strings.Join(what, ", "))
		}
		fmt.Fprintf(w, "  cables      %d overridden: %s\n", len(over), strings.Join(over, "; "))
	}
	fmt.Fprintf(w, "  routing     %s (tables computed at bring-up, in every switch's config)\n", route)
	printFlowControl(w, p)
	printECN(w, p)
	printCapacity(w, s)
	fmt.Fprintf(w, "  classes     kernel traffic by DSCP %s (unmapped: priority 0, ICMP 6), on every server's bc0\n", s.DSCPMap)
	if len(st.Workers) > 0 {
		fmt.Fprintf(w, "  nodes       %d servers + %d switches on %s (bcfabd), all healthy; xdp mode %s\n",
			servers, len(g.Nodes)-servers, units.Count(len(st.Workers), "worker process", "worker processes"), s.XDPMode)
	} else {
		fmt.Fprintf(w, "  daemons     %d hostd + %d swd, a process each, all healthy; xdp mode %s\n", servers, len(g.Nodes)-servers, s.XDPMode)
	}
	fmt.Fprintf(w, "  addresses   h<i> is %s + i on its bc0 (%v .. %v)\n", bcube.Base, bcube.ServerIP(0), bcube.ServerIP(servers-1))
	fmt.Fprintf(w, "  run dir     %s (state.json, configs, sockets, logs/)\n", st.RunDir)
	nameFlag := ""
	if L != lab.DefaultName {
		nameFlag = " --name " + L
	}
	fmt.Fprintf(w, "\nTry:\n")
	fmt.Fprintf(w, "  ip netns exec %s ping -c3 %v    # h0 -> h%d\n", lab.Namespace(L, "h0"), bcube.ServerIP(servers-1), servers-1)
	fmt.Fprintf(w, "  lab status%s\n", nameFlag)
	fmt.Fprintf(w, "  lab stats%s %s\n", nameFlag, g.Nodes[servers].Name)
	fmt.Fprintf(w, "  lab graph%s --svg fabric.svg\n", nameFlag)
	fmt.Fprintf(w, "  lab down%s\n", nameFlag)
}

// pathCount says how many paths a graph fabric's switches hold per pair
// of ToRs, from the first ToR's table: "4 paths", or "1 to 4 paths".
func pathCount(p *lab.Plan) string {
	lo, hi := -1, 0
	for i := len(p.AppLinks); i < len(p.Nodes); i++ {
		for _, e := range p.Nodes[i].Config.Fabric.Paths {
			if lo < 0 || len(e.Ports) < lo {
				lo = len(e.Ports)
			}
			hi = max(hi, len(e.Ports))
		}
	}
	switch {
	case lo < 0:
		return "no paths"
	case lo == hi && hi == 1:
		return "1 path"
	case lo == hi:
		return fmt.Sprintf("%d paths", hi)
	}
	return fmt.Sprintf("%d to %d paths", lo, hi)
}
