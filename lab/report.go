package lab

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
)

// Report is the status of a lab, node by node.
type Report struct {
	Lab     string       `json:"lab"`
	Spec    Spec         `json:"spec"`
	Phase   string       `json:"phase"`
	Created time.Time    `json:"created"`
	Nodes   []NodeStatus `json:"nodes"`
	// Stalls lists every queue the nodes' watchdogs report stalled now;
	// Cycle, those among them that wait on each other around a loop of
	// links (a deadlock), in order; empty when there is none.
	Stalls []Stall `json:"stalls,omitempty"`
	Cycle  []Stall `json:"cycle,omitempty"`
	// Impaired lists every port that drops received frames on purpose
	// now (injected loss or link down), with what it dropped so far.
	Impaired []Impairment `json:"impaired,omitempty"`
	// Dead lists the workers that are not running, each with the nodes
	// it hosted (their NodeStatus says so too, one by one).
	Dead []ProcessDiedError `json:"dead,omitempty"`
}

// Impairment is a port whose XDP program drops received frames on
// purpose: injected loss (Spec.LossPPM, SetLink) or a link set down.
type Impairment struct {
	Node string `json:"node"`
	api.LinkState
	// Dropped counts the frames the port dropped on purpose since its
	// daemon started (PortStats.InjectedDrops).
	Dropped uint64 `json:"dropped"`
}

func (im Impairment) String() string {
	s := fmt.Sprintf("%s %s: loss %s", im.Node, im.Port, FormatLoss(im.LossPPM))
	if im.Down {
		s += ", down"
	}
	return s + fmt.Sprintf(", %d dropped", im.Dropped)
}

// Stall is a queue a watchdog reports stalled: paused, not empty and
// sending nothing for at least the detection time.
type Stall struct {
	Node  string `json:"node"`
	Port  string `json:"port"`
	Queue string `json:"queue"`
	ForNs int64  `json:"for_ns"`
	// Peer is the node at the other end of Port: the one whose pause
	// holds the queue.
	Peer string `json:"peer"`
}

func (s Stall) String() string {
	return fmt.Sprintf("%s %s %s (paused by %s, %v)", s.Node, s.Port, s.Queue, s.Peer, time.Duration(s.ForNs).Round(time.Millisecond))
}

// NodeStatus is one node's status.
type NodeStatus struct {
	Name            string `json:"name"`
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace"`
	NamespaceExists bool   `json:"namespace_exists"`
	// Worker names the worker process that hosts the node ("": a daemon
	// of its own); Pid is that process.
	Worker string `json:"worker,omitempty"`
	Pid    int    `json:"pid"`
	// Alive: the recorded pid runs with this node's (or its worker's)
	// config file.
	Alive bool `json:"alive"`
	// Stopped: the node was stopped (lab node stop) and its worker or
	// daemon is not running it.
	Stopped bool `json:"stopped,omitempty"`
	// Healthy: GET /healthz answered 200.
	Healthy bool `json:"healthy"`
	// Stats summarises GET /stats; nil when it could not be read.
	Stats *StatsSummary `json:"stats,omitempty"`
	// Err says why the node is not healthy or has no stats.
	Err string `json:"error,omitempty"`
}

// OK reports whether the node's namespace exists and its daemon is alive
// and healthy.
func (n *NodeStatus) OK() bool { return n.NamespaceExists && n.Alive && n.Healthy }

// StatsSummary adds up a daemon's ports.
type StatsSummary struct {
	Ports     int    `json:"ports"`
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	RxBytes   uint64 `json:"rx_bytes"`
	TxBytes   uint64 `json:"tx_bytes"`
	// Drops is the sum of every port's PortStats.TotalDrops: the frames
	// the emulator lost. Frames dropped on purpose are not in it.
	Drops uint64 `json:"drops"`
	// Injected is the sum of every port's PortStats.InjectedDrops: frames
	// dropped on purpose, by injected loss or a link set down.
	Injected uint64 `json:"injected"`
	// Links is every fabric port's impairment now and what it dropped;
	// Impaired those of them that drop frames on purpose now.
	Links    []Impairment `json:"links,omitempty"`
	Impaired []Impairment `json:"impaired,omitempty"`
	// Stalled lists the queues the watchdog reports stalled now.
	Stalled []Stall `json:"stalled,omitempty"`
	// Stalls counts the stalls the watchdog has found since start.
	Stalls uint64 `json:"stalls"`
}

// Summarize adds up the ports of a daemon's stats.
func Summarize(st *api.Stats) StatsSummary {
	s := StatsSummary{Ports: len(st.Ports)}
	for i := range st.Ports {
		p := &st.Ports[i]
		s.RxPackets += p.RxPackets
		s.TxPackets += p.TxPackets
		s.RxBytes += p.RxBytes
		s.TxBytes += p.TxBytes
		s.Drops += p.TotalDrops()
		s.Injected += p.InjectedDrops()
		if p.Name != bcube.AppPeerIf {
			im := Impairment{Node: st.Node, LinkState: api.LinkState{Port: p.Name, LossPPM: p.LossPPM, Down: p.LinkDown}, Dropped: p.InjectedDrops()}
			s.Links = append(s.Links, im)
			if im.Impaired() {
				s.Impaired = append(s.Impaired, im)
			}
		}
		for _, q := range p.Queues {
			s.Stalls += q.Stalls
			if q.Stalled {
				s.Stalled = append(s.Stalled, Stall{Node: st.Node, Port: p.Name, Queue: q.Name, ForNs: q.StalledForNs})
			}
		}
	}
	return s
}

