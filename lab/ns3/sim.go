package ns3

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/transport"
)

// What the sim fixes, as scratch/third.cc and its tools
// (traffic_gen/traffic_gen.py) have it.
const (
	// FlowBase is the run's first instant on the sim's clock: where the
	// sim's own traffic generator starts its flows (base_t, 2 s) and its
	// queue monitor looks by default (QLEN_MON_START).
	FlowBase = 2 * time.Second
	// FirstSPort is the source port of a pair's first flow: third.cc
	// numbers the flows of every (source, destination) pair from 10000,
	// in the order it starts them.
	FirstSPort = 10000
	// DPort is the destination port of every exported flow, the one
	// the sim's traffic generator writes.
	DPort = 100
	// PG is the priority group of every flow: bcfab's lossless data
	// class, which is also the sim's (its examples' 3).
	PG = signaling.PCPData

	// simHeader is what the sim adds to a data packet's payload on its
	// links (RdmaHw::GetNxtPacket: PPP 2 + IPv4 20 + UDP 8 + pg 2 + seq
	// 4; the links charge the packet's size, QbbNetDevice), and simINT
	// the INT header HPCC adds to it (five hops of 8 bytes and a 2-byte
	// count, IntHeader::GetStaticSize).
	simHeader = 36
	simINT    = 42
	// simAck is an ACK on the sim's links (RdmaHw::ReceiveUdp: a qbb
	// header of 12 and its INT, padded to 26 bytes with the IPv4
	// header, and PPP 2), simAckINT the same under HPCC (the INT is
	// longer than the padding).
	simAck    = 48
	simAckINT = 12 + simINT + 20 + 2
	// intHops is the most switches whose INT record one packet carries
	// (IntHeader::maxHop); further hops overwrite the first.
	intHops = 5
	// qlenDump is how often the sim writes its queue histograms
	// (third.cc, qlen_dump_interval: 100 ms of its clock).
	qlenDump = 100 * time.Millisecond
	// maxSPorts is how many flows of one pair the sim numbers before its
	// 16-bit source port wraps.
	maxSPorts = 1<<16 - FirstSPort
	// maxNodes is how many nodes the sim addresses (node_id_to_ip: 16
	// bits of the id).
	maxNodes = 1 << 16
)

// intRates are the link rates HPCC's INT header can name
// (IntHop::lineRateValues); a port of another rate breaks its records.
var intRates = []uint64{25e9, 50e9, 100e9, 200e9, 400e9}

// HostPort names a host's NIC and its relay's port to it in the maps
// (ports.csv): bcfab has no such port, its NIC is on the fabric ports.
const HostPort = "nic"

// HostLink says how fast a relay's link to its host is (a server of
// more than one fabric port: BCube's).
type HostLink string

const (
	// HostLinkPort, the default: the rate of the server's fastest port.
	// The sim's NIC rate is also every flow's starting and highest rate,
	// so a flow runs at one port's rate, as in bcfab, but the host sends
	// and receives at most that much in all, where bcfab's NIC uses its
	// ports at once.
	HostLinkPort HostLink = "port"
	// HostLinkPorts: the sum of the server's fabric ports' rates, so the
	// host sends and receives on all of them at once, as bcfab's NIC
	// does; config.txt's QP_MAX_RATE keeps every flow at one port's rate,
	// a key only a sim from scripts/ns3/qp-rate.sh reads (Run checks).
	// Windowed congestion controls keep one port's window: the sim sizes
	// a flow's window by the slowest link of the longest path (third.cc's
	// maxBdp), a fabric link, and scales a varying one by the flow's rate
	// over its highest, which QP_MAX_RATE caps (rdma-hw.cc's
	// AddQueuePair); the host link's rate only shortens the round trip by
	// its frames' serialization.
	HostLinkPorts HostLink = "ports"
)

// simWindowed reports whether the sim runs cc with a window (config.txt's
// HAS_WIN): the largest BDP of its paths, each at its slowest link.
func simWindowed(cc transport.CC) bool {
	return cc == transport.CCDCQCNWin || cc == transport.CCHPCC || cc == transport.CCDCTCP
}

// HostLinks are the values of HostLink, the default first.
var HostLinks = []HostLink{HostLinkPort, HostLinkPorts}

