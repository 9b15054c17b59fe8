package daemon

// Daemon bring-up, in order; each step is undone on failure and on exit:
//
//  1. one UMEM for the daemon (frames shared by all its ports);
//  2. per port: load the XDP program, configure its injected loss (fabric
//     ports: Config.LossPPM), attach it to the interface, bind an AF_XDP
//     socket sharing the UMEM, register the socket in the program's XSK
//     map;
//  3. the engine, with a ppoll waiter on all the sockets;
//  4. the control socket (HTTP on a unix socket): /healthz, /stats and
//     /link;
//  5. run until the context ends (SIGTERM), then close everything.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/bcfab/bcfab/api"
	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/bpf"
	"github.com/bcfab/bcfab/config"
	"github.com/bcfab/bcfab/dataplane"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/xdp"
)

// DaemonPort is one interface a daemon drives.
type DaemonPort struct {
	Ifname   string
	RateBps  uint64
	Delay    time.Duration
	CapBytes int
	Queues   queues.EgressConfig
}

// TapPoll is how often a daemon looks for packet captures on its ports.
const TapPoll = time.Second

// Daemon is what swd and hostd run.
type Daemon struct {
	Kind    string // swd or hostd
	Config  *config.Node
	Ports   []DaemonPort
	Handler dataplane.BoundHandler
	Log     *slog.Logger
	// Setup, if set, runs after the ports are bound and before the engine
	// starts (hostd configures bc0 here).
	Setup func() error
	// Routes, if set, adds handlers to the control socket.
	Routes func(mux *http.ServeMux)
}

type boundPort struct {
	spec    DaemonPort
	ifindex int
	prog    *bpf.Program
	sock    *xdp.Socket
	tap     *PacketTX
	mode    bpf.Mode
}

