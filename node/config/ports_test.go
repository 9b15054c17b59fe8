package config

import (
	"github.com/bcfab/bcfab/model/scale"
	"testing"
	"time"

	"github.com/bcfab/bcfab/signaling"
)

// Every threshold that counts one-hop BDPs follows its own port's rate:
// a Rail-only server (eth0 160 Mb/s, eth1 100 Mb/s) and a switch with
// one cable overridden; thresholds given in bytes are the same
// everywhere. A port's one-hop BDP is the target's link of its rate x D:
// the papers' network at D = 1,000 here (100 Mb/s links, a 2 ms one-hop
// RTT).
func TestPortThresholdsFollowPortRates(t *testing.T) {
	const rtt = 2 * time.Millisecond
	bdp := func(rate uint64) int { return int(float64(rate) / 8 * rtt.Seconds()) }
	for _, c := range []struct {
		name  string
		cfg   Node
		rates []uint64 // per fabric port, in engine order
	}{
		{"server of a rail-only fabric", Node{Node: "h5", N: 4, K: 1, RateBps: 100_000_000, Dilation: 1000,
			Ports: []PortConfig{{Name: "eth0", RateBps: 160_000_000}}}, []uint64{160e6, 100e6}},
		{"switch, one cable overridden", Node{Node: "s1.2", N: 4, K: 1, RateBps: 100_000_000, Dilation: 1000,
			Ports: []PortConfig{{Name: "p3", RateBps: 400_000_000}}}, []uint64{100e6, 100e6, 100e6, 400e6}},
		{"uniform", Node{Node: "s0.0", N: 2, K: 1, RateBps: 500_000_000, Dilation: 1000}, []uint64{500e6, 500e6}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Control, cfg.ECN = "/x.sock", true
			cfg.SetDefaults()
			if _, _, err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if len(cfg.FabricPorts()) != len(c.rates) {
				t.Fatalf("fabric ports %v, want %d", cfg.FabricPorts(), len(c.rates))
			}
			for p, rate := range c.rates {
				b, name := bdp(rate), cfg.FabricPorts()[p]
				if want := (signaling.PortThresholds{XoffA: 6 * b, XonA: 4 * b, XoffB: 6 * b, XonB: 4 * b}); cfg.PortThresholds(name) != want {
					t.Errorf("%s at %d bit/s: PortFC %+v, want %+v", name, rate, cfg.PortThresholds(name), want)
				}
				if want := (signaling.PFCLimits{Xoff: 6 * b, Xon: 4 * b}); cfg.PortPFC(name) != want {
					t.Errorf("%s: PFC %+v, want %+v", name, cfg.PortPFC(name), want)
				}
				if cfg.PortBDP(name) != b {
					t.Errorf("%s: BDP %d, want %d", name, cfg.PortBDP(name), b)
				}
				// ECN: the papers' K_min 100 KB and K_max 400 KB on a
				// 100 Gb/s link with a 2 µs one-hop RTT are 4 and 16
				// one-hop BDPs, at any rate.
				kmin, kmax := int(float64(rate)/8*rtt.Seconds()*4), int(float64(rate)/8*rtt.Seconds()*16)
				if e := cfg.PortECN(name); e.KminBytes != kmin || e.KmaxBytes != kmax || e.Pmax != 0.2 {
					t.Errorf("%s: ECN %+v, want K_min %d, K_max %d", name, e, kmin, kmax)
				}
			}
		})
	}
}

// Thresholds given in bytes hold on every port whatever its rate (package
// scheme checks them on every port).
func TestPortThresholdsExplicit(t *testing.T) {
	cfg := Node{Node: "h0", N: 4, K: 1, Control: "/x.sock", FC: "pfc", RateBps: 100_000_000, PFCXoff: 50_000, PFCXon: 30_000,
		ECN: true, ECNKminBytes: 30_000, Ports: []PortConfig{{Name: "eth0", RateBps: 160_000_000}}}
	cfg.SetDefaults()
	if _, _, err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"eth0", "eth1"} {
		if l := cfg.PortPFC(p); l != (signaling.PFCLimits{Xoff: 50_000, Xon: 30_000}) {
			t.Errorf("%s: %+v", p, l)
		}
		if e := cfg.PortECN(p); e.KminBytes != 30_000 || e.KmaxBytes != 16*cfg.PortBDP(p) {
			t.Errorf("%s: ECN %+v: K_min given, K_max scaled to the port", p, e)
		}
	}
}

// Each port counts its BDP at its own rate x D: at the Rail-only preset's
// 32 and 20 Mb/s of the papers' network (D = 5,000) eth0 is a 160 Gb/s
// target link and eth1 a 100 Gb/s one. A native target's BDP below one
// full frame counts as one frame (1518 bytes).
func TestPortBDP(t *testing.T) {
	cfg := Node{Node: "h0", N: 4, K: 1, RateBps: 20_000_000, Ports: []PortConfig{{Name: "eth0", RateBps: 32_000_000}}}
	cfg.SetDefaults()
	if b0, b1 := cfg.PortBDP("eth0"), cfg.PortBDP("eth1"); b0 != 40_000 || b1 != 25_000 {
		t.Errorf("papers at D 5000: BDP %d/%d, want 40000/25000", b0, b1)
	}
	cfg = Node{Node: "h0", N: 4, K: 1, RateBps: 20_000_000, Target: scale.Native(20_000_000),
		Ports: []PortConfig{{Name: "eth0", RateBps: 32_000_000}}}
	cfg.SetDefaults()
	if b0, b1 := cfg.PortBDP("eth0"), cfg.PortBDP("eth1"); b0 != 1518 || b1 != 1518 {
		t.Errorf("native: BDP %d/%d, want 1518/1518", b0, b1)
	}
}

