package scheme

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
)

// datapath is a node's egresses without a network: what a scheme emits
// is counted, not sent.
type datapath struct {
	eg      []*queues.Egress
	rates   []uint64
	now     int64
	emitted int
}

func newDatapath(t *testing.T, s Scheme, ports int, rates []uint64) *datapath {
	t.Helper()
	d := &datapath{rates: rates}
	for range ports {
		c := s.Egress()
		c.Capacity = 1024
		eg, err := queues.NewEgress(c)
		if err != nil {
			t.Fatal(err)
		}
		d.eg = append(d.eg, eg)
	}
	return d
}

func (d *datapath) Egress(p int) *queues.Egress { return d.eg[p] }
func (d *datapath) Now() int64                  { return d.now }
func (d *datapath) Emit(int, []byte) bool       { d.emitted++; return true }
func (d *datapath) PortRate(p int) uint64 {
	if p < len(d.rates) {
		return d.rates[p]
	}
	return 0
}

// node is a config of node name of BCube(4,1) at 100 Mb/s under fc.
func node(t *testing.T, name, fc string) (*config.Node, Place) {
	t.Helper()
	c := &config.Node{Node: name, N: 4, K: 1, Control: "/x.sock", FC: fc, RateBps: 100_000_000}
	c.SetDefaults()
	tp, n, err := c.Validate()
	if err != nil {
		t.Fatal(err)
	}
	return c, Place{T: tp, Node: n}
}

// Every registered scheme is made from a config, at a switch and at a
// server, under its own name, with a layout the queues accept; it binds
// to a datapath, classifies a frame into one of its queues, and runs
// its hooks, timer and counters. A name the registry lacks is one error
// that lists the names it has.
func TestRegistry(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"none", "portfc", "pfc", "pfcstar", "bfc", "ici", "ci", "ideal-fq", "sfq"}) {
		t.Errorf("names %v", got)
	}
	for _, name := range Names() {
		for _, at := range []string{"s0.1", "h6"} {
			t.Run(name+"/"+at, func(t *testing.T) {
				c, p := node(t, at, name)
				s, err := New(c, p)
				if err != nil {
					t.Fatal(err)
				}
				if s.Name() != name {
					t.Errorf("made %s", s.Name())
				}
				eg := s.Egress()
				eg.Capacity = 1024 // the datapath's to set
				if err := eg.Validate(); err != nil {
					t.Fatal(err)
				}
				if Describe(c, func(f func(*config.Node, string) string) string { return f(c, c.FabricPorts()[0]) }) == "" {
					t.Error("no description")
				}
				fabric := p.FabricPorts()
				ports := make([]Port, fabric)
				for i := range ports {
					ports[i] = Port{Own: bcube.HostPortMAC(6, 0), Peer: bcube.SwitchPortMAC(0, 1, 2)}
				}
				d := newDatapath(t, s, fabric, nil)
				s.Bind(d, ports)
				f := dataFrame(6, 1, 0)
				q, _ := s.Classify(f)
				if q < 0 || q >= s.Egress().Queues {
					t.Fatalf("queue %d of %d", q, s.Egress().Queues)
				}
				if hq := s.ControlQueue(0); hq != s.Egress().HQ {
					t.Errorf("control queue %d, HQ %d", hq, s.Egress().HQ)
				}
				all := fabric
				if !p.Node.Switch {
					all++ // the application port
				}
				for port := range all {
					if k := s.Hooks(port); k != nil && port < fabric {
						d.eg[port].SetHooks(k)
					}
					s.PortCounters(port, map[string]uint64{})
				}
				d.eg[f.Out].Enqueue(q, queues.Packet{Len: 1000}, 0)
				d.eg[f.Out].Dequeue(0)
				if next := s.NextTick(); next >= 0 {
					s.Tick(next)
				}
			})
		}
	}
	c, p := node(t, "h0", "pfc")
	c.FC = "fcplus"
	_, err := New(c, p)
	if err == nil || strings.Count(err.Error(), "\n") != 0 || !strings.Contains(err.Error(), `fc "fcplus": want none, portfc, pfc, pfcstar, bfc, ici, ci, ideal-fq or sfq`) {
		t.Errorf("unknown scheme: %v", err)
	}
	c.FC = "irn" // a name, not a scheme a node runs
	if _, err := New(c, p); err == nil {
		t.Error("a node runs irn")
	}
	c.FC = ""
	if s, err := New(c, p); err != nil || s.Name() != Default {
		t.Errorf("no fc: %v, %v", s, err)
	}
}