// Run brings the daemon up and runs it until ctx is done.
func (d *Daemon) Run(ctx context.Context) (err error) {
	cfg := d.Config
	mode, err := bpf.ParseMode(cfg.XDPMode)
	if err != nil {
		return err
	}
	frames := 1
	for frames < cfg.FramesPerPort*len(d.Ports) {
		frames <<= 1
	}
	umem, err := xdp.NewUMEM(xdp.UMEMConfig{
		NumFrames: frames, FrameSize: cfg.FrameSize,
		FillSize: cfg.RingSize, CompletionSize: cfg.RingSize,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", d.Kind, err)
	}
	var cleanup []func() error
	defer func() {
		var errs []error
		for i := len(cleanup) - 1; i >= 0; i-- {
			errs = append(errs, cleanup[i]())
		}
		errs = append(errs, umem.Close())
		if cerr := errors.Join(errs...); cerr != nil {
			d.Log.Warn("shutdown", "err", cerr)
		}
	}()

	bound := make([]*boundPort, len(d.Ports))
	links := &impairments{}
	var specs []dataplane.PortSpec
	var fds []int
	for i, p := range d.Ports {
		xc := bpf.Config{}
		if fabricPort(p.Ifname) {
			loss, down := cfg.PortImpairment(p.Ifname)
			xc.LossPPM, xc.Down = uint32(loss), down
		}
		bp, err := bindPort(umem, p, mode, cfg.RingSize, xc)
		if err != nil {
			return fmt.Errorf("%s: port %s: %w", d.Kind, p.Ifname, err)
		}
		cleanup = append(cleanup, bp.close)
		bound[i] = bp
		links.add(p.Ifname, xc, bp.prog.SetConfig)
		specs = append(specs, dataplane.PortSpec{Name: p.Ifname, IO: bp.sock, Tap: bp.tap, RateBps: p.RateBps, Delay: p.Delay, CapBytes: p.CapBytes, Queues: p.Queues})
		fds = append(fds, bp.sock.FD())
		d.Log.Debug("port up", "if", p.Ifname, "xdp", bp.mode.String(), "rate_bps", p.RateBps)
	}
	if d.Setup != nil {
		if err := d.Setup(); err != nil {
			return fmt.Errorf("%s: setup: %w", d.Kind, err)
		}
	}
	w, err := dataplane.NewPollWaiter(fds, dataplane.DefaultTimerSlack)
	if err != nil {
		return err
	}
	cleanup = append(cleanup, w.Close)
	eng, err := dataplane.NewEngine(dataplane.Memory{Bytes: umem.Bytes(), FrameSize: umem.FrameSize(), NumFrames: umem.NumFrames(), RingSize: cfg.RingSize},
		specs, d.Handler, w, dataplane.Options{BufferBytes: cfg.BufferBytes, Watchdog: cfg.Watchdog(), Log: d.Log})
	if err != nil {
		return err
	}
	d.Handler.Bind(eng)
	if cfg.RxCoalesce > 0 {
		eng.SetCoalesce(cfg.RxCoalesce.D())
	}

	srv, err := d.serve(eng, bound, links)
	if err != nil {
		return err
	}
	cleanup = append(cleanup, func() error {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		os.Remove(cfg.Control)
		return err
	})
	ifindexes := make([]int, len(bound))
	for i, bp := range bound {
		ifindexes[i] = bp.ifindex
	}
	tctx, stopTaps := context.WithCancel(ctx)
	defer stopTaps()
	go watchTaps(tctx, eng, ifindexes, TapPoll)
	d.Log.Info("up", "node", cfg.Node, "ports", len(bound), "frames", frames, "xdp", bound[0].mode.String(), "control", cfg.Control, "loss_ppm", cfg.LossPPM)
	err = eng.Run(ctx)
	d.Log.Info("down", "node", cfg.Node, "err", err)
	return err
}

// bindPort brings up port p with its XDP program configured xc before it
// is attached, so no frame passes unimpaired.
func bindPort(umem *xdp.UMEM, p DaemonPort, mode bpf.Mode, ring int, xc bpf.Config) (bp *boundPort, err error) {
	ifi, err := net.InterfaceByName(p.Ifname)
	if err != nil {
		return nil, fmt.Errorf("interface: %w", err)
	}
	bp = &boundPort{spec: p, ifindex: ifi.Index}
	defer func() {
		if err != nil {
			err = errors.Join(err, bp.close())
		}
	}()
	if bp.prog, err = bpf.Load(); err != nil {
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

func (bp *boundPort) close() error {
	var errs []error
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

func (d *Daemon) serve(eng *dataplane.Engine, ports []*boundPort, links *impairments) (*http.Server, error) {
	path := d.Config.Control
	_ = os.Remove(path) // a stale socket of a killed predecessor
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-eng.Ready():
			fmt.Fprintln(w, "ok")
		default:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(d.stats(eng, ports, links))
	})
	mux.HandleFunc("GET /link", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(links.states())
	})
	mux.HandleFunc("POST /link", func(w http.ResponseWriter, r *http.Request) {
		var req api.LinkRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			http.Error(w, "link: "+err.Error(), http.StatusBadRequest)
			return
		}
		st, err := links.apply(req)
		switch {
		case errors.Is(err, errNoPort):
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		d.Log.Info("link", "port", st.Port, "loss_ppm", st.LossPPM, "down", st.Down)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
	if d.Routes != nil {
		d.Routes(mux)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.Log.Error("control socket", "err", err)
		}
	}()
	return srv, nil
}

func (d *Daemon) stats(eng *dataplane.Engine, ports []*boundPort, links *impairments) api.Stats {
	ps, frames := eng.Snapshot()
	s := api.Stats{Node: d.Config.Node, Kind: d.Kind, Pid: os.Getpid(), UptimeNs: int64(eng.Uptime()),
		XDPMode: ports[0].mode.String(), Frames: frames, Ports: ps}
	if ps == nil {
		return s
	}
	ls := links.states()
	for i, bp := range ports {
		ps := &s.Ports[i]
		ps.LossPPM, ps.LinkDown = ls[i].LossPPM, ls[i].Down
		if x, err := bp.sock.Stats(); err == nil {
			ps.XSK = map[string]uint64{
				"rx_dropped": x.RxDropped, "rx_invalid_descs": x.RxInvalidDescs, "tx_invalid_descs": x.TxInvalidDescs,
				"rx_ring_full": x.RxRingFull, "rx_fill_ring_empty": x.RxFillRingEmpty, "tx_ring_empty": x.TxRingEmpty,
			}
		}
		if c, err := bp.prog.Counters(); err == nil {
			ps.XDP = map[string]uint64{"rx": c.RX, "redirect": c.Redirect, "fallback": c.Fallback, "loss": c.Loss, "down": c.Down}
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
