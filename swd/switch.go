// Package swd is the switch daemon: a level-l BCube switch with n ports,
// each an AF_XDP socket, that forwards every frame out of port
// dst.digit[l], queues it as PortFC (or PFC) allocates, and shapes each
// egress to the link rate.
package swd

import (
	"net"

	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/config"
	"github.com/bcfab/bcfab/dataplane"
	"github.com/bcfab/bcfab/header"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/xdp"
)

// Switch is the forwarding logic of switch s<level>.<w>. It implements
// dataplane.Handler.
type Switch struct {
	t        bcube.Topology
	level, w int
	policy   bcube.Policy
	priority bool // queue by 802.1Q priority (PFC) instead of PortFC's allocation
	e        *dataplane.Engine
	own      []net.HardwareAddr // MAC of each port
	peer     []net.HardwareAddr // MAC of the server port on the other end
	f        header.Frame
	tuple    bcube.FiveTuple

	fc *signaling.SwitchPortFC // nil without PortFC
	th *signaling.Thresholds

	pfc   *signaling.PFC // nil without PFC
	pfcTh *signaling.PFCThresholds
	rate  uint64

	bfc    *signaling.BFC // nil without BFC
	bfcCfg *signaling.BFCConfig
}

// NewSwitch returns the logic of switch (level, w) of t; policy is the
// servers' level order (it tells which queue of the next server a frame
// will use) and queueing a dataplane queueing mode.
func NewSwitch(t bcube.Topology, level, w int, policy bcube.Policy, queueing string) *Switch {
	s := &Switch{t: t, level: level, w: w, policy: policy, priority: queueing == config.QueueingPriority}
	for p := 0; p < t.N(); p++ {
		s.own = append(s.own, bcube.SwitchPortMAC(level, w, p))
		s.peer = append(s.peer, bcube.HostPortMAC(t.ServerAt(level, w, p), level))
	}
	return s
}

// EnablePortFC makes the switch run PortFC with th once bound.
func (s *Switch) EnablePortFC(th signaling.Thresholds) { s.th = &th }

// EnablePFC makes the switch run PFC with th on links of rateBps once
// bound.
func (s *Switch) EnablePFC(th signaling.PFCThresholds, rateBps uint64) {
	s.pfcTh, s.rate = &th, rateBps
}

// EnableBFC makes the switch run BFC with cfg once bound (queueing bfc
// with cfg.Queues queues).
func (s *Switch) EnableBFC(cfg signaling.BFCConfig) { s.bfcCfg = &cfg }

// Bind gives the switch the engine whose frames it handles, and sets up
// its flow control on it.
func (s *Switch) Bind(e *dataplane.Engine) {
	s.e = e
	if s.bfcCfg != nil {
		var ports []signaling.BFCPort
		for p := 0; p < s.t.N(); p++ {
			ports = append(ports, signaling.BFCPort{Own: s.own[p], Peer: s.peer[p]})
		}
		s.bfc = signaling.NewBFC(e, ports, *s.bfcCfg)
		for p := 0; p < s.t.N(); p++ {
			e.Egress(p).SetHooks(s.bfc.Hooks(p))
		}
		e.AddTimer(s.bfc)
		e.SetPortCounters(s)
	}
	if s.pfcTh != nil {
		var ports []signaling.PFCPort
		for p := 0; p < s.t.N(); p++ {
			rate := s.rate
			if r := e.PortRate(p); r != 0 {
				rate = r // a port's own rate (lab files override single links)
			}
			ports = append(ports, signaling.PFCPort{MAC: s.own[p], RateBps: rate})
		}
		s.pfc = signaling.NewPFC(e, ports, *s.pfcTh)
		for p := 0; p < s.t.N(); p++ {
			e.Egress(p).SetHooks(s.pfc.Hooks())
		}
		e.AddTimer(s.pfc)
		e.SetPortCounters(s)
	}
	if s.th == nil {
		return
	}
	s.fc = signaling.NewSwitchPortFC(s.t, s.level, s.w, e, *s.th)
	for p := 0; p < s.t.N(); p++ {
		e.Egress(p).SetHooks(s.fc.Hooks(p))
	}
	e.AddTimer(s.fc)
	e.SetPortCounters(s)
}

// PortCounters implements dataplane.PortCounters: the signals of port p.
func (s *Switch) PortCounters(p int, m map[string]uint64) {
	switch {
	case s.bfc != nil:
		s.bfc.B.C[p].Fill(m)
	case s.pfc != nil:
		s.pfc.C[p].Fill(s.pfc.Lossless(), m)
	default:
		s.fc.C[p].Fill(m)
	}
}

// PFC is the switch's PFC state (nil without PFC).
func (s *Switch) PFC() *signaling.PFC { return s.pfc }

// BFC is the switch's BFC state (nil without BFC).
func (s *Switch) BFC() *signaling.BFC { return s.bfc }

// PortFC is the switch's flow-control state (nil without PortFC).
func (s *Switch) PortFC() *signaling.SwitchPortFC { return s.fc }

// Handle implements dataplane.Handler.
func (s *Switch) Handle(in int, d *xdp.Desc, v *dataplane.Verdict) {
	b := s.e.Frame(d)
	if signaling.IsSignal(b) {
		s.signal(in, b, v)
		return
	}
	if signaling.IsMACControl(b) {
		var r dataplane.PFCReceiver
		if s.pfc != nil {
			r = s.pfc
		}
		dataplane.ConsumePFC(in, b, r, v)
		return
	}
	switch header.Parse(b, &s.f) {
	case header.KindIPv4:
	case header.KindMalformed:
		v.Port, v.Drop = -1, dataplane.DropMalformed
		return
	default:
		v.Port, v.Drop = -1, dataplane.DropUnsupported
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
	if s.bfc != nil {
		v.Queue, v.Meta = s.bfcQueue(b, in, out)
		return
	}
	v.Queue = s.queue(out, dst)
	v.Meta = signaling.IngressMeta(in, s.f.PCP)
}

// bfcQueue is BFC's queue for the parsed frame b at egress port out; the
// frame leaves tagged with it as its upstream queue.
func (s *Switch) bfcQueue(b []byte, in, out int) (int, uint64) {
	if signaling.IsControl(s.f.PCP) || !s.f.Tagged {
		return s.bfc.HQ(), 0
	}
	s.tuple = bcube.FiveTuple{Src: s.f.Src, Dst: s.f.Dst, Proto: s.f.Proto, SPort: s.f.SPort, DPort: s.f.DPort}
	q, meta := s.bfc.Classify(out, bcube.FlowHash(&s.tuple), in, s.f.VID, s.e.Now())
	header.SetVID(b, signaling.VID(q))
	return q, meta
}

// signal hands a flow-control frame to the switch's state machine.
func (s *Switch) signal(in int, b []byte, v *dataplane.Verdict) {
	var r dataplane.SignalReceiver
	switch {
	case s.fc != nil:
		r = s.fc
	case s.bfc != nil:
		r = s.bfc
	}
	dataplane.ConsumeSignal(in, b, r, v)
}

// queue classifies the parsed frame at egress port out.
func (s *Switch) queue(out, dst int) int {
	switch {
	case s.priority:
		return int(s.f.PCP)
	case signaling.IsControl(s.f.PCP):
		return s.t.SwitchHQ()
	}
	s.tuple = bcube.FiveTuple{Src: s.f.Src, Dst: s.f.Dst, Proto: s.f.Proto, SPort: s.f.SPort, DPort: s.f.DPort}
	o := s.t.FlowOrder(&s.policy, &s.tuple)
	return s.t.SwitchQueue(s.level, s.w, out, dst, &o)
}
