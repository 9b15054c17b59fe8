package lab

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/fabric/topo"
	"github.com/bcfab/bcfab/node/config"
)

// Daemon kinds, also the names of their binaries in Spec.BinDir, and the
// worker's binary, which hosts both.
const (
	KindSwitch = "swd"
	KindServer = "hostd"
	WorkerBin  = "bcfabd"
)

// Plan is a Spec resolved into everything Up creates, computed before
// anything is: namespaces, both ends of every link, every daemon's config
// and file paths.
type Plan struct {
	Spec Spec // defaults applied
	// Topology is a BCube lab's fabric; Graph a graph fabric's (Spec.Fabric).
	Topology  bcube.Topology
	Graph     *topo.Graph
	RunDir    string // <RunRoot>/<Name>
	StatePath string // <RunDir>/state.json
	LogDir    string // <RunDir>/logs

	// Nodes are the servers h0..h<n^(k+1)-1>, then the switches by level
	// and index.
	Nodes []NodePlan
	// Links are the fabric cables: A is server h<i> port eth<l>, B is port
	// p<p> of the switch s<l>.<w> it connects to.
	Links []Link
	// AppLinks are the servers' application veths: A is bc0 (kernel side,
	// with the server's address), B is bc0nic (hostd's side).
	AppLinks []Link
	// Workers host the nodes (none when each node runs in a process of
	// its own, Spec.Workers == PerNode).
	Workers []WorkerPlan
}

// WorkerPlan is one worker process and the nodes it hosts.
type WorkerPlan struct {
	Name       string // w<i>
	Binary     string // <BinDir>/bcfabd
	ConfigPath string // <RunDir>/w<i>.json
	LogPath    string // <LogDir>/w<i>.log
	Nodes      []int  // indexes into Plan.Nodes
	Config     config.Worker
}

// NodePlan is one node: its namespace and its daemon.
type NodePlan struct {
	Name       string // h<i> or s<l>.<w>
	Kind       string // KindServer or KindSwitch
	Namespace  string
	Binary     string // <BinDir>/<Kind>
	ConfigPath string // <RunDir>/<Name>.json
	LogPath    string // <LogDir>/<Name>.log
	Worker     int    // index into Plan.Workers; -1: a process of its own
	Config     config.Node
}

// Endpoint is one end of a veth pair.
type Endpoint struct {
	Node      string
	Namespace string
	Ifname    string
	MAC       net.HardwareAddr
	Addr      netip.Prefix // bc0 only; the zero Prefix elsewhere
}

// Link is a veth pair.
type Link struct {
	A, B Endpoint
}

func (l Link) String() string {
	return fmt.Sprintf("%s:%s <-> %s:%s", l.A.Node, l.A.Ifname, l.B.Node, l.B.Ifname)
}

// MTU of every lab interface.
const MTU = 1500

// maxSocketPath is the longest unix socket path (sun_path is 108 bytes,
// NUL included).
const maxSocketPath = 107

// NewPlan validates the spec's contents (not root, not the name's
// availability: see Spec.Validate) and resolves it. It touches nothing.
func NewPlan(spec Spec) (*Plan, error) {
	if err := spec.checkChoices(); err != nil {
		return nil, err
	}
	s, err := spec.withDefaults()
	if err != nil {
		return nil, err
	}
	if s.Fabric != nil {
		return newGraphPlan(s)
	}
	t, err := s.check()
	if err != nil {
		return nil, err
	}
	run := filepath.Join(s.RunRoot, s.Name)
	p := &Plan{
		Spec:      s,
		Topology:  t,
		RunDir:    run,
		StatePath: filepath.Join(run, "state.json"),
		LogDir:    filepath.Join(run, "logs"),
	}
	addNode := func(name, kind string) error {
		c := s.bcubeNodeConfig(t, name, filepath.Join(run, name+".sock")) // length checked by check
		if err := checkConfig(&c); err != nil {
			return err
		}
		ns := Namespace(s.Name, name)
		log := filepath.Join(p.LogDir, name+".log")
		c.Netns = filepath.Join(netnsDir, ns)
		if s.Workers != PerNode {
			c.Log = log
		}
		p.Nodes = append(p.Nodes, NodePlan{
			Name:       name,
			Kind:       kind,
			Namespace:  ns,
			Binary:     filepath.Join(s.BinDir, kind),
			ConfigPath: filepath.Join(run, name+".json"),
			LogPath:    log,
			Worker:     -1,
			Config:     c,
		})
		return nil
	}
	for i := 0; i < t.Servers(); i++ {
		if err := addNode(bcube.HostName(i), KindServer); err != nil {
			return nil, err
		}
	}
	for l := 0; l < t.Levels(); l++ {
		for w := 0; w < t.SwitchesPerLevel(); w++ {
			if err := addNode(bcube.SwitchName(l, w), KindSwitch); err != nil {
				return nil, err
			}
		}
	}
	for i := 0; i < t.Servers(); i++ {
		h := bcube.HostName(i)
		for l := 0; l < t.Levels(); l++ {
			w, port := t.SwitchOf(i, l)
			sw := bcube.SwitchName(l, w)
			p.Links = append(p.Links, Link{
				A: Endpoint{Node: h, Namespace: Namespace(s.Name, h), Ifname: bcube.HostPort(l), MAC: bcube.HostPortMAC(i, l)},
				B: Endpoint{Node: sw, Namespace: Namespace(s.Name, sw), Ifname: bcube.SwitchPort(port), MAC: bcube.SwitchPortMAC(l, w, port)},
			})
		}
		p.AppLinks = append(p.AppLinks, Link{
			A: Endpoint{Node: h, Namespace: Namespace(s.Name, h), Ifname: bcube.AppIf, MAC: bcube.AppMAC(i),
				Addr: netip.PrefixFrom(bcube.ServerIP(i), bcube.Prefix.Bits())},
			B: Endpoint{Node: h, Namespace: Namespace(s.Name, h), Ifname: bcube.AppPeerIf, MAC: bcube.AppNICMAC(i)},
		})
	}
	p.assignWorkers()
	p.patchCables()
	return p, nil
}

