package swd

import (
	"context"
	"net"
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/fabric/fcplus"
	"github.com/bcfab/bcfab/fabric/topo"
	"github.com/bcfab/bcfab/internal/testkit/pipe"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/xdp"
)

// tableRig is one switch of a graph fabric on an engine whose clock runs
// but whose loop does not, as rig is for a BCube switch.
type tableRig struct {
	g    *topo.Graph
	node int
	s    *TableSwitch
	e    *dataplane.Engine
	v    dataplane.Verdict
}

// routesOf computes a fabric's routing as lab does at bring-up: ECMP,
// and under paths K shortest paths between the servers' ToRs.
func routesOf(tb testing.TB, g *topo.Graph, mode string) *config.Routes {
	r, _ := pathsOf(tb, g, mode)
	return r
}

// pathsOf is routesOf with the route set (nil under ECMP).
func pathsOf(tb testing.TB, g *topo.Graph, mode string) (*config.Routes, *topo.Routes) {
	tb.Helper()
	r := &config.Routes{Mode: mode, ECMP: topo.NewECMP(g)}
	if mode != config.RoutingPaths {
		return r, nil
	}
	var ends []int
	seen := map[int]bool{}
	for _, s := range g.Servers() {
		at, _ := g.Attachment(s)
		r.Ends = append(r.Ends, at.Node)
		if !seen[at.Node] {
			seen[at.Node] = true
			ends = append(ends, at.Node)
		}
	}
	rs := topo.NewRoutes(g, ends, 1, nil, func(f *topo.PathFinder, s, d int) []topo.Path {
		return f.Find(s, d, topo.PathOptions{K: 3, Seed: 1})
	})
	var err error
	if r.Tables, err = rs.Tables(g); err != nil {
		tb.Fatal(err)
	}
	return r, rs
}

func newTableRig(tb testing.TB, g *topo.Graph, name, fc string, r *config.Routes) *tableRig {
	tb.Helper()
	node, ok := g.Lookup(name)
	if !ok {
		tb.Fatalf("no node %s", name)
	}
	cfg := config.Node{Node: name, Control: "/x.sock", FC: fc, RateBps: 1e9, PFCXoff: 8000, PFCXon: 4000,
		Fabric: config.NewFabric(g, r, node)}
	cfg.SetDefaults()
	if _, _, err := cfg.Validate(); err != nil {
		tb.Fatal(err)
	}
	fcs, err := scheme.New(&cfg, scheme.Place{Node: bcube.Node{Switch: true}})
	if err != nil {
		tb.Fatal(err)
	}
	sw, err := NewTableSwitch(cfg.Fabric, fcs)
	if err != nil {
		tb.Fatal(err)
	}
	mem := make([]byte, rFrames*rFrame)
	var specs []dataplane.PortSpec
	for _, p := range cfg.Fabric.Ports {
		near, _ := pipe.New(mem, make([]byte, rRing*rFrame), rRing)
		specs = append(specs, dataplane.PortSpec{Name: p.Name, IO: near, Queues: fcs.Egress()})
	}
	e, err := dataplane.NewEngine(dataplane.Memory{Bytes: mem, FrameSize: rFrame, NumFrames: rFrames, RingSize: rRing},
		specs, sw, dataplane.Options{BufferBytes: 1 << 24})
	if err != nil {
		tb.Fatal(err)
	}
	sw.Bind(e)
	done := make(chan error)
	go func() { done <- e.Run(context.Background()) }()
	<-e.Ready()
	e.Stop()
	if err := <-done; err != nil {
		tb.Fatal(err)
	}
	return &tableRig{g: g, node: node, s: sw, e: e}
}

// frame is an RDMA data frame from server src to server dst.
func tableFrame(src, dst int, sport uint16) []byte {
	f := roce.Flow{SrcMAC: [6]byte(bcube.HostPortMAC(src, 0)), DstMAC: [6]byte{2, 0x21}, PCP: signaling.PCPData,
		SrcIP: bcube.ServerIP(src).As4(), DstIP: bcube.ServerIP(dst).As4(), SrcPort: sport, DestQP: 7}
	b := make([]byte, roce.DataFrameLen(roce.OpSendOnly, rPayload))
	roce.PutData(b, &f, &roce.Data{Opcode: roce.OpSendOnly, Payload: rPayload})
	return b
}

