// Package hostd is the host daemon, the NIC of a BCube server: k+1 fabric
// ports (eth<j>) and the application port behind the namespace's bc0. It
// delivers frames addressed to its server to bc0, relays frames of other
// servers towards their next level, answers ARP for the fabric on bc0 so
// kernel programs (ping, iperf3) can use the fabric, and tags what it sends
// into the fabric with 802.1Q.
package hostd

import (
	"net"

	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/dataplane"
	"github.com/bcfab/bcfab/header"
	"github.com/bcfab/bcfab/xdp"
)

// DataPCP is the 802.1Q priority of data (DESIGN §6: lossless data 3).
const DataPCP = 3

// Host is the forwarding logic of server h<i>. Ports 0..k are the fabric
// ports eth0..ethk; port k+1 is the application port. It implements
// dataplane.Handler.
type Host struct {
	t      bcube.Topology
	self   int
	app    int
	policy bcube.Policy
	e      *dataplane.Engine

	own    []net.HardwareAddr // MAC of eth<l>
	sw     []net.HardwareAddr // MAC of the switch port eth<l> is cabled to
	appMAC net.HardwareAddr   // bc0
	nicMAC net.HardwareAddr   // bc0nic: the fabric's "gateway" for the kernel
	f      header.Frame
	tuple  bcube.FiveTuple
}

// NewHost returns the logic of server self of t routing by policy.
func NewHost(t bcube.Topology, self int, policy bcube.Policy) *Host {
	h := &Host{t: t, self: self, app: t.Levels(), policy: policy,
		appMAC: bcube.AppMAC(self), nicMAC: bcube.AppNICMAC(self)}
	for l := 0; l < t.Levels(); l++ {
		w, p := t.SwitchOf(self, l)
		h.own = append(h.own, bcube.HostPortMAC(self, l))
		h.sw = append(h.sw, bcube.SwitchPortMAC(l, w, p))
	}
	return h
}

// Bind gives the host the engine whose frames it handles.
func (h *Host) Bind(e *dataplane.Engine) { h.e = e }

// AppPort is the index of the application port.
func (h *Host) AppPort() int { return h.app }

// Handle implements dataplane.Handler.
func (h *Host) Handle(in int, d *xdp.Desc) (int, dataplane.DropReason) {
	b := h.e.Frame(d)
	kind := header.Parse(b, &h.f)
	if kind == header.KindMalformed {
		return -1, dataplane.DropMalformed
	}
	if in == h.app {
		return h.fromApp(d, b, kind)
	}
	if kind != header.KindIPv4 {
		return -1, dataplane.DropUnsupported
	}
	dst := h.t.ServerIndex(h.f.Dst)
	switch {
	case dst < 0:
		return -1, dataplane.DropNoRoute
	case dst == h.self:
		return h.deliver(d)
	}
	// Relay: the next level is never the one the frame came in on, since
	// that digit was just corrected.
	l := h.route(dst)
	if l == in {
		return -1, dataplane.DropHairpin
	}
	h.setMACs(b, l)
	return l, dataplane.DropNone
}

func (h *Host) fromApp(d *xdp.Desc, b []byte, kind header.Kind) (int, dataplane.DropReason) {
	switch kind {
	case header.KindARP:
		a := header.ARP(b[h.f.L3:])
		if a.Op() != header.ARPRequest {
			return -1, dataplane.DropUnsupported
		}
		target := h.t.ServerIndex(a.TargetIP())
		if target < 0 || target == h.self {
			return -1, dataplane.DropNoRoute
		}
		// Proxy ARP: every fabric address is reached through this NIC.
		a.MakeReply(h.nicMAC)
		eth := header.Ethernet(b)
		eth.SetDst(h.appMAC)
		eth.SetSrc(h.nicMAC)
		return h.app, dataplane.DropNone
	case header.KindIPv4:
	default:
		return -1, dataplane.DropUnsupported
	}
	dst := h.t.ServerIndex(h.f.Dst)
	if dst < 0 {
		return -1, dataplane.DropNoRoute
	}
	if dst == h.self {
		return -1, dataplane.DropHairpin
	}
	if !h.f.Tagged {
		chunk, off := h.e.Chunk(d.Addr)
		if off < header.VLANLen {
			return -1, dataplane.DropMalformed
		}
		header.PushVLAN(chunk[off-header.VLANLen:off+int(d.Len)], DataPCP, 0)
		d.Addr -= header.VLANLen
		d.Len += header.VLANLen
		b = h.e.Frame(d)
	}
	l := h.route(dst)
	h.setMACs(b, l)
	return l, dataplane.DropNone
}

// deliver hands a frame for this server to the kernel through bc0.
func (h *Host) deliver(d *xdp.Desc) (int, dataplane.DropReason) {
	b := h.e.Frame(d)
	if h.f.Tagged {
		header.PopVLAN(b)
		d.Addr += header.VLANLen
		d.Len -= header.VLANLen
		b = b[header.VLANLen:]
	}
	eth := header.Ethernet(b)
	eth.SetDst(h.appMAC)
	eth.SetSrc(h.nicMAC)
	return h.app, dataplane.DropNone
}

// route returns the level the flow of h.f corrects next on its way to dst.
func (h *Host) route(dst int) int {
	h.tuple = bcube.FiveTuple{Src: h.f.Src, Dst: h.f.Dst, Proto: h.f.Proto, SPort: h.f.SPort, DPort: h.f.DPort}
	var hash uint32
	if h.policy.Fixed == nil {
		hash = bcube.FlowHash(&h.tuple)
	}
	o := h.t.OrderFor(&h.policy, hash)
	return h.t.NextLevel(h.self, dst, &o)
}

func (h *Host) setMACs(b []byte, l int) {
	eth := header.Ethernet(b)
	eth.SetDst(h.sw[l])
	eth.SetSrc(h.own[l])
}