// ParseHostLink reads a HostLink ("": the default).
func ParseHostLink(s string) (HostLink, error) {
	if s == "" {
		return HostLinkPort, nil
	}
	if h := HostLink(s); slices.Contains(HostLinks, h) {
		return h, nil
	}
	return "", fmt.Errorf("host link %q: want %s (the server's fastest port's rate) or %s (the sum of its ports')", s, HostLinkPort, HostLinkPorts)
}

// Role says what bcfab node a node of the sim stands for.
type Role string

const (
	// RoleHost is a server's RDMA NIC: where its flows start and end.
	RoleHost Role = "host"
	// RoleRelay is a server of more than one fabric port as the switch
	// that forwards what it relays.
	RoleRelay Role = "relay"
	// RoleSwitch is a switch.
	RoleSwitch Role = "switch"
)

// Node is a node of the sim.
type Node struct {
	ID   int
	Name string // the bcfab node: h<i> for a host and its relay alike
	Role Role
}

// End is one end of a link of the sim: its node and the bcfab port it
// stands for (HostPort for the link between a host and its relay).
type End struct {
	Node int
	Port string
}

// Link is a cable of the sim, in the target's units.
type Link struct {
	A, B      End
	RateBps   uint64
	Delay     time.Duration
	ErrorRate float64
}

// Flow is a flow of the schedule as the sim runs it.
type Flow struct {
	ID       int
	Src, Dst int // bcfab's server indexes (h<i>)
	// SimSrc and SimDst are the sim's host ids; SPort the source port
	// the sim gives the flow, DPort its destination port.
	SimSrc, SimDst int
	SPort, DPort   int
	Size           int64
	// Start is the flow's start on the target's clock, from the run's
	// start (the sim's clock is FlowBase later); Ideal its ideal FCT on
	// the target's clock in bcfab's network (lab.WorkloadIdeal / D),
	// bcfab's slowdowns' denominator; SimIdeal the same formula in the
	// sim's network (the sim's path, headers and ACKs: net.ideal), the
	// sim's slowdowns'. Each tool's slowdown is then against the flow
	// alone in its own network, as the papers define it.
	Start    time.Duration
	Ideal    time.Duration
	SimIdeal time.Duration
	Kind     workload.Kind
	Group    int
}

// SimStart is the flow's start on the sim's clock.
func (f Flow) SimStart() time.Duration { return FlowBase + f.Start }

// Input is what an export is made of.
type Input struct {
	// Plan is the lab's, resolved (lab.NewPlan): the fabric, every
	// node's config, the scale model. No lab need be up.
	Plan *lab.Plan
	// Flows is the workload's schedule, in lab time (lab.SpecSchedule),
	// and Duration its window, in lab time.
	Flows    []workload.Flow
	Duration time.Duration
	// CC is the flows' congestion control (lab.WorkloadOptions.FlowCC).
	CC transport.CC
	// MTU is the flows' payload per packet (0: api.DefaultRDMAMTU).
	MTU int
	// Drain is how long after the last start the sim runs, in lab time
	// (0: lab.DefaultDrain, as lab workload waits).
	Drain time.Duration
	// HostLink is how fast a relay's link to its host is ("": HostLinkPort).
	HostLink HostLink
	// Build and Command say what wrote the export, for its README.
	Build, Command string
}

// Sim is an export in memory: what Write writes.
type Sim struct {
	Lab      string
	Topology string // the lab's fabric, as lab up names it
	FC       string // the lab's flow control
	// Routing is a graph fabric's (lab.RoutingECMP or lab.RoutingKSP;
	// empty for BCube).
	Routing string
	Model   scale.Model
	CC      transport.CC
	MTU     int
	// HostRate and HostDelay are the links between relays and their
	// hosts (0 without relays), HostLink what set HostRate.
	HostRate  uint64
	HostDelay time.Duration
	HostLink  HostLink
	// QPMaxRate is every flow's starting and highest rate when it is
	// below the NIC's (HostLinkPorts), 0 otherwise.
	QPMaxRate uint64
	Nodes     []Node
	Links     []Link
	// Flows are in the order of flow.txt: by start, then by id.
	Flows []Flow
	// Settings are config.txt's lines, in order.
	Settings []Setting
	// End is when the last flow is due to have ended (its start and the
	// drain), QlenEnd when the sim's queue monitor writes its last
	// histograms (the first of its dumps, every qlenDump, after End),
	// and Stop when the sim stops, all on the sim's clock.
	End, QlenEnd, Stop time.Duration
	// Notes are the differences between the two tools in this export,
	// each a sentence with its numbers, for the README.
	Notes []string

	build, command string
}