// cc dctcp marks at DCTCP's one threshold K, scaled to each port's rate
// (4 one-hop BDPs, as the papers' 100 KB on 100 Gb/s), P_max 1, unless
// thresholds are given; cc hpcc stamps INT; an unknown cc is refused.
func TestPortECNUnderCC(t *testing.T) {
	cfg := Node{Node: "h0", N: 4, K: 1, Control: "/x.sock", FC: "pfc", RateBps: 100_000_000, CC: "dctcp",
		Ports: []PortConfig{{Name: "eth0", RateBps: 160_000_000}}}
	cfg.SetDefaults()
	if _, _, err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	rtt := cfg.Model().OneHopRTT()
	for name, rate := range map[string]float64{"eth0": 160e6, "eth1": 100e6} {
		k := int(rate / 8 * rtt.Seconds() * 4)
		if e := cfg.PortECN(name); e.KminBytes != k || e.KmaxBytes != k || e.Pmax != 1 {
			t.Errorf("%s: %+v, want K %d", name, e, k)
		}
	}
	cfg.ECNKminBytes, cfg.ECNKmaxBytes = 30_000, 30_000
	if e := cfg.PortECN("eth1"); e.KminBytes != 30_000 || e.KmaxBytes != 30_000 || e.Pmax != 1 {
		t.Errorf("given K: %+v", e)
	}
	if cc, err := cfg.TransportCC(); err != nil || cc.String() != "dctcp" || cfg.INT() {
		t.Errorf("cc %v, %v, INT %v", cc, err, cfg.INT())
	}
	cfg.CC, cfg.ECNKminBytes, cfg.ECNKmaxBytes = "hpcc", 0, 0
	if e := cfg.PortECN("eth1"); e.On() || !cfg.INT() {
		t.Errorf("hpcc: ECN %+v, INT %v", e, cfg.INT())
	}
	cfg.CC = "cubic"
	if _, _, err := cfg.Validate(); err == nil {
		t.Error("cc cubic validated")
	}
	cfg.CC = ""
	if cc, _ := cfg.TransportCC(); cc.String() != "dcqcn" {
		t.Errorf("default cc %v", cc)
	}
}

// Where the egresses decide their marks is the target's: at enqueue by
// default, at dequeue with ecn-at-dequeue, under DCQCN's RED and DCTCP's
// step alike, and with thresholds given.
func TestPortECNAtDequeue(t *testing.T) {
	for _, cc := range []string{"dcqcn", "dctcp"} {
		cfg := Node{Node: "h0", N: 4, K: 1, Control: "/x.sock", FC: "pfc", RateBps: 100_000_000, CC: cc, ECN: true}
		cfg.SetDefaults()
		if _, _, err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		if e := cfg.PortECN("eth0"); !e.On() || e.AtDequeue {
			t.Errorf("%s, default target: %+v, want marking at enqueue", cc, e)
		}
		cfg.Target.ECNAtDequeue = true
		if e := cfg.PortECN("eth0"); !e.On() || !e.AtDequeue {
			t.Errorf("%s, ecn-at-dequeue: %+v, want marking at dequeue", cc, e)
		}
		cfg.ECN, cfg.ECNKminBytes, cfg.ECNKmaxBytes, cfg.ECNPmax = false, 10_000, 20_000, 0.5
		if e := cfg.PortECN("eth0"); !e.On() || !e.AtDequeue {
			t.Errorf("%s, thresholds given: %+v, want marking at dequeue", cc, e)
		}
	}
}

// Under cc hpcc the egresses where other nodes' frames queue stamp INT
// records: switches', and a BCube server's, whose ports its relay
// shares (Relays); a graph fabric's server, which relays nothing, stamps
// none, as an RDMA NIC adds no record of its own backlog.
func TestINTWhereFramesOfOthersQueue(t *testing.T) {
	port := []FabricPort{{Name: "eth0", MAC: "02:00:00:00:00:01", PeerMAC: "02:00:00:00:00:02"}}
	for _, tc := range []struct {
		cfg  Node
		want bool
	}{
		{Node{Node: "h0", N: 4, K: 1}, true},
		{Node{Node: "s1.2", N: 4, K: 1}, true},
		{Node{Node: "h2", Fabric: &Fabric{Topology: "leafspine", Servers: 16, Ports: port}}, false},
		{Node{Node: "leaf0", Fabric: &Fabric{Topology: "leafspine", Servers: 16, Switch: true, Ports: port}}, true},
	} {
		c := tc.cfg
		c.CC = "hpcc"
		if got := c.INT(); got != tc.want {
			t.Errorf("%s (n %d, k %d, graph %v): INT %v, want %v", c.Node, c.N, c.K, c.Fabric != nil, got, tc.want)
		}
		if c.Relays() != tc.want {
			t.Errorf("%s: Relays %v, want %v", c.Node, c.Relays(), tc.want)
		}
		c.CC = "dcqcn"
		if c.INT() {
			t.Errorf("%s under dcqcn stamps INT", c.Node)
		}
	}
}
