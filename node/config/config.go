// Package config is what lab writes for every node it starts: the node
// config (Node) with its defaults and validation, and what the daemons
// derive from it per port (rates, thresholds at each port's rate, ECN,
// impairment) and for the node (watchdog, scale model). Which
// flow-control scheme a node runs, its layout and the settings only it
// reads are package scheme's: Node holds them (FC, Queueing, the BFC
// fields, RelayQueue, the thresholds) and scheme.New checks them and
// resolves their defaults. It has no privileged or Linux-only
// dependency, so tools that only read or write configs link none.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/model/scale"
)

// Node is what lab writes for one node (a switch or a server) as JSON.
// Everything a node derives from the topology (interface names, MACs,
// neighbours) is not in it: bcube computes those from N, K and Node.
type Node struct {
	Lab  string `json:"lab"`
	Node string `json:"node"` // h<i> or s<l>.<w>
	N    int    `json:"n"`
	K    int    `json:"k"`

	// RateBps is the emulated link rate of every fabric port, in bit/s, on
	// the wire (Ethernet preamble, IFG and FCS included); 0 means unshaped.
	RateBps uint64 `json:"rate_bps"`
	// Target is the network the lab emulates, and Dilation the D it runs
	// it at (package scale): every time, rate and amount of data the node
	// uses that no field below overrides comes from them (Model). Zero
	// Target: the papers' network (scale.Papers), or scale.Native for an
	// unshaped node; zero Dilation: the target's link rate / RateBps.
	Target   scale.Target `json:"target"`
	Dilation float64      `json:"dilation"`
	// DelayComp is the emulator's own per-hop latency, measured when the
	// lab came up: every egress's delay line holds a frame for the
	// model's link delay less this (LinkDelay), so that the frame reaches
	// the peer when the target's link would deliver it.
	DelayComp Duration `json:"delay_comp,omitempty"`
	// ProbeInterval is how often every fabric port probes its link's
	// round trip, the fidelity monitor (0: scale.ProbeInterval; negative:
	// never). The probes start on POST /probe, once the lab knows every
	// node runs, or at once with ProbeAtStart (a node started again in a
	// running lab).
	ProbeInterval Duration `json:"probe_interval,omitempty"`
	ProbeAtStart  bool     `json:"probe_at_start,omitempty"`
	// BufferBytes is the node's shared buffer: what all its egress queues
	// may hold together (a switch's buffer is shared by its ports).
	BufferBytes int `json:"buffer_bytes"`
	// PortCapBytes, if set, caps what one egress port may hold of it.
	PortCapBytes int `json:"port_cap_bytes,omitempty"`

	// Queueing is the egress layout and classification of fabric ports
	// (package scheme: portfc, DESIGN §4; priority, 8 queues by 802.1Q
	// PCP; bfc, BFCQueues queues assigned to flows dynamically). Each
	// scheme has its own; only fc none takes either of the first two
	// (empty: the scheme's).
	Queueing string `json:"queueing"`
	// BFCQueues is the number of queues per fabric port under queueing
	// bfc, the HQ included (0: 32); BFCTable the flow-table entries per
	// egress port (0: 100 x BFCQueues).
	BFCQueues int `json:"bfc_queues,omitempty"`
	BFCTable  int `json:"bfc_table,omitempty"`
	// BFCAssign is how BFC gives flows queues: dynamic (BFC's own: an
	// empty queue when the flow has been idle, the default) or hash (a
	// fixed queue per flow, hash(egress port, 5-tuple) mod data queues,
	// as stochastic fair queueing does).
	BFCAssign string `json:"bfc_assign,omitempty"`
	// RelayQueue is how a server's egress under queueing portfc serves
	// its relay queue (c): strict (before a and b, the default) or drr
	// (in the round with a and b, one quantum each).
	RelayQueue string `json:"relay_queue,omitempty"`
	// DRRWeights are the DRR weights of every fabric egress's data queues
	// (every queue but the HQ) in queue order: a queue's quantum is its
	// weight in full frames, its share of a backlogged round the
	// weights' (queues.EgressConfig.Weighted). A data queue past the list
	// has weight 1; a list longer than a port's data queues, or one that
	// weighs a strict queue (the server's relay queue under relay_queue
	// strict), is refused (scheme.New). nil: every weight 1.
	DRRWeights []int `json:"drr_weights,omitempty"`
	// ECN marking on egress queue length, RED-like: no mark below
	// ECNKminBytes, probability rising to ECNPmax at ECNKmaxBytes, always
	// above. ECN turns marking on with the model's thresholds at each
	// port's rate (PortECN) for those of the three left zero; without
	// ECN, ECNKmaxBytes 0 turns marking off.
	ECN bool `json:"ecn,omitempty"`
	// CC is the servers' congestion control (hpcc, dctcp, dcqcn,
	// dcqcn-win, dcqcn-mlx or none; empty: dcqcn), and what the egresses do for it: under dctcp every
	// egress marks at DCTCP's one threshold K (P_max 1) unless the ECN
	// thresholds are given; under hpcc every egress stamps INT records.
	CC           string  `json:"cc,omitempty"`
	ECNKminBytes int     `json:"ecn_kmin_bytes,omitempty"`
	ECNKmaxBytes int     `json:"ecn_kmax_bytes,omitempty"`
	ECNPmax      float64 `json:"ecn_pmax,omitempty"`
	// LossPPM is injected loss: the XDP program of every fabric port
	// drops that many of each million frames it receives, at random, and
	// counts them apart from the emulator's own drops (XDP "loss"). The
	// application port never loses a frame. POST /link changes one
	// port's loss at run time. 0: none.
	LossPPM int `json:"loss_ppm,omitempty"`

	// FC is the flow-control scheme, a name of package scheme's
	// registry: none, portfc, pfc, pfcstar (PFC with the relay raising
	// the priority by one, PFC*) or bfc (empty: none).
	FC string `json:"fc"`
	// PortFC thresholds in bytes (0: the model's X_off and X_on, in
	// one-hop BDPs at each port's own rate, for both classes: A compares
	// the sum of a switch port's A queues, B its B queue).
	XoffA int `json:"xoff_a,omitempty"`
	XonA  int `json:"xon_a,omitempty"`
	XoffB int `json:"xoff_b,omitempty"`
	XonB  int `json:"xon_b,omitempty"`
	// PFC thresholds per (ingress port, priority) in bytes (0: the
	// model's, at the ingress port's rate).
	PFCXoff int `json:"pfc_xoff,omitempty"`
	PFCXon  int `json:"pfc_xon,omitempty"`
	// FCRefresh is how often a signalled flow-control state is repeated,
	// and how far apart a resume is repeated (three times) after it was
	// sent, so a lost Resume is repaired within FCRefresh (0: the
	// model's).
	FCRefresh Duration `json:"fc_refresh"`
	// FCHold is how long a receiver keeps a pause it does not hear again
	// (PFC: at least this, or the frame's quanta if longer). It must
	// outlast any stall of the pausing daemon, so a pause holds while
	// its sender is late (0: the model's, never under
	// scale.HoldFloor; at least 3 x FCRefresh).
	FCHold Duration `json:"fc_hold,omitempty"`
	// CI is congestion isolation's settings (fc ici and ci).
	CI

	// The watchdog (every scheme): a queue paused, not empty and sending
	// nothing for WatchdogDetect is reported stalled (0: the model's;
	// negative: no watchdog). WatchdogAction none (report only), forward
	// (ignore pauses) or drop (discard its frames), for WatchdogRestore
	// (0: the model's).
	WatchdogDetect  Duration `json:"watchdog_detect,omitempty"`
	WatchdogAction  string   `json:"watchdog_action,omitempty"`
	WatchdogRestore Duration `json:"watchdog_restore,omitempty"`

	// XDPMode is native, generic or auto (native, falling back to generic).
	XDPMode string `json:"xdp_mode"`
	// LevelOrder is the hosts' routing policy: hash, ate, ascending,
	// descending or a permutation such as "1,0".
	LevelOrder string `json:"level_order,omitempty"`
	// ATEP and ATECapBytes are Asymmetric Traffic Engineering's p and
	// B_H under level order ate (hostd's ATE): a new RDMA flow starts in
	// the high-bandwidth domain (level 0) unless the bytes in flight
	// there reach ATEP x B_H. ATEP 0: 0.9; ATECapBytes 0: ATECap's
	// default.
	ATEP        float64 `json:"ate_p,omitempty"`
	ATECapBytes int64   `json:"ate_cap_bytes,omitempty"`

	// Control is the path of the node's control socket (HTTP over a unix
	// socket: GET /healthz, GET /stats, GET and POST /link).
	Control string `json:"control"`
	// Netns is the node's network namespace (/run/netns/<lab>-<node>): a
	// daemon not already in it enters it to bring the node up. Empty:
	// the daemon's own.
	Netns string `json:"netns,omitempty"`
	// Log is the file the node logs to when it shares a worker process
	// with other nodes (empty: the process's standard error).
	Log string `json:"log,omitempty"`

	// FramesPerPort sizes the UMEM: NumFrames = FramesPerPort x ports.
	// RingSize is every ring's size.
	FramesPerPort int `json:"frames_per_port"`
	RingSize      int `json:"ring_size"`
	// FrameSize is the UMEM chunk size (2048 or 4096).
	FrameSize int `json:"frame_size"`

	// Ports overrides single fabric ports at bring-up: rate, injected
	// loss, link down (PortRate, PortImpairment).
	Ports []PortConfig `json:"ports,omitempty"`
	// DSCPMap is the classes a server's bc0 classifier gives kernel
	// traffic by DSCP (nil: DefaultDSCPMap; empty: none mapped).
	DSCPMap DSCPMap `json:"dscp_map"`

	// Patches are the fabric ports whose cable is patched in memory
	// (lab up --links patch); the others use their veth.
	Patches []PatchPort `json:"patches,omitempty"`

	// Fabric, when set, places the node in a fabric given as a graph
	// (leaf-spine, fat-tree, expander) instead of BCube(N, K): N and K
	// are then 0, its ports and tables are here.
	Fabric *Fabric `json:"fabric,omitempty"`
}

