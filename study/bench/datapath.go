//go:build linux

package bench

// The datapath benchmark, in one run on the same namespaces:
//
//  1. three namespaces: <p>-src (the blaster), <p>-dut (the device under
//     test, ports p0 and p1) and <p>-sink (an XDP program that counts and
//     drops), joined by src0<->p0 and p1<->sink0;
//  2. for each device — swd (the real daemon, unshaped), Open vSwitch's
//     AF_XDP datapath (ovs.go), the Linux bridge, and the bare xdp
//     forwarder — and each frame size: blast for a warm-up, then measure the
//     sink's count and the device's CPU (cpu.go) over the measurement time;
//  3. repeat 2 for several rounds, the devices in the opposite order every
//     other round (swd, ovs, ..., then ..., ovs, swd): this machine's speed
//     drifts by 10-30% over tens of seconds, as its neighbours on the
//     host come and go, so devices are compared round by round, each with
//     the one measured next to it (Ratios), not across the whole run;
//  4. tear everything down, also on error or interrupt.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bcfab/bcfab/bpf"
	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/config"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Options of the datapath benchmark.
type Options struct {
	BinDir  string        // where swd and xdpfwd are
	Prefix  string        // namespace prefix, default "bcbench"
	Sizes   []int         // frame sizes without FCS; default 60 and 1514 (64 B and 1518 B on the wire)
	Warmup  time.Duration // default 500ms
	Measure time.Duration // default 3s
	Devices []string      // default swd, ovs, bridge, bare
	Rounds  int           // default 3
	XDPMode string        // for swd, OVS's ports and the bare forwarder; default native
	Log     *slog.Logger
}

func (o *Options) defaults() {
	if o.Prefix == "" {
		o.Prefix = "bcbench"
	}
	if len(o.Sizes) == 0 {
		o.Sizes = []int{60, 1514}
	}
	if o.Warmup == 0 {
		o.Warmup = 500 * time.Millisecond
	}
	if o.Measure == 0 {
		o.Measure = 3 * time.Second
	}
	if len(o.Devices) == 0 {
		o.Devices = []string{"swd", "ovs", "bridge", "bare"}
	}
	if o.Rounds == 0 {
		o.Rounds = 3
	}
	if o.XDPMode == "" {
		o.XDPMode = "native"
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

type env struct {
	o              Options
	src, dut, sink netns.NsHandle
	names          []string
	sinkProg       *bpf.Program
	tmp            string
	cores          cores
}

// device is a running device under test.
type device struct {
	stop func() error
	pids []int // its processes, for the CPU accounting
}

// Datapath runs the benchmark and returns one result per device and size,
// and one with Skipped set for a device that cannot run here (ovs, when
// Open vSwitch is not installed).
func Datapath(ctx context.Context, o Options) (res []Result, err error) {
	o.defaults()
	if os.Geteuid() != 0 {
		return nil, errors.New("bench: needs root (creates network namespaces and AF_XDP sockets)")
	}
	for _, d := range o.Devices {
		if d != "swd" && d != "ovs" && d != "bridge" && d != "bare" {
			return nil, fmt.Errorf("bench: unknown device %q (want swd, ovs, bridge, bare)", d)
		}
	}
	if o.Rounds < 0 {
		return nil, fmt.Errorf("bench: %d rounds", o.Rounds)
	}
	c, err := splitCores()
	if err != nil {
		return nil, err
	}
	e := &env{o: o, cores: c}
	defer func() { err = errors.Join(err, e.close()) }()
	if err := e.build(); err != nil {
		return nil, err
	}
	devices := slices.Clone(o.Devices)
	for _, dev := range devices {
		if why := OVSMissing(); dev == "ovs" && why != "" {
			o.Log.Warn("skipped", "device", dev, "why", why)
			res = append(res, Result{Device: dev, Skipped: why})
			devices = slices.DeleteFunc(devices, func(d string) bool { return d == "ovs" })
		}
	}
	for round := 1; round <= o.Rounds; round++ {
		for _, dev := range devices {
			d, err := e.startDevice(ctx, dev)
			if err != nil {
				return res, fmt.Errorf("bench: start %s: %w", dev, err)
			}
			for _, size := range o.Sizes {
				r, err := e.measure(ctx, dev, size, d.pids)
				if err != nil {
					return res, errors.Join(err, d.stop())
				}
				r.Round = round
				o.Log.Info("measured", "round", round, "device", dev, "frame", r.FrameLen, "mpps", fmt.Sprintf("%.3f", r.FwdPps/1e6),
					"gbps", fmt.Sprintf("%.2f", r.FwdGbps), "busy_cores", fmt.Sprintf("%.2f", r.BusyCores))
				res = append(res, r)
			}
			if err := d.stop(); err != nil {
				return res, fmt.Errorf("bench: stop %s: %w", dev, err)
			}
		}
		slices.Reverse(devices)
	}
	return res, nil
}

// inNS runs f on a thread inside ns (or on a throwaway thread, for a
// closed handle: creating a namespace moves the thread into it). The thread is never returned to the
// scheduler with the wrong namespace: it stays locked and exits with f's
// goroutine.
func inNS(ns netns.NsHandle, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if ns.IsOpen() {
			if err := netns.Set(ns); err != nil {
				errc <- err
				return
			}
		}
		errc <- f()
	}()
	return <-errc
}

func (e *env) build() error {
	mk := func(suffix string) (netns.NsHandle, error) {
		name := e.o.Prefix + "-" + suffix
		if _, err := os.Stat(filepath.Join("/var/run/netns", name)); err == nil {
			return 0, fmt.Errorf("bench: namespace %s exists (another benchmark running? remove it with ip netns del %s)", name, name)
		}
		var h netns.NsHandle
		err := inNS(netns.None(), func() error {
			var err error
			h, err = netns.NewNamed(name)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("bench: create namespace %s: %w", name, err)
		}
		e.names = append(e.names, name)
		return h, nil
	}
	var err error
	if e.src, err = mk("src"); err != nil {
		return err
	}
	if e.dut, err = mk("dut"); err != nil {
		return err
	}
	if e.sink, err = mk("sink"); err != nil {
		return err
	}
	if err := veth(e.src, "src0", bcube.HostPortMAC(0, 0), e.dut, "p0", bcube.SwitchPortMAC(0, 0, 0)); err != nil {
		return err
	}
	if err := veth(e.dut, "p1", bcube.SwitchPortMAC(0, 0, 1), e.sink, "sink0", bcube.HostPortMAC(1, 0)); err != nil {
		return err
	}
	if e.tmp, err = os.MkdirTemp("", "bcbench"); err != nil {
		return err
	}
	// The sink: count and drop in XDP, the cheapest receiver there is.
	return inNS(e.sink, func() error {
		ifi, err := net.InterfaceByName("sink0")
		if err != nil {
			return err
		}
		if e.sinkProg, err = bpf.Load(); err != nil {
			return err
		}
		if err := e.sinkProg.SetConfig(bpf.Config{Fallback: bpf.Drop}); err != nil {
			return err
		}
		_, err = e.sinkProg.Attach(ifi.Index, bpf.ModeNative)
		return err
	})
}

// veth creates a pair with one end in each namespace, both up.
func veth(nsA netns.NsHandle, a string, macA net.HardwareAddr, nsB netns.NsHandle, b string, macB net.HardwareAddr) error {
	h, err := netlink.NewHandleAt(nsA)
	if err != nil {
		return err
	}
	defer h.Close()
	la := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a, HardwareAddr: macA, MTU: 1500},
		PeerName: b, PeerHardwareAddr: macB, PeerNamespace: netlink.NsFd(nsB)}
	if err := h.LinkAdd(la); err != nil {
		return fmt.Errorf("bench: veth %s-%s: %w", a, b, err)
	}
	if err := h.LinkSetUp(la); err != nil {
		return err
	}
	hb, err := netlink.NewHandleAt(nsB)
	if err != nil {
		return err
	}
	defer hb.Close()
	lb, err := hb.LinkByName(b)
	if err != nil {
		return err
	}
	return hb.LinkSetUp(lb)
}