// dataFrame is a tagged data frame of server src's flow to dst that
// came in by fabric port in (-1: src's own) and leaves by port 0.
func dataFrame(src, dst, in int) *Frame {
	h := &header.Frame{Src: bcube.ServerIP(src).As4(), Dst: bcube.ServerIP(dst).As4(), Tagged: true,
		PCP: signaling.PCPData, VID: signaling.VID(0)}
	b := make([]byte, 64)
	b[12], b[13] = 0x81, 0x00
	return &Frame{B: b, H: h, PCP: signaling.PCPData, Tagged: true, In: in, Dst: dst}
}

// ParseName reads every form the registry lists, and refuses what it
// does not.
func TestParseName(t *testing.T) {
	for _, c := range []struct {
		in, fc, transport string
		k                 Knobs
	}{
		{"none", "none", "", Knobs{}},
		{"portfc", "portfc", "", Knobs{}},
		{"portfc:drr", "portfc", "", Knobs{RelayQueue: RelayDRR}},
		{"pfc", "pfc", "", Knobs{}},
		{"pfcstar", "pfcstar", "", Knobs{}},
		{"bfc", "bfc", "", Knobs{}},
		{"bfc:8", "bfc", "", Knobs{BFCQueues: 8}},
		{"bfc:hash", "bfc", "", Knobs{BFCAssign: BFCAssignHash}},
		{"bfc:hash:8", "bfc", "", Knobs{BFCQueues: 8, BFCAssign: BFCAssignHash}},
		{"ideal-fq", "ideal-fq", "", Knobs{}},
		{"sfq", "sfq", "", Knobs{}},
		{"sfq:8", "sfq", "", Knobs{BFCQueues: 8}},
		{"irn", "none", "irn", Knobs{}},
		{"gbn", "none", "gbn", Knobs{}},
		{"none:drr", "none", "", Knobs{RelayQueue: RelayDRR}},
		{"irn:drr", "none", "irn", Knobs{RelayQueue: RelayDRR}},
		{"gbn:drr", "none", "gbn", Knobs{RelayQueue: RelayDRR}},
	} {
		n, err := ParseName(c.in)
		if err != nil || n.FC != c.fc || n.Transport != c.transport || n.Knobs != c.k {
			t.Errorf("%s: %+v, %v", c.in, n, err)
		}
	}
	for _, bad := range []string{"fcplus", "pfc:2", "bfc:1", "bfc:x", "portfc:hash", "irn:hash", "pfc:drr", "ideal-fq:8", "sfq:hash", "sfq:1", ""} {
		if _, err := ParseName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if f := Forms(); !slices.Contains(f, "bfc:hash:Q") || !slices.Contains(f, "irn") || !slices.Contains(f, "irn:drr") {
		t.Errorf("forms %v", f)
	}
	// A lab's relay-queue knob reaches the schemes whose servers have a
	// relay queue (PortFC's layout), and no other.
	lab := Knobs{RelayQueue: RelayDRR, BFCQueues: 8}
	for name, want := range map[string]string{"portfc": RelayDRR, "none": RelayDRR, "irn": RelayDRR, "gbn": RelayDRR, "pfc": "", "bfc": ""} {
		n, err := ParseName(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Over(lab).RelayQueue; got != want {
			t.Errorf("%s over a lab with relay-queue drr: %q, want %q", name, got, want)
		}
	}
	if !Pauses("bfc") || Pauses("none") || Pauses("") || Pauses("irn") {
		t.Error("Pauses")
	}
}

// PFC runs with the priority layout, pfcstar protecting one more
// priority per relay; the others keep PortFC's; a config may not give
// PFC another.
func TestPFCDefaults(t *testing.T) {
	for _, c := range []struct {
		fc       string
		k        int
		queues   int
		lossless uint8
	}{
		{"pfc", 1, 8, 1 << 3},
		{"pfcstar", 1, 8, 1<<3 | 1<<4},
		{"pfcstar", 2, 8, 1<<3 | 1<<4 | 1<<5},
		{"portfc", 1, 8, 1 << 3},
		{"none", 1, 8, 1 << 3},
	} {
		cfg := config.Node{Node: "h0", N: 2, K: c.k, Control: "/x.sock", FC: c.fc, RateBps: 100_000_000}
		cfg.SetDefaults()
		tp, n, err := cfg.Validate()
		if err != nil {
			t.Fatalf("%s: %v", c.fc, err)
		}
		s, err := New(&cfg, Place{T: tp, Node: n})
		if err != nil {
			t.Fatalf("%s: %v", c.fc, err)
		}
		th := PFCThresholds(&cfg, c.fc == "pfcstar")
		bdp := 25_000 // the papers' one-hop BDP, at any D
		wantQ := 2 * tp.N()
		if c.fc == "pfc" || c.fc == "pfcstar" {
			wantQ = c.queues
		}
		if s.Egress().Queues != wantQ || th.Lossless != c.lossless || th.Xoff != 6*bdp || th.Xon != 4*bdp {
			t.Errorf("%s k=%d: %d queues, thresholds %+v", c.fc, c.k, s.Egress().Queues, th)
		}
	}
	c, p := node(t, "h0", "pfc")
	c.Queueing = QueueingPortFC
	if _, err := New(c, p); err == nil || !strings.Contains(err.Error(), "fc pfc needs queueing priority, not portfc") {
		t.Errorf("pfc with portfc queueing: %v", err)
	}
	c, p = node(t, "h0", "pfcstar")
	c.K = 3
	if _, err := New(c, p); err == nil || !strings.Contains(err.Error(), "pfcstar") {
		t.Errorf("pfcstar on k = 3: %v", err)
	}
}

// Every scheme's receivers hold a pause fc_hold (the target's 335 µs x D,
// at least scale.HoldFloor: 1 s at D = 1,000) and refresh it every 10 µs
// x D; a hold shorter than three refreshes is refused.
func TestHold(t *testing.T) {
	for _, fc := range []string{"portfc", "pfc", "pfcstar", "bfc"} {
		c, p := node(t, "h0", fc)
		if _, err := New(c, p); err != nil {
			t.Fatalf("%s: %v", fc, err)
		}
		hold := int64(time.Second)
		if PortFCThresholds(c).HoldNs() != hold || PFCThresholds(c, false).Hold != hold || BFCConfig(c).Hold != hold ||
			PFCThresholds(c, false).Repeat != int64(10*time.Millisecond) {
			t.Errorf("%s: hold %v", fc, c.FCHold.D())
		}
		c.FCHold = config.Duration(20 * time.Millisecond)
		if _, err := New(c, p); err == nil || !strings.Contains(err.Error(), "fc_hold") {
			t.Errorf("%s: a hold of two refreshes: %v", fc, err)
		}
	}
	c, p := node(t, "h0", "none")
	c.FCHold = config.Duration(time.Millisecond)
	if _, err := New(c, p); err != nil {
		t.Errorf("none has no hold to check: %v", err)
	}
}

// The relay queue of a PortFC server is strict by default and joins the
// round robin with relay_queue drr, which guards it on every port; no
// other layout has one to set.
func TestRelayQueue(t *testing.T) {
	for _, c := range []struct {
		fc, relay, queueing string
		strict              []int
		err                 bool
	}{
		{"portfc", "", "", []int{6}, false},
		{"portfc", RelayStrict, "", []int{6}, false},
		{"portfc", RelayDRR, "", nil, false},
		{"none", RelayDRR, "", nil, false},
		{"none", RelayDRR, QueueingPriority, nil, true},
		{"pfc", RelayDRR, "", nil, true},
		{"bfc", RelayDRR, "", nil, true},
		{"portfc", "fifo", "", nil, true},
	} {
		cfg, p := node(t, "h0", c.fc)
		cfg.RelayQueue, cfg.Queueing = c.relay, c.queueing
		s, err := New(cfg, p)
		if (err != nil) != c.err {
			t.Errorf("%s, relay %q, queueing %q: error %v, want one: %v", c.fc, c.relay, c.queueing, err, c.err)
			continue
		}
		if err == nil && !slices.Equal(s.Egress().Strict, c.strict) {
			t.Errorf("%s, relay %q: strict queues %v, want %v", c.fc, c.relay, s.Egress().Strict, c.strict)
		}
		if err != nil || c.fc != "portfc" {
			continue
		}
		s.Bind(newDatapath(t, s, 2, nil), make([]Port, 2))
		if g := s.(*PortFCServer).State().Guarded(0); g != (c.relay == RelayDRR) {
			t.Errorf("relay %q: eth0's relay queue guarded %v", c.relay, g)
		}
	}
}

// A PortFC server guards the relay queue of a port slower than another
// (a Rail-only fabric's rail), and only that one.
func TestPortFCGuardsSlowerPorts(t *testing.T) {
	c, p := node(t, "h5", "portfc")
	s, _ := New(c, p)
	s.Bind(newDatapath(t, s, 2, []uint64{160e6, 100e6}), make([]Port, 2))
	h := s.(*PortFCServer).State()
	if h.Guarded(0) || !h.Guarded(1) {
		t.Errorf("guarded %v %v, want eth1's only", h.Guarded(0), h.Guarded(1))
	}
	// eth0 has hooks too: the guard's pauses leave by it, and its hooks
	// time them; the application port has none.
	if s.Hooks(0) == nil || s.Hooks(1) == nil || s.Hooks(2) != nil {
		t.Error("no hooks on a fabric port, or hooks on the application port")
	}
}

// Every scheme reports the pause timing of what it pauses, per port, with
// the thresholds and the one-hop BDP each port runs with: PFC a class per
// lossless priority, PortFC's switch A and B, a server's guarded relay
// queue; the others nothing. Through the scheme, a pause is timed from
// its crossing to its frame's departure.
func TestFCTiming(t *testing.T) {
	for _, c := range []struct {
		fc, at  string
		relay   string
		classes []string
	}{
		{"pfc", "s0.1", "", []string{"P3"}},
		{"pfc", "h6", "", []string{"P3"}},
		{"pfcstar", "h6", "", []string{"P3", "P4"}},
		{"ici", "s0.1", "", []string{"P2", "P3"}},
		{"portfc", "s0.1", "", []string{"A", "B"}},
		{"portfc", "h6", "", nil},
		{"portfc", "h6", RelayDRR, []string{"RQ"}}, // every relay queue guarded
		{"bfc", "s0.1", "", nil},
		{"none", "s0.1", "", nil},
	} {
		t.Run(c.fc+c.relay+"/"+c.at, func(t *testing.T) {
			cfg, p := node(t, c.at, c.fc)
			cfg.RelayQueue = c.relay
			cfg.Ports = []config.PortConfig{{Name: cfg.FabricPorts()[1], RateBps: 200_000_000}}
			s, err := New(cfg, p)
			if err != nil {
				t.Fatal(err)
			}
			fabric := p.FabricPorts()
			d := &hqDatapath{datapath: newDatapath(t, s, fabric, nil)}
			s.Bind(d, make([]Port, fabric))
			for port := range fabric {
				d.eg[port].SetHooks(s.Hooks(port))
			}
			var tm signaling.FCTiming
			for port, name := range cfg.FabricPorts() {
				s.FCTiming(port, &tm)
				var got []string
				for _, ct := range tm.C[:tm.N] {
					got = append(got, ct.Class)
					xoff, xon := cfg.PortPFC(name).Xoff, cfg.PortPFC(name).Xon
					if ct.Xoff != xoff || ct.Xon != xon {
						t.Errorf("port %s, class %s: X_off %d X_on %d, want %d %d", name, ct.Class, ct.Xoff, ct.Xon, xoff, xon)
					}
				}
				if !slices.Equal(got, c.classes) {
					t.Errorf("port %s: classes %v, want %v", name, got, c.classes)
				}
				if tm.N > 0 && tm.BDPBytes != cfg.PortBDP(name) {
					t.Errorf("port %s: BDP %d, want %d", name, tm.BDPBytes, cfg.PortBDP(name))
				}
			}
			if c.classes == nil || c.relay != "" {
				return // the relay guard's timing: signaling's TestRelayGuardTiming
			}
			// A data frame in by port 1, out by port 0, charged to port 1's
			// P3 (PFC) or joining port 0's B queue (PortFC: a frame for
			// the server there), until it pauses at 1000 ns; the pause
			// frames leave at 5000 ns.
			timed, class, frames := 1, "P3", 1
			f := dataFrame(6, 1, 1)
			if c.fc == "portfc" {
				timed, class, frames = 0, "B", p.T.N()-1
				f = dataFrame(p.T.ServerAt(0, 1, 1), p.T.ServerAt(0, 1, 0), 1)
			}
			f.Out = 0
			q, meta := s.Classify(f)
			find := func() signaling.ClassTiming {
				s.FCTiming(timed, &tm)
				for _, ct := range tm.C[:tm.N] {
					if ct.Class == class {
						return ct
					}
				}
				t.Fatalf("no class %s", class)
				return signaling.ClassTiming{}
			}
			d.now = 1000
			for find().Pauses == 0 {
				if ok, _ := d.eg[0].Enqueue(q, queues.Packet{Len: 1000, Meta: meta}, d.now); !ok {
					t.Fatal("queue full before X_off")
				}
			}
			d.now = 5000
			for pt := range fabric {
				for d.eg[pt].QueueLen(d.eg[pt].HQ()) > 0 {
					d.eg[pt].Dequeue(d.now)
				}
			}
			ct := find()
			if ct.Lat.Count != uint64(frames) || ct.Lat.MaxNs != 4000 || ct.Lat.SumNs != int64(4000*frames) || ct.Lat.Untimed != 0 ||
				ct.AtPauseMin < ct.Xoff || ct.AtPauseMin >= ct.Xoff+1000 || ct.Peak != ct.AtPauseMax {
				t.Errorf("timing %+v, want %d frames of 4000 ns, paused at X_off", ct, frames)
			}
		})
	}
}

// hqDatapath queues what a scheme emits in the port's HQ, as a node's
// datapath does.
type hqDatapath struct {
	*datapath
	addr uint64
}

func (d *hqDatapath) Emit(p int, b []byte) bool {
	d.emitted++
	d.addr += 4096
	eg := d.eg[p]
	ok, _ := eg.Enqueue(eg.HQ(), queues.Packet{Addr: 1<<40 + d.addr, Len: uint32(len(b))}, d.now)
	return ok
}

// Each scheme's thresholds follow each port's own rate (config's
// per-port values), on every port of a Rail-only server and of a switch
// with one cable overridden.
func TestPerPortThresholds(t *testing.T) {
	const rtt = 2 * time.Millisecond // the papers' network at D = 1,000
	bdp := func(rate uint64) int { return int(float64(rate) / 8 * rtt.Seconds()) }
	for _, c := range []struct {
		name  string
		cfg   config.Node
		rates []uint64
	}{
		{"server of a rail-only fabric", config.Node{Node: "h5", N: 4, K: 1, RateBps: 100_000_000, Dilation: 1000,
			Ports: []config.PortConfig{{Name: "eth0", RateBps: 160_000_000}}}, []uint64{160e6, 100e6}},
		{"switch, one cable overridden", config.Node{Node: "s1.2", N: 4, K: 1, RateBps: 100_000_000, Dilation: 1000,
			Ports: []config.PortConfig{{Name: "p3", RateBps: 400_000_000}}}, []uint64{100e6, 100e6, 100e6, 400e6}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cfg config.Node
			for _, fc := range []string{"portfc", "pfc", "bfc"} {
				cfg = c.cfg
				cfg.Control, cfg.FC = "/x.sock", fc
				cfg.SetDefaults()
				tp, n, err := cfg.Validate()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := New(&cfg, Place{T: tp, Node: n}); err != nil {
					t.Fatalf("%s: %v", fc, err)
				}
			}
			pf, pfc, bfc := PortFCThresholds(&cfg), PFCThresholds(&cfg, false), BFCConfig(&cfg)
			if len(pf.PerPort) != len(c.rates) || len(pfc.PerPort) != len(c.rates) || len(bfc.PerPortBDP) != len(c.rates) {
				t.Fatalf("per-port thresholds for %d/%d/%d ports, want %d", len(pf.PerPort), len(pfc.PerPort), len(bfc.PerPortBDP), len(c.rates))
			}
			for p, rate := range c.rates {
				b := bdp(rate)
				if want := (signaling.PortThresholds{XoffA: 6 * b, XonA: 4 * b, XoffB: 6 * b, XonB: 4 * b}); pf.Port(p) != want {
					t.Errorf("port %d at %d bit/s: PortFC %+v, want %+v", p, rate, pf.Port(p), want)
				}
				if want := (signaling.PFCLimits{Xoff: 6 * b, Xon: 4 * b}); pfc.Port(p) != want {
					t.Errorf("port %d: PFC %+v, want %+v", p, pfc.Port(p), want)
				}
				if bfc.PortBDP(p) != b {
					t.Errorf("port %d: BFC BDP %d, want %d", p, bfc.PortBDP(p), b)
				}
			}
		})
	}
}

// The target's dynamic PFC threshold reaches every port: its alpha scaled
// with the port's rate, the pool the buffer less a headroom per fabric
// port and lossless priority; a headroom that leaves no pool is refused.
func TestPFCDynamicFromTarget(t *testing.T) {
	cfg := config.Node{Node: "h0", N: 4, K: 1, Control: "/x.sock", FC: "pfc", RateBps: 100_000_000, Dilation: 1000,
		Ports: []config.PortConfig{{Name: "eth0", RateBps: 200_000_000}}}
	cfg.SetDefaults()
	cfg.Target.PFCAlpha, cfg.Target.PFCHeadroomBDPs = 0.125, 1.5
	tp, n := bcube.MustNew(4, 1), bcube.Node{Index: 0}
	b := cfg.Model().Thresholds(100_000_000).BDP // 25 KB; eth0's is twice it
	for _, c := range []struct {
		fc   string
		star bool
		prio int
	}{{"pfc", false, 1}, {"pfcstar", true, 2}} {
		cfg.FC = c.fc
		if _, err := New(&cfg, Place{T: tp, Node: n}); err != nil {
			t.Fatalf("%s: %v", c.fc, err)
		}
		th := PFCThresholds(&cfg, c.star)
		if want := cfg.BufferBytes - c.prio*3*b/2*(2+1); th.Pool != want || !th.Dynamic() {
			t.Errorf("%s: pool %d, want %d", c.fc, th.Pool, want)
		}
		if l0, l1 := th.Port(0), th.Port(1); l0.Alpha != 0.25 || l1.Alpha != 0.125 || l1.Xoff != 6*b || l1.Xon != 4*b {
			t.Errorf("%s: eth0 %+v, eth1 %+v: want alpha 0.25 and 0.125 with the static X_off and X_on", c.fc, l0, l1)
		}
	}
	cfg.FC = "pfc"
	cfg.Target.PFCHeadroomBDPs = 100 // 2.5 MB a port
	if _, err := New(&cfg, Place{T: tp, Node: n}); err == nil || !strings.Contains(err.Error(), "leaves nothing") {
		t.Errorf("headroom over the buffer: %v", err)
	}
	cfg.Target.PFCAlpha, cfg.Target.PFCHeadroomBDPs = 0, 0
	if th := PFCThresholds(&cfg, false); th.Dynamic() || th.Port(0).Alpha != 0 {
		t.Errorf("the papers' target: %+v, want static thresholds", th)
	}
}

// Thresholds are checked on every port: an X_on above the X_off that one
// port's rate gives is refused, naming the port.
func TestThresholdsChecked(t *testing.T) {
	// Only X_on given, 200 KB: below the fast port's X_off (6 x 40 KB),
	// above the slow port's (6 x 25 KB).
	cfg := config.Node{Node: "h0", N: 4, K: 1, Control: "/x.sock", FC: "portfc", RateBps: 100_000_000, XonA: 200_000, XonB: 200_000,
		Ports: []config.PortConfig{{Name: "eth0", RateBps: 160_000_000}}}
	cfg.SetDefaults()
	tp, n := bcube.MustNew(4, 1), bcube.Node{Index: 0}
	if _, err := New(&cfg, Place{T: tp, Node: n}); err == nil || !strings.Contains(err.Error(), "portfc thresholds of eth1") {
		t.Errorf("X_on above the slow port's X_off: %v", err)
	}
	cfg.FC, cfg.Queueing, cfg.PFCXon = "pfc", "", 200_000
	if _, err := New(&cfg, Place{T: tp, Node: n}); err == nil || !strings.Contains(err.Error(), "pfc thresholds of eth1") {
		t.Errorf("X_on above the slow port's X_off: %v", err)
	}
	cfg.FC, cfg.Queueing, cfg.BFCQueues, cfg.BFCAssign = "bfc", "", 65, "fifo"
	_, err := New(&cfg, Place{T: tp, Node: n})
	if err == nil || !strings.Contains(err.Error(), "65 queues") || !strings.Contains(err.Error(), `bfc_assign "fifo"`) {
		t.Errorf("bfc with 65 queues and assignment fifo: %v", err)
	}
	if u := errors.Unwrap(err); u == nil {
		t.Errorf("%v wraps nothing", err)
	}
}

// Congestion isolation over PFC: priorities 3 and 2 lossless; a frame
// of a flow isolated at its egress leaves by queue 2 retagged priority
// 2, one of a flow that is not leaves by queue 3 retagged 3 (though it
// came isolated by the node before), charged to the priority it came
// with; the congested queue waits for a flow's earlier frames; a
// server's own kernel frames are PFC's; bad settings are refused one by
// one.
func TestCI(t *testing.T) {
	for _, fc := range []string{"ici", "ci"} {
		c, p := node(t, "s0.0", fc)
		c.CIDetect = 3000
		s, err := New(c, p)
		if err != nil {
			t.Fatal(err)
		}
		ci := s.(*CI)
		if ci.Name() != fc || ci.cfg.Coordinated != (fc == "ici") || ci.PFC.th.Lossless != 1<<3|1<<2 {
			t.Errorf("%s: name %s, coordinated %v, lossless %#x", fc, ci.Name(), ci.cfg.Coordinated, ci.PFC.th.Lossless)
		}
		d := newDatapath(t, s, 4, nil)
		s.Bind(d, make([]Port, 4))
		for port := range 4 {
			d.eg[port].SetHooks(s.Hooks(port))
		}
		send := func(src, in int, pcp uint8) (q int, got uint8, meta uint64) {
			f := dataFrame(src, 0, in)
			f.PCP, f.H.PCP = pcp, pcp
			header.SetPCP(f.B, pcp)
			f.H.SPort, f.H.DPort, f.H.Proto = 20000, 5999, 17
			q, meta = s.Classify(f)
			d.eg[0].Enqueue(q, queues.Packet{Len: 1000, Meta: meta}, d.now)
			return q, f.B[14] >> 5, meta
		}
		// A frame that arrived as priority 2 from a node that isolated it,
		// its flow not isolated here: back to 3, charged to 2.
		if q, pcp, meta := send(1, 1, signaling.PCPCongested); q != 3 || pcp != 3 {
			t.Errorf("%s: unisolated frame in queue %d with priority %d", fc, q, pcp)
		} else if in, prio, ok := signaling.MetaIngress(meta); !ok || in != 1 || prio != signaling.PCPCongested {
			t.Errorf("%s: charged to %d/%d (%v), want port 1, priority 2", fc, in, prio, ok)
		}
		for d.eg[0].QueueBytes(3) < 3000 {
			send(1, 1, signaling.PCPData)
		}
		send(2, 2, signaling.PCPData) // flow of h2: isolated, its first frame in the CQ at once
		if q, pcp, _ := send(2, 2, signaling.PCPData); q != 2 || pcp != 2 {
			t.Errorf("%s: isolated frame in queue %d with priority %d, want 2 and 2", fc, q, pcp)
		}
		// h1's flow meets the congested port too: isolated behind h2's
		// frame, and once that one has left, the congested queue waits
		// for h1's frames in the normal queue.
		if q, pcp, _ := send(1, 1, signaling.PCPData); q != 2 || pcp != 2 {
			t.Errorf("%s: h1's frame in queue %d with priority %d", fc, q, pcp)
		}
		for d.eg[0].QueueLen(2) > 1 { // h2's two frames out
			d.eg[0].Dequeue(d.now)
		}
		if !d.eg[0].Gated(2) || d.eg[0].QueueLen(3) == 0 {
			t.Errorf("%s: congested queue shut %v with %d of h1's frames in the normal queue, %d in the congested one", fc, d.eg[0].Gated(2), d.eg[0].QueueLen(3), d.eg[0].QueueLen(2))
		}
		if d.emitted != 2 {
			t.Errorf("%s: %d isolations sent upstream, want one per flow", fc, d.emitted)
		}
		m := map[string]uint64{}
		s.PortCounters(0, m)
		if m["ici_isolated"] != 2 || m["ici_entries"] != 2 {
			t.Errorf("%s: port 0 counters %v", fc, m)
		}
		if _, ok := s.Hooks(0).(queues.Marker); !ok {
			t.Errorf("%s: port hooks do not decide marks", fc)
		}
	}
	// A server's own kernel frames are classified by PFC alone.
	c, p := node(t, "h1", "ici")
	s, err := New(c, p)
	if err != nil {
		t.Fatal(err)
	}
	d := newDatapath(t, s, 2, nil)
	s.Bind(d, make([]Port, 2))
	if q, _ := s.Classify(dataFrame(1, 0, -1)); q != signaling.PCPData {
		t.Errorf("own frame in queue %d", q)
	}
	for _, bad := range []struct {
		set  func(c *config.Node)
		want string
	}{
		{func(c *config.Node) { c.CITable = signaling.MaxICITable + 1 }, "ci_table"},
		{func(c *config.Node) { c.CIDetect = -1 }, "ci_detect_bytes"},
		{func(c *config.Node) { c.CIKmin, c.CIKmax = 5000, 4000 }, "ci_kmin_bytes"},
		{func(c *config.Node) { c.CIResidency = -1 }, "ci_residency"},
		{func(c *config.Node) { c.Queueing = QueueingPortFC }, "needs queueing priority"},
	} {
		c, p := node(t, "s0.0", "ici")
		bad.set(c)
		if _, err := New(c, p); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("want an error naming %s: %v", bad.want, err)
		}
	}
}