// MaxLossPPM is the largest injected loss: every frame (a million per
// million).
const MaxLossPPM = 1_000_000

// Defaults for the fields a lab may leave zero.
const (
	// DefaultRateBps is the link rate a lab gets unless told otherwise:
	// the papers' network at D = 200, a rate kernel TCP sustains on a
	// 4-hop path of five nodes on two cores (docs/BENCHMARKS.md).
	DefaultRateBps = 500_000_000
	// A 1024-entry fill ring lets a daemon go unscheduled for about 120 ms
	// at 100 Mb/s (25 ms at the default rate) before the kernel has no
	// frame to receive into: many daemons share two cores. Half of a
	// port's 4096 frames stay in its fill and TX rings.
	DefaultFramesPerPort = 4096
	DefaultRingSize      = 1024
	DefaultFrameSize     = 2048
	DefaultXDPMode       = "native"
)

// SetDefaults fills zero fields with the defaults above and the model's
// values (RateBps excepted: zero means unshaped and is a valid choice).
// The settings of one scheme (queueing, relay queue, BFC's) stay as
// they are: the scheme resolves its own (scheme.New).
func (c *Node) SetDefaults() {
	m := c.Model()
	c.Target, c.Dilation = m.Target, m.D
	fc := m.FlowControl()
	if c.BufferBytes == 0 {
		c.BufferBytes = int(c.Target.BufferBytes)
	}
	if c.FramesPerPort == 0 {
		c.FramesPerPort = DefaultFramesPerPort
	}
	if c.RingSize == 0 {
		c.RingSize = DefaultRingSize
	}
	if c.FrameSize == 0 {
		c.FrameSize = DefaultFrameSize
	}
	if c.XDPMode == "" {
		c.XDPMode = DefaultXDPMode
	}
	if c.WatchdogDetect == 0 {
		c.WatchdogDetect = Duration(fc.WatchdogDetect)
	}
	if c.WatchdogRestore == 0 {
		c.WatchdogRestore = Duration(fc.WatchdogRestore)
	}
	if c.WatchdogAction == "" {
		c.WatchdogAction = WatchdogNone
	}
	if c.FCRefresh == 0 {
		c.FCRefresh = Duration(fc.Refresh)
	}
	if c.FCHold == 0 {
		c.FCHold = Duration(fc.Hold)
	}
	if c.LevelOrder == "ate" && c.ATEP == 0 {
		c.ATEP = DefaultATEP
	}
	// The thresholds that count one-hop BDPs stay zero here: each port
	// counts them at its own rate (PortThresholds, PortPFC, PortECN).
}

