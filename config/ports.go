package config

import (
	"fmt"

	"github.com/bcfab/bcfab/bcube"
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
		if node.Switch {
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
