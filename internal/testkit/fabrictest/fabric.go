// Package fabrictest builds a whole BCube fabric in one process, without
// privileges: one dataplane.Engine per node running the real swd and hostd
// logic, cabled with in-memory pipes, the engines shared by a few
// dataplane.Workers as a lab's worker processes share them. Each server's
// application port ends in an App the test drives in place of the
// kernel's bc0.
package fabrictest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/internal/testkit/pipe"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/swd"
	"github.com/bcfab/bcfab/xdp"
)

const (
	frameSize = 2048
	// ring is every port's ring size: 256 frames are 31 ms of a 100 Mb/s
	// link, so a node descheduled for a while on a loaded machine does
	// not overflow its receive ring.
	ring = 256
	// appFrames is the kernel side's memory: its fill ring and frames to
	// send.
	appFrames = 2 * ring
)

// Fabric is a running in-process BCube.
type Fabric struct {
	T     bcube.Topology
	Apps  []*App
	Hosts []*dataplane.Engine
	Sws   []*dataplane.Engine // indexed level*n^k + w
	// HostLogic and SwitchLogic are the handlers, for inspection.
	HostLogic   []*hostd.Host
	SwitchLogic []*swd.Switch
	// Cables are the fabric ports' pipe ends (receive-ring drops).
	Cables  []*pipe.End
	Workers []*dataplane.Worker
	stop    context.CancelFunc
	wg      sync.WaitGroup
	errs    chan error
	started time.Time
}

// App is the kernel side of a server's bc0 in a Fabric.
type App struct {
	End     *pipe.End
	mem     []byte
	arrived chan struct{}
	free    []uint64
}

type node struct {
	mem   []byte
	ports []dataplane.PortSpec
	fc    scheme.Scheme
}