func (e *env) close() error {
	var errs []error
	if e.sinkProg != nil {
		errs = append(errs, e.sinkProg.Close())
	}
	for _, h := range []netns.NsHandle{e.src, e.dut, e.sink} {
		if h.IsOpen() {
			h.Close()
		}
	}
	for _, n := range e.names {
		errs = append(errs, netns.DeleteNamed(n))
	}
	if e.tmp != "" {
		errs = append(errs, os.RemoveAll(e.tmp))
	}
	return errors.Join(errs...)
}

// startDevice brings up the device under test between p0 and p1, its
// processes on the device's cores.
func (e *env) startDevice(ctx context.Context, dev string) (device, error) {
	nsName := e.o.Prefix + "-dut"
	switch dev {
	case "ovs":
		o, err := startOVS(nsName, e.dut, e.o.Prefix, e.o.XDPMode, e.cores)
		if err != nil {
			return device{}, err
		}
		return device{stop: o.stop, pids: o.pids()}, nil
	case "bridge":
		h, err := netlink.NewHandleAt(e.dut)
		if err != nil {
			return device{}, err
		}
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}
		if err := h.LinkAdd(br); err != nil {
			h.Close()
			return device{}, err
		}
		for _, p := range []string{"p0", "p1"} {
			l, err := h.LinkByName(p)
			if err == nil {
				err = h.LinkSetMaster(l, br)
			}
			if err != nil {
				h.Close()
				return device{}, err
			}
		}
		p1, _ := h.LinkByName("p1")
		// A static entry: the sink never sends, so the bridge would flood.
		_ = h.NeighAdd(&netlink.Neigh{LinkIndex: p1.Attrs().Index, Family: syscall.AF_BRIDGE, State: netlink.NUD_NOARP,
			Flags: netlink.NTF_MASTER, HardwareAddr: bcube.HostPortMAC(1, 0)})
		if err := h.LinkSetUp(br); err != nil {
			h.Close()
			return device{}, err
		}
		return device{stop: func() error { defer h.Close(); return h.LinkDel(br) }}, nil
	case "bare":
		cmd := exec.CommandContext(ctx, "ip", "netns", "exec", nsName, filepath.Join(e.o.BinDir, "xdpfwd"), "-a", "p0", "-b", "p1", "-xdp-mode", e.o.XDPMode)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return device{}, err
		}
		cmd.Stderr = os.Stderr
		if err := startOn(cmd.Start, e.cores.device); err != nil {
			return device{}, err
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return device{}, fmt.Errorf("xdpfwd did not start: %q %v", line, err)
		}
		return device{stop: stopper(cmd), pids: []int{cmd.Process.Pid}}, nil
	default: // swd
		t := bcube.MustNew(2, 1)
		cfg := config.Node{Lab: e.o.Prefix, Node: bcube.SwitchName(0, 0), N: t.N(), K: t.K(), XDPMode: e.o.XDPMode,
			Control: filepath.Join(e.tmp, "swd.sock")}
		cfg.SetDefaults()
		b, _ := json.Marshal(cfg)
		path := filepath.Join(e.tmp, "swd.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return device{}, err
		}
		cmd := exec.CommandContext(ctx, "ip", "netns", "exec", nsName, filepath.Join(e.o.BinDir, "swd"), "--config", path, "--log-level", "warn")
		cmd.Stderr = os.Stderr
		if err := startOn(cmd.Start, e.cores.device); err != nil {
			return device{}, err
		}
		if err := waitHealthy(ctx, cfg.Control, 10*time.Second); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return device{}, err
		}
		return device{stop: stopper(cmd), pids: []int{cmd.Process.Pid}}, nil
	}
}

