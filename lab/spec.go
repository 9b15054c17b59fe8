package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

// Defaults of the Spec fields a caller may leave zero.
const (
	DefaultName    = "bc"
	DefaultRunRoot = "/run/bcfab"

	// DefaultMaxNodes caps servers + switches. Every node is a namespace
	// with its own veths, sockets and UMEM, so a lab's size is bounded by
	// memory and bring-up time; the cap admits BCube(16,1) on workers
	// (256 servers + 32 switches = 288 nodes), the largest lab measured
	// (docs/BENCHMARKS.md). Raise MaxNodes deliberately for more.
	DefaultMaxNodes = 300
	// PerNodeMaxNodes caps a lab whose every node runs a daemon process of
	// its own: BCube(8,1), 80 daemons, is what that mode was measured
	// at, and twice that leaves headroom.
	PerNodeMaxNodes = 160

	// DefaultHealthTimeout bounds how long Up waits for every daemon to
	// answer /healthz.
	DefaultHealthTimeout = 60 * time.Second

	// DefaultWorkers is how many worker processes host a lab's nodes
	// unless told otherwise (docs/BENCHMARKS.md, "Workers", measures the
	// choice).
	DefaultWorkers = 1
	// DefaultLinkMode is how a cable between two nodes of one worker
	// moves frames unless told otherwise (Spec.LinkMode).
	DefaultLinkMode = config.LinksPatch
	// PerNode as Spec.Workers runs every node in a process of its own
	// (swd and hostd), for fault isolation.
	PerNode = -1
	// MaxWorkers bounds Spec.Workers.
	MaxWorkers = 64

	// WorkerRingSize is the ring size of nodes on workers. A worker
	// serves each of its nodes every round, so a ring need only cover a
	// round or a short preemption (256 frames are 20 ms of a 100 Mb/s
	// link, 4 ms at 500 Mb/s); rings four times larger spread every
	// frame's way over four times the memory and cost 10-35% more CPU per
	// frame (docs/BENCHMARKS.md, "Workers"). A daemon per node keeps
	// config.DefaultRingSize: a descheduled daemon is away for longer.
	WorkerRingSize = 256

	// BigFabric is the node count above which a lab's nodes get
	// BigFramesPerPort frames per port: a 16-port switch then holds 32 MiB
	// of UMEM rather than 128 MiB.
	BigFabric        = 100
	BigFramesPerPort = 1024
)

