package lab

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
)

func TestPlan(t *testing.T) {
	for _, c := range []struct {
		n, k                                  int
		namespaces, links, appLinks, switches int
	}{
		{2, 1, 8, 8, 4, 4},
		{4, 1, 24, 32, 16, 8},
		{8, 1, 80, 128, 64, 16},
		{3, 2, 54, 81, 27, 27},
	} {
		t.Run(fmt.Sprintf("BCube(%d,%d)", c.n, c.k), func(t *testing.T) {
			spec := Spec{Name: "bt", N: c.n, K: c.k, RateBps: 2_500_000_000,
				RunRoot: "/run/x", BinDir: "/opt/bin", LevelOrder: "ascending"}
			p, err := NewPlan(spec)
			if err != nil {
				t.Fatal(err)
			}
			tp := bcube.MustNew(c.n, c.k)
			if len(p.Nodes) != c.namespaces || len(p.Links) != c.links || len(p.AppLinks) != c.appLinks {
				t.Fatalf("%d nodes %d links %d app links, want %d %d %d",
					len(p.Nodes), len(p.Links), len(p.AppLinks), c.namespaces, c.links, c.appLinks)
			}
			if p.StatePath != "/run/x/bt/state.json" || p.LogDir != "/run/x/bt/logs" {
				t.Fatalf("paths %s %s", p.StatePath, p.LogDir)
			}

			// Nodes: names, namespaces, binaries, valid configs.
			seenNS := map[string]bool{}
			switches := 0
			for i, n := range p.Nodes {
				if seenNS[n.Namespace] {
					t.Fatalf("namespace %s twice", n.Namespace)
				}
				seenNS[n.Namespace] = true
				if n.Namespace != "bt-"+n.Name || n.ConfigPath != "/run/x/bt/"+n.Name+".json" ||
					n.LogPath != "/run/x/bt/logs/"+n.Name+".log" || n.Config.Control != "/run/x/bt/"+n.Name+".sock" ||
					n.Binary != "/opt/bin/"+n.Kind {
					t.Fatalf("node %d: %+v", i, n)
				}
				if _, node, err := n.Config.Validate(); err != nil {
					t.Fatalf("%s: %v", n.Name, err)
				} else if node.String() != n.Name {
					t.Fatalf("config node %v for %s", node, n.Name)
				}
				c := n.Config
				if c.Lab != "bt" || c.N != tp.N() || c.K != tp.K() || c.RateBps != 2_500_000_000 || c.Dilation != 40 || c.LinkDelay() != 40*time.Microsecond ||
					c.XDPMode != "native" || c.BufferBytes != 5_000_000 || c.RingSize == 0 || c.LevelOrder != "ascending" {
					t.Fatalf("%s config %+v", n.Name, c)
				}
				if i < tp.Servers() {
					if n.Name != bcube.HostName(i) || n.Kind != KindServer || c.LevelOrder != "ascending" {
						t.Fatalf("node %d: %s %s %q", i, n.Name, n.Kind, c.LevelOrder)
					}
				} else {
					switches++
					// Switches get the level order too: it picks the A queue.
					if n.Kind != KindSwitch || n.Name[0] != 's' {
						t.Fatalf("node %d: %s %s %q", i, n.Name, n.Kind, c.LevelOrder)
					}
				}
			}
			if switches != c.switches {
				t.Fatalf("%d switches", switches)
			}
			if got := p.Namespaces(); len(got) != c.namespaces || got[0] != "bt-h0" {
				t.Fatalf("Namespaces() = %v", got)
			}
			if n, ok := p.Node("s0.0"); !ok || n.Kind != KindSwitch {
				t.Fatalf("Node(s0.0) = %v %v", n, ok)
			}

			// Links: every server port and every switch port exactly once,
			// both ends in planned namespaces, MACs from bcube.
			ends := map[string]bool{}
			for _, l := range p.Links {
				for _, e := range []Endpoint{l.A, l.B} {
					key := e.Namespace + "/" + e.Ifname
					if ends[key] || !seenNS[e.Namespace] || e.Namespace != "bt-"+e.Node {
						t.Fatalf("link %v: end %s reused or unplanned", l, key)
					}
					ends[key] = true
				}
				var i, lv, w, port int
				if _, err := fmt.Sscanf(l.A.Node+" "+l.A.Ifname, "h%d eth%d", &i, &lv); err != nil {
					t.Fatalf("link %v: %v", l, err)
				}
				w, port = tp.SwitchOf(i, lv)
				if l.B.Node != bcube.SwitchName(lv, w) || l.B.Ifname != bcube.SwitchPort(port) ||
					!bytes.Equal(l.A.MAC, bcube.HostPortMAC(i, lv)) || !bytes.Equal(l.B.MAC, bcube.SwitchPortMAC(lv, w, port)) {
					t.Fatalf("link %v: MACs %v %v", l, l.A.MAC, l.B.MAC)
				}
			}
			for i, l := range p.AppLinks {
				if l.A.Node != bcube.HostName(i) || l.A.Ifname != "bc0" || l.B.Ifname != "bc0nic" || l.A.Namespace != l.B.Namespace ||
					!bytes.Equal(l.A.MAC, bcube.AppMAC(i)) || !bytes.Equal(l.B.MAC, bcube.AppNICMAC(i)) ||
					l.A.Addr.String() != bcube.ServerIP(i).String()+"/15" || l.B.Addr.IsValid() {
					t.Fatalf("app link %d: %+v", i, l)
				}
			}
		})
	}
}