func stopper(cmd *exec.Cmd) func() error {
	return func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			return <-done
		}
	}
}

// waitHealthy polls a daemon's control socket until /healthz answers.
func waitHealthy(ctx context.Context, sock string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		hctx, cancel := context.WithTimeout(ctx, time.Second)
		err := lab.Healthz(hctx, sock)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("daemon on %s not healthy after %v: %w", sock, limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// testFrame is an 802.1Q-tagged UDP frame from h0 to h1 of BCube(2,1), size
// bytes long without FCS.
func testFrame(size int) []byte {
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: bcube.ServerIP(0).AsSlice(), DstIP: bcube.ServerIP(1).AsSlice()}
	u := &layers.UDP{SrcPort: 9, DstPort: 9}
	_ = u.SetNetworkLayerForChecksum(ip)
	pad := size - 14 - 4 - 20 - 8
	buf := gopacket.NewSerializeBuffer()
	_ = gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		&layers.Ethernet{SrcMAC: bcube.HostPortMAC(0, 0), DstMAC: bcube.HostPortMAC(1, 0), EthernetType: layers.EthernetTypeDot1Q},
		&layers.Dot1Q{Priority: 3, Type: layers.EthernetTypeIPv4}, ip, u, gopacket.Payload(make([]byte, pad)))
	return buf.Bytes()
}

// measure blasts frames of size bytes through the running device and
// returns what the sink counted and the CPU it took (cpu.go) over the
// measurement time. pids are the device's processes.
func (e *env) measure(ctx context.Context, dev string, size int, pids []int) (Result, error) {
	frame := testFrame(size)
	bctx, cancel := context.WithCancel(ctx)
	var sent counter
	errc := make(chan error, 1)
	go func() {
		errc <- inNS(e.src, func() error {
			if err := pinThread(e.cores.blaster); err != nil {
				return err
			}
			return Blast(bctx, "src0", frame, &sent)
		})
	}()
	fail := func(err error) (Result, error) {
		cancel()
		<-errc
		return Result{}, err
	}
	select {
	case <-time.After(e.o.Warmup):
	case err := <-errc:
		cancel()
		return Result{}, fmt.Errorf("bench: blaster: %w", err)
	}
	c0, err := e.sinkProg.Counters()
	if err != nil {
		return fail(err)
	}
	cpu0, err := sampleCPU(pids)
	if err != nil {
		return fail(err)
	}
	s0, t0 := sent.Load(), time.Now()
	select {
	case <-time.After(e.o.Measure):
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	c1, err := e.sinkProg.Counters()
	s1, t1 := sent.Load(), time.Now()
	cpu1, cerr := sampleCPU(pids)
	err = errors.Join(err, cerr)
	cancel()
	if berr := <-errc; berr != nil {
		return Result{}, fmt.Errorf("bench: blaster: %w", berr)
	}
	if err != nil {
		return Result{}, err
	}
	secs := t1.Sub(t0).Seconds()
	fwd := float64(c1.RX-c0.RX) / secs
	use := account(cpu0, cpu1, e.cores, secs)
	r := Result{Device: dev, FrameLen: size + 4, SentPps: float64(s1-s0) / secs, FwdPps: fwd,
		FwdGbps: fwd * float64(size+4) * 8 / 1e9, BusyCores: use.device, BlasterCores: use.blaster}
	if len(pids) > 0 {
		r.ProcCores = &use.procs
	}
	if use.device > 0 {
		r.MppsPerCore = fwd / 1e6 / use.device
	}
	return r, nil
}
