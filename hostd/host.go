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

	"github.com/bcfab/bcfab/bpf"
	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/xdp"
)

// Host is the forwarding logic of server h<i>. Ports 0..k are the fabric
// ports eth0..ethk; port k+1 is the application port. It implements
// dataplane.Handler.
//
// Its flow-control scheme names the queue of every frame it sends into
// the fabric (under PortFC, DESIGN §4: own traffic joins the a queue
// (more than one hop) or b queue (one hop) of the next switch's egress
// port; traffic relayed for other servers joins the RQ; control frames
// (802.1Q priority 6 — hostd gives it to ICMP from the kernel) the
// strict HQ).
type Host struct {
	t      bcube.Topology
	self   int
	app    int
	policy bcube.Policy
	fc     scheme.Scheme
	e      *dataplane.Engine

	own    []net.HardwareAddr // MAC of eth<l>
	sw     []net.HardwareAddr // MAC of the switch port eth<l> is cabled to
	appMAC net.HardwareAddr   // bc0
	nicMAC net.HardwareAddr   // bc0nic: the fabric's "gateway" for the kernel
	f      header.Frame
	tuple  bcube.FiveTuple
	frame  scheme.Frame // what fc classifies: f in the frame at hand

	g   gen
	r   rdma
	ate *ATE // nil unless the policy is ATE

	cls    *bpf.Classifier // on bc0's egress, nil until attached
	clsMap config.DSCPMap
}

// NewHost returns the logic of server self of t routing by policy, under
// the flow-control scheme fc, made for it (scheme.New).
func NewHost(t bcube.Topology, self int, policy bcube.Policy, fc scheme.Scheme) *Host {
	h := &Host{t: t, self: self, app: t.Levels(), policy: policy, fc: fc,
		appMAC: bcube.AppMAC(self), nicMAC: bcube.AppNICMAC(self)}
	h.frame.H = &h.f
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

// Bind gives the host the engine whose frames it handles, and sets its
// flow control up on it: the scheme's state, its timer and counters, and
// every port's hooks (the application port's too: what waits for the
// kernel still occupies the NIC's buffer).
func (h *Host) Bind(e *dataplane.Engine) {
	h.e = e
	h.g.h = h
	h.r.init(h)
	e.SetSource(hostSource{h})
	e.AddTimer(&h.g)
	e.AddTimer(&h.r)
	ports := make([]scheme.Port, h.app)
	for l := range ports {
		ports[l] = scheme.Port{Own: h.own[l], Peer: h.sw[l]}
	}
	h.fc.Bind(e, ports)
	e.AddTimer(h.fc)
	e.SetPortCounters(h.fc)
	for p := 0; p <= h.app; p++ {
		e.Egress(p).SetHooks(h.portHooks(p))
	}
}

// portHooks are port p's egress hooks: hostHooks, which also decide the
// port's ECN marks when the scheme's hooks do (queues.Marker:
// congestion isolation).
func (h *Host) portHooks(p int) queues.Hooks {
	k := hostHooks{h: h, fc: h.fc.Hooks(p)}
	if m, ok := k.fc.(queues.Marker); ok {
		return markingHooks{k, m}
	}
	return k
}

// markingHooks are hostHooks whose scheme decides ECN marks.
type markingHooks struct {
	hostHooks
	m queues.Marker
}

func (k markingHooks) Mark(q, qbytes int, red bool) bool { return k.m.Mark(q, qbytes, red) }

// hostSource is the NIC's own traffic: generated flows and RDMA flows.
type hostSource struct{ h *Host }

func (s hostSource) Produce(now int64) int { return s.h.g.Produce(now) + s.h.r.Produce(now) }

// hostHooks return generated and RDMA frames' bytes to their flows'
// windows and run the scheme's hooks of the port (PFC's charging, BFC's
// accounting, PortFC's relay guard), if it has any.
type hostHooks struct {
	h  *Host
	fc queues.Hooks
}

func (k hostHooks) Enqueued(q int, p queues.Packet) {
	if k.fc != nil {
		k.fc.Enqueued(q, p)
	}
}

func (k hostHooks) Dequeued(q int, p queues.Packet) {
	switch {
	case p.Meta&rdmaOwner != 0:
		k.h.r.dequeued(p.Meta, int(p.Len))
	case p.Meta>>signaling.MetaOwnerShift != 0:
		k.h.g.dequeued(p.Meta, int(p.Len))
	}
	if k.fc != nil {
		k.fc.Dequeued(q, p)
	}
}

// Scheme is the host's flow-control scheme.
func (h *Host) Scheme() scheme.Scheme { return h.fc }

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

// AppPort is the index of the application port.
func (h *Host) AppPort() int { return h.app }

// Handle implements dataplane.Handler.
func (h *Host) Handle(in int, d *xdp.Desc, v *dataplane.Verdict) {
	b := h.e.Frame(d)
	if in != h.app && signaling.IsSignal(b) {
		dataplane.ConsumeSignal(in, b, h.fc, v)
		return
	}
	if in != h.app && signaling.IsMACControl(b) {
		dataplane.ConsumePFC(in, b, h.fc, v)
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
	v.Queue, v.Meta = h.classify(b, h.f.PCP, h.f.Tagged, in, l, dst)
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
	v.Queue, v.Meta = h.classify(b, pcp, true, -1, l, dst)
}

// classify is the scheme's queue and meta of the parsed frame b, of
// priority pcp, leaving by fabric port l for server dst; in is the
// fabric port it came in by, -1 for the server's own.
func (h *Host) classify(b []byte, pcp uint8, tagged bool, in, l, dst int) (int, uint64) {
	fr := &h.frame
	fr.B, fr.PCP, fr.Tagged, fr.In, fr.Out, fr.Dst = b, pcp, tagged, in, l, dst
	return h.fc.Classify(fr)
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
