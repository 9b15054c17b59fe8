package config

import (
	"fmt"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/transport"
)

// PortConfig overrides one fabric port of a node at bring-up: its link
// rate, and what its XDP program drops of the frames it receives
// (injected loss, link down). Fields left zero keep the node's values;
// LossPPM nil keeps Node.LossPPM.
type PortConfig struct {
	Name    string `json:"name"`
	RateBps uint64 `json:"rate_bps,omitempty"`
	LossPPM *int   `json:"loss_ppm,omitempty"`
	Down    bool   `json:"down,omitempty"`
}

// port returns the override of port name, or nil.
func (c *Node) port(name string) *PortConfig {
	for i := range c.Ports {
		if c.Ports[i].Name == name {
			return &c.Ports[i]
		}
	}
	return nil
}

// PortRate is the link rate of fabric port name: its override, or RateBps.
func (c *Node) PortRate(name string) uint64 {
	if p := c.port(name); p != nil && p.RateBps != 0 {
		return p.RateBps
	}
	return c.RateBps
}

// PortImpairment is what fabric port name drops of what it receives at
// bring-up: its override, or LossPPM and up.
func (c *Node) PortImpairment(name string) (lossPPM int, down bool) {
	lossPPM = c.LossPPM
	if p := c.port(name); p != nil {
		if p.LossPPM != nil {
			lossPPM = *p.LossPPM
		}
		down = p.Down
	}
	return lossPPM, down
}

// validatePorts checks that every override names a fabric port of node,
// once, with a loss in range.
func (c *Node) validatePorts(t bcube.Topology, node bcube.Node) []error {
	var errs []error
	seen := map[string]bool{}
	for _, p := range c.Ports {
		ok := false
		if c.Fabric != nil {
			for _, fp := range c.Fabric.Ports {
				ok = ok || fp.Name == p.Name
			}
		} else if node.Switch {
			var i int
			_, err := fmt.Sscanf(p.Name, "p%d", &i)
			ok = err == nil && bcube.SwitchPort(i) == p.Name && i >= 0 && i < t.N()
		} else {
			var l int
			_, err := fmt.Sscanf(p.Name, "eth%d", &l)
			ok = err == nil && bcube.HostPort(l) == p.Name && l >= 0 && l < t.Levels()
		}
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("port %q: %s has no such fabric port", p.Name, node))
		case seen[p.Name]:
			errs = append(errs, fmt.Errorf("port %s: configured twice", p.Name))
		case p.LossPPM != nil && (*p.LossPPM < 0 || *p.LossPPM > MaxLossPPM):
			errs = append(errs, fmt.Errorf("port %s: loss_ppm %d: want 0..%d", p.Name, *p.LossPPM, MaxLossPPM))
		}
		seen[p.Name] = true
	}
	return errs
}

// Per-port thresholds. Every threshold that counts one-hop BDPs is
// counted at its own port's rate (PortRate): a Rail-only fabric's levels,
// or a cable overridden, give a node ports of different rates, and a
// port's headroom, marking and pause thresholds follow the bytes its own
// link holds in flight. A threshold given in bytes is the same on every
// port. The name "" stands for a port at RateBps.

// PortBDP is the one-hop bandwidth-delay product of fabric port name in
// bytes: the target's one-hop BDP of a link of the port's rate x D (the
// model's), at least one full frame.
func (c *Node) PortBDP(name string) int { return c.bdpAt(c.PortRate(name)) }

// PortThresholds are PortFC's thresholds of fabric port name: the
// configured bytes, or the model's X_off and X_on at the port's rate.
func (c *Node) PortThresholds(name string) signaling.PortThresholds {
	th := c.Model().Thresholds(c.PortRate(name))
	return signaling.PortThresholds{XoffA: or(c.XoffA, th.Xoff), XonA: or(c.XonA, th.Xon),
		XoffB: or(c.XoffB, th.Xoff), XonB: or(c.XonB, th.Xon)}
}

// PortPFC is PFC's X_off and X_on of ingress port name: the configured
// bytes, or the model's at the port's rate; and, when the target's
// threshold is dynamic, its alpha at that rate (X_off - X_on is then how
// far below the dynamic X_off a pause ends).
func (c *Node) PortPFC(name string) signaling.PFCLimits {
	th := c.Model().Thresholds(c.PortRate(name))
	return signaling.PFCLimits{Xoff: or(c.PFCXoff, th.Xoff), Xon: or(c.PFCXon, th.Xon), Alpha: th.Alpha}
}

