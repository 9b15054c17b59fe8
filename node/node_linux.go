package node

// A node's bring-up, in order; each step is undone on failure and when the
// node stops:
//
//  1. inside the node's network namespace: one UMEM for the node (frames
//     shared by all its ports; its socket is the first port's);
//  2. still there: per port, load the XDP
//     program, configure its injected loss (fabric ports:
//     Config.PortImpairment), attach it to the interface, bind an AF_XDP socket
//     sharing the UMEM, register the socket in the program's XSK map, open
//     the port's packet socket for captures; a port whose cable is patched
//     (Config.Patches, on a worker with a patch panel) plugs into its cable
//     too, which then carries its frames, its impairment and copies for
//     captures (the program only passes those to the taps); then the
//     node's own setup (hostd: bc0) and the namespace's packet-socket
//     table, which the capture watcher reads;
//  3. the engine, the node's handler bound to it;
//  4. the control socket (HTTP on a unix socket): /healthz, /stats, /link
//     and the node's own routes;
//  5. the engine joins its worker, which starts it; the capture watcher
//     starts.
//
// Stop undoes it in reverse: the engine leaves its worker first, so
// nothing touches a socket being closed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/bcfab/bcfab/bpf"
	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/node/patch"
	"github.com/bcfab/bcfab/xdp"
)

// Running is a node brought up on a worker.
type Running struct {
	n       *Spec
	w       *dataplane.Worker
	worker  string // the worker's name in stats ("": a daemon of its own)
	umem    *xdp.UMEM
	ports   []*boundPort
	links   *impairments
	eng     *dataplane.Engine
	xdp     *bpf.Shared // the XDP program every port of the node attaches
	srv     *http.Server
	taps    *os.File      // the namespace's /proc/net/packet
	copier  *patch.Copier // the panel's, which writes the capture copies of patched ports (nil: no panel)
	started time.Time
	added   bool // the engine is on the worker
	stopTap context.CancelFunc
	tapDone chan struct{}
	stopped bool
}

type boundPort struct {
	spec    Port
	ifindex int
	prog    *bpf.Program
	sock    *xdp.Socket
	tap     *PacketTX
	mode    bpf.Mode
	// patch is the port's end of its cable when it is patched (nil: the
	// socket carries its frames); cfg is its program's last config,
	// under mu, as captures and POST /link both change it.
	patch *patch.End
	mu    sync.Mutex
	cfg   bpf.Config
}

// Start brings n up inside its namespace (Config.Netns) and puts its
// engine on w, named worker in the node's stats ("" for a daemon that
// hosts only this node). The engine starts once w runs. On error nothing
// of the node is left.
func Start(n *Spec, w *dataplane.Worker, worker string) (r *Running, err error) {
	return StartPatched(n, w, worker, nil)
}