// Model is the scale model the node runs: its Target at its Dilation,
// as scale.Resolve resolves them for its rate.
func (c *Node) Model() scale.Model { return scale.Resolve(c.Target, c.Dilation, c.RateBps) }

// LinkDelay is how long each fabric egress's delay line holds a frame
// after its last bit: the model's link delay less the emulator's own
// latency (DelayComp), never negative.
func (c *Node) LinkDelay() time.Duration {
	return max(0, c.Model().LinkDelay()-c.DelayComp.D())
}

// ProbeEvery is how often fabric ports probe their links (0: never).
func (c *Node) ProbeEvery() time.Duration {
	switch {
	case c.ProbeInterval < 0:
		return 0
	case c.ProbeInterval == 0:
		return scale.ProbeInterval
	}
	return c.ProbeInterval.D()
}

// SteerRTT is the one-hop round trip the fabric ports steer their delay
// lines to with their probes: the model's, with probes on; 0 (no
// steering) for a native target, whose links are the emulator's own.
func (c *Node) SteerRTT() time.Duration {
	if c.ProbeEvery() == 0 || c.Target.Name == scale.NativeName {
		return 0
	}
	return c.Model().OneHopRTT()
}

// BDP is the one-hop bandwidth-delay product at RateBps in bytes (at
// least one full frame). A port whose rate differs has its own
// (PortBDP).
func (c *Node) BDP() int { return c.bdpAt(c.RateBps) }