// New makes the export of in.
func New(in Input) (*Sim, error) {
	p := in.Plan
	if p == nil {
		return nil, errors.New("ns3: no plan")
	}
	m := p.Spec.Model()
	if m.D <= 0 {
		return nil, fmt.Errorf("ns3: lab %s has no scale model", p.Spec.Name)
	}
	mtu := in.MTU
	if mtu == 0 {
		mtu = api.DefaultRDMAMTU
	}
	if mtu < api.MinRDMAMTU || mtu > api.MaxRDMAMTU {
		return nil, fmt.Errorf("ns3: mtu %d: want %d..%d payload bytes", mtu, api.MinRDMAMTU, api.MaxRDMAMTU)
	}
	if int(in.CC) >= len(transport.CCNames) {
		return nil, fmt.Errorf("ns3: congestion control %v: none the sim runs", in.CC)
	}
	s := &Sim{Lab: p.Spec.Name, Topology: p.Spec.TopologyText(), FC: p.Spec.FC, Model: m, CC: in.CC, MTU: mtu,
		build: in.Build, command: in.Command}
	if s.FC == "" {
		s.FC = scheme.NameNone
	}
	if f := p.Spec.Fabric; f != nil {
		s.Routing = cmp.Or(f.Routing, lab.RoutingECMP)
	}
	hl := cmp.Or(in.HostLink, HostLinkPort)
	if _, err := ParseHostLink(string(hl)); err != nil {
		return nil, fmt.Errorf("ns3: %w", err)
	}
	n, err := newNet(p, m, s.packet(), hl)
	if err != nil {
		return nil, fmt.Errorf("ns3: %w", err)
	}
	s.Nodes, s.Links, s.HostRate, s.HostDelay = n.nodes, n.links, n.hostRate, n.hostDelay
	if n.hostRate > 0 {
		s.HostLink = hl
	}
	if r := n.targetRate(n.flowLabRate); n.hostRate > r {
		s.QPMaxRate = r
	}
	if s.CC == transport.CCHPCC {
		if err := n.checkINT(); err != nil {
			return nil, fmt.Errorf("ns3: cc hpcc: %w", err)
		}
	}
	if err := s.schedule(n, in); err != nil {
		return nil, fmt.Errorf("ns3: %w", err)
	}
	if err := s.configure(n); err != nil {
		return nil, fmt.Errorf("ns3: %w", err)
	}
	return s, nil
}

// packet is the largest data packet of the sim's flows: the payload and
// the sim's headers, HPCC's INT included.
func (s *Sim) packet() int {
	if s.CC == transport.CCHPCC {
		return s.MTU + simHeader + simINT
	}
	return s.MTU + simHeader
}

// wire is what a flow's packets and ACKs are on the sim's links, for
// its ideal FCT.
func (s *Sim) wire() workload.Wire {
	w := workload.Wire{Payload: s.MTU, Overhead: simHeader, Ack: simAck}
	if s.CC == transport.CCHPCC {
		w.Overhead, w.Ack = simHeader+simINT, simAckINT
	}
	return w
}