// StartPatched is Start on a worker whose nodes' patched cables
// (Config.Patches) plug into panel; with a nil panel every port uses its
// veth.
func StartPatched(n *Spec, w *dataplane.Worker, worker string, panel *patch.Panel) (r *Running, err error) {
	cfg := n.Config
	mode, err := bpf.ParseMode(cfg.XDPMode)
	if err != nil {
		return nil, err
	}
	frames := cfg.FramesPerPort * len(n.Ports)
	r = &Running{n: n, w: w, worker: worker, links: &impairments{}, started: time.Now()}
	opts := dataplane.Options{BufferBytes: cfg.BufferBytes, Watchdog: cfg.Watchdog(), Log: n.Log, ProbeEvery: cfg.ProbeEvery(), ModelRTT: cfg.SteerRTT(), INT: cfg.INT()}
	if panel != nil {
		r.copier = panel.Copier()
		opts.Mark = r.copier.Mark
	}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("%s %s: %w", n.Kind, cfg.Node, err), r.close())
			r = nil
		}
	}()
	var specs []dataplane.PortSpec
	err = inNetns(cfg.Netns, func() error {
		var err error
		// One program for all the node's ports: the kernel's XDP
		// dispatcher, which waits for an RCU grace period under the
		// RTNL lock at every change, then changes once per node.
		if r.xdp, err = bpf.LoadShared(); err != nil {
			return err
		}
		// The UMEM's own socket becomes the first port's: it must be
		// created in the namespace, where its bind finds the interface.
		r.umem, err = xdp.NewUMEM(xdp.UMEMConfig{
			NumFrames: frames, FrameSize: cfg.FrameSize,
			FillSize: cfg.RingSize, CompletionSize: cfg.RingSize,
		})
		if err != nil {
			return err
		}
		for _, p := range n.Ports {
			xc := bpf.Config{}
			cable := ""
			if fabricPort(p.Ifname) {
				loss, down := cfg.PortImpairment(p.Ifname)
				xc.LossPPM, xc.Down = uint32(loss), down
				if panel != nil {
					cable = cfg.PatchCable(p.Ifname)
				}
			}
			bp, err := bindPort(r.xdp, r.umem, p, mode, cfg.RingSize, xc, cable != "")
			if err != nil {
				return fmt.Errorf("port %s: %w", p.Ifname, err)
			}
			r.ports = append(r.ports, bp)
			spec := dataplane.PortSpec{Name: p.Ifname, IO: bp.sock, Tap: bp.tap, RateBps: p.RateBps, Delay: p.Delay, CapBytes: p.CapBytes, Queues: p.Queues,
				MAC: p.MAC, PeerMAC: p.PeerMAC, MaxDelay: p.MaxDelay}
			if cable != "" {
				if bp.patch, err = panel.Plug(cable, r.umem.Bytes(), r.umem.FrameSize(), cfg.RingSize); err != nil {
					return fmt.Errorf("port %s: %w", p.Ifname, err)
				}
				bp.patch.SetImpairment(xc.LossPPM, xc.Down)
				bp.patch.SetMirror(bp.tap)
				// The cable carries the frames and writes the copies
				// captures see; the engine transmits as if uncaptured.
				spec.IO, spec.Tap = bp.patch, nil
			}
			r.links.add(p.Ifname, xc, bp.setConfig)
			specs = append(specs, spec)
			n.Log.Debug("port up", "if", p.Ifname, "xdp", bp.mode.String(), "rate_bps", p.RateBps, "patch", cable)
		}
		if n.Setup != nil {
			if err := n.Setup(); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
		}
		r.taps, err = openPacketTable()
		return err
	})
	if err != nil {
		return r, err
	}
	r.eng, err = dataplane.NewEngine(dataplane.Memory{Bytes: r.umem.Bytes(), FrameSize: r.umem.FrameSize(), NumFrames: r.umem.NumFrames(), RingSize: cfg.RingSize},
		specs, n.Handler, opts)
	if err != nil {
		return r, err
	}
	n.Handler.Bind(r.eng)
	if r.srv, err = r.serve(); err != nil {
		return r, err
	}
	if err = w.Add(r.eng); err != nil {
		return r, err
	}
	r.added = true
	if cfg.ProbeAtStart {
		r.eng.StartProbes()
	}
	ifindexes := make([]int, len(r.ports))
	for i, bp := range r.ports {
		ifindexes[i] = bp.ifindex
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.stopTap, r.tapDone = cancel, make(chan struct{})
	go func() {
		defer close(r.tapDone)
		watchTaps(ctx, r.setTapped, r.taps, ifindexes, TapPoll)
	}()
	n.Log.Info("up", "node", cfg.Node, "ports", len(r.ports), "frames", frames, "xdp", r.ports[0].mode.String(),
		"control", cfg.Control, "loss_ppm", cfg.LossPPM, "worker", worker)
	return r, nil
}

// Engine is the node's engine.
func (r *Running) Engine() *dataplane.Engine { return r.eng }

// Spec is what the node's builder made.
func (r *Running) Spec() *Spec { return r.n }

// Started is when the node started.
func (r *Running) Started() time.Time { return r.started }

// Stop takes the node off its worker and closes everything it holds.
func (r *Running) Stop() error {
	if r.stopped {
		return nil
	}
	r.stopped = true
	err := r.close()
	r.n.Log.Info("down", "node", r.n.Config.Node, "err", err)
	return err
}

// close undoes what Start did, in reverse.
func (r *Running) close() error {
	var errs []error
	if r.stopTap != nil {
		r.stopTap()
		<-r.tapDone
	}
	if r.added {
		errs = append(errs, r.w.Remove(r.eng))
	}
	if r.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		errs = append(errs, r.srv.Shutdown(ctx))
		cancel()
		os.Remove(r.n.Config.Control)
	}
	if r.taps != nil {
		errs = append(errs, r.taps.Close())
	}
	if r.n.Teardown != nil {
		errs = append(errs, r.n.Teardown())
	}
	for i := len(r.ports) - 1; i >= 0; i-- {
		errs = append(errs, r.ports[i].close())
	}
	if r.xdp != nil {
		errs = append(errs, r.xdp.Close())
	}
	if r.umem != nil {
		errs = append(errs, r.umem.Close())
	}
	return errors.Join(errs...)
}

