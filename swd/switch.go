// Package swd is the switch daemon: a level-l BCube switch with n ports,
// each an AF_XDP socket, that forwards every frame out of port
// dst.digit[l] and shapes each egress to the link rate.
package swd

import (
	"net"

	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/dataplane"
	"github.com/bcfab/bcfab/header"
	"github.com/bcfab/bcfab/xdp"
)

// Switch is the forwarding logic of switch s<level>.<index>. It implements
// dataplane.Handler.
type Switch struct {
	t     bcube.Topology
	level int
	e     *dataplane.Engine
	own   []net.HardwareAddr // MAC of each port
	peer  []net.HardwareAddr // MAC of the server port on the other end
	f     header.Frame
}

// NewSwitch returns the logic of switch (level, w) of t.
func NewSwitch(t bcube.Topology, level, w int) *Switch {
	s := &Switch{t: t, level: level}
	for p := 0; p < t.N(); p++ {
		s.own = append(s.own, bcube.SwitchPortMAC(level, w, p))
		s.peer = append(s.peer, bcube.HostPortMAC(t.ServerAt(level, w, p), level))
	}
	return s
}

// Bind gives the switch the engine whose frames it handles.
func (s *Switch) Bind(e *dataplane.Engine) { s.e = e }

// Handle implements dataplane.Handler.
func (s *Switch) Handle(in int, d *xdp.Desc) (int, dataplane.DropReason) {
	b := s.e.Frame(d)
	switch header.Parse(b, &s.f) {
	case header.KindIPv4:
	case header.KindMalformed:
		return -1, dataplane.DropMalformed
	default:
		return -1, dataplane.DropUnsupported
	}
	dst := s.t.ServerIndex(s.f.Dst)
	if dst < 0 {
		return -1, dataplane.DropNoRoute
	}
	out := s.t.Digit(dst, s.level)
	if out == in {
		return -1, dataplane.DropHairpin
	}
	eth := header.Ethernet(b)
	eth.SetDst(s.peer[out])
	eth.SetSrc(s.own[out])
	return out, dataplane.DropNone
}