// bdpAt is the one-hop BDP of a link of rateBps (0: a target link's).
func (c *Node) bdpAt(rateBps uint64) int { return int(c.Model().BDP(rateBps)) }

// DefaultATEP is ATE's p unless told otherwise: the paper's 0.9.
const DefaultATEP = 0.9

// ATECap is ATE's B_H in bytes, the server's high-bandwidth-domain
// capacity: ATECapBytes if set, else what its level-0 port (eth0) carries
// in the round trip of the longest BCube(n,1) path — the window IRN's
// in-flight cap covers (the model's transport) — at that port's rate.
func (c *Node) ATECap() int64 {
	if c.ATECapBytes > 0 {
		return c.ATECapBytes
	}
	return c.Model().Transport(c.PortRate(bcube.HostPort(0))).BDPBytes
}

// Validate checks the config and resolves its topology and node. What
// only a scheme reads is the scheme's to check (scheme.New).
//
// A node of a graph fabric (Fabric set) resolves to bcube.Star(servers)
// and its index if it is a server, which sees such a fabric as one port
// behind which every other server is; a switch resolves to the zero
// topology and a bcube.Node that only says it is a switch: it forwards
// by its Fabric's tables.
func (c *Node) Validate() (bcube.Topology, bcube.Node, error) {
	t, node, err := c.place()
	if err != nil {
		return t, node, err
	}
	if _, err := scale.WithDilation(c.Target, c.Dilation); err != nil {
		// Every derived value would be as wrong: say this alone.
		return t, node, fmt.Errorf("config for %s: %w", c.Node, err)
	}
	var errs []error
	pow2 := func(v int) bool { return v > 0 && v&(v-1) == 0 }
	if c.Control == "" {
		errs = append(errs, errors.New("control socket path is empty"))
	}
	if c.BufferBytes < 2*1518 {
		errs = append(errs, fmt.Errorf("buffer_bytes %d is below two full frames", c.BufferBytes))
	}
	if !pow2(c.RingSize) || c.RingSize < 64 || c.RingSize > 8192 {
		errs = append(errs, fmt.Errorf("ring_size %d: want a power of two in [64, 8192]", c.RingSize))
	}
	if c.FrameSize != 2048 && c.FrameSize != 4096 {
		errs = append(errs, fmt.Errorf("frame_size %d: want 2048 or 4096", c.FrameSize))
	}
	if c.FramesPerPort < 2*c.RingSize+64 {
		errs = append(errs, fmt.Errorf("frames_per_port %d: need at least fill + tx rings (2 x %d) + 64", c.FramesPerPort, c.RingSize))
	}
	if c.DelayComp < 0 || c.DelayComp.D() > time.Second {
		errs = append(errs, fmt.Errorf("delay_comp %v: want 0..1s", c.DelayComp.D()))
	}
	switch c.XDPMode {
	case "native", "generic", "auto":
	default:
		errs = append(errs, fmt.Errorf("xdp_mode %q: want native, generic or auto", c.XDPMode))
	}
	if c.Fabric != nil && c.Fabric.Switch {
		// A graph fabric's switch forwards by its tables: no level order.
	} else if pol, err := t.ParsePolicy(c.LevelOrder); err != nil {
		errs = append(errs, err)
	} else if !pol.ATE && (c.ATEP != 0 || c.ATECapBytes != 0) {
		errs = append(errs, fmt.Errorf("ate_p and ate_cap_bytes need level_order ate, not %s", pol))
	}
	if math.IsNaN(c.ATEP) || c.ATEP < 0 || c.ATEP > 1 {
		errs = append(errs, fmt.Errorf("ate_p %g: want a fraction in (0, 1]", c.ATEP))
	}
	if c.ATECapBytes < 0 {
		errs = append(errs, fmt.Errorf("ate_cap_bytes %d: must not be negative", c.ATECapBytes))
	}
	if err := c.Watchdog().Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, p := range c.fabricPorts(t, node) {
		if e := c.PortECN(p); e.KmaxBytes != 0 && (e.KminBytes < 0 || e.KminBytes > e.KmaxBytes || e.Pmax <= 0 || e.Pmax > 1) {
			errs = append(errs, fmt.Errorf("ecn: want 0 <= kmin (%d) <= kmax (%d) and 0 < pmax (%g) <= 1", e.KminBytes, e.KmaxBytes, e.Pmax))
			break
		}
	}
	if _, err := c.TransportCC(); err != nil {
		errs = append(errs, err)
	}
	if c.LossPPM < 0 || c.LossPPM > MaxLossPPM {
		errs = append(errs, fmt.Errorf("loss_ppm %d: want 0..%d (frames dropped per million received)", c.LossPPM, MaxLossPPM))
	}
	errs = append(errs, c.validatePorts(t, node)...)
	if err := c.DSCPMap.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := checkDRRWeights(c.DRRWeights); err != nil {
		errs = append(errs, fmt.Errorf("drr_weights %s: %w", FormatDRRWeights(c.DRRWeights), err))
	}
	if err := errors.Join(errs...); err != nil {
		return t, node, fmt.Errorf("config for %s: %w", c.Node, err)
	}
	return t, node, nil
}