// patchCables patches every fabric cable whose two nodes share a worker
// (Spec.LinkMode patch): both ends' configs name it, and the worker moves
// its frames in memory; the veth stays for captures.
func (p *Plan) patchCables() {
	if p.Spec.LinkMode != config.LinksPatch || len(p.Workers) == 0 {
		return
	}
	index := map[string]int{}
	for i := range p.Nodes {
		index[p.Nodes[i].Name] = i
	}
	for _, l := range p.Links {
		a, b := &p.Nodes[index[l.A.Node]], &p.Nodes[index[l.B.Node]]
		if a.Worker < 0 || a.Worker != b.Worker {
			continue
		}
		cable := l.A.Node + ":" + l.A.Ifname + "-" + l.B.Node + ":" + l.B.Ifname
		a.Config.Patches = append(a.Config.Patches, config.PatchPort{Port: l.A.Ifname, Cable: cable})
		b.Config.Patches = append(b.Config.Patches, config.PatchPort{Port: l.B.Ifname, Cable: cable})
	}
}

// assignWorkers deals the nodes to Spec.Workers workers so that many
// cables join nodes of one worker, whose frames then cross without waking
// another: each level-0 group (s0.g and the servers h<g·n>..h<g·n+n-1>
// it joins) whole to one worker, groups in contiguous blocks, the
// switches of higher levels in contiguous blocks of their level; in a
// graph fabric each rack (a ToR and its servers) whole, racks in
// contiguous blocks, the other switches in contiguous blocks. With
// more workers than groups, nodes are dealt evenly in order.
func (p *Plan) assignWorkers() {
	s, t := p.Spec, p.Topology
	if s.Workers == PerNode {
		return
	}
	graph := p.Graph != nil
	nw := min(s.Workers, len(p.Nodes))
	for i := range nw {
		name := fmt.Sprintf("w%d", i)
		p.Workers = append(p.Workers, WorkerPlan{
			Name:       name,
			Binary:     filepath.Join(s.BinDir, WorkerBin),
			ConfigPath: filepath.Join(p.RunDir, name+".json"),
			LogPath:    filepath.Join(p.LogDir, name+".log"),
			Config: config.Worker{Lab: s.Name, Name: name, Control: filepath.Join(p.RunDir, name+".sock"),
				Slack: config.Duration(cmp.Or(s.WorkerSlack, s.Model().WorkerSlack())), PollBudget: config.Duration(s.WorkerPollBudget), Priority: s.WorkerPriority},
		})
	}
	var servers, per, groups int
	var group []int // a graph fabric's: each node's rack (its ToR's), -1 for other switches
	var racks, others int
	if graph {
		group, racks, others = p.racks()
	} else {
		servers, per = t.Servers(), t.SwitchesPerLevel()
		groups = servers / t.N() // level-0 groups: n servers and their switch
	}
	other := 0
	for i := range p.Nodes {
		var w int
		switch {
		case graph && nw <= racks && group[i] >= 0: // a rack whole to one worker
			w = group[i] * nw / racks
		case graph && nw <= racks: // the switches above the racks in contiguous blocks
			w = other * nw / others
			other++
		case graph || nw > groups: // more workers than racks or groups: spread evenly
			w = i * nw / len(p.Nodes)
		case i < servers:
			w = (i / t.N()) * nw / groups
		case i < servers+per: // s0.g, with group g
			w = (i - servers) * nw / groups
		default:
			w = ((i - servers) % per) * nw / per
		}
		p.Nodes[i].Worker = w
		wp := &p.Workers[w]
		wp.Nodes = append(wp.Nodes, i)
		wp.Config.Nodes = append(wp.Config.Nodes, p.Nodes[i].ConfigPath)
	}
}

// racks groups a graph fabric's nodes by rack: each switch that servers
// hang off (a ToR, leaf or edge switch) and its servers are rack r
// (group[node] = r, racks in the order of their first server); the
// other switches are -1, others of them.
func (p *Plan) racks() (group []int, racks, others int) {
	g := p.Graph
	group = make([]int, len(g.Nodes))
	for i := range group {
		group[i] = -1
	}
	rack := map[int]int{}
	for _, s := range g.Servers() {
		at, ok := g.Attachment(s)
		if !ok {
			continue
		}
		r, seen := rack[at.Node]
		if !seen {
			r = len(rack)
			rack[at.Node] = r
			group[at.Node] = r
		}
		group[s] = r
	}
	for _, x := range group {
		if x < 0 {
			others++
		}
	}
	return group, len(rack), max(others, 1)
}

// Namespaces returns every namespace of the plan, in node order.
func (p *Plan) Namespaces() []string {
	out := make([]string, len(p.Nodes))
	for i := range p.Nodes {
		out[i] = p.Nodes[i].Namespace
	}
	return out
}

// Node returns the node named name (h<i> or s<l>.<w>).
func (p *Plan) Node(name string) (*NodePlan, bool) {
	for i := range p.Nodes {
		if p.Nodes[i].Name == name {
			return &p.Nodes[i], true
		}
	}
	return nil, false
}

// CheckName checks that name is a lab's name: a lowercase letter then at
// most 7 lowercase letters or digits (so that <name>-<node> fits an
// interface's and a namespace's name).
func CheckName(name string) error { return checkName(name) }