// handle hands b to the switch as received on port in and sends what it
// queues; it returns the verdict and the frame as it left.
func (r *tableRig) handle(tb testing.TB, in int, b []byte) (dataplane.Verdict, []byte) {
	addr, ok := r.e.Alloc()
	if !ok {
		tb.Fatal("no frame")
	}
	d := xdp.Desc{Addr: addr, Len: uint32(len(b))}
	copy(r.e.Frame(&d), b)
	r.v = dataplane.Verdict{}
	r.s.Handle(in, &d, &r.v)
	out := r.e.Frame(&d)
	if r.v.Port < 0 {
		fr := xdp.Desc{Addr: addr, Len: 64}
		r.e.Send(0, r.e.Egress(0).HQ(), &fr, 0, 0)
		r.e.Take(0, discard)
		return r.v, out
	}
	if !r.e.Send(r.v.Port, r.v.Queue, &d, r.v.L3, r.v.Meta) {
		tb.Fatalf("frame refused: %+v", r.v)
	}
	r.e.Take(r.v.Port, discard)
	return r.v, out
}

// hashOf is the flow hash the switch computes for the frame b.
func hashOf(b []byte) uint32 {
	var f header.Frame
	header.Parse(b, &f)
	tu := bcube.FiveTuple{Src: f.Src, Dst: f.Dst, Proto: f.Proto, SPort: f.SPort, DPort: f.DPort}
	return bcube.FlowHash(&tu)
}