// PFCPool is the shared buffer PFC's dynamic thresholds divide: the
// node's buffer less the headroom the target reserves for each fabric
// port and each of its lossless priorities (n of them); 0 when the
// thresholds are static.
func (c *Node) PFCPool(n int) int {
	if c.Target.PFCAlpha <= 0 {
		return 0
	}
	pool := c.BufferBytes
	for _, name := range c.FabricPorts() {
		pool -= n * c.Model().Thresholds(c.PortRate(name)).Headroom
	}
	return pool
}

// PortECN is the ECN marking of egress port name: the configured K_min,
// K_max and P_max, and with ECN those left zero the model's at the
// port's rate. Off (K_max 0) without ECN and K_max. Under cc dctcp
// marking is on, and those left zero are DCTCP's: K_min = K_max = K at
// the port's rate, P_max 1. Where it decides is the target's
// (scale.Target.ECNAtDequeue).
func (c *Node) PortECN(name string) queues.ECNConfig {
	e := queues.ECNConfig{KminBytes: c.ECNKminBytes, KmaxBytes: c.ECNKmaxBytes, Pmax: c.ECNPmax, AtDequeue: c.Target.ECNAtDequeue}
	dctcp := c.CC == transport.CCDCTCP.String()
	if !c.ECN && !dctcp {
		return e
	}
	d := c.Model().ECN(c.PortRate(name))
	if dctcp {
		d = c.Model().DCTCPECN(c.PortRate(name))
	}
	if e.KminBytes == 0 {
		e.KminBytes = d.KminBytes
	}
	if e.KmaxBytes == 0 {
		e.KmaxBytes = d.KmaxBytes
	}
	if e.Pmax == 0 {
		e.Pmax = d.Pmax
	}
	return e
}

// TransportCC is the servers' congestion control (CC; empty: DCQCN).
func (c *Node) TransportCC() (transport.CC, error) {
	if c.CC == "" {
		return transport.CCDCQCN, nil
	}
	cc, err := transport.ParseCC(c.CC)
	if err != nil {
		return cc, fmt.Errorf("cc: %w", err)
	}
	return cc, nil
}

// INT reports whether the node's egresses stamp INT records (cc hpcc):
// those of a node that Relays. A graph fabric's server stamps none: an
// RDMA NIC adds no INT record of its own backlog, and with one HPCC's
// flows of one server each cut for the others' frames waiting at their
// NIC (docs/VALIDATION.md, "HPCC's NIC").
func (c *Node) INT() bool { return c.CC == transport.CCHPCC.String() && c.Relays() }

// Relays reports whether frames of other nodes queue at the node's
// egresses: a switch's, and a BCube server's, each of whose ports is its
// relay's egress as well as its NIC's, the frames it relays queueing
// there with its own (DESIGN §4). A graph fabric's server sends
// only its own flows' frames. (Its ports still mark ECN: its NIC's
// queue holds more than a real NIC's round robin would, and the marks
// curb it; docs/VALIDATION.md, "HPCC's NIC".)
func (c *Node) Relays() bool { return c.Fabric == nil || c.Fabric.Switch }

// or is v, or def when v is 0.
func or(v, def int) int {
	if v != 0 {
		return v
	}
	return def
}

// fabricPorts are the names of node's fabric ports in engine order: a
// switch's p0..p<n-1>, a server's eth0..eth<k>.
func (c *Node) fabricPorts(t bcube.Topology, node bcube.Node) []string {
	if c.Fabric != nil {
		return c.Fabric.PortNames()
	}
	var out []string
	if node.Switch {
		for p := range t.N() {
			out = append(out, bcube.SwitchPort(p))
		}
		return out
	}
	for l := range t.Levels() {
		out = append(out, bcube.HostPort(l))
	}
	return out
}

// FabricPorts are the names of the fabric ports of the node c describes,
// in engine order: a switch's p0..p<n-1>, a server's eth0..eth<k> (none
// when N, K or Node are not valid; Validate says why).
func (c *Node) FabricPorts() []string {
	if c.Fabric != nil {
		return c.Fabric.PortNames()
	}
	t, err := bcube.New(c.N, c.K)
	if err != nil {
		return nil
	}
	node, err := t.ParseNode(c.Node)
	if err != nil {
		return nil
	}
	return c.fabricPorts(t, node)
}
