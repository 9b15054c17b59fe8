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

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

// upFlags are lab up's flags: the topology's, and a flag per knob
// (lab.Knobs) that sets its field of the lab.Spec, on top of
// lab.Defaults or of a lab file's spec.
type upFlags struct {
	c        *common
	file     string
	topology string
	n, k     int
	asJSON   bool
	fabric   lab.FabricSpec // a graph fabric's parameters, from their flags
	capacity string         // --rate auto's capacity file
}

// graphFlags are the flags of fabrics given as a graph; BCube takes none.
var graphFlags = []string{"leaves", "spines", "oversubscription", "hosts", "tors", "degree", "ports", "virtual", "scenario", "seed", "routing", "paths"}

// upFlagsOf finds an up command's flags (tests build the spec without
// running the command).
var upFlagsOf = map[*cobra.Command]*upFlags{}

// knobFlag is the flag of a knob: it holds the value as given, read as
// the knob reads it.
type knobFlag struct {
	k    lab.Knob
	text string
}

func newKnobFlag(k lab.Knob) *knobFlag {
	f := &knobFlag{k: k, text: k.Default}
	switch {
	case f.text != "":
	case k.Units == "bool":
		f.text = "false"
	case k.Units != "string" && k.Units != "network" && k.Units != "rates" && k.Units != "weights":
		f.text = "0" // help shows no zero default
	}
	return f
}

func (f *knobFlag) Set(v string) error {
	if f.k.Units != "network" { // a target file is read with the lab's rate
		if err := f.k.Parse(v); err != nil {
			return err
		}
	}
	f.text = v
	return nil
}

func (f *knobFlag) String() string { return f.text }
func (f *knobFlag) Type() string   { return f.k.Units }

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
	fs := cmd.Flags()
	fs.StringVarP(&f.file, "file", "f", "", "read the lab from this lab `file` (YAML)")
	fs.StringVar(&f.topology, "topology", "", "the topology, as the argument: bcube, railonly, leafspine, fattree or expander")
	_ = cmd.MarkFlagFilename("file", "yaml", "yml")
	fs.IntVarP(&f.n, "n", "n", 0, "BCube `n`: ports per switch (servers per level-0 group)")
	fs.IntVarP(&f.k, "k", "k", 0, "BCube `k`: levels above 0 (servers have k+1 ports); fattree: the fat-tree's k, ports per switch (even)")
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
	for _, k := range lab.Knobs() {
		if !k.Common {
			fl := fs.VarPF(newKnobFlag(k), k.Name, "", k.Help)
			if k.Units == "bool" {
				fl.NoOptDefVal = "true"
			}
		}
	}
	fs.BoolVar(&f.asJSON, "json", false, "print the lab's state (nodes, pids, sockets) as JSON instead of the summary")
	fs.StringVar(&f.capacity, "capacity", lab.DefaultCapacityFile, "this machine's capacity (lab calibrate), which --rate auto reads")
	var fcs []string
	for _, n := range scheme.Names() {
		fcs = append(fcs, n+"\t"+scheme.About(n)) // shells that can show what it is
	}
	completeWords(cmd, "fc", fcs...)
	completeWords(cmd, "ci", scheme.NameICI, scheme.NameCI, lab.CINone)
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
	if f.file == "" {
		spec.N, spec.K = f.n, f.k
	}
	given := lab.Values{}
	for _, k := range lab.Knobs() {
		if fl := fs.Lookup(k.Name); fl != nil && fl.Changed && !k.Common {
			given[k.Name] = fl.Value.String()
		}
	}
	if err := given.Apply(&spec); err != nil {
		return spec, fmt.Errorf("--%w", err)
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
	if fs.Changed("dilation") && (fs.Changed("rate") || fs.Changed("rates")) {
		return spec, errors.New("--dilation and --rate: give one (the rate is the target's / D)")
	}
	if f.file == "" && f.topology == lab.TopologyRailOnly {
		if !fs.Changed("n") {
			spec.N = 0
		}
		spec = lab.RailOnly(spec)
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
	if spec, err = lab.ResolveAutoRate(spec, f.capacity); err != nil {
		return err
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
	if s.RateChoice != "" {
		fmt.Fprintf(w, "  D           %s\n", s.RateChoice)
	}
	fmt.Fprintf(w, "  links       %d fabric veth pairs + %d bc0 pairs; %s in the lab, delay %v of lab time (one-hop RTT %v of lab time = %v of the target), buffer %s per node\n",
		len(p.Links), len(p.AppLinks), rate, m.LinkDelay(), m.OneHopRTT(), m.Target.OneHopRTT(), lab.FormatSize(s.BufferBytes))
	if c := st.Calibration; c != nil {
		fmt.Fprintf(w, "  delay line  %v of lab time per hop after the emulator's own %v of lab time (measured: shortest idle one-hop RTT %v of lab time over %d probes; the probes steer it while the lab runs)\n",
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
	if s := p.Spec.RateChoice; s != "" {
		fmt.Fprintf(w, "  D           %s\n", s)
	}
	byRate := map[uint64]int{}
	for _, l := range g.Links {
		byRate[uint64(math.Round(l.Capacity*float64(s.RateBps)))]++
	}
	var rates []string
	for _, r := range slices.Sorted(maps.Keys(byRate)) {
		rates = append(rates, fmt.Sprintf("%d at %s", byRate[r], lab.FormatRate(r)))
	}
	fmt.Fprintf(w, "  links       %d fabric veth pairs (%s in the lab) + %d bc0 pairs; delay %v of lab time (one-hop RTT %v of lab time = %v of the target), buffer %s per node\n",
		len(p.Links), strings.Join(rates, ", "), len(p.AppLinks), m.LinkDelay(), m.OneHopRTT(), m.Target.OneHopRTT(), lab.FormatSize(s.BufferBytes))
	if c := st.Calibration; c != nil {
		fmt.Fprintf(w, "  delay line  %v of lab time per hop after the emulator's own %v of lab time (measured: shortest idle one-hop RTT %v of lab time over %d probes; the probes steer it while the lab runs)\n",
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