// Every frame leaves where the graph's ECMP tables say for its flow's
// hash, with the MACs of the cable it leaves on, and many flows spread
// over every equal-cost uplink.
func TestTableSwitchECMP(t *testing.T) {
	g, err := topo.LeafSpine{Leaves: 4, Spines: 2, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	rt := routesOf(t, g, config.RoutingECMP)
	r := newTableRig(t, g, "leaf0", "none", rt)
	used := map[int]int{}
	for dst := 1; dst < 16; dst++ {
		for sport := uint16(49152); sport < 49152+16; sport++ {
			b := tableFrame(0, dst, sport)
			want := rt.ECMP.Port(r.node, dst, hashOf(b))
			v, out := r.handle(t, 0, b)
			if v.Port != want {
				t.Fatalf("h0 -> h%d sport %d: port %d, ECMP says %d", dst, sport, v.Port, want)
			}
			peer := r.g.Head(r.g.Out(r.node, want))
			eth := header.Ethernet(out)
			if got, w := eth.Dst(), config.FabricMAC(g, peer.Node, peer.Port); net.HardwareAddr(got).String() != w.String() {
				t.Fatalf("h0 -> h%d: dst MAC %v, want %v (%s)", dst, got, w, g.Nodes[peer.Node].Name)
			}
			if dst >= 4 {
				used[v.Port]++
			}
		}
	}
	if len(used) != 2 {
		t.Errorf("flows to other racks left by ports %v, want both uplinks (4 and 5)", used)
	}
	// Not a server of the fabric: no route. Back the way it came: hairpin.
	if v, _ := r.handle(t, 0, tableFrame(0, 16, 1)); v.Port >= 0 || v.Drop != dataplane.DropNoRoute {
		t.Errorf("to h16 of a 16-server fabric: %+v, want no_route", v)
	}
	if v, _ := r.handle(t, 1, tableFrame(0, 1, 1)); v.Port >= 0 || v.Drop != dataplane.DropHairpin {
		t.Errorf("to h1 in by h1's port: %+v, want hairpin", v)
	}
}

// Under paths, a frame between racks follows its pair's path for its
// hash from the source ToR to the destination's, and is delivered by
// ECMP there.
func TestTableSwitchPaths(t *testing.T) {
	g, err := topo.Expander{ToRs: 8, Degree: 3, Hosts: 2, Seed: 1}.Build()
	if err != nil {
		t.Fatal(err)
	}
	rt, rs := pathsOf(t, g, config.RoutingPaths)
	rigs := map[int]*tableRig{}
	for u := range g.Nodes {
		if g.Nodes[u].Kind == topo.Switch {
			rigs[u] = newTableRig(t, g, g.Nodes[u].Name, scheme.NamePFC, rt)
		}
	}
	for src := range 16 {
		for dst := range 16 {
			if src == dst {
				continue
			}
			b := tableFrame(src, dst, uint16(1000+src*16+dst))
			hash := hashOf(b)
			at, _ := g.Attachment(src)
			u, in, hops := at.Node, at.Port, 0
			var via []topo.Arc
			for g.Nodes[u].Kind == topo.Switch {
				v, _ := rigs[u].handle(t, in, b)
				if v.Port < 0 {
					t.Fatalf("h%d -> h%d: dropped at %s (%v)", src, dst, g.Nodes[u].Name, v.Drop)
				}
				via = append(via, g.Out(u, v.Port))
				next := g.Head(g.Out(u, v.Port))
				u, in = next.Node, next.Port
				if hops++; hops > 8 {
					t.Fatalf("h%d -> h%d: a loop", src, dst)
				}
			}
			if u != dst {
				t.Fatalf("h%d -> h%d: reached h%d", src, dst, u)
			}
			se, de := rt.Ends[src], rt.Ends[dst]
			if se == de {
				continue
			}
			paths := rs.Between(se, de)
			want := paths[topo.PathIndex(hash, len(paths))]
			got := topo.Path(via[:len(via)-1]) // ToR to ToR: the last arc is the delivery
			if g.PathString(got) != g.PathString(want) {
				t.Fatalf("h%d -> h%d: went %s, the path of its hash is %s", src, dst, g.PathString(got), g.PathString(want))
			}
		}
	}
}

// Forwarding by table allocates nothing per frame, under ECMP and paths
// and the schemes a graph fabric runs.
func TestTableSwitchZeroAllocs(t *testing.T) {
	g, err := topo.Expander{ToRs: 8, Degree: 3, Hosts: 2, Seed: 1}.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{config.RoutingECMP, config.RoutingPaths} {
		rt := routesOf(t, g, mode)
		for _, fc := range scheme.GraphNames() {
			t.Run(mode+"/"+fc, func(t *testing.T) {
				r := newTableRig(t, g, "tor0", fc, rt)
				b := tableFrame(0, 9, 4242)
				for range 10 {
					r.handle(t, 0, b)
				}
				if n := testing.AllocsPerRun(200, func() { r.handle(t, 0, b) }); n != 0 {
					t.Errorf("%v allocations per forwarded frame", n)
				}
			})
		}
	}
	// And with the priority rewrite: every frame from every fabric port
	// of every ToR of the loop fabric, the turns among them raised.
	t.Run("dfksp2/pfc/rewrite", func(t *testing.T) {
		fab, err := fcplus.Loop().Params.Build()
		if err != nil {
			t.Fatal(err)
		}
		rt := &config.Routes{Mode: config.RoutingECMP, ECMP: topo.NewECMP(fab.Graph), Lossless: 2}
		for _, pairs := range fab.Rewrites() {
			var rw [][2]int
			for _, p := range pairs {
				rw = append(rw, [2]int{p.In, p.Out})
			}
			rt.Rewrites = append(rt.Rewrites, rw)
		}
		r := newTableRig(t, fab.Graph, "tor0", "pfc", rt)
		var frames [][]byte
		for dst := 2; dst < 16; dst++ {
			frames = append(frames, tableFrame(dst%16, (dst+5)%16, uint16(dst)))
		}
		raised := 0
		for in := 2; in < 6; in++ {
			for _, b := range frames {
				if v, _ := r.handle(t, in, b); v.Queue == int(signaling.PCPData)+1 {
					raised++
				}
			}
		}
		if raised == 0 {
			t.Fatal("no frame took a turn: the rewrite is not exercised")
		}
		if n := testing.AllocsPerRun(50, func() {
			for in := 2; in < 6; in++ {
				for _, b := range frames {
					r.handle(t, in, b)
				}
			}
		}); n != 0 {
			t.Errorf("%v allocations per round of frames", n)
		}
	})
}

func BenchmarkTableSwitchForward(b *testing.B) {
	g, err := topo.FatTree{K: 4}.Build()
	if err != nil {
		b.Fatal(err)
	}
	r := newTableRig(b, g, "edge0.0", "pfc", routesOf(b, g, config.RoutingECMP))
	f := tableFrame(0, 15, 4242)
	b.ReportAllocs()
	for b.Loop() {
		r.handle(b, 0, f)
	}
}

// With two lossless priorities on an FC+ fabric routed by DF-KSP, every
// frame leaves each ToR on the priority its path assigns that arc
// (fcplus.Priorities): 3 for the first, 4 from the down-up turn on,
// rewritten by the switch matching (in port, out port).
func TestTableSwitchRewrite(t *testing.T) {
	sc := fcplus.Loop()
	fab, err := sc.Params.Build()
	if err != nil {
		t.Fatal(err)
	}
	g := fab.Graph
	rs, err := fab.Routes(fcplus.DFKSP2, fcplus.RouteOptions{K: 4, Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	rt := &config.Routes{Mode: config.RoutingPaths, ECMP: topo.NewECMP(g), Lossless: 2}
	if rt.Tables, err = rs.Tables(g); err != nil {
		t.Fatal(err)
	}
	for _, s := range g.Servers() {
		at, _ := g.Attachment(s)
		rt.Ends = append(rt.Ends, at.Node)
	}
	for _, pairs := range fab.Rewrites() {
		var rw [][2]int
		for _, p := range pairs {
			rw = append(rw, [2]int{p.In, p.Out})
		}
		rt.Rewrites = append(rt.Rewrites, rw)
	}
	rigs := map[int]*tableRig{}
	for _, u := range fab.ToRs() {
		rigs[u] = newTableRig(t, g, g.Nodes[u].Name, scheme.NamePFC, rt)
	}
	raised := 0
	for src := range g.Servers() {
		for dst := range g.Servers() {
			if rt.Ends[src] == rt.Ends[dst] {
				continue
			}
			b := tableFrame(src, dst, uint16(2000+src*64+dst))
			paths := rs.Between(rt.Ends[src], rt.Ends[dst])
			want := fab.Priorities(paths[topo.PathIndex(hashOf(b), len(paths))], 2)
			at, _ := g.Attachment(src)
			u, in := at.Node, at.Port
			for hop := 0; g.Nodes[u].Kind == topo.Switch; hop++ {
				v, out := rigs[u].handle(t, in, b)
				if v.Port < 0 {
					t.Fatalf("h%d -> h%d: dropped at %s", src, dst, g.Nodes[u].Name)
				}
				var f header.Frame
				header.Parse(out, &f)
				wantPCP := uint8(signaling.PCPData)
				if hop < len(want) {
					wantPCP += uint8(want[hop] - 1)
				} else {
					wantPCP += uint8(want[len(want)-1] - 1) // the delivery keeps the last
				}
				if f.PCP != wantPCP || v.Queue != int(wantPCP) {
					t.Fatalf("h%d -> h%d at %s: PCP %d queue %d, want %d", src, dst, g.Nodes[u].Name, f.PCP, v.Queue, wantPCP)
				}
				if f.PCP != signaling.PCPData && hop > 0 {
					raised++
				}
				b = append([]byte(nil), out...)
				next := g.Head(g.Out(u, v.Port))
				u, in = next.Node, next.Port
			}
		}
	}
	if raised == 0 {
		t.Error("no frame was raised to the second priority: the test did not exercise a turn")
	}
}
