// Package fabrictest builds a whole BCube fabric in one process, without
// privileges: one dataplane.Engine per node running the real swd and hostd
// logic, cabled with in-memory pipes that carry each frame's time in the model
// as the lab's cables in memory do, served on virtual time by a
// dataplane.Sim: the engines step as punctual workers would, at every
// deadline, however slow or busy the machine, and a run is deterministic.
// Each server's application port ends in an App the test drives in place
// of the kernel's bc0. Time passes only while the test runs the fabric
// (RunFor, RunUntil, App.Recv); between runs the test may use the nodes'
// control calls (hostd's StartFlow, Flows, the engines' Snapshot), which
// run at once.
package fabrictest

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/internal/testkit/pipe"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/swd"
	"github.com/bcfab/bcfab/xdp"
)

const (
	frameSize = 2048
	// ring is every port's ring size: 256 frames are 31 ms of a 100 Mb/s
	// link (sized when the nodes ran on real time and could be
	// descheduled; on virtual time a node is served at once).
	ring = 256
	// appFrames is the kernel side's memory: its fill ring and frames to
	// send.
	appFrames = 2 * ring
)

// Fabric is an in-process BCube on virtual time.
type Fabric struct {
	T     bcube.Topology
	Apps  []*App
	Hosts []*dataplane.Engine
	Sws   []*dataplane.Engine // indexed level*n^k + w
	// HostLogic and SwitchLogic are the handlers, for inspection.
	HostLogic   []*hostd.Host
	SwitchLogic []*swd.Switch
	// Cables are the fabric ports' pipe ends (receive-ring drops).
	Cables []*pipe.End
	// Sim serves the engines; its clock is the fabric's time.
	Sim *dataplane.Sim
}

// App is the kernel side of a server's bc0 in a Fabric.
type App struct {
	End  *pipe.End
	mem  []byte
	free []uint64
	sim  *dataplane.Sim
}

type node struct {
	mem   []byte
	ports []dataplane.PortSpec
	fc    scheme.Scheme
}

func newNode(nports, extra int) *node {
	frames := nports*2*ring + extra
	return &node{mem: make([]byte, frames*frameSize), ports: make([]dataplane.PortSpec, nports)}
}

func (n *node) frames() int { return len(n.mem) / frameSize }

// Options of an in-process fabric.
type Options struct {
	RateBps uint64 // every fabric port's link rate (0: unshaped)
	// Rates, if set, is each level's link rate in place of RateBps (a
	// Rail-only fabric).
	Rates  []uint64
	Policy bcube.Policy
	// FC makes every node's flow-control scheme (nil: none, with
	// PortFC's queues): NoFC, PortFC, PFC, BFC.
	FC MakeFC
	// Watchdog of every node (zero: off); its reports go to Log.
	Watchdog config.Watchdog
	Log      *slog.Logger
	Buffer   int // each node's shared buffer, default 1 MiB
	// SwitchFrames is each switch's frames beyond those its cables'
	// rings hold (default 512, as a server's): what its queues and delay
	// lines can hold.
	SwitchFrames int
	// Delay is every fabric cable's propagation delay, each way (zero:
	// none, a frame arrives as its last bit leaves).
	Delay time.Duration
	// ECN is the switches' egress marking (zero: none).
	ECN queues.ECNConfig
	// INT has every port stamp HPCC's INT records into the data packets
	// that carry the shim (dataplane.Options.INT), as a lab under cc
	// hpcc does.
	INT bool
	// Lose, if set, is asked about every frame on every fabric cable;
	// true loses it (a faulty link). It runs on the goroutine running
	// the fabric, in a deterministic order.
	Lose func(frame []byte) bool
}

// MakeFC makes the flow-control scheme of a fabric's node at place p:
// server p.Node.Index, or switch number i in the order of SwitchLogic.
type MakeFC func(p scheme.Place, i int) scheme.Scheme

// NoFC is no flow control, with PortFC's queues or, with priority, one
// per 802.1Q priority.
func NoFC(priority bool) MakeFC {
	return func(p scheme.Place, _ int) scheme.Scheme { return scheme.NewNone(p, priority, false) }
}

// PortFC runs PortFC with th on every node; relayDRR serves servers'
// relay queues in the round robin with a and b (scheme.RelayDRR), which
// guards them, as hostd does.
func PortFC(th signaling.Thresholds, relayDRR bool) MakeFC {
	return func(p scheme.Place, _ int) scheme.Scheme { return scheme.NewPortFC(p, th, relayDRR) }
}

// PFC runs PFC with th on every node (PFC* with star), counting pause
// times of unshaped ports at rateBps.
func PFC(th signaling.PFCThresholds, rateBps uint64, star bool) MakeFC {
	return func(p scheme.Place, _ int) scheme.Scheme { return scheme.NewPFC(p, th, rateBps, star) }
}