// Spec describes a lab to bring up. The zero value of every field but N and
// K means its default.
type Spec struct {
	// Name prefixes every namespace of the lab: <Name>-h<i>, <Name>-s<l>.<w>.
	Name string `json:"name"`
	N    int    `json:"n"`
	K    int    `json:"k"`
	// Fabric, when set, is a fabric given as a graph (leaf-spine,
	// fat-tree, expander; fabric.go) in place of BCube(N, K): N and K
	// are then 0.
	Fabric *FabricSpec `json:"fabric,omitempty"`

	// RateBps is every fabric port's link rate in bit/s; 0 means unshaped.
	RateBps uint64 `json:"rate_bps"`
	// Rates, when set, is the link rate of each level in bit/s, one per
	// level 0..K, in place of RateBps: a level-l switch's cables all run
	// at Rates[l], and a server's port eth<l> with them. A Rail-only NDC
	// is BCube(n,1) with a faster level 0 (the high-bandwidth domain)
	// than level 1 (the rails; RailOnly). Links override single cables
	// on top. Every threshold counted in one-hop BDPs is counted at its
	// own port's rate.
	Rates []uint64 `json:"rates,omitempty"`
	// Target is the network the lab emulates (package scale; zero: the
	// papers', scale.Papers, or the emulator's own, scale.Native, for an
	// unshaped lab), and Dilation the D it runs it at (0: the target's
	// link rate / RateBps, or / the slowest of Rates). Every time, rate
	// and amount of data the nodes use comes from the two, but for the
	// fields below that override one. With Dilation and no rate, RateBps
	// is the target's link rate / D.
	Target   scale.Target `json:"target"`
	Dilation float64      `json:"dilation"`
	// RateAuto is --rate auto: Up runs the lab at the smallest D at
	// which this machine carries WebSearch at load 0.5 on it faithfully
	// (ResolveAutoRate, lab calibrate), and RateChoice, not an input,
	// records the D chosen and why.
	RateAuto   bool   `json:"rate_auto,omitempty"`
	RateChoice string `json:"rate_choice,omitempty"`
	// DelayComp is not an input: lab up measures the emulator's own
	// per-hop latency on the running lab and takes it off every delay
	// line (config.Node.DelayComp), and records it here.
	DelayComp time.Duration `json:"delay_comp,omitempty"`
	// ProbeInterval is how often every fabric port probes its link's round
	// trip (0: scale.ProbeInterval; negative: never, and no fidelity
	// monitor).
	ProbeInterval time.Duration `json:"probe_interval,omitempty"`
	// BufferBytes is each node's shared buffer, shared by all its egress
	// queues (0: the target's).
	BufferBytes int `json:"buffer_bytes"`
	// XDPMode is native, generic or auto (empty: dataplane's default).
	XDPMode string `json:"xdp_mode"`
	// LevelOrder is the servers' routing policy (empty: hash): hash,
	// ate (Asymmetric Traffic Engineering, hostd's ATE), ascending,
	// descending or a permutation such as "1,0".
	LevelOrder string `json:"level_order"`
	// ATEP and ATECapBytes are ATE's p and B_H under level order ate (0:
	// 0.9, and the level-0 port's rate x 4 one-hop RTTs:
	// config.Node.ATECap).
	ATEP        float64 `json:"ate_p,omitempty"`
	ATECapBytes int64   `json:"ate_cap_bytes,omitempty"`
	// FC is the flow-control scheme of every node: none, portfc, pfc,
	// pfcstar, bfc, ici, ci, ideal-fq or sfq (empty: none). PFC and
	// congestion isolation (ici, ci) run with priority queueing (eight
	// queues by 802.1Q priority), BFC and SFQ with BFCQueues queues
	// assigned to flows, Ideal-FQ with a queue per flow, the others with
	// PortFC's allocation. Ideal-FQ's and SFQ's nodes have all of their
	// UMEM as buffer (scheme.Unbounded), whatever BufferBytes says.
	FC string `json:"fc"`
	// CI is congestion isolation's settings under fc ici and ci (zero:
	// the model's).
	config.CI
	// BFCQueues is BFC's queues per fabric port, the HQ included (0: 32;
	// 2 is a single data queue); BFCTable its flow-table entries per
	// egress port (0: 100 x BFCQueues).
	BFCQueues int `json:"bfc_queues,omitempty"`
	BFCTable  int `json:"bfc_table,omitempty"`
	// BFCAssign is how BFC gives flows queues: dynamic (empty: BFC's
	// own) or hash (a fixed queue per flow by its hash, stochastic fair
	// queueing).
	BFCAssign string `json:"bfc_assign,omitempty"`
	// RelayQueue is how servers serve the relay queue under PortFC's
	// allocation: strict (empty: before the a and b queues) or drr (in
	// their round robin).
	RelayQueue string `json:"relay_queue,omitempty"`
	// DRRWeights are the DRR weights of every fabric egress's data queues
	// in queue order, the HQ skipped (config.Node.DRRWeights): a queue's
	// quantum is its weight in full frames; a queue past the list has
	// weight 1. nil: every weight 1.
	DRRWeights []int `json:"drr_weights,omitempty"`
	// Xoff and Xon override the thresholds in bytes, PortFC's for both
	// classes and PFC's per (ingress port, priority) (0: the model's, 6
	// and 4 one-hop BDPs of the papers' target).
	Xoff int `json:"xoff"`
	Xon  int `json:"xon"`
	// The watchdog of every node: WatchdogDetect 0 means the model's,
	// negative turns it off; WatchdogAction none (report only, the
	// default), forward or drop, for WatchdogRestore (0: the model's).
	WatchdogDetect  time.Duration `json:"watchdog_detect"`
	WatchdogAction  string        `json:"watchdog_action"`
	WatchdogRestore time.Duration `json:"watchdog_restore"`

	// LossPPM is injected loss on every fabric link, in frames per million
	// (ParseLoss reads "1%" or "0.01"): the XDP program at each end of a
	// cable drops that share of the frames it receives, so each direction
	// of every cable loses it once, and a path of h hops 1-(1-p)^h. It is
	// counted apart from the emulator's own drops. SetLink changes one
	// cable at run time. 0: none.
	LossPPM int `json:"loss_ppm,omitempty"`

	// ECN turns on RED-like ECN marking at every egress (DCQCN's switch
	// side), with the model's thresholds (the papers' K_min 100 KB, K_max
	// 400 KB, P_max 0.2 on a target link) at each port's rate
	// (config.Node.PortECN). A
	// nonzero ECNKminBytes, ECNKmaxBytes or ECNPmax overrides that value
	// on every port and turns marking on by itself.
	ECN bool `json:"ecn,omitempty"`
	// CC is the servers' congestion control and the egresses' part in it
	// (config.Node.CC): dcqcn (the default), dctcp (marking at one
	// threshold K), hpcc (INT records) or none.
	CC           string  `json:"cc,omitempty"`
	ECNKminBytes int     `json:"ecn_kmin_bytes,omitempty"`
	ECNKmaxBytes int     `json:"ecn_kmax_bytes,omitempty"`
	ECNPmax      float64 `json:"ecn_pmax,omitempty"`

	// Workers is how many worker processes (bcfabd) host the nodes, each
	// on one engine thread that serves all its nodes (0: DefaultWorkers;
	// at most one per node); PerNode runs each node in a daemon process of
	// its own (swd, hostd). A node is the same in both: its namespace,
	// veths, sockets, XDP programs, control socket and counters.
	Workers int `json:"workers"`
	// FramesPerPort and RingSize size every node's UMEM (frames per port)
	// and its sockets' rings (0: config.DefaultFramesPerPort, or
	// BigFramesPerPort for a fabric of more than BigFabric nodes, whose
	// memory would otherwise grow past what one machine gives a lab;
	// WorkerRingSize on workers, config.DefaultRingSize with a process per
	// node).
	FramesPerPort int `json:"frames_per_port,omitempty"`
	RingSize      int `json:"ring_size,omitempty"`
	// WorkerSlack, WorkerPollBudget and WorkerPriority tune the workers'
	// scheduling (see dataplane.WorkerOptions; 0: its defaults, negative:
	// none, an ordinary thread).
	WorkerSlack      time.Duration `json:"worker_slack,omitempty"`
	WorkerPollBudget time.Duration `json:"worker_poll_budget,omitempty"`
	WorkerPriority   int           `json:"worker_priority,omitempty"`
	// LinkMode is how a fabric cable between two nodes of one worker
	// moves frames: patch (in memory, package patch) or veth (AF_XDP
	// through the kernel, as every other cable); "": DefaultLinkMode.
	// Shaping, delay, rings, loss, link down, counters and captures are
	// the same in both.
	LinkMode string `json:"link_mode,omitempty"`

	// BinDir holds the bcfabd, swd and hostd binaries; default: the
	// directory of the running executable (bin/ when run as bin/lab).
	BinDir string `json:"bin_dir"`
	// RunRoot holds one directory per lab: state, configs, sockets, logs.
	RunRoot string `json:"run_root"`
	// MaxNodes caps servers + switches; default DefaultMaxNodes.
	MaxNodes int `json:"max_nodes"`
	// HealthTimeout bounds the wait for every daemon's /healthz.
	HealthTimeout time.Duration `json:"health_timeout"`

	// Links overrides single cables at bring-up: rate, loss, down.
	Links []LinkSpec `json:"links,omitempty"`
	// DSCPMap is the class (802.1Q priority) the classifier on every
	// server's bc0 gives kernel traffic by its DSCP (nil:
	// config.DefaultDSCPMap, 26 -> 3; empty: none mapped, all best
	// effort but ICMP).
	DSCPMap config.DSCPMap `json:"dscp_map"`
}