// bindPort brings up port p with its slot of the node's XDP program
// configured xc (and as patched) before it is attached, so no frame passes
// unimpaired.
func bindPort(prog *bpf.Shared, umem *xdp.UMEM, p Port, mode bpf.Mode, ring int, xc bpf.Config, patched bool) (bp *boundPort, err error) {
	ifi, err := net.InterfaceByName(p.Ifname)
	if err != nil {
		return nil, fmt.Errorf("interface: %w", err)
	}
	xc.Patched = patched
	bp = &boundPort{spec: p, ifindex: ifi.Index, cfg: xc}
	defer func() {
		if err != nil {
			err = errors.Join(err, bp.close())
		}
	}()
	if patched {
		// The copies a captured port passes to the stack end there:
		// strict reverse-path filtering drops them, as their sources
		// are reached through other interfaces (a server's bc0), so a
		// server's kernel never takes a frame addressed to it twice.
		// (/proc/sys/net is the calling thread's namespace's.)
		if err = os.WriteFile("/proc/sys/net/ipv4/conf/"+p.Ifname+"/rp_filter", []byte("1"), 0); err != nil {
			return bp, fmt.Errorf("rp_filter: %w", err)
		}
	}
	if bp.prog, err = prog.Program(); err != nil {
		return bp, err
	}
	if err = bp.prog.SetConfig(xc); err != nil {
		return bp, err
	}
	if bp.mode, err = bp.prog.Attach(ifi.Index, mode); err != nil {
		return bp, err
	}
	if bp.sock, err = umem.NewSocket(xdp.SocketConfig{Ifindex: ifi.Index, QueueID: 0, RxSize: ring, TxSize: ring, NeedWakeup: true}); err != nil {
		return bp, err
	}
	if err = bp.prog.Register(0, bp.sock.FD()); err != nil {
		return bp, err
	}
	if bp.tap, err = NewPacketTX(ifi.Index); err != nil {
		return bp, err
	}
	return bp, nil
}

// setConfig applies the port's impairment: to its program, and to its
// cable's end when patched (where its frames arrive).
func (bp *boundPort) setConfig(c bpf.Config) error {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	c.Patched, c.Captured = bp.cfg.Patched, bp.cfg.Captured
	if err := bp.prog.SetConfig(c); err != nil {
		return err
	}
	bp.cfg = c
	if bp.patch != nil {
		bp.patch.SetImpairment(c.LossPPM, c.Down)
	}
	return nil
}

// setCaptured says whether a capture listens on a patched port: its
// cable then writes copies, and its program passes them to the taps.
func (bp *boundPort) setCaptured(on bool) error {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.cfg.Captured == on {
		return nil
	}
	c := bp.cfg
	c.Captured = on
	if err := bp.prog.SetConfig(c); err != nil {
		return err
	}
	bp.cfg = c
	bp.patch.SetTapped(on)
	return nil
}

// setTapped switches port i in or out of capture mode.
func (r *Running) setTapped(i int, on bool) {
	bp := r.ports[i]
	if bp.patch == nil {
		r.eng.SetTapped(i, on)
		return
	}
	if err := bp.setCaptured(on); err != nil {
		r.n.Log.Warn("capture", "port", bp.spec.Ifname, "err", err)
	}
}

func (bp *boundPort) close() error {
	var errs []error
	if bp.patch != nil {
		// The engine left its worker (Stop removes it first), so the
		// peer no longer writes into this node's memory.
		bp.patch.Unplug()
	}
	if bp.prog != nil {
		errs = append(errs, bp.prog.Close())
	}
	if bp.sock != nil {
		errs = append(errs, bp.sock.Close())
	}
	if bp.tap != nil {
		errs = append(errs, bp.tap.Close())
	}
	return errors.Join(errs...)
}

