package swd

import (
	"fmt"
	"net"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/fabric/topo"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/wire/header"
	"github.com/bcfab/bcfab/xdp"
)

// TableSwitch is the forwarding logic of a switch of a fabric given as a
// graph (config.Fabric: leaf-spine, fat-tree, expander), whose switches
// are cabled to each other. It forwards by the tables lab computed from
// the graph at bring-up, never by digits:
//
//  1. the destination server is the frame's IPv4 destination
//     (198.18.0.0 + i, as in BCube);
//  2. the flow's hash is bcube.FlowHash of its 5-tuple, the hash every
//     node computes, so all the switches of a path agree on the flow;
//  3. under config.RoutingPaths, a frame between two racks that is not
//     yet at its destination's ToR leaves by the port of path
//     topo.PathIndex(hash, n) of its pair of ToRs (topo.Table);
//  4. otherwise (RoutingECMP, or the destination's own ToR) it leaves by
//     one of its equal-cost next hops toward the server, chosen by the
//     hash (topo.PickPort);
//  5. with two lossless priorities, a step (in port, out port) of its
//     rewrite table (FC+'s down-up turns) moves the frame to the second
//     (Frame.Raise: the scheme rewrites PCP and queue).
//
// It implements dataplane.Handler; the hot path allocates nothing.
type TableSwitch struct {
	index int
	stars bcube.Topology // the servers' addresses
	ecmp  [][]uint16
	paths bool
	ends  []int32
	table topo.Table
	raise [][]bool // raise[in][out]: the step moves a frame up a lossless priority
	fc    scheme.Scheme
	e     *dataplane.Engine
	own   []net.HardwareAddr // MAC of each port
	peer  []net.HardwareAddr // MAC of the port on the other end
	f     header.Frame
	tuple bcube.FiveTuple
	frame scheme.Frame // what fc classifies: f in the frame at hand
}

// NewTableSwitch returns the logic of the switch fab describes (a
// validated config.Fabric of a switch) under the flow-control scheme fc.
func NewTableSwitch(fab *config.Fabric, fc scheme.Scheme) (*TableSwitch, error) {
	stars, err := bcube.Star(fab.Servers)
	if err != nil {
		return nil, err
	}
	s := &TableSwitch{index: fab.Index, stars: stars, ecmp: fab.ECMP, fc: fc}
	s.frame.H = &s.f
	for _, p := range fab.Ports {
		own, peer := p.MACs()
		s.own = append(s.own, own)
		s.peer = append(s.peer, peer)
	}
	if len(fab.Rewrites) > 0 {
		s.raise = make([][]bool, len(fab.Ports))
		for i := range s.raise {
			s.raise[i] = make([]bool, len(fab.Ports))
		}
		for _, rw := range fab.Rewrites {
			s.raise[rw[0]][rw[1]] = true
		}
	}
	if fab.Routing == config.RoutingPaths {
		s.paths = true
		for _, e := range fab.Ends {
			s.ends = append(s.ends, int32(e))
		}
		if s.table, err = topo.NewTable(fab.Paths); err != nil {
			return nil, fmt.Errorf("paths: %w", err)
		}
	}
	return s, nil
}

// Bind gives the switch the engine whose frames it handles, and sets its
// flow control up on it, as Switch.Bind does.
func (s *TableSwitch) Bind(e *dataplane.Engine) {
	s.e = e
	bindScheme(e, s.fc, s.own, s.peer)
}

// Scheme is the switch's flow-control scheme.
func (s *TableSwitch) Scheme() scheme.Scheme { return s.fc }

// Route is the port a frame from server src to server dst of the flow
// with the given hash leaves by, or -1 when the tables have none (src
// is -1 for a source that is no server: ECMP does not need it, paths
// between racks do).
func (s *TableSwitch) Route(src, dst int, hash uint32) int {
	if s.paths {
		if src < 0 {
			return -1
		}
		se, de := s.ends[src], s.ends[dst]
		if se != de && int(de) != s.index {
			p, ok := s.table.Port(int(se), int(de), hash)
			if !ok {
				return -1
			}
			return p
		}
	}
	return topo.PickPort(s.index, s.ecmp[dst], hash)
}

// Handle implements dataplane.Handler.
func (s *TableSwitch) Handle(in int, d *xdp.Desc, v *dataplane.Verdict) {
	b := s.e.Frame(d)
	if !parseData(in, b, s.fc, &s.f, v) {
		return
	}
	dst := s.stars.ServerIndex(s.f.Dst)
	if dst < 0 {
		v.Port, v.Drop = -1, dataplane.DropNoRoute
		return
	}
	s.tuple = bcube.FiveTuple{Src: s.f.Src, Dst: s.f.Dst, Proto: s.f.Proto, SPort: s.f.SPort, DPort: s.f.DPort}
	out := s.Route(s.stars.ServerIndex(s.f.Src), dst, bcube.FlowHash(&s.tuple))
	switch {
	case out < 0:
		v.Port, v.Drop = -1, dataplane.DropNoRoute
		return
	case out == in:
		v.Port, v.Drop = -1, dataplane.DropHairpin
		return
	}
	eth := header.Ethernet(b)
	eth.SetDst(s.peer[out])
	eth.SetSrc(s.own[out])
	v.Port, v.L3 = out, s.f.L3
	fr := &s.frame
	fr.B, fr.PCP, fr.Tagged, fr.In, fr.Out, fr.Dst = b, s.f.PCP, s.f.Tagged, in, out, dst
	fr.Raise = s.raise != nil && s.raise[in][out]
	v.Queue, v.Meta = s.fc.Classify(fr)
}