// The examples of the CLI's summary hold: h0 -> h15 in BCube(4,1) is
// 198.18.0.15, 4 hops.
func TestPlanAddresses(t *testing.T) {
	p, err := NewPlan(Spec{N: 4, K: 1, RunRoot: "/run/x", BinDir: "/b"})
	if err != nil {
		t.Fatal(err)
	}
	if a := p.AppLinks[15].A.Addr.String(); a != "198.18.0.15/15" || p.Topology.Hops(0, 15) != 4 {
		t.Fatalf("h15: %s", a)
	}
}

// A worker's slack is the model's at the lab's D unless the spec sets
// one.
func TestPlanWorkerSlack(t *testing.T) {
	for _, c := range []struct {
		rate  uint64
		slack time.Duration
		want  time.Duration
	}{{20e6, 0, 500 * time.Microsecond}, {100e6, 0, 100 * time.Microsecond}, {100e6, 70 * time.Microsecond, 70 * time.Microsecond}} {
		s := Defaults()
		s.N, s.K, s.RateBps, s.WorkerSlack, s.RunRoot, s.BinDir = 4, 1, c.rate, c.slack, "/run/x", "/b"
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Workers[0].Config.Slack.D(); got != c.want {
			t.Errorf("%d b/s, slack %v: the worker's %v, want %v", c.rate, c.slack, got, c.want)
		}
	}
}

// Workers host every node once; a level-0 switch shares its worker with
// its servers; PerNode plans no worker.
func TestPlanWorkers(t *testing.T) {
	for _, c := range []struct{ n, k, workers, want int }{{4, 1, 1, 1}, {4, 1, 2, 2}, {4, 1, 3, 3}, {2, 1, 64, 8}, {8, 1, 2, 2}, {3, 2, 2, 2}} {
		p, err := NewPlan(Spec{N: c.n, K: c.k, RunRoot: "/run/x", BinDir: "/b", Workers: c.workers})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Workers) != c.want {
			t.Fatalf("BCube(%d,%d) %d workers: %d planned", c.n, c.k, c.workers, len(p.Workers))
		}
		seen := map[int]bool{}
		for w, wp := range p.Workers {
			if wp.Binary != "/b/bcfabd" || wp.Config.Control != "/run/x/bc/"+wp.Name+".sock" || len(wp.Nodes) == 0 ||
				len(wp.Config.Nodes) != len(wp.Nodes) || wp.Config.Validate() != nil {
				t.Fatalf("worker %+v", wp)
			}
			for _, i := range wp.Nodes {
				if seen[i] || p.Nodes[i].Worker != w || p.Nodes[i].Config.Netns != "/run/netns/bc-"+p.Nodes[i].Name ||
					p.Nodes[i].Config.Log != p.Nodes[i].LogPath {
					t.Fatalf("node %+v in worker %d", p.Nodes[i], w)
				}
				seen[i] = true
			}
		}
		if len(seen) != len(p.Nodes) {
			t.Fatalf("%d of %d nodes on a worker", len(seen), len(p.Nodes))
		}
		tp := p.Topology
		for w := 0; w < tp.SwitchesPerLevel(); w++ {
			sw, _ := p.Node(bcube.SwitchName(0, w))
			for d := 0; d < tp.N() && tp.K() == 1; d++ {
				if h, _ := p.Node(bcube.HostName(w*tp.N() + d)); h.Worker != sw.Worker && c.workers <= tp.Servers()/tp.N() {
					t.Errorf("BCube(%d,%d)/%d: s0.%d on worker %d, its server %s on %d", c.n, c.k, c.workers, w, sw.Worker, h.Name, h.Worker)
				}
			}
		}
	}
	p, err := NewPlan(Spec{N: 4, K: 1, RunRoot: "/run/x", BinDir: "/b", Workers: PerNode})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Workers) != 0 || p.Nodes[0].Worker != -1 || p.Nodes[0].Config.Log != "" {
		t.Fatalf("per node: %d workers, node %+v", len(p.Workers), p.Nodes[0])
	}
	if _, err := NewPlan(Spec{N: 4, K: 1, RunRoot: "/run/x", BinDir: "/b", Workers: MaxWorkers + 1}); err == nil {
		t.Error("too many workers accepted")
	}
}
