// Package hostd is the host daemon, the NIC of a BCube server: k+1 fabric
// ports (eth<j>) and the application port behind the namespace's bc0. It
// delivers frames addressed to its server to bc0, relays frames of other
// servers towards their next level, answers ARP for the fabric on bc0 so
// kernel programs (ping, iperf3) can use the fabric, and tags what it sends
// into the fabric with 802.1Q. It is also the server's RDMA NIC:
// reliable-connected flows over RoCEv2 (rdma.go), and a UDP traffic
// generator (gen.go).
package hostd

import (
	"fmt"
	"net"

	"github.com/bcfab/bcfab/api"
	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/bpf"
	"github.com/bcfab/bcfab/config"
	"github.com/bcfab/bcfab/dataplane"
	"github.com/bcfab/bcfab/header"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/roce"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/xdp"
)

// Host is the forwarding logic of server h<i>. Ports 0..k are the fabric
// ports eth0..ethk; port k+1 is the application port. It implements
// dataplane.Handler.
//
// Queues (DESIGN §4): own traffic joins the a queue (more than one hop) or
// b queue (one hop) of the next switch's egress port; traffic relayed for
// other servers joins the RQ; control frames (802.1Q priority 6 — hostd
// gives it to ICMP from the kernel) the strict HQ. In priority mode (PFC)
// the queue is the frame's priority.
type Host struct {
	t        bcube.Topology
	self     int
	app      int
	policy   bcube.Policy
	priority bool
	e        *dataplane.Engine

	own    []net.HardwareAddr // MAC of eth<l>
	sw     []net.HardwareAddr // MAC of the switch port eth<l> is cabled to
	appMAC net.HardwareAddr   // bc0
	nicMAC net.HardwareAddr   // bc0nic: the fabric's "gateway" for the kernel
	f      header.Frame
	tuple  bcube.FiveTuple

	fc *signaling.HostPortFC // nil without PortFC
	// guardAll guards every port's relay queue under PortFC
	// (GuardRelays), not only a slower port's.
	guardAll bool
	th       *signaling.Thresholds

	pfc      *signaling.PFC // nil without PFC
	pfcTh    *signaling.PFCThresholds
	pfcHooks queues.Hooks
	rate     uint64
	star     bool // PFC*: relaying raises the priority by one

	bfc    *signaling.BFC // nil without BFC
	bfcCfg *signaling.BFCConfig

	g   gen
	r   rdma
	ate *ATE // nil unless the policy is ATE

	cls    *bpf.Classifier // on bc0's egress, nil until attached
	clsMap config.DSCPMap
}

// NewHost returns the logic of server self of t routing by policy, with
// queueing a dataplane queueing mode.
func NewHost(t bcube.Topology, self int, policy bcube.Policy, queueing string) *Host {
	h := &Host{t: t, self: self, app: t.Levels(), policy: policy, priority: queueing == config.QueueingPriority,
		appMAC: bcube.AppMAC(self), nicMAC: bcube.AppNICMAC(self)}
	for l := 0; l < t.Levels(); l++ {
		w, p := t.SwitchOf(self, l)
		h.own = append(h.own, bcube.HostPortMAC(self, l))
		h.sw = append(h.sw, bcube.SwitchPortMAC(l, w, p))
	}
	return h
}

// EnableATE makes the host choose the first-hop domain of its RDMA
// flows by ATE (ate.go), with threshold fraction p and HBD capacity capH
// bytes (B_H); the policy must be ATE.
func (h *Host) EnableATE(p float64, capH int64) error {
	if !h.policy.ATE {
		return fmt.Errorf("ate: the host routes by %v, not ate", h.policy)
	}
	a, err := NewATE(p, capH)
	if err != nil {
		return err
	}
	h.ate = a
	return nil
}

// HostStats is the host's own section of its stats (on the engine
// goroutine).
func (h *Host) HostStats() *api.HostStats {
	if h.ate == nil {
		return nil
	}
	var s api.ATEStats
	h.e.Call(func() { s = h.ate.Stats() })
	return &api.HostStats{ATE: &s}
}

// EnablePortFC makes the host obey and relay PortFC signals once bound.
func (h *Host) EnablePortFC(th signaling.Thresholds) { h.th = &th }

// GuardRelays makes every fabric port's relay queue a congestion point
// under PortFC (signaling.GuardRelay), not only those of ports slower
// than another: for a relay queue served in the round with a and b
// (config.RelayDRR), which, unlike a strict one, can be outrun by what
// arrives on a link of the same rate.
func (h *Host) GuardRelays() { h.guardAll = true }