// ideal is the ideal FCT (workload.IdealHops, on the target's clock) of
// a flow of size bytes from host src to host dst of the sim alone on a
// shortest path of the sim's network, its packets and ACKs as w has
// them: the sim's own network, relays' host links included. Every
// shortest path of the fabrics the export writes has the same links'
// rates and delays in some order, which the ideal does not depend on.
func (n *net) ideal(src, dst int, size int64, w workload.Wire) (time.Duration, error) {
	adj := make([][]int, len(n.nodes)) // node -> link indexes
	for i, l := range n.links {
		adj[l.A.Node] = append(adj[l.A.Node], i)
		adj[l.B.Node] = append(adj[l.B.Node], i)
	}
	via := make([]int, len(n.nodes)) // the link a node was reached by
	for i := range via {
		via[i] = -1
	}
	seen := make([]bool, len(n.nodes))
	seen[src] = true
	queue := []int{src}
	for len(queue) > 0 && !seen[dst] {
		at := queue[0]
		queue = queue[1:]
		for _, li := range adj[at] {
			l := &n.links[li]
			next := l.B.Node
			if next == at {
				next = l.A.Node
			}
			if seen[next] {
				continue
			}
			seen[next], via[next] = true, li
			// Hosts forward nothing: only a switch or relay is passed
			// through.
			if n.nodes[next].Role != RoleHost {
				queue = append(queue, next)
			}
		}
	}
	if !seen[dst] {
		return 0, fmt.Errorf("no path from sim node %d to %d", src, dst)
	}
	var hops []workload.Hop
	for at := dst; at != src; {
		l := &n.links[via[at]]
		hops = append(hops, workload.Hop{Rate: l.RateBps, Prop: l.Delay})
		if l.A.Node == at {
			at = l.B.Node
		} else {
			at = l.A.Node
		}
	}
	return workload.IdealHops(size, hops, w), nil
}

// net is the sim's network and what maps it back to the plan's.
type net struct {
	plan  *lab.Plan
	model scale.Model
	nodes []Node
	links []Link
	// host and relay are the sim ids of server i's host and relay (-1:
	// none); cfg the bcfab config of every sim node.
	host, relay []int
	cfg         []*config.Node
	// labRate is every link's rate in the lab, by link.
	labRate []uint64
	// hostRate and hostDelay are the links of relays to their hosts,
	// hostLabRate their rate in the lab (0 without relays); flowLabRate
	// is a flow's highest rate in the lab, a server's fastest port's.
	hostRate, hostLabRate, flowLabRate uint64
	hostDelay                          time.Duration
}