// PeerFunc is PeerPort for the lab's fabric, whichever its kind.
func (s Spec) PeerFunc() (func(node, port string) (peer, peerPort string, ok bool), error) {
	if s.Fabric != nil {
		g, err := s.Fabric.Graph()
		if err != nil {
			return nil, err
		}
		return func(node, port string) (string, string, bool) { return graphPeer(g, node, port) }, nil
	}
	t, err := bcube.New(s.N, s.K)
	if err != nil {
		return nil, err
	}
	return func(node, port string) (string, string, bool) { return PeerPort(t, node, port) }, nil
}

// Peer is the node at the other end of node's port in t, or "" for a
// port that is not a fabric port (a server's application port).
func Peer(t bcube.Topology, node, port string) string {
	peer, _, _ := PeerPort(t, node, port)
	return peer
}

// PeerPort returns the other end of the cable at node's port in t: the
// peer node and its port. ok is false when node is not a node of t or
// port not one of its fabric ports.
func PeerPort(t bcube.Topology, node, port string) (peer, peerPort string, ok bool) {
	n, err := t.ParseNode(node)
	if err != nil {
		return "", "", false
	}
	var i int
	if n.Switch {
		if _, err := fmt.Sscanf(port, "p%d", &i); err != nil || port != bcube.SwitchPort(i) || i < 0 || i >= t.N() {
			return "", "", false
		}
		return bcube.HostName(t.ServerAt(n.Level, n.Index, i)), bcube.HostPort(n.Level), true
	}
	if _, err := fmt.Sscanf(port, "eth%d", &i); err != nil || port != bcube.HostPort(i) || i < 0 || i >= t.Levels() {
		return "", "", false
	}
	w, p := t.SwitchOf(n.Index, i)
	return bcube.SwitchName(i, w), bcube.SwitchPort(p), true
}

// CycleText is a cycle of stalled queues (FindCycle's) as "s0.0 p1 P3
// -> h1 eth0 P3 -> back to s0.0"; "" for none.
func CycleText(c []Stall) string {
	if len(c) == 0 {
		return ""
	}
	hops := make([]string, len(c))
	for i, s := range c {
		hops[i] = s.Node + " " + s.Port + " " + s.Queue
	}
	return strings.Join(hops, " -> ") + " -> back to " + c[0].Node
}

// FindCycle returns stalled queues that wait on each other around a loop
// — each held by a pause from the next one's node, the last's peer being
// the first's node — in order from the lexically first node on it, or
// nil. Every stall's Peer must be set. A pause holds a queue because the
// peer's buffer for that link is full; if the peer's own queues are
// stalled too, and so on around a loop, nothing on the loop can move
// again: a deadlock.
func FindCycle(stalls []Stall) []Stall {
	by := map[string][]Stall{}
	for _, s := range stalls {
		if s.Peer != "" {
			by[s.Node] = append(by[s.Node], s)
		}
	}
	nodes := make([]string, 0, len(by))
	for n := range by {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for n := range by {
		sort.Slice(by[n], func(i, j int) bool { return by[n][i].Port+by[n][i].Queue < by[n][j].Port+by[n][j].Queue })
	}
	// Depth-first search on nodes, edges along stalled queues.
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var path []Stall
	var found []Stall
	var visit func(n string) bool
	visit = func(n string) bool {
		color[n] = grey
		for _, s := range by[n] {
			switch color[s.Peer] {
			case grey:
				// The cycle is the path from s.Peer's first edge to s.
				path = append(path, s)
				for i := range path {
					if path[i].Node == s.Peer {
						found = append([]Stall(nil), path[i:]...)
						return true
					}
				}
			case white:
				path = append(path, s)
				if visit(s.Peer) {
					return true
				}
				path = path[:len(path)-1]
			}
		}
		color[n] = black
		return false
	}
	for _, n := range nodes {
		if color[n] == white && visit(n) {
			break
		}
	}
	if found == nil {
		return nil
	}
	// Start at the lexically first node, for a stable report.
	first := 0
	for i := range found {
		if found[i].Node < found[first].Node {
			first = i
		}
	}
	return append(found[first:], found[:first]...)
}

// LabInfo is one line of List.
type LabInfo struct {
	Name  string `json:"name"`
	Phase string `json:"phase"` // "" for an orphan
	N     int    `json:"n"`
	K     int    `json:"k"`
	// Topology names the fabric: BCube(n,k), or a graph fabric's kind
	// and parameters.
	Topology string    `json:"topology,omitempty"`
	Created  time.Time `json:"created"`
	// Nodes is the number of nodes the state records.
	Nodes int `json:"nodes"`
	// Namespaces is how many of the lab's namespaces exist now; Alive how
	// many recorded daemons still run.
	Namespaces int `json:"namespaces"`
	Alive      int `json:"alive"`
	// Orphan: namespaces named like a lab's exist, but no state file.
	Orphan bool `json:"orphan,omitempty"`
}