// EnablePFC makes the host run PFC with th on links of rateBps once
// bound, as a NIC (it obeys pauses) and as a relay (it charges what it
// buffers to the port it came in by and pauses that neighbour). With
// star (PFC*) a relayed frame leaves one priority higher than it came.
func (h *Host) EnablePFC(th signaling.PFCThresholds, rateBps uint64, star bool) {
	h.pfcTh, h.rate, h.star = &th, rateBps, star
}

// EnableBFC makes the host run BFC with cfg once bound: as a NIC it
// assigns its own flows to queues and obeys pauses, as a relay it also
// pauses the upstream queues that overfill its egress.
func (h *Host) EnableBFC(cfg signaling.BFCConfig) { h.bfcCfg = &cfg }

// Bind gives the host the engine whose frames it handles, and sets up its
// flow control on it.
func (h *Host) Bind(e *dataplane.Engine) {
	h.e = e
	h.g.h = h
	h.r.init(h)
	e.SetSource(hostSource{h})
	e.AddTimer(&h.g)
	e.AddTimer(&h.r)
	if h.th != nil {
		h.fc = signaling.NewHostPortFC(h.t, h.self, e, *h.th)
		// A port slower than another of the server's can be outrun by
		// what it relays: its relay queue pauses the switches it is fed
		// from (signaling.GuardRelay; a Rail-only fabric's rails).
		for l := 0; l < h.t.Levels(); l++ {
			for l2 := 0; l2 < h.t.Levels(); l2++ {
				if r, r2 := portRate(e, l, 0), portRate(e, l2, 0); h.guardAll || r != 0 && (r2 == 0 || r2 > r) {
					h.fc.GuardRelay(l)
					break
				}
			}
		}
		e.AddTimer(h.fc)
		e.SetPortCounters(h)
	}
	if h.pfcTh != nil {
		var ports []signaling.PFCPort
		for l := 0; l < h.t.Levels(); l++ {
			ports = append(ports, signaling.PFCPort{MAC: h.own[l], RateBps: portRate(e, l, h.rate)})
		}
		h.pfc = signaling.NewPFC(e, ports, *h.pfcTh)
		h.pfcHooks = h.pfc.Hooks()
		e.AddTimer(h.pfc)
		e.SetPortCounters(h)
	}
	if h.bfcCfg != nil {
		var ports []signaling.BFCPort
		for l := 0; l < h.t.Levels(); l++ {
			ports = append(ports, signaling.BFCPort{Own: h.own[l], Peer: h.sw[l]})
		}
		h.bfc = signaling.NewBFC(e, ports, *h.bfcCfg)
		e.AddTimer(h.bfc)
		e.SetPortCounters(h)
	}
	// Every port, the application port too: what waits for the kernel
	// still occupies the NIC's buffer.
	for p := 0; p <= h.app; p++ {
		k := hostHooks{h: h}
		if h.bfc != nil && p < h.app {
			k.bfc = h.bfc.Hooks(p)
		}
		if h.fc != nil && p < h.app {
			k.relay = h.fc.RelayHooks(p)
		}
		e.Egress(p).SetHooks(k)
	}
}

// portRate is the rate of engine port p, which PFC counts pause times
// at, or def when the engine has none (unshaped).
func portRate(e *dataplane.Engine, p int, def uint64) uint64 {
	if r := e.PortRate(p); r != 0 {
		return r
	}
	return def
}

// hostSource is the NIC's own traffic: generated flows and RDMA flows.
type hostSource struct{ h *Host }

func (s hostSource) Produce(now int64) int { return s.h.g.Produce(now) + s.h.r.Produce(now) }

// hostHooks return generated and RDMA frames' bytes to their flows'
// windows and run PFC's charging or BFC's accounting.
type hostHooks struct {
	h     *Host
	bfc   queues.Hooks          // this port's, under BFC
	relay *signaling.RelayHooks // this port's relay guard, under PortFC
}

func (k hostHooks) Enqueued(q int, p queues.Packet) {
	if k.h.pfcHooks != nil {
		k.h.pfcHooks.Enqueued(q, p)
	}
	if k.bfc != nil {
		k.bfc.Enqueued(q, p)
	}
	if k.relay != nil {
		k.relay.Enqueued(q, p)
	}
}