// CI runs congestion isolation with cfg over PFC with th on every node
// (cfg.Coordinated: ICI), counting pause times of unshaped ports at
// rateBps.
func CI(th signaling.PFCThresholds, rateBps uint64, cfg signaling.ICIConfig) MakeFC {
	return func(p scheme.Place, _ int) scheme.Scheme { return scheme.NewCI(p, th, rateBps, cfg) }
}

// BFC runs BFC with cfg on every node, each seeded apart: server i with
// cfg.Seed + i, switch i with cfg.Seed + 1000 + i.
func BFC(cfg signaling.BFCConfig) MakeFC {
	return func(p scheme.Place, i int) scheme.Scheme {
		c := cfg
		c.Seed += uint64(i)
		if p.Node.Switch {
			c.Seed += 1000
		}
		return scheme.NewBFC(p, c)
	}
}

// New builds t with o, at time 0.
func New(t bcube.Topology, o Options) (*Fabric, error) {
	rateBps, policy := o.RateBps, o.Policy
	if o.FC == nil {
		o.FC = NoFC(false)
	}
	if o.Buffer == 0 {
		o.Buffer = 1 << 20
	}
	if o.SwitchFrames == 0 {
		o.SwitchFrames = 512
	}
	f := &Fabric{T: t, Sim: dataplane.NewSim()}
	hosts := make([]*node, t.Servers())
	sws := make([]*node, t.Switches())
	for i := range hosts {
		hosts[i] = newNode(t.Levels()+1, 512)
		hosts[i].fc = o.FC(scheme.Place{T: t, Node: bcube.Node{Index: i}, Policy: policy}, i)
	}
	for i := range sws {
		sws[i] = newNode(t.N(), o.SwitchFrames)
		l, w := i/t.SwitchesPerLevel(), i%t.SwitchesPerLevel()
		sws[i].fc = o.FC(scheme.Place{T: t, Node: bcube.Node{Switch: true, Level: l, Index: w}, Policy: policy}, i)
	}
	for i := 0; i < t.Servers(); i++ {
		for l := 0; l < t.Levels(); l++ {
			w, p := t.SwitchOf(i, l)
			s := sws[l*t.SwitchesPerLevel()+w]
			he, se := pipe.New(hosts[i].mem, s.mem, ring)
			he.Pipe().Lose = o.Lose
			he.Pipe().Timed = true
			f.Cables = append(f.Cables, he, se)
			rate := rateBps
			if l < len(o.Rates) {
				rate = o.Rates[l]
			}
			hosts[i].ports[l] = dataplane.PortSpec{Name: bcube.HostPort(l), IO: he, RateBps: rate, Queues: hosts[i].fc.Egress(), Delay: o.Delay}
			sq := s.fc.Egress()
			sq.ECN = o.ECN
			s.ports[p] = dataplane.PortSpec{Name: bcube.SwitchPort(p), IO: se, RateBps: rate, Queues: sq, Delay: o.Delay}
		}
		app := &App{mem: make([]byte, appFrames*frameSize), sim: f.Sim}
		for a := 0; a < appFrames; a++ {
			app.free = append(app.free, uint64(a*frameSize))
		}
		ae, he := pipe.New(app.mem, hosts[i].mem, ring)
		app.End = ae
		app.End.Fill(app.free[len(app.free)-ring:])
		app.free = app.free[:len(app.free)-ring]
		hosts[i].ports[t.Levels()] = dataplane.PortSpec{Name: bcube.AppPeerIf, IO: he}
		f.Apps = append(f.Apps, app)
	}
	start := func(n *node, h dataplane.BoundHandler) (*dataplane.Engine, error) {
		e, err := dataplane.NewEngine(dataplane.Memory{Bytes: n.mem, FrameSize: frameSize, NumFrames: n.frames(), RingSize: ring}, n.ports, h,
			dataplane.Options{BufferBytes: o.Buffer, Watchdog: o.Watchdog, Log: o.Log, INT: o.INT})
		if err != nil {
			return nil, err
		}
		h.Bind(e)
		if err := f.Sim.Add(e); err != nil {
			return nil, err
		}
		return e, nil
	}
	for i, n := range hosts {
		hl := hostd.NewHost(t, i, policy, n.fc)
		f.HostLogic = append(f.HostLogic, hl)
		e, err := start(n, hl)
		if err != nil {
			return nil, err
		}
		f.Hosts = append(f.Hosts, e)
	}
	for l := 0; l < t.Levels(); l++ {
		for w := 0; w < t.SwitchesPerLevel(); w++ {
			n := sws[l*t.SwitchesPerLevel()+w]
			sl := swd.NewSwitch(t, l, w, n.fc)
			f.SwitchLogic = append(f.SwitchLogic, sl)
			e, err := start(n, sl)
			if err != nil {
				f.Close()
				return nil, err
			}
			f.Sws = append(f.Sws, e)
		}
	}
	return f, nil
}

// Close ends the fabric. Nothing runs it between the test's calls, so
// there is nothing to stop: it is there for the tests' symmetry with a
// lab, and always returns nil.
func (f *Fabric) Close() error { return nil }

