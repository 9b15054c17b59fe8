package topo

import (
	"slices"
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
)

// The BCube graph agrees with package bcube node for node and port for
// port, and its ECMP tables with the digit rule: a level-l switch sends
// to dst out of port dst.digit[l], and a server's next hops are the
// levels at which it differs from dst.
func TestBCubeMatchesPackage(t *testing.T) {
	for _, nk := range [][2]int{{2, 1}, {4, 1}, {3, 2}} {
		tp := bcube.MustNew(nk[0], nk[1])
		g := mustBuild(t, BCube{N: nk[0], K: nk[1]})
		t.Run(tp.String(), func(t *testing.T) {
			for i := range tp.Servers() {
				if g.Nodes[i].Name != bcube.HostName(i) || len(g.Nodes[i].Ports) != tp.Levels() {
					t.Fatalf("node %d is %s with %d ports", i, g.Nodes[i].Name, len(g.Nodes[i].Ports))
				}
				for l := range tp.Levels() {
					w, p := tp.SwitchOf(i, l)
					h := g.Head(g.Out(i, l))
					if g.Nodes[h.Node].Name != bcube.SwitchName(l, w) || h.Port != p {
						t.Errorf("h%d port %d goes to %s port %d, bcube says %s port %d",
							i, l, g.Nodes[h.Node].Name, h.Port, bcube.SwitchName(l, w), p)
					}
					if g.PortName(i, l) != bcube.HostPort(l) {
						t.Errorf("h%d port %d named %s", i, l, g.PortName(i, l))
					}
				}
			}
			for l := range tp.Levels() {
				for w := range tp.SwitchesPerLevel() {
					s, ok := g.Lookup(bcube.SwitchName(l, w))
					if !ok {
						t.Fatalf("no %s", bcube.SwitchName(l, w))
					}
					for p := range tp.N() {
						h := g.Head(g.Out(s, p))
						if h.Node != tp.ServerAt(l, w, p) || h.Port != l {
							t.Errorf("%s port %d goes to %s port %d", bcube.SwitchName(l, w), p, g.Nodes[h.Node].Name, h.Port)
						}
						if g.PortName(s, p) != bcube.SwitchPort(p) {
							t.Errorf("%s port %d named %s", bcube.SwitchName(l, w), p, g.PortName(s, p))
						}
					}
				}
			}
			e := NewECMP(g)
			for dst := range tp.Servers() {
				for l := range tp.Levels() {
					for w := range tp.SwitchesPerLevel() {
						s, _ := g.Lookup(bcube.SwitchName(l, w))
						if got := e.NextHops(s, dst); !slices.Equal(got, []uint16{uint16(tp.Digit(dst, l))}) {
							t.Errorf("%s to h%d: ports %v, digit rule says %d", bcube.SwitchName(l, w), dst, got, tp.Digit(dst, l))
						}
					}
				}
				for src := range tp.Servers() {
					var want []uint16
					for l := range tp.Levels() {
						if tp.Digit(src, l) != tp.Digit(dst, l) {
							want = append(want, uint16(l))
						}
					}
					if got := e.NextHops(src, dst); !slices.Equal(got, want) {
						t.Errorf("h%d to h%d: ports %v, want levels %v", src, dst, got, want)
					}
				}
			}
		})
	}
}

func TestRailOnlyCapacities(t *testing.T) {
	g := mustBuild(t, RailOnly{N: 4})
	for i := range 16 {
		if c0, c1 := g.Capacity(g.Out(i, 0)), g.Capacity(g.Out(i, 1)); c0 != 1.6 || c1 != 1 {
			t.Fatalf("h%d: level capacities %v %v, want 1.6 1", i, c0, c1)
		}
	}
}