// nameRE keeps namespace names short (<Name>-s<l>.<w> well under the 255
// bytes of a file name, and readable in ip netns list) and free of '-', so
// that the prefix <Name>- of one lab is never the prefix of another's.
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,7}$`)

// checkName rejects a lab name that is not ^[a-z][a-z0-9]{0,7}$.
func checkName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("lab name %q: want a lowercase letter followed by at most 7 lowercase letters or digits", name)
	}
	return nil
}

// withDefaults returns s with every zero field that has a default filled
// in: the knobs' (Knob.Fill), and those their rules derive from the
// target, D and the fabric.
func (s Spec) withDefaults() (Spec, error) {
	if s.Name == "" {
		s.Name = DefaultName
	}
	for _, k := range knobs {
		if k.Fill && k.get(s) == "" {
			if err := k.set(&s, k.Default, func(string) bool { return false }); err != nil {
				return s, err
			}
		}
		if k.derive != nil {
			if err := k.derive(&s); err != nil {
				return s, err
			}
		}
	}
	return s, nil
}

// resolveModel sets the target and D a lab of s runs at (scale.Resolve),
// and with a D but no rate, the rate: the target's / D.
func resolveModel(s *Spec) error {
	m := s.Model()
	if s.Dilation != 0 && s.RateBps == 0 && len(s.Rates) == 0 {
		s.RateBps = m.LinkRateBps()
	}
	s.Target, s.Dilation = m.Target, m.D
	return nil
}

// resolveBinDir makes the bin dir absolute, by default the directory of
// lab.
func resolveBinDir(s *Spec) error {
	if s.BinDir == "" {
		dir, err := DefaultBinDir()
		if err != nil {
			return err
		}
		s.BinDir = dir
	}
	if !filepath.IsAbs(s.BinDir) {
		abs, err := filepath.Abs(s.BinDir)
		if err != nil {
			return fmt.Errorf("bin dir %q: %w", s.BinDir, err)
		}
		s.BinDir = abs
	}
	return nil
}

// DefaultBinDir is the directory of the running executable, symlinks
// resolved: bin/ when it runs as bin/lab, next to bin/swd and bin/hostd.
func DefaultBinDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("default bin dir: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe), nil
}

// check validates what needs neither privileges nor the file system.
func (s Spec) check() (bcube.Topology, error) {
	if err := checkName(s.Name); err != nil {
		return bcube.Topology{}, err
	}
	switch {
	case s.N < 2:
		return bcube.Topology{}, fmt.Errorf("n = %d: BCube needs n >= 2 ports per switch", s.N)
	case s.K < 1:
		return bcube.Topology{}, fmt.Errorf("k = %d: BCube needs k >= 1 (BCube(n,0) is a single switch)", s.K)
	case s.MaxNodes < 0:
		return bcube.Topology{}, fmt.Errorf("max nodes %d is negative", s.MaxNodes)
	}
	if servers, switches, ok := nodeCount(s.N, s.K); !ok || servers+switches > s.MaxNodes {
		count := "more than 2^40 nodes"
		if ok {
			count = fmt.Sprintf("%d servers + %d switches = %d nodes", servers, switches, servers+switches)
		}
		return bcube.Topology{}, fmt.Errorf("BCube(%d,%d) is too large: %s, the limit is %d (BCube(16,1), 288 nodes, is the largest lab measured; --max-nodes raises it)",
			s.N, s.K, count, s.MaxNodes)
	}
	if servers, switches, _ := nodeCount(s.N, s.K); s.Workers == PerNode && servers+switches > min(s.MaxNodes, PerNodeMaxNodes) {
		return bcube.Topology{}, fmt.Errorf("BCube(%d,%d) has %d nodes: a daemon process per node is limited to %d; run them on workers",
			s.N, s.K, servers+switches, min(s.MaxNodes, PerNodeMaxNodes))
	}
	t, err := bcube.New(s.N, s.K)
	if err != nil {
		return t, err
	}
	last := bcube.HostName(t.Servers() - 1)
	if sw := bcube.SwitchName(t.K(), t.SwitchesPerLevel()-1); len(sw) > len(last) {
		last = sw
	}
	if err := s.checkRun(last); err != nil {
		return t, err
	}
	if err := s.checkRates(t); err != nil {
		return t, err
	}
	if err := s.checkLinks(t); err != nil {
		return t, err
	}
	// The daemons' own rules (delay, buffer, XDP mode, level order) live
	// in config.Node.Validate, the scheme's (its settings, thresholds at
	// every port's rate) in scheme.New; check a server's and every
	// level's switch's config against them.
	nodes := []string{bcube.HostName(0)}
	for l := range t.Levels() {
		nodes = append(nodes, bcube.SwitchName(l, 0))
	}
	for _, n := range nodes {
		c := s.bcubeNodeConfig(t, n, "/x.sock")
		if err := checkConfig(&c); err != nil {
			return t, err
		}
	}
	return t, nil
}

// checkRun checks what every lab needs whatever its fabric: a run root
// that holds the control socket of the node with the longest name, and
// the workers' settings.
func (s Spec) checkRun(longest string) error {
	if !filepath.IsAbs(s.RunRoot) {
		return fmt.Errorf("run root %q: want an absolute path", s.RunRoot)
	}
	if sock := filepath.Join(s.RunRoot, s.Name, longest+".sock"); len(sock) > maxSocketPath {
		return fmt.Errorf("run root %q is too long: control socket %s exceeds %d bytes", s.RunRoot, sock, maxSocketPath)
	}
	if s.HealthTimeout < 0 {
		return fmt.Errorf("health timeout %v is negative", s.HealthTimeout)
	}
	if s.LinkMode != config.LinksPatch && s.LinkMode != config.LinksVeth {
		return fmt.Errorf("links %q: want %s or %s", s.LinkMode, config.LinksPatch, config.LinksVeth)
	}
	if s.Workers != PerNode && (s.Workers < 1 || s.Workers > MaxWorkers) {
		return fmt.Errorf("workers %d: want 1..%d worker processes, or one process per node", s.Workers, MaxWorkers)
	}
	wc := config.Worker{Name: "w0", Control: "/x.sock", Nodes: []string{"x"}, Slack: config.Duration(s.WorkerSlack), PollBudget: config.Duration(s.WorkerPollBudget), Priority: s.WorkerPriority}
	return wc.Validate()
}

// checkConfig checks a node's config as its daemon does: config.Node's
// rules, then its flow-control scheme's.
func checkConfig(c *config.Node) error {
	t, n, err := c.Validate()
	if err != nil {
		return err
	}
	_, err = scheme.New(c, scheme.Place{T: t, Node: n})
	return err
}

// nodeCount returns the servers n^(k+1) and switches (k+1)·n^k of
// BCube(n,k); ok is false when they exceed 2^40 (absurd input, and no
// overflow).
func nodeCount(n, k int) (servers, switches int, ok bool) {
	if n < 1 || k < 0 {
		return 0, 0, false
	}
	pow := 1 // n^j
	for j := 0; j <= k; j++ {
		if pow > (1<<40)/n {
			return 0, 0, false
		}
		pow *= n
	}
	return pow, (k + 1) * (pow / n), true
}

// euid is os.Geteuid, replaceable in tests.
var euid = os.Geteuid

// Validate checks the spec (defaults applied) and that a lab can be created
// from it: the fabric is a valid BCube within MaxNodes, the name is well
// formed, the caller is root, and the name is not in use (no run directory
// <RunRoot>/<Name> and no network namespace named <Name>-*). It creates
// nothing.
func (s Spec) Validate() error {
	s, err := s.withDefaults()
	if err != nil {
		return err
	}
	if s.Fabric != nil {
		_, err = s.checkGraph()
	} else {
		_, err = s.check()
	}
	if err != nil {
		return err
	}
	if euid() != 0 {
		return errors.New("not root: a lab creates network namespaces, veths and mounts; run as root")
	}
	return inUse(s.RunRoot, s.Name)
}

// inUse returns an error when lab name has a run directory or any
// namespace with its prefix.
func inUse(runRoot, name string) error {
	dir := filepath.Join(runRoot, name)
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("lab name %q is in use: %s exists (lab down --name %s removes it)", name, dir, name)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("lab name %q: %w", name, err)
	}
	ns, err := labNamespaces(name)
	if err != nil {
		return err
	}
	if len(ns) > 0 {
		return fmt.Errorf("lab name %q is in use: network namespace %s exists (lab down --name %s removes it)", name, ns[0], name)
	}
	return nil
}

// netnsDir is where named network namespaces are bind-mounted (iproute2's
// convention; /var/run is a symlink to /run).
const netnsDir = "/run/netns"

// labNamespaces lists the named namespaces whose name starts with <name>-.
func labNamespaces(name string) ([]string, error) {
	ents, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), name+"-") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// refRate is the lab's rate of a target link: RateBps, or the slowest
// level's with Rates (a Rail-only fabric's network domain: its faster
// level is a faster target link, at the same D).
func (s Spec) refRate() uint64 {
	if len(s.Rates) == 0 {
		return s.RateBps
	}
	return slices.Min(s.Rates)
}

// Model is the scale model the lab runs: its Target at its Dilation, as
// scale.Resolve resolves them for its slowest rate.
func (s Spec) Model() scale.Model { return scale.Resolve(s.Target, s.Dilation, s.refRate()) }

// ResolvedModel is Model, for callers that once needed the defaults
// applied first.
func (s Spec) ResolvedModel() (scale.Model, error) { return s.Model(), nil }

// LevelRate is the rate of level l's cables: Rates[l], or RateBps (a
// cable of Links may override it).
func (s Spec) LevelRate(l int) uint64 {
	if l >= 0 && l < len(s.Rates) {
		return s.Rates[l]
	}
	return s.RateBps
}

// LevelRates is the rate of every level 0..K.
func (s Spec) LevelRates() []uint64 {
	out := make([]uint64, s.K+1)
	for l := range out {
		out[l] = s.LevelRate(l)
	}
	return out
}

// Uniform reports whether every level runs at one rate (cables of Links
// aside).
func (s Spec) Uniform() bool {
	for _, r := range s.Rates {
		if r != s.LevelRate(0) {
			return false
		}
	}
	return true
}

// RatesText says the links' rates: "100 Mbit/s", or per level "32
// Mbit/s (level 0), 20 Mbit/s (level 1)".
func (s Spec) RatesText() string {
	if len(s.Rates) == 0 {
		return FormatRate(s.RateBps)
	}
	var parts []string
	for l, r := range s.LevelRates() {
		parts = append(parts, fmt.Sprintf("%s (level %d)", FormatRate(r), l))
	}
	return strings.Join(parts, ", ")
}

// checkRates checks Rates: none, or one positive rate per level of t.
func (s Spec) checkRates(t bcube.Topology) error {
	if len(s.Rates) == 0 {
		return nil
	}
	if len(s.Rates) != t.Levels() {
		return fmt.Errorf("rates %s: want one per level of %v, %d", formatRates(s.Rates), t, t.Levels())
	}
	for l, r := range s.Rates {
		if r == 0 {
			return fmt.Errorf("rates %s: level %d's rate is 0: every level needs a rate (unshaped links: --rate 0 without --rates)", formatRates(s.Rates), l)
		}
	}
	return nil
}

// formatRates prints rates as lab up's --rates reads them: 32M,20M.
func formatRates(rates []uint64) string {
	var parts []string
	for _, r := range rates {
		parts = append(parts, units.CompactRate(r))
	}
	return strings.Join(parts, ",")
}

// Namespace is the network namespace of a lab's node: <lab>-<node>.
func Namespace(lab, node string) string { return lab + "-" + node }

// CINone is lab up --ci's word for no congestion isolation; its other
// words, ici and ci, are the schemes of congestion isolation over PFC.
const CINone = "none"

// CIScheme is the scheme a lab of flow control fc (a --fc given, or "")
// runs under lab up --ci mode: fc itself for none, else ici or ci, which
// run over PFC and so take no other fc.
func CIScheme(mode, fc string) (string, error) {
	if mode == "" || mode == CINone {
		return fc, nil
	}
	m, err := scheme.ParseName(mode)
	if err != nil || m.FC != mode || (m.FC != ciOverPFC.FC && m.FC != ciUncoordinated.FC) {
		return "", fmt.Errorf("%q: want ici (isolation coordinated with ECN marking), ci (uncoordinated) or none", mode)
	}
	if fc == "" {
		return m.FC, nil
	}
	f, err := scheme.ParseName(fc)
	if err != nil {
		return "", err
	}
	if f.FC != scheme.Default && f.FC != pfc.FC && f.FC != m.FC {
		return "", fmt.Errorf("%s runs over PFC, not fc %s (give fc pfc, or leave fc out)", mode, fc)
	}
	return m.FC, nil
}

// The schemes of congestion isolation, and PFC, which they run over.
var (
	ciOverPFC       = mustScheme(scheme.NameICI)
	ciUncoordinated = mustScheme(scheme.NameCI)
	pfc             = mustScheme(scheme.NamePFC)
)

// mustScheme is the registry's scheme of name.
func mustScheme(name string) scheme.Named {
	n, err := scheme.ParseName(name)
	if err != nil {
		panic(err)
	}
	return n
}

// bcubeNodeConfig is the config of one node of a BCube lab, defaults applied.
func (s Spec) bcubeNodeConfig(t bcube.Topology, node, control string) config.Node {
	return s.nodeConfig(node, control, func(c *config.Node) {
		c.N, c.K = t.N(), t.K()
		c.RateBps = s.nodeRate(t, node)
		c.Ports = s.portOverrides(t, node)
	})
}

// nodeConfig is the config of a node of any fabric: every value of the
// spec that config.Node has a field of the same name for, the
// thresholds, and what place sets (the node's place, rate and ports);
// then its defaults, applied here once for every node.
func (s Spec) nodeConfig(node, control string, place func(c *config.Node)) config.Node {
	c := config.Node{
		Lab: s.Name, Node: node, Control: control,
		XoffA: s.Xoff, XoffB: s.Xoff, PFCXoff: s.Xoff,
		XonA: s.Xon, XonB: s.Xon, PFCXon: s.Xon,
	}
	copyShared(&c, s)
	place(&c)
	// Switches take the level order too: it tells them which of the
	// next server's queues a frame will use (the A queue of PortFC).
	c.SetDefaults()
	if scheme.Unbounded(c.FC) {
		// A buffer no flow fills: every frame of the node's UMEM (its
		// fabric ports' and a server's application port's), so the
		// frames, not the bytes, bound what its queues hold.
		c.BufferBytes = max(c.BufferBytes, UnboundedBuffer(&c))
	}
	return c
}

// UnboundedBuffer is the buffer of a node of an unbounded scheme
// (scheme.Unbounded: ideal-fq, sfq): the bytes of all of its UMEM.
func UnboundedBuffer(c *config.Node) int {
	return c.FramesPerPort * c.FrameSize * (len(c.FabricPorts()) + 1)
}

// copyShared sets every field of c that s has by the same name and type
// (a time.Duration of s as c's config.Duration).
func copyShared(c *config.Node, s Spec) {
	dst, src := reflect.ValueOf(c).Elem(), reflect.ValueOf(s)
	for i := range src.NumField() {
		f := src.Type().Field(i)
		d := dst.FieldByName(f.Name)
		switch {
		case !d.IsValid() || !d.CanSet():
		case f.Type == d.Type():
			d.Set(src.Field(i))
		case f.Type == reflect.TypeFor[time.Duration]() && d.Type() == reflect.TypeFor[config.Duration]():
			d.Set(src.Field(i).Convert(d.Type()))
		}
	}
}