// Now is the fabric's (virtual) time since New.
func (f *Fabric) Now() time.Duration { return time.Duration(f.Sim.Now()) }

// RunFor runs the fabric for d of virtual time.
func (f *Fabric) RunFor(d time.Duration) { f.Sim.RunFor(d) }

// RunUntil runs the fabric until done returns true, checked after every
// instant of virtual time (so it should be cheap), or for at most limit;
// it reports whether done returned true.
func (f *Fabric) RunUntil(limit time.Duration, done func() bool) bool {
	return f.Sim.RunUntilDone(f.Sim.Now()+int64(limit), done)
}

// Poll runs the fabric in steps of every until done returns true, or for
// at most limit: for conditions too costly to check at every instant
// (snapshots of every node). It reports whether done returned true.
func (f *Fabric) Poll(every, limit time.Duration, done func() bool) bool {
	end := f.Now() + limit
	for {
		if done() {
			return true
		}
		if f.Now() >= end {
			return false
		}
		f.RunFor(min(every, end-f.Now()))
	}
}

// Send transmits one frame from the app (the kernel side of bc0): the
// server's engine receives it when the fabric next runs.
func (a *App) Send(frame []byte) error {
	a.reclaim()
	if len(a.free) == 0 {
		return fmt.Errorf("fabrictest: app out of frames")
	}
	addr := a.free[len(a.free)-1]
	a.free = a.free[:len(a.free)-1]
	copy(a.mem[addr:], frame)
	if a.End.Transmit([]xdp.Desc{{Addr: addr, Len: uint32(len(frame))}}) != 1 {
		return fmt.Errorf("fabrictest: app tx ring full")
	}
	return a.End.Kick()
}

func (a *App) reclaim() {
	var buf [64]uint64
	for n := a.End.Complete(buf[:]); n > 0; n = a.End.Complete(buf[:]) {
		a.free = append(a.free, buf[:n]...)
	}
}

// Recv returns the next frame delivered to the app, running the fabric
// until one is, or nil after timeout of virtual time.
func (a *App) Recv(timeout time.Duration) []byte {
	var b []byte
	take := func() bool {
		var d [1]xdp.Desc
		if a.End.Receive(d[:]) != 1 {
			return false
		}
		b = append([]byte(nil), a.mem[d[0].Addr:d[0].Addr+uint64(d[0].Len)]...)
		a.End.Fill([]uint64{d[0].Addr &^ (frameSize - 1)})
		return true
	}
	if !take() {
		a.sim.RunUntilDone(a.sim.Now()+int64(timeout), take)
	}
	return b
}

// Health is how well the fabric's nodes kept up with their links since
// New: the in-process counterpart of a lab's emulation health. On real
// time (workers sharing the machine's threads, as this package ran until
// it moved to virtual time: docs/TESTING.md) a node not scheduled in time
// overflowed a cable's receive ring or left its link idle with frames
// waiting, and such a run measured the machine, not the schemes. On the
// Sim's virtual time no node is ever late, so an unhealthy run is the
// nodes' own doing: a receive ring overflowing when a node is served at
// every instant it has work, or a port losing link time with frames
// waiting, is a fault of the datapath or of the driver, and fails.
type Health struct {
	Wall      time.Duration // the run's virtual time
	RingDrops uint64        // frames the cables' receive rings dropped
	Lost      time.Duration // link time the worst port lost (shaper lag)
	WorstPort string
	Steps     uint64 // engine steps the run took
}

// Valid reports whether the run kept up with its links: no cable's
// receive ring dropped a frame and no port lost link time beyond its
// shaper's catch-up. On real time a lab allows a port a share of lost
// link time (lab.DefaultMaxLostShare, lab.DefaultMinLost: its nodes
// share the machine); on the Sim's virtual time, where every engine is
// served at its deadline, a punctual node loses none, so any loss fails.
func (h Health) Valid() bool { return h.RingDrops == 0 && h.Lost == 0 }

func (h Health) String() string {
	return fmt.Sprintf("%d receive-ring drops, %v of link time lost at most (%s), in %v of virtual time, %d engine steps",
		h.RingDrops, h.Lost, h.WorstPort, h.Wall.Round(time.Millisecond), h.Steps)
}

// Health reports the run's health so far.
func (f *Fabric) Health() Health {
	h := Health{Wall: f.Now(), Steps: f.Sim.Steps()}
	for _, c := range f.Cables {
		h.RingDrops += c.Drops()
	}
	for i, e := range append(append([]*dataplane.Engine{}, f.Hosts...), f.Sws...) {
		ps, _ := e.Snapshot()
		for _, p := range ps {
			if l := time.Duration(p.LostLinkNs); l > h.Lost {
				h.Lost = l
				h.WorstPort = fmt.Sprintf("%d/%s", i, p.Name)
			}
		}
	}
	return h
}