// place resolves the node's topology and identity (see Validate).
func (c *Node) place() (bcube.Topology, bcube.Node, error) {
	f := c.Fabric
	if f == nil {
		t, err := bcube.New(c.N, c.K)
		if err != nil {
			return t, bcube.Node{}, err
		}
		node, err := t.ParseNode(c.Node)
		return t, node, err
	}
	if c.N != 0 || c.K != 0 {
		return bcube.Topology{}, bcube.Node{}, fmt.Errorf("config for %s: n %d and k %d with a graph fabric: want neither", c.Node, c.N, c.K)
	}
	if err := f.validate(); err != nil {
		return bcube.Topology{}, bcube.Node{}, fmt.Errorf("config for %s: %w", c.Node, err)
	}
	if f.Switch {
		return bcube.Topology{}, bcube.Node{Switch: true}, nil
	}
	t, err := bcube.Star(f.Servers)
	if err != nil {
		return t, bcube.Node{}, fmt.Errorf("config for %s: %w", c.Node, err)
	}
	node, err := t.ParseNode(c.Node)
	if err != nil || node.Switch {
		return t, node, fmt.Errorf("config for %s: a server of a graph fabric is h<i>, i < %d", c.Node, f.Servers)
	}
	return t, node, nil
}

// Load reads and validates a node config file.
func Load(path string) (*Node, bcube.Topology, bcube.Node, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, bcube.Topology{}, bcube.Node{}, fmt.Errorf("read config: %w", err)
	}
	var c Node
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, bcube.Topology{}, bcube.Node{}, fmt.Errorf("parse config %s: %w", path, err)
	}
	c.SetDefaults()
	t, n, err := c.Validate()
	if err != nil {
		return nil, t, n, err
	}
	return &c, t, n, nil
}

// Duration is a time.Duration that reads and writes as "1.5ms" in JSON.
type Duration time.Duration

func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// Watchdog returns cfg's watchdog configuration (Detect 0: off).
func (c *Node) Watchdog() Watchdog {
	w := Watchdog{Detect: c.WatchdogDetect.D(), Restore: c.WatchdogRestore.D(), Action: c.WatchdogAction}
	if w.Detect < 0 {
		w.Detect = 0
	}
	return w
}