// DRR weights name the data queues of every layout in queue order, the
// HQ skipped: what each scheme's queue i is at a switch and a server of
// BCube(4,1) (docs/USAGE.md says the same). Weights that fit every
// port make the scheme; more than a port's data queues, or a weight on
// the strict relay queue, are one error that names the queues.
func TestDRRWeights(t *testing.T) {
	priority := "P0, P1, P2, P3, P4, P5, P7"
	for _, c := range []struct {
		fc, at, relay string
		names         string // the data queues, in order
	}{
		{"portfc", "s0.1", "", "A0, A1, A2, B"},
		{"portfc", "h6", "", "a0, a1, a2, b0, b1, b2, RQ"},
		{"portfc", "h6", RelayDRR, "a0, a1, a2, b0, b1, b2, RQ"},
		{"none", "s0.1", "", "A0, A1, A2, B"},
		{"pfc", "s0.1", "", priority},
		{"pfcstar", "h6", "", priority},
		{"ici", "s0.1", "", priority},
		{"ci", "h6", "", priority},
		{"bfc", "s0.1", "", "Q0..Q30 (31)"},
		{"sfq", "h6", "", "Q0..Q30 (31)"},
		{"ideal-fq", "s0.1", "", "Q0..Q62 (63)"},
	} {
		t.Run(c.fc+"/"+c.at+"/"+c.relay, func(t *testing.T) {
			cfg, p := node(t, c.at, c.fc)
			cfg.RelayQueue = c.relay
			s, err := New(cfg, p)
			if err != nil {
				t.Fatal(err)
			}
			qc := s.Egress()
			if got := dataQueueNames(qc); got != c.names {
				t.Fatalf("data queues %s, want %s", got, c.names)
			}
			data := qc.DataQueues()
			// A weight for every data queue, the strict one's 1: each
			// queue's quantum is its weight's.
			w := make([]int, len(data))
			for i, q := range data {
				w[i] = i + 2
				if slices.Contains(qc.Strict, q) {
					w[i] = 1
				}
			}
			cfg.DRRWeights = w
			if s, err = New(cfg, p); err != nil {
				t.Fatal(err)
			}
			wq, err := s.Egress().Weighted(w)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range data {
				if wq.Quantum[q] != w[i]*queues.DefaultQuantum {
					t.Errorf("data queue %d (%s): quantum %d, want %d", i, qc.Names[q], wq.Quantum[q], w[i]*queues.DefaultQuantum)
				}
			}
			// One weight too many.
			cfg.DRRWeights = append(w, 1)
			_, err = New(cfg, p)
			want := "data queues; under fc " + c.fc + " a "
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), c.names) {
				t.Errorf("%d weights: %v, want an error naming %s", len(w)+1, err, c.names)
			}
		})
	}
	// The relay queue, strict, takes no weight but 1.
	cfg, p := node(t, "h6", "portfc")
	cfg.DRRWeights = []int{1, 1, 1, 1, 1, 1, 2}
	_, err := New(cfg, p)
	if want := "config for h6: drr_weights 1,1,1,1,1,1,2: weight 2 of queue RQ: a strict queue"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v, want %q", err, want)
	}
	cfg.RelayQueue = RelayDRR
	if _, err := New(cfg, p); err != nil {
		t.Errorf("relay queue drr: %v", err)
	}
	// A switch has fewer data queues than a server under PortFC.
	cfg, p = node(t, "s1.2", "portfc")
	cfg.DRRWeights = []int{1, 1, 1, 1, 3}
	_, err = New(cfg, p)
	if want := "config for s1.2: drr_weights 1,1,1,1,3: 5 weights for 4 data queues; under fc portfc a switch port's data queues are A0, A1, A2, B (the HQ takes no weight)"; err == nil || err.Error() != want {
		t.Errorf("%v\nwant %s", err, want)
	}
}
