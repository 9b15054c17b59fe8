package lab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/config"
)

// LinkSpec overrides one cable of the fabric at bring-up. Both of its ends
// take its rate, and drop what they receive at its loss, or everything
// when it is down (so each direction is impaired once, as with
// Spec.LossPPM). SetLink changes a cable at run time instead.
type LinkSpec struct {
	// Endpoints name the cable by its ends, "node:port" ("h1:eth0",
	// "s0.0:p1"), as containerlab names link endpoints; one end is
	// enough, and two must be the two ends of one cable.
	Endpoints []string `json:"endpoints"`
	// RateBps is the cable's rate (0: its level's, Spec.LevelRate).
	RateBps uint64 `json:"rate_bps,omitempty"`
	// LossPPM is its injected loss in frames per million (nil:
	// Spec.LossPPM).
	LossPPM *int `json:"loss_ppm,omitempty"`
	// Down cuts it from the start.
	Down bool `json:"down,omitempty"`
}

// cableEnds resolves l's endpoints in t to the cable's two ends, the
// server's first.
func (l LinkSpec) cableEnds(t bcube.Topology) (a, b Endpoint, err error) {
	return l.ends(func(node, port string) (string, string, bool) { return PeerPort(t, node, port) },
		fmt.Sprintf("%v, such as h0:eth0 or s0.0:p0", t))
}

// ends resolves l's endpoints by peer (the lab's fabric's PeerPort;
// what names its fabric ports, for the error) to the cable's two ends:
// a server's first, else the end whose node:port sorts first.
func (l LinkSpec) ends(peer func(node, port string) (string, string, bool), what string) (a, b Endpoint, err error) {
	if len(l.Endpoints) == 0 || len(l.Endpoints) > 2 {
		return a, b, fmt.Errorf("link %q: want one or two endpoints, node:port", l.Endpoints)
	}
	var ends [2]Endpoint
	for i, e := range l.Endpoints {
		node, port, ok := strings.Cut(e, ":")
		peer, peerPort, okPeer := peer(node, port)
		if !ok || !okPeer {
			return a, b, fmt.Errorf("link endpoint %q: want node:port of a fabric port of %s", e, what)
		}
		if i == 1 && (node != ends[0].Node || port != ends[0].Ifname) {
			return a, b, fmt.Errorf("link %q: %s is cabled to %s:%s, not to %s", l.Endpoints, l.Endpoints[0], ends[0].Node, ends[0].Ifname, e)
		}
		ends[0], ends[1] = Endpoint{Node: peer, Ifname: peerPort}, Endpoint{Node: node, Ifname: port}
	}
	a, b = ends[1], ends[0]
	if sa, sb := strings.HasPrefix(a.Node, "h"), strings.HasPrefix(b.Node, "h"); sb && !sa || sa == sb && a.Node+":"+a.Ifname > b.Node+":"+b.Ifname {
		a, b = b, a
	}
	return a, b, nil
}

// checkLinks resolves every link override: a fabric cable of t, at most
// one override per cable, a loss in range.
func (s Spec) checkLinks(t bcube.Topology) error {
	return s.checkLinksBy(func(l LinkSpec) (Endpoint, Endpoint, error) { return l.cableEnds(t) })
}

// checkLinksBy is checkLinks with the ends of a cable resolved by ends.
func (s Spec) checkLinksBy(ends func(LinkSpec) (Endpoint, Endpoint, error)) error {
	seen := map[string]bool{}
	for _, l := range s.Links {
		a, b, err := ends(l)
		if err != nil {
			return err
		}
		key := a.Node + ":" + a.Ifname
		if seen[key] {
			return fmt.Errorf("link %s:%s - %s:%s is overridden twice", a.Node, a.Ifname, b.Node, b.Ifname)
		}
		seen[key] = true
		if l.LossPPM != nil && (*l.LossPPM < 0 || *l.LossPPM > config.MaxLossPPM) {
			return fmt.Errorf("link %s:%s: loss %d ppm: want 0..%d", a.Node, a.Ifname, *l.LossPPM, config.MaxLossPPM)
		}
	}
	return nil
}

// nodeRate is the rate a node's config gives its ports by default: a
// switch's level's, a server's level 0's (portOverrides gives its other
// levels theirs).
func (s Spec) nodeRate(t bcube.Topology, node string) uint64 {
	if n, err := t.ParseNode(node); err == nil && n.Switch {
		return s.LevelRate(n.Level)
	}
	return s.LevelRate(0)
}

// portOverrides are node's ends of the overridden cables, and its ports
// whose level runs at another rate than nodeRate, as its config's port
// overrides.
func (s Spec) portOverrides(t bcube.Topology, node string) []config.PortConfig {
	var out []config.PortConfig
	for _, l := range s.Links {
		a, b, err := l.cableEnds(t)
		if err != nil {
			continue // checkLinks refuses the spec
		}
		for _, e := range []Endpoint{a, b} {
			if e.Node == node {
				rate := l.RateBps
				if rate == 0 {
					rate = s.LevelRate(portLevel(t, e))
				}
				out = append(out, config.PortConfig{Name: e.Ifname, RateBps: rate, LossPPM: l.LossPPM, Down: l.Down})
			}
		}
	}
	n, err := t.ParseNode(node)
	if err != nil || n.Switch {
		return out // a switch's ports are all of its level
	}
	def := s.nodeRate(t, node)
	for l := range t.Levels() {
		name := bcube.HostPort(l)
		if r := s.LevelRate(l); r != def && !slices.ContainsFunc(out, func(p config.PortConfig) bool { return p.Name == name }) {
			out = append(out, config.PortConfig{Name: name, RateBps: r})
		}
	}
	return out
}

// portLevel is the level of the cable at endpoint e: a server's eth<l>,
// or a level-l switch's port.
func portLevel(t bcube.Topology, e Endpoint) int {
	n, err := t.ParseNode(e.Node)
	if err != nil {
		return 0
	}
	if n.Switch {
		return n.Level
	}
	var l int
	if _, err := fmt.Sscanf(e.Ifname, "eth%d", &l); err != nil {
		return 0
	}
	return l
}
