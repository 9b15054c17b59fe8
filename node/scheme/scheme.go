// Package scheme is a flow-control scheme as a node runs it: one value,
// chosen once from the node's config by the registry (registry.go), that
// swd and hostd hold and ask, frame by frame, what the scheme decides.
//
// A scheme gives, for the node it was made for:
//
//  1. its egress layout: the queues of every fabric port, the strict
//     high-priority queue, any other strict queue (Egress);
//  2. its state on the node's datapath, set up once (Bind): the signalling
//     state machines of package signaling, with the thresholds the
//     config and its scale model give;
//  3. the queue of every data frame the node queues, forwarded, relayed
//     or its own (Classify, FlowQueue, OwnFrame, ControlQueue), and the
//     meta the frame is queued with;
//  4. what it makes of the flow-control frames the node receives: PortFC,
//     BFC and congestion isolation signals, 802.1Qbb PFC frames (OnSignal,
//     OnPFC);
//  5. the signals it sends on egress-congestion events (Hooks, the
//     queues' enqueue and dequeue hooks) and on its timer (NextTick,
//     Tick: refreshes, repeated resumes, BFC's bitmaps);
//  6. its counters, per port (PortCounters), and how its pauses met its
//     thresholds (FCTiming).
//
// Adding a scheme is a file of its own that implements Scheme (embedding
// quiet for what it does not do) and one row of the registry.
package scheme

import (
	"net"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
)

// Scheme is a flow-control scheme of one node. All its methods but Name
// and Egress run on the node's datapath goroutine, after Bind.
type Scheme interface {
	// Name is the scheme's name in the registry (config.Node.FC).
	Name() string
	// Egress is the queue layout of every fabric port of the node (its
	// ECN marking left to the node, which sets it per port, and its DRR
	// quanta, which the node sets from config.Node.DRRWeights with
	// queues.EgressConfig.Weighted; New checked that they fit).
	Egress() queues.EgressConfig
	// Bind sets the scheme up on the node's datapath, whose fabric ports
	// are ports, in the datapath's order. A server's application port
	// follows them and is no fabric port. Call it once, before the first
	// frame.
	Bind(dp Datapath, ports []Port)

	// Classify is the queue of data frame f at its egress f.Out, and the
	// meta to queue it with (queues.Packet.Meta: the egress hooks see
	// it). It may rewrite the frame's 802.1Q tag in f.B.
	Classify(f *Frame) (q int, meta uint64)
	// ControlQueue is the queue of the node's own control frames (ACK,
	// NAK, CNP) at fabric port p.
	ControlQueue(p int) int
	// FlowQueue is the queue every data frame of a flow of the node's
	// own to server dst takes at fabric port p, or -1 when the scheme
	// picks one per frame (OwnFrame).
	FlowQueue(p, dst int) int
	// OwnFrame is the queue and meta of a data frame of the node's own
	// flow whose hash is flowHash, leaving by fabric port p at now, where
	// FlowQueue is -1. The frame leaves tagged with signaling.VID(q).
	OwnFrame(p int, flowHash uint32, now int64) (q int, meta uint64)

	// OnSignal takes a PortFC, BFC or isolation signal frame received on fabric
	// port in; it reports false when the scheme takes none (the node
	// drops the frame as unsupported).
	OnSignal(in int, sig signaling.Signal) bool
	// OnPFC takes an 802.1Qbb frame received on fabric port in, or
	// reports false as OnSignal does.
	OnPFC(in int, f signaling.PFCFrame) bool

	// Hooks are the queue hooks of the egress of the node's port p (any
	// port: a server's application port too), through which the scheme
	// sees its queues fill and drain and signals; nil: none.
	Hooks(p int) queues.Hooks
	// NextTick and Tick are the scheme's timer (dataplane.Timer).
	NextTick() int64
	Tick(now int64)
	// PortCounters sets port p's signal counters in m
	// (dataplane.PortCounters); once m holds their names it allocates
	// nothing.
	PortCounters(p int, m map[string]uint64)
	// FCTiming sets t to port p's pause timing (dataplane.FCTimings):
	// per class it pauses, the counter's peak and its value at pauses
	// and resumes, the pause frames' latencies, the thresholds and the
	// port's one-hop BDP; t.N = 0 where it pauses nothing. It allocates
	// nothing.
	FCTiming(p int, t *signaling.FCTiming)
}

// PerLevel is a text per level of a fabric's switches, joined: text of
// the config and port that stand for each level.
type PerLevel func(text func(c *config.Node, port string) string) string

// Place is where a node stands in the fabric: what a scheme's layout
// and queues depend on.
type Place struct {
	T    bcube.Topology
	Node bcube.Node
	// Policy is the servers' level order: it tells a PortFC switch which
	// queue of the next server a frame will use.
	Policy bcube.Policy
}

// FabricPorts is the number of the node's fabric ports: a switch's n, a
// server's k+1.
func (p Place) FabricPorts() int {
	if p.Node.Switch {
		return p.T.N()
	}
	return p.T.Levels()
}

// Datapath is what a scheme needs of its node's datapath
// (*dataplane.Engine): the egress queues, the clock, a way to send a
// signal, and the ports' link rates (0: unshaped).
type Datapath interface {
	signaling.Env
	PortRate(port int) uint64
}

// Port is one fabric port of a node: its MAC and its neighbour's.
type Port struct {
	Own, Peer net.HardwareAddr
}

// Frame is a data frame a node queues, as Classify sees it.
type Frame struct {
	// B is the frame, which a scheme may retag (signaling.VID, PCP).
	B []byte
	// H are its parsed headers (H.PCP and H.VID as it arrived).
	H *header.Frame
	// PCP is its priority; Tagged reports whether it carries an 802.1Q
	// tag now (a server tags its kernel's frames before it classifies
	// them).
	PCP    uint8
	Tagged bool
	// In is the fabric port it came in by, -1 for the node's own (a
	// server's kernel's); Out the fabric port it leaves by; Dst the
	// server it is for.
	In, Out, Dst int
	// Raise says the node's routing moves the frame to the next lossless
	// priority at this step (FC+'s down-up turn, on a graph fabric with
	// two lossless priorities); a scheme with such priorities raises its
	// PCP, others ignore it.
	Raise bool
}

// tuple is the flow f belongs to.
func (f *Frame) tuple() bcube.FiveTuple {
	return bcube.FiveTuple{Src: f.H.Src, Dst: f.H.Dst, Proto: f.H.Proto, SPort: f.H.SPort, DPort: f.H.DPort}
}

// ingress is the meta of a frame charged to its ingress port and
// priority (signaling.IngressMeta), 0 for the node's own.
func (f *Frame) ingress() uint64 {
	if f.In < 0 {
		return 0
	}
	return signaling.IngressMeta(f.In, f.PCP)
}

// quiet is what a scheme does that does not do a thing: it takes no
// signal frame, has no hooks, timer or counters. Schemes embed it.
type quiet struct{}

func (quiet) OnSignal(int, signaling.Signal) bool       { return false }
func (quiet) OnPFC(int, signaling.PFCFrame) bool        { return false }
func (quiet) Hooks(int) queues.Hooks                    { return nil }
func (quiet) NextTick() int64                           { return -1 }
func (quiet) Tick(int64)                                {}
func (quiet) PortCounters(int, map[string]uint64)       {}
func (quiet) FCTiming(_ int, t *signaling.FCTiming)     { t.N = 0 }
func (quiet) OwnFrame(int, uint32, int64) (int, uint64) { return 0, 0 }