func (k hostHooks) Dequeued(q int, p queues.Packet) {
	switch {
	case p.Meta&rdmaOwner != 0:
		k.h.r.dequeued(p.Meta, int(p.Len))
	case p.Meta>>signaling.MetaOwnerShift != 0:
		k.h.g.dequeued(p.Meta, int(p.Len))
	}
	if k.h.pfcHooks != nil {
		k.h.pfcHooks.Dequeued(q, p)
	}
	if k.relay != nil {
		k.relay.Dequeued(q, p)
	}
	if k.bfc != nil {
		k.bfc.Dequeued(q, p)
	}
}

// BFC is the host's BFC state (nil without BFC).
func (h *Host) BFC() *signaling.BFC { return h.bfc }

// PFC is the host's PFC state (nil without PFC).
func (h *Host) PFC() *signaling.PFC { return h.pfc }

// PortFC is the host's PortFC state (nil without PortFC).
func (h *Host) PortFC() *signaling.HostPortFC { return h.fc }

// StartFlow starts a generated flow (on the engine goroutine).
func (h *Host) StartFlow(r api.GenRequest) (api.GenFlow, error) {
	var f *genFlow
	var err error
	h.e.Call(func() { f, err = h.g.start(r) })
	if err != nil {
		return api.GenFlow{}, err
	}
	var out api.GenFlow
	h.e.Call(func() { out = f.GenFlow })
	return out, nil
}

// Flows reports the generator's flows and what its sink counted.
func (h *Host) Flows() api.GenReport {
	var r api.GenReport
	h.e.Call(func() { r = h.g.report() })
	return r
}

// PortCounters implements dataplane.PortCounters: the signals of port p.
func (h *Host) PortCounters(p int, m map[string]uint64) {
	switch {
	case p >= h.app: // the application port carries no signals
	case h.bfc != nil:
		h.bfc.B.C[p].Fill(m)
	case h.pfc != nil:
		h.pfc.C[p].Fill(h.pfc.Lossless(), m)
	default:
		h.fc.C[p].Fill(m)
	}
}

// AppPort is the index of the application port.
func (h *Host) AppPort() int { return h.app }

// Handle implements dataplane.Handler.
func (h *Host) Handle(in int, d *xdp.Desc, v *dataplane.Verdict) {
	b := h.e.Frame(d)
	if in != h.app && signaling.IsSignal(b) {
		var r dataplane.SignalReceiver
		switch {
		case h.fc != nil:
			r = h.fc
		case h.bfc != nil:
			r = h.bfc
		}
		dataplane.ConsumeSignal(in, b, r, v)
		return
	}
	if in != h.app && signaling.IsMACControl(b) {
		var r dataplane.PFCReceiver
		if h.pfc != nil {
			r = h.pfc
		}
		dataplane.ConsumePFC(in, b, r, v)
		return
	}
	kind := header.Parse(b, &h.f)
	if kind == header.KindMalformed {
		v.Port, v.Drop = -1, dataplane.DropMalformed
		return
	}
	if in == h.app {
		h.fromApp(d, b, kind, v)
		return
	}
	if kind != header.KindIPv4 {
		v.Port, v.Drop = -1, dataplane.DropUnsupported
		return
	}
	dst := h.t.ServerIndex(h.f.Dst)
	switch {
	case dst < 0:
		v.Port, v.Drop = -1, dataplane.DropNoRoute
		return
	case dst == h.self:
		if h.f.Proto == header.ProtoUDP && h.f.DPort == roce.UDPPort {
			h.r.receive(b, &h.f, h.e.Now(), v) // its headers parsed once, above
			return
		}
		v.Meta = signaling.IngressMeta(in, h.f.PCP)
		h.deliver(d, v)
		return
	}
	// Relay: the next level is never the one the frame came in on, since
	// that digit was just corrected.
	l := h.route(dst)
	if l == in {
		v.Port, v.Drop = -1, dataplane.DropHairpin
		return
	}
	h.setMACs(b, l)
	v.Port, v.L3 = l, h.f.L3
	v.Meta = signaling.IngressMeta(in, h.f.PCP)
	pcp := h.f.PCP
	if h.star && h.f.Tagged && pcp < 7 && h.pfcTh.Lossless&(1<<pcp) != 0 && h.pfcTh.Lossless&(1<<(pcp+1)) != 0 {
		// PFC*: the relayed frame climbs one lossless priority, so no
		// cycle of buffers waits on itself.
		pcp++
		header.SetPCP(b, pcp)
	}
	if h.bfc != nil {
		v.Queue, v.Meta = h.bfcQueue(b, in, l, pcp)
		return
	}
	v.Queue = h.queue(l, dst, pcp, true)
}