// newNet lays out the sim's nodes and links of plan p under model m, for
// data packets of pkt bytes, relays' links to their hosts as hl says.
func newNet(p *lab.Plan, m scale.Model, pkt int, hl HostLink) (*net, error) {
	n := &net{plan: p, model: m}
	byName := map[string]*lab.NodePlan{}
	var servers, switches []*lab.NodePlan
	for i := range p.Nodes {
		np := &p.Nodes[i]
		byName[np.Name] = np
		if np.Kind == lab.KindServer {
			servers = append(servers, np)
		} else {
			switches = append(switches, np)
		}
	}
	// Servers by index: the schedule names them so.
	index := map[string]int{}
	for i, np := range servers {
		if np.Name != bcube.HostName(i) {
			return nil, fmt.Errorf("the lab's server %d is %s, not %s", i, np.Name, bcube.HostName(i))
		}
		index[np.Name] = i
	}
	relays := 0
	for _, np := range servers {
		if len(np.Config.FabricPorts()) > 1 {
			relays++
		}
	}
	if total := len(servers) + relays + len(switches); total > maxNodes {
		return nil, fmt.Errorf("%d nodes: the sim addresses at most %d", total, maxNodes)
	}
	add := func(name string, r Role, c *config.Node) int {
		id := len(n.nodes)
		n.nodes = append(n.nodes, Node{ID: id, Name: name, Role: r})
		n.cfg = append(n.cfg, c)
		return id
	}
	n.host, n.relay = make([]int, len(servers)), make([]int, len(servers))
	for i, np := range servers {
		n.host[i] = add(np.Name, RoleHost, &np.Config)
	}
	for i, np := range servers {
		n.relay[i] = -1
		if len(np.Config.FabricPorts()) > 1 {
			n.relay[i] = add(np.Name, RoleRelay, &np.Config)
		}
	}
	sw := map[string]int{}
	for _, np := range switches {
		sw[np.Name] = add(np.Name, RoleSwitch, &np.Config)
	}
	// The relays' links to their hosts, first: a relay's port 1 is its
	// host's, as the NIC's is (the sim's device 0 is the loopback).
	for _, np := range servers {
		var fastest, sum uint64
		for _, port := range np.Config.FabricPorts() {
			r := np.Config.PortRate(port)
			fastest = max(fastest, r)
			sum += r
		}
		n.flowLabRate = max(n.flowLabRate, fastest)
		if len(np.Config.FabricPorts()) > 1 {
			n.hostLabRate = max(n.hostLabRate, fastest)
			if hl == HostLinkPorts {
				n.hostLabRate = max(n.hostLabRate, sum)
			}
		}
	}
	if relays > 0 {
		if n.hostLabRate == 0 {
			return nil, errors.New("unshaped links have no rate in the target: give the lab a rate")
		}
		n.hostRate = n.targetRate(n.hostLabRate)
		n.hostDelay = hostDelay(n.hostRate, pkt)
		for i := range servers {
			if n.relay[i] < 0 {
				continue
			}
			n.links = append(n.links, Link{A: End{n.relay[i], HostPort}, B: End{n.host[i], HostPort}, RateBps: n.hostRate, Delay: n.hostDelay})
			n.labRate = append(n.labRate, n.hostLabRate)
		}
	}
	end := func(e lab.Endpoint) (End, *config.Node, error) {
		np, ok := byName[e.Node]
		if !ok {
			return End{}, nil, fmt.Errorf("cable end %s:%s: no such node in the plan", e.Node, e.Ifname)
		}
		if np.Kind == lab.KindSwitch {
			return End{sw[e.Node], e.Ifname}, &np.Config, nil
		}
		i := index[e.Node]
		if n.relay[i] >= 0 {
			return End{n.relay[i], e.Ifname}, &np.Config, nil
		}
		return End{n.host[i], e.Ifname}, &np.Config, nil
	}
	for _, l := range p.Links {
		a, ca, err := end(l.A)
		if err != nil {
			return nil, err
		}
		b, cb, err := end(l.B)
		if err != nil {
			return nil, err
		}
		ra, rb := ca.PortRate(l.A.Ifname), cb.PortRate(l.B.Ifname)
		la, downA := ca.PortImpairment(l.A.Ifname)
		lb, downB := cb.PortImpairment(l.B.Ifname)
		switch {
		case ra != rb:
			return nil, fmt.Errorf("cable %v runs at %d bit/s at one end and %d at the other: the sim's links have one rate", l, ra, rb)
		case ra == 0:
			return nil, errors.New("unshaped links have no rate in the target: give the lab a rate")
		case downA || downB:
			return nil, fmt.Errorf("cable %v is down: the sim has no cable down from the start (bring it up, or leave it out of the lab)", l)
		case la != lb:
			return nil, fmt.Errorf("cable %v loses %d ppm at one end and %d at the other: the sim's links have one error rate", l, la, lb)
		}
		n.links = append(n.links, Link{A: a, B: b, RateBps: n.targetRate(ra), Delay: m.Target.LinkDelay.D(), ErrorRate: float64(la) / 1e6})
		n.labRate = append(n.labRate, ra)
	}
	return n, nil
}

// targetRate is the target's rate of a lab rate: x D, to the bit/s.
func (n *net) targetRate(labBps uint64) uint64 {
	return uint64(math.Round(n.model.TargetRate(float64(labBps))))
}

// hostDelay is the delay of a host's link to its relay: the least whole
// nanoseconds at which the PFC headroom the sim gives the relay's port
// (third.cc: 3 x rate x delay) holds what its host still sends once the
// relay decides to pause it. That is at most two packets (the relay's
// pause waits for the packet it is sending, the host finishes the one it
// is sending) and a round trip of the link, 2 x rate x delay: so rate x
// delay must hold two packets. A shorter delay leaves the relay no
// headroom and the sim drops what a paused host has in flight; zero
// leaves it none at all.
func hostDelay(rateBps uint64, pkt int) time.Duration {
	ns := math.Ceil(16 * float64(pkt) * 1e9 / float64(rateBps))
	return time.Duration(ns)
}

// checkINT checks what HPCC's INT header can carry: every port's rate
// must be one it names, and a path at most intHops switches long.
func (n *net) checkINT() error {
	for _, l := range n.links {
		if !slices.Contains(intRates, l.RateBps) {
			return fmt.Errorf("a link of %s: the sim's INT header names 25, 50, 100, 200 and 400 Gb/s only", rateText(l.RateBps))
		}
	}
	if h := n.longestPath(); h > intHops {
		return fmt.Errorf("the longest path crosses %d switches (relays included): the sim's INT header holds %d", h, intHops)
	}
	return nil
}

