// Package swd is the switch daemon: a level-l BCube switch with n ports,
// each an AF_XDP socket, that forwards every frame out of port
// dst.digit[l], queues it as its flow-control scheme says, and shapes
// each egress to the link rate.
package swd

import (
	"net"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
	"github.com/bcfab/bcfab/xdp"
)

// Switch is the forwarding logic of switch s<level>.<w>. It implements
// dataplane.Handler.
type Switch struct {
	t        bcube.Topology
	level, w int
	fc       scheme.Scheme
	e        *dataplane.Engine
	own      []net.HardwareAddr // MAC of each port
	peer     []net.HardwareAddr // MAC of the server port on the other end
	f        header.Frame
	frame    scheme.Frame // what fc classifies: f in the frame at hand
}

// NewSwitch returns the logic of switch (level, w) of t under the
// flow-control scheme fc, made for it (scheme.New).
func NewSwitch(t bcube.Topology, level, w int, fc scheme.Scheme) *Switch {
	s := &Switch{t: t, level: level, w: w, fc: fc}
	s.frame.H = &s.f
	for p := 0; p < t.N(); p++ {
		s.own = append(s.own, bcube.SwitchPortMAC(level, w, p))
		s.peer = append(s.peer, bcube.HostPortMAC(t.ServerAt(level, w, p), level))
	}
	return s
}

// Bind gives the switch the engine whose frames it handles, and sets its
// flow control up on it: the scheme's state, each egress's hooks, its
// timer and its counters.
func (s *Switch) Bind(e *dataplane.Engine) {
	s.e = e
	bindScheme(e, s.fc, s.own[:s.t.N()], s.peer[:s.t.N()])
}

// bindScheme sets a switch's flow control fc up on engine e, whose port p
// has the MAC own[p] and faces peer[p]: the scheme's state, each
// egress's hooks, its timer and its counters.
func bindScheme(e *dataplane.Engine, fc scheme.Scheme, own, peer []net.HardwareAddr) {
	ports := make([]scheme.Port, len(own))
	for p := range ports {
		ports[p] = scheme.Port{Own: own[p], Peer: peer[p]}
	}
	fc.Bind(e, ports)
	for p := range ports {
		e.Egress(p).SetHooks(fc.Hooks(p))
	}
	e.AddTimer(fc)
	e.SetPortCounters(fc)
}

// Scheme is the switch's flow-control scheme.
func (s *Switch) Scheme() scheme.Scheme { return s.fc }

// Handle implements dataplane.Handler.
func (s *Switch) Handle(in int, d *xdp.Desc, v *dataplane.Verdict) {
	b := s.e.Frame(d)
	if !parseData(in, b, s.fc, &s.f, v) {
		return
	}
	dst := s.t.ServerIndex(s.f.Dst)
	if dst < 0 {
		v.Port, v.Drop = -1, dataplane.DropNoRoute
		return
	}
	out := s.t.Digit(dst, s.level)
	if out == in {
		v.Port, v.Drop = -1, dataplane.DropHairpin
		return
	}
	eth := header.Ethernet(b)
	eth.SetDst(s.peer[out])
	eth.SetSrc(s.own[out])
	v.Port, v.L3 = out, s.f.L3
	fr := &s.frame
	fr.B, fr.PCP, fr.Tagged, fr.In, fr.Out, fr.Dst = b, s.f.PCP, s.f.Tagged, in, out, dst
	v.Queue, v.Meta = s.fc.Classify(fr)
}

// parseData is what every switch does first with a frame b that came in
// on port in: a flow-control signal or MAC control frame goes to its
// scheme, a frame that is not IPv4 is dropped under its reason, and an
// IPv4 frame is parsed into f for forwarding (true).
func parseData(in int, b []byte, fc scheme.Scheme, f *header.Frame, v *dataplane.Verdict) bool {
	if signaling.IsSignal(b) {
		dataplane.ConsumeSignal(in, b, fc, v)
		return false
	}
	if signaling.IsMACControl(b) {
		dataplane.ConsumePFC(in, b, fc, v)
		return false
	}
	switch header.Parse(b, f) {
	case header.KindIPv4:
		return true
	case header.KindMalformed:
		v.Port, v.Drop = -1, dataplane.DropMalformed
	default:
		v.Port, v.Drop = -1, dataplane.DropUnsupported
	}
	return false
}