func (h *Host) fromApp(d *xdp.Desc, b []byte, kind header.Kind, v *dataplane.Verdict) {
	switch kind {
	case header.KindARP:
		a := header.ARP(b[h.f.L3:])
		if a.Op() != header.ARPRequest {
			v.Port, v.Drop = -1, dataplane.DropUnsupported
			return
		}
		target := h.t.ServerIndex(a.TargetIP())
		if target < 0 || target == h.self {
			v.Port, v.Drop = -1, dataplane.DropNoRoute
			return
		}
		// Proxy ARP: every fabric address is reached through this NIC.
		a.MakeReply(h.nicMAC)
		eth := header.Ethernet(b)
		eth.SetDst(h.appMAC)
		eth.SetSrc(h.nicMAC)
		v.Port = h.app
		return
	case header.KindIPv4:
	default:
		v.Port, v.Drop = -1, dataplane.DropUnsupported
		return
	}
	dst := h.t.ServerIndex(h.f.Dst)
	if dst < 0 {
		v.Port, v.Drop = -1, dataplane.DropNoRoute
		return
	}
	if dst == h.self {
		v.Port, v.Drop = -1, dataplane.DropHairpin
		return
	}
	// The classifier on bc0 (AttachClassifier) has tagged the frame with
	// the class its DSCP names: keep it. Untagged (no classifier), it
	// rides the data class, ICMP the control class.
	pcp := h.f.PCP
	if !h.f.Tagged {
		pcp = signaling.PCPData
		if h.f.Proto == header.ProtoICMP {
			pcp = signaling.PCPControl
		}
	}
	l3 := h.f.L3
	if !h.f.Tagged {
		chunk, off := h.e.Chunk(d.Addr)
		if off < header.VLANLen {
			v.Port, v.Drop = -1, dataplane.DropMalformed
			return
		}
		header.PushVLAN(chunk[off-header.VLANLen:off+int(d.Len)], pcp, 0)
		d.Addr -= header.VLANLen
		d.Len += header.VLANLen
		b = h.e.Frame(d)
		l3 += header.VLANLen
	}
	l := h.route(dst)
	h.setMACs(b, l)
	v.Port, v.L3 = l, l3
	if h.bfc != nil {
		v.Queue, v.Meta = h.bfcQueue(b, -1, l, pcp)
		return
	}
	v.Queue = h.queue(l, dst, pcp, false)
}

// bfcQueue is BFC's queue at fabric port l for the parsed, tagged frame b
// that came in by fabric port in (-1: the server's own); the frame leaves
// with it as its upstream queue.
func (h *Host) bfcQueue(b []byte, in, l int, pcp uint8) (int, uint64) {
	if signaling.IsControl(pcp) {
		return h.bfc.HQ(), 0
	}
	q, meta := h.bfc.Classify(l, bcube.FlowHash(&h.tuple), in, h.f.VID, h.e.Now())
	header.SetVID(b, signaling.VID(q))
	return q, meta
}

// queue classifies a frame leaving by fabric port l.
func (h *Host) queue(l, dst int, pcp uint8, relayed bool) int {
	switch {
	case h.priority:
		return int(pcp)
	case signaling.IsControl(pcp):
		return h.t.ServerHQ()
	}
	return h.t.ServerQueue(h.self, l, dst, relayed)
}

// deliver hands a frame for this server to the kernel through bc0, or to
// the generator's sink.
func (h *Host) deliver(d *xdp.Desc, v *dataplane.Verdict) {
	b := h.e.Frame(d)
	if h.f.Proto == header.ProtoUDP && h.f.DPort == api.GenPort {
		h.g.count(b, &h.f)
		v.Port = -1 // consumed
		return
	}
	if h.f.Tagged {
		header.PopVLAN(b)
		d.Addr += header.VLANLen
		d.Len -= header.VLANLen
		b = b[header.VLANLen:]
	}
	eth := header.Ethernet(b)
	eth.SetDst(h.appMAC)
	eth.SetSrc(h.nicMAC)
	v.Port = h.app
}

// route returns the level the flow of h.f corrects next on its way to dst.
func (h *Host) route(dst int) int {
	h.tuple = bcube.FiveTuple{Src: h.f.Src, Dst: h.f.Dst, Proto: h.f.Proto, SPort: h.f.SPort, DPort: h.f.DPort}
	o := h.t.FlowOrder(&h.policy, &h.tuple)
	return h.t.NextLevel(h.self, dst, &o)
}

func (h *Host) setMACs(b []byte, l int) {
	eth := header.Ethernet(b)
	eth.SetDst(h.sw[l])
	eth.SetSrc(h.own[l])
}