// longestPath is the most switches (relays included) on a shortest path
// between two hosts: what the sim's routing takes.
func (n *net) longestPath() int {
	adj := make([][]int, len(n.nodes))
	for _, l := range n.links {
		adj[l.A.Node] = append(adj[l.A.Node], l.B.Node)
		adj[l.B.Node] = append(adj[l.B.Node], l.A.Node)
	}
	most := 0
	for _, src := range n.host {
		dist := make([]int, len(n.nodes))
		for i := range dist {
			dist[i] = -1
		}
		dist[src] = 0
		queue := []int{src}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			if u != src && n.nodes[u].Role == RoleHost {
				most = max(most, dist[u]-1) // the hops between two hosts less one are switches
				continue                    // the sim routes through no host
			}
			for _, v := range adj[u] {
				if dist[v] < 0 {
					dist[v] = dist[u] + 1
					queue = append(queue, v)
				}
			}
		}
	}
	return most
}

// schedule sets the flows: the schedule on the target's clock, in the
// sim's order, each with its source port; and when the sim stops.
func (s *Sim) schedule(n *net, in Input) error {
	p, m := n.plan, s.Model
	t, err := p.Spec.ServerTopology()
	if err != nil {
		return err
	}
	if len(in.Flows) == 0 {
		return errors.New("the schedule has no flows (raise the load or the duration)")
	}
	ideal := lab.WorkloadIdeal(p.Spec, t, s.MTU)
	var last time.Duration
	for _, f := range in.Flows {
		switch {
		case f.After != 0:
			return fmt.Errorf("flow %d waits for group %d's first phase to end: the sim starts every flow at its time (give the pattern --pattern-wait=false)", f.ID, f.After)
		case f.Src < 0 || f.Src >= len(n.host) || f.Dst < 0 || f.Dst >= len(n.host) || f.Src == f.Dst:
			return fmt.Errorf("flow %d from h%d to h%d: not two servers of the lab", f.ID, f.Src, f.Dst)
		case f.Size < 1 || f.Size > math.MaxUint32:
			return fmt.Errorf("flow %d of %d bytes: the sim takes 1 to %d", f.ID, f.Size, uint32(math.MaxUint32))
		case f.Start < 0:
			return fmt.Errorf("flow %d starts before the run, at %v", f.ID, f.Start)
		}
		simIdeal, err := n.ideal(n.host[f.Src], n.host[f.Dst], f.Size, s.wire())
		if err != nil {
			return fmt.Errorf("flow %d: %w", f.ID, err)
		}
		s.Flows = append(s.Flows, Flow{ID: f.ID, Src: f.Src, Dst: f.Dst, SimSrc: n.host[f.Src], SimDst: n.host[f.Dst],
			DPort: DPort, Size: f.Size, Start: m.TargetTime(f.Start), Ideal: m.TargetTime(ideal(f.Src, f.Dst, f.Size)), SimIdeal: simIdeal,
			Kind: f.Kind, Group: f.Group})
		last = max(last, f.Start)
	}
	// third.cc starts flows in the file's order and wants it by start;
	// flows that start together go by id.
	slices.SortStableFunc(s.Flows, func(a, b Flow) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.ID, b.ID))
	})
	next := map[[2]int]int{}
	for i := range s.Flows {
		f := &s.Flows[i]
		k := [2]int{f.SimSrc, f.SimDst}
		if next[k] >= maxSPorts {
			return fmt.Errorf("more than %d flows from h%d to h%d: the sim's source ports wrap", maxSPorts, f.Src, f.Dst)
		}
		f.SPort = FirstSPort + next[k]
		next[k]++
	}
	drain := in.Drain
	if drain == 0 {
		drain = lab.DefaultDrain(m, in.Duration, in.Flows, ideal)
	}
	s.End = FlowBase + m.TargetTime(last+drain)
	// The queue monitor writes its histograms every qlenDump of the
	// sim's clock: run it to the first dump after the end, and stop just
	// after that dump.
	s.QlenEnd = FlowBase + qlenDump*max(1, (s.End-FlowBase+qlenDump-1)/qlenDump)
	s.Stop = s.QlenEnd + time.Microsecond
	return nil
}