// serve starts the node's control socket.
func (r *Running) serve() (*http.Server, error) {
	n, eng := r.n, r.eng
	path := n.Config.Control
	_ = os.Remove(path) // a stale socket of a killed predecessor
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-eng.Ready():
			fmt.Fprintln(w, "ok")
		default:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if req.URL.Query().Has("sample") {
			_ = json.NewEncoder(w).Encode(r.Sample())
			return
		}
		_ = json.NewEncoder(w).Encode(r.Stats())
	})
	mux.HandleFunc("GET /waits", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(r.Waits())
	})
	mux.HandleFunc("GET /link", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(r.links.states())
	})
	mux.HandleFunc("POST /link", func(w http.ResponseWriter, req *http.Request) {
		var lr api.LinkRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&lr); err != nil {
			http.Error(w, "link: "+err.Error(), http.StatusBadRequest)
			return
		}
		st, err := r.links.apply(lr)
		switch {
		case errors.Is(err, errNoPort):
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n.Log.Info("link", "port", st.Port, "loss_ppm", st.LossPPM, "down", st.Down)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
	mux.HandleFunc("POST /probe", func(w http.ResponseWriter, req *http.Request) {
		// ?every=DURATION&count=N: the next N probes every apart
		// (Engine.ProbeBurst), as a lab's calibration asks.
		q := req.URL.Query()
		if !q.Has("every") && !q.Has("count") {
			r.eng.StartProbes()
			w.WriteHeader(http.StatusOK)
			return
		}
		every, err := time.ParseDuration(q.Get("every"))
		if err != nil {
			http.Error(w, "probe: every: "+err.Error(), http.StatusBadRequest)
			return
		}
		count, err := strconv.Atoi(q.Get("count"))
		if err != nil {
			http.Error(w, "probe: count: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := r.eng.ProbeBurst(every, count); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("POST /delay", func(w http.ResponseWriter, req *http.Request) {
		var dr api.DelayRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&dr); err != nil {
			http.Error(w, "delay: "+err.Error(), http.StatusBadRequest)
			return
		}
		if dr.CompNs < 0 || dr.CompNs > int64(time.Second) {
			http.Error(w, fmt.Sprintf("delay: compensation %v: want 0..1s", time.Duration(dr.CompNs)), http.StatusBadRequest)
			return
		}
		st := r.setDelayComp(time.Duration(dr.CompNs))
		n.Log.Info("delay", "comp", time.Duration(st.CompNs), "link_delay", time.Duration(st.DelayNs))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
	debugRoutes(mux)
	if n.Routes != nil {
		n.Routes(mux)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			n.Log.Error("control socket", "err", err)
		}
	}()
	return srv, nil
}

// setDelayComp takes comp, the emulator's measured per-hop latency, off
// the model's link delay of every fabric port and clears the probes'
// round trips (POST /delay).
func (r *Running) setDelayComp(comp time.Duration) api.DelayState {
	cfg := r.n.Config
	cfg.DelayComp = config.Duration(comp)
	d := cfg.LinkDelay()
	r.eng.SetLinkDelay(d.Nanoseconds())
	return api.DelayState{CompNs: comp.Nanoseconds(), DelayNs: d.Nanoseconds()}
}

// Waits is what GET /waits answers.
func (r *Running) Waits() api.Waits {
	hs := r.eng.Waits(nil)
	out := api.Waits{Node: r.n.Config.Node, StartedUnixNs: r.started.UnixNano(), Ports: make([]api.PortWaits, len(hs))}
	for i := range hs {
		out.Ports[i] = api.NewPortWaits(r.eng.PortName(i), &hs[i])
	}
	return out
}

// Stats is what GET /stats answers.
func (r *Running) Stats() api.Stats { return r.stats(false) }

// Sample is what GET /stats?sample answers: the stats a periodic sample
// reads (api.Stats says which), several times cheaper to take, build
// and send than the full ones: no drop maps, signal counts, ECN
// histograms or pause timing, no server's section, and no XDP program
// counters (a map lookup per port in the kernel), while the sockets'
// ring drops, which judge a run, stay.
func (r *Running) Sample() api.Stats { return r.stats(true) }

func (r *Running) stats(sample bool) api.Stats {
	ps, frames, at, mark, busy := r.eng.SnapshotAt(sample)
	// The copier stamps the snapshot in its queue of capture copies once
	// it wrote every copy queued before it: the instant that divides the
	// patched ports' copies as the snapshot divides their counters.
	copiedAt, _ := r.copier.Stamp(mark, time.Second)
	s := api.Stats{Node: r.n.Config.Node, Kind: r.n.Kind, Pid: os.Getpid(), Worker: r.worker,
		StartedUnixNs: r.started.UnixNano(), UptimeNs: int64(r.eng.Uptime()), CountedUnixNs: at,
		XDPMode: r.ports[0].mode.String(), Frames: frames, Ports: ps}
	if ps == nil {
		return s
	}
	s.BusyNs = busy
	if r.n.HostStats != nil && !sample {
		s.Host = r.n.HostStats()
	}
	ls := r.links.states()
	for i, bp := range r.ports {
		ps := &s.Ports[i]
		ps.LossPPM, ps.LinkDown = ls[i].LossPPM, ls[i].Down
		if x, err := bp.sock.Stats(); err == nil {
			ps.XSK = map[string]uint64{
				"rx_dropped": x.RxDropped, "rx_invalid_descs": x.RxInvalidDescs, "tx_invalid_descs": x.TxInvalidDescs,
				"rx_ring_full": x.RxRingFull, "rx_fill_ring_empty": x.RxFillRingEmpty, "tx_ring_empty": x.TxRingEmpty,
			}
		}
		if !sample { // the program's counters are a map lookup in the kernel
			if c, err := bp.prog.Counters(); err == nil {
				ps.XDP = map[string]uint64{"rx": c.RX, "redirect": c.Redirect, "fallback": c.Fallback, "loss": c.Loss, "down": c.Down}
				if bp.patch != nil {
					ps.XDP["mirror"] = c.Mirror
				}
			}
		}
		if bp.patch != nil {
			// The cable's counts mean what the program's and the
			// socket's would on a veth.
			c := bp.patch.Counters()
			ps.Patched, ps.Captured = true, bp.patch.Tapped()
			ps.CountedUnixNs = copiedAt
			if c.Mirrored+c.MirrorErrors+c.MirrorDropped > 0 {
				ps.Copies = map[string]uint64{"written": c.Mirrored, "write_errors": c.MirrorErrors, "queue_full": c.MirrorDropped}
			}
			if ps.XDP != nil {
				for k, v := range map[string]uint64{"rx": c.RX, "redirect": c.Redirect, "loss": c.Loss, "down": c.Down} {
					ps.XDP[k] += v
				}
			}
			if ps.XSK != nil {
				ps.XSK["rx_dropped"] += c.RxDropped
				ps.XSK["rx_ring_full"] += c.RxRingFull
				ps.XSK["rx_fill_ring_empty"] += c.RxFillRingEmpty
			}
		}
	}
	return s
}

// fabricPort reports whether ifname is a fabric port: every port but a
// server's application port (bc0nic), which stands for the server's own
// bus to its kernel and never loses a frame.
func fabricPort(ifname string) bool { return ifname != bcube.AppPeerIf }

// errNoPort is returned for a port the daemon does not have.
var errNoPort = errors.New("no such port")

// impairments is what every port's XDP program does to the frames it
// receives (loss, link down), as last applied. Safe for concurrent use.
type impairments struct {
	mu    sync.Mutex
	ports []impairedPort
}

type impairedPort struct {
	name string
	cfg  bpf.Config
	set  func(bpf.Config) error // applies cfg to the port's program
}

// add records port name, whose program is configured cfg and set by set.
func (im *impairments) add(name string, cfg bpf.Config, set func(bpf.Config) error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.ports = append(im.ports, impairedPort{name: name, cfg: cfg, set: set})
}

// states returns every port's state, in port order.
func (im *impairments) states() []api.LinkState {
	im.mu.Lock()
	defer im.mu.Unlock()
	out := make([]api.LinkState, len(im.ports))
	for i, p := range im.ports {
		out[i] = api.LinkState{Port: p.name, LossPPM: int(p.cfg.LossPPM), Down: p.cfg.Down, App: !fabricPort(p.name)}
	}
	return out
}

// apply changes the port r names as r says and returns its new state.
// Nothing changes when r is invalid or the program refuses the change.
func (im *impairments) apply(r api.LinkRequest) (api.LinkState, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	var p *impairedPort
	var names []string
	for i := range im.ports {
		names = append(names, im.ports[i].name)
		if im.ports[i].name == r.Port {
			p = &im.ports[i]
		}
	}
	if p == nil {
		return api.LinkState{}, fmt.Errorf("link: port %q: %w (ports: %v)", r.Port, errNoPort, names)
	}
	if !fabricPort(p.name) {
		return api.LinkState{}, fmt.Errorf("link: port %s is the application port: it stands for the server's own bus and is never impaired", p.name)
	}
	c := p.cfg
	if r.LossPPM != nil {
		if *r.LossPPM < 0 || *r.LossPPM > bpf.MaxLossPPM {
			return api.LinkState{}, fmt.Errorf("link: port %s: loss_ppm %d: want 0..%d (frames dropped per million received)", p.name, *r.LossPPM, bpf.MaxLossPPM)
		}
		c.LossPPM = uint32(*r.LossPPM)
	}
	if r.Down != nil {
		c.Down = *r.Down
	}
	if err := p.set(c); err != nil {
		return api.LinkState{}, fmt.Errorf("link: port %s: %w", p.name, err)
	}
	p.cfg = c
	return api.LinkState{Port: p.name, LossPPM: int(c.LossPPM), Down: c.Down}, nil
}