func newNode(nports int) *node {
	frames := nports*2*ring + 512
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
	// Lose, if set, is asked about every frame on every fabric cable;
	// true loses it (a faulty link).
	Lose func(frame []byte) bool
	// Workers is the number of workers the nodes are dealt to in turn
	// (default 2, so that cables join engines of one worker and of two).
	Workers int
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

// New builds t with o and starts it.
func New(t bcube.Topology, o Options) (*Fabric, error) {
	rateBps, policy := o.RateBps, o.Policy
	if o.FC == nil {
		o.FC = NoFC(false)
	}
	if o.Buffer == 0 {
		o.Buffer = 1 << 20
	}
	f := &Fabric{T: t, errs: make(chan error, t.Servers()+t.Switches())}
	hosts := make([]*node, t.Servers())
	sws := make([]*node, t.Switches())
	for i := range hosts {
		hosts[i] = newNode(t.Levels() + 1)
		hosts[i].fc = o.FC(scheme.Place{T: t, Node: bcube.Node{Index: i}, Policy: policy}, i)
	}
	for i := range sws {
		sws[i] = newNode(t.N())
		l, w := i/t.SwitchesPerLevel(), i%t.SwitchesPerLevel()
		sws[i].fc = o.FC(scheme.Place{T: t, Node: bcube.Node{Switch: true, Level: l, Index: w}, Policy: policy}, i)
	}
	for i := 0; i < t.Servers(); i++ {
		for l := 0; l < t.Levels(); l++ {
			w, p := t.SwitchOf(i, l)
			s := sws[l*t.SwitchesPerLevel()+w]
			he, se := pipe.New(hosts[i].mem, s.mem, ring)
			he.Pipe().Lose = o.Lose
			f.Cables = append(f.Cables, he, se)
			rate := rateBps
			if l < len(o.Rates) {
				rate = o.Rates[l]
			}
			hosts[i].ports[l] = dataplane.PortSpec{Name: bcube.HostPort(l), IO: he, RateBps: rate, Queues: hosts[i].fc.Egress()}
			s.ports[p] = dataplane.PortSpec{Name: bcube.SwitchPort(p), IO: se, RateBps: rate, Queues: s.fc.Egress()}
		}
		app := &App{mem: make([]byte, appFrames*frameSize), arrived: make(chan struct{}, 1)}
		for a := 0; a < appFrames; a++ {
			app.free = append(app.free, uint64(a*frameSize))
		}
		ae, he := pipe.New(app.mem, hosts[i].mem, ring)
		ae.SetNotify(func() {
			select {
			case app.arrived <- struct{}{}:
			default:
			}
		})
		app.End = ae
		app.End.Fill(app.free[len(app.free)-ring:])
		app.free = app.free[:len(app.free)-ring]
		hosts[i].ports[t.Levels()] = dataplane.PortSpec{Name: bcube.AppPeerIf, IO: he}
		f.Apps = append(f.Apps, app)
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	for i := range o.Workers {
		w, err := dataplane.NewWorker(dataplane.WorkerOptions{Name: fmt.Sprintf("w%d", i)})
		if err != nil {
			f.Close()
			return nil, err
		}
		f.Workers = append(f.Workers, w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.stop = cancel
	nodes := 0
	start := func(n *node, h dataplane.BoundHandler) (*dataplane.Engine, error) {
		e, err := dataplane.NewEngine(dataplane.Memory{Bytes: n.mem, FrameSize: frameSize, NumFrames: n.frames(), RingSize: ring}, n.ports, h,
			dataplane.Options{BufferBytes: o.Buffer, Watchdog: o.Watchdog, Log: o.Log})
		if err != nil {
			return nil, err
		}
		h.Bind(e)
		if err := f.Workers[nodes%len(f.Workers)].Add(e); err != nil {
			return nil, err
		}
		nodes++
		return e, nil
	}
	for i, n := range hosts {
		hl := hostd.NewHost(t, i, policy, n.fc)
		f.HostLogic = append(f.HostLogic, hl)
		e, err := start(n, hl)
		if err != nil {
			f.Close()
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
	for _, w := range f.Workers {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			if err := w.Run(ctx); err != nil {
				f.errs <- err
			}
		}()
	}
	for _, e := range append(f.Hosts, f.Sws...) {
		<-e.Ready()
	}
	f.started = time.Now()
	return f, nil
}

// Close stops every worker and reports the first error any returned.
func (f *Fabric) Close() error {
	if f.stop != nil {
		f.stop()
	}
	f.wg.Wait()
	var err error
	select {
	case err = <-f.errs:
	default:
	}
	for _, w := range f.Workers {
		err = errors.Join(err, w.Close())
	}
	return err
}

// Send transmits one frame from the app (the kernel side of bc0).
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

// Recv returns the next frame delivered to the app, or nil after timeout.
func (a *App) Recv(timeout time.Duration) []byte {
	deadline := time.Now().Add(timeout)
	for {
		var d [1]xdp.Desc
		if a.End.Receive(d[:]) == 1 {
			b := append([]byte(nil), a.mem[d[0].Addr:d[0].Addr+uint64(d[0].Len)]...)
			a.End.Fill([]uint64{d[0].Addr &^ (frameSize - 1)})
			return b
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil
		}
		t := time.NewTimer(left)
		select {
		case <-a.arrived:
		case <-t.C:
		}
		t.Stop()
	}
}

// Health is how well the fabric's nodes kept up with their links since
// New: the in-process counterpart of a lab's emulation health. The
// fabric's engines share the test process's threads with everything else
// on the machine; a node not scheduled in time overflows a cable's
// receive ring or leaves its link idle with frames waiting, and a run in
// which that happened measures the machine, not the schemes.
type Health struct {
	Wall      time.Duration
	RingDrops uint64        // frames the cables' receive rings dropped
	Lost      time.Duration // link time the worst port lost (shaper lag)
	WorstPort string
	// WakeLate is how late the latest worker came back from a sleep at
	// worst (dataplane.WorkerStats.MaxWakeLateNs), LateWorker which.
	WakeLate   time.Duration
	LateWorker string
}

// Health limits: a port may lose 1% of the run's link time, and at least
// a few scheduler ticks, as a lab's run may (lab.DefaultMaxLostShare,
// lab.DefaultMinLost).
const (
	maxLostShare = 0.01
	minLost      = 10 * time.Millisecond
)

// Valid reports whether the run measured the fabric.
func (h Health) Valid() bool {
	return h.RingDrops == 0 && (h.Lost <= minLost || h.Lost.Seconds() <= maxLostShare*h.Wall.Seconds())
}

func (h Health) String() string {
	return fmt.Sprintf("%d receive-ring drops, %v of link time lost at most (%s), a worker woke %v late at most (%s), in %v",
		h.RingDrops, h.Lost, h.WorstPort, h.WakeLate, h.LateWorker, h.Wall.Round(time.Millisecond))
}

// Health reports the run's health so far.
func (f *Fabric) Health() Health {
	h := Health{Wall: time.Since(f.started)}
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
	for _, w := range f.Workers {
		st := w.Stats()
		if l := time.Duration(st.MaxWakeLateNs); l > h.WakeLate {
			h.WakeLate, h.LateWorker = l, fmt.Sprintf("%s, tid %d", st.Name, st.Tid)
		}
	}
	return h
}
