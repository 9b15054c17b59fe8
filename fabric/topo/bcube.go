package topo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bcfab/bcfab/fabric/bcube"
)

// BCube is BCube(N, K) laid out by package bcube's numbering: server i is
// node i (h<i>), its port l goes to the level-l switch bcube.SwitchOf(i, l)
// names, and that switch's port p goes back to the server bcube.ServerAt
// gives. Switches follow the servers, level by level, s<l>.<w> in order
// of w.
type BCube struct {
	N, K int
	// LevelCapacity, when set, gives each level's cables their capacity
	// (one entry per level, 0..K); otherwise every cable is 1.
	LevelCapacity []float64
}

// Validate checks the parameters against package bcube's limits and the
// capacities.
func (c BCube) Validate() error {
	if _, err := bcube.New(c.N, c.K); err != nil {
		param, v := "n", c.N
		if c.N >= 2 && c.N <= 255 {
			param, v = "k", c.K
		}
		return &ParamError{Topology: "bcube", Param: param, Value: v, Need: unwrapBCube(err)}
	}
	if c.LevelCapacity != nil && len(c.LevelCapacity) != c.K+1 {
		return paramErr("bcube", "capacities", c.LevelCapacity, "need one per level (%d)", c.K+1)
	}
	for _, x := range c.LevelCapacity {
		if !(x > 0) {
			return paramErr("bcube", "capacities", c.LevelCapacity, "need positive numbers")
		}
	}
	return nil
}

// unwrapBCube is bcube's reason without its "invalid BCube topology: n =
// 1, " prefix, which ParamError says in its own words.
func unwrapBCube(err error) string {
	s := strings.TrimPrefix(err.Error(), bcube.ErrInvalid.Error()+": ")
	if _, rest, ok := strings.Cut(s, ", "); ok {
		return rest
	}
	return s
}

// Build lays out the graph.
func (c BCube) Build() (*Graph, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t := bcube.MustNew(c.N, c.K)
	b := NewBuilder(t.String())
	for i := range t.Servers() {
		b.Node(bcube.HostName(i), Server, t.Levels())
	}
	sw := make([][]int, t.Levels())
	for l := range t.Levels() {
		sw[l] = make([]int, t.SwitchesPerLevel())
		for w := range sw[l] {
			sw[l][w] = b.Node(bcube.SwitchName(l, w), Switch, t.N())
		}
	}
	for i := range t.Servers() {
		for l := range t.Levels() {
			w, p := t.SwitchOf(i, l)
			capacity := 1.0
			if c.LevelCapacity != nil {
				capacity = c.LevelCapacity[l]
			}
			b.Cable(End{i, l}, End{sw[l][w], p}, capacity)
		}
	}
	return b.Graph()
}

// RailOnly is the Rail-only NDC: BCube(N, 1) whose level-0 cables (the
// high-bandwidth domain) and level-1 cables (the rails) have different
// capacities. Zero capacities take the papers' 160:100 (1.6 and 1).
type RailOnly struct {
	N         int
	HBD, Rail float64
}

// Validate checks the parameters.
func (c RailOnly) Validate() error {
	if err := (BCube{N: c.N, K: 1}).Validate(); err != nil {
		var pe *ParamError
		if errors.As(err, &pe) {
			pe.Topology = "railonly"
		}
		return err
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"hbd", c.HBD}, {"rail", c.Rail}} {
		if x.v < 0 {
			return paramErr("railonly", x.name, x.v, "need a positive capacity (0 for the default)")
		}
	}
	return nil
}

// Build lays out the graph.
func (c RailOnly) Build() (*Graph, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	hbd, rail := c.HBD, c.Rail
	if hbd == 0 {
		hbd = 1.6
	}
	if rail == 0 {
		rail = 1
	}
	g, err := BCube{N: c.N, K: 1, LevelCapacity: []float64{hbd, rail}}.Build()
	if g != nil {
		g.Name = fmt.Sprintf("RailOnly(%d)", c.N)
	}
	return g, err
}
