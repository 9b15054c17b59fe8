package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// workers bounds the goroutines that create namespaces and links. The
// kernel serialises most of that work on the rtnl lock, so a few in
// flight overlap syscall latency and more would only wait for the lock.
const workers = 4

// Up brings up the lab described by spec and returns its state once every
// daemon answers /healthz. Its stages are the package's pipeline (see the
// package doc). If any stage fails, or ctx is cancelled before the end,
// everything created so far is removed and the error returned; the
// daemons started are not tied to ctx and outlive the call on success.
// log may be nil.
func Up(ctx context.Context, spec Spec, log *slog.Logger) (*State, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	spec, err := ResolveAutoRate(spec, "")
	if err != nil {
		return nil, err
	}
	if spec.RateChoice != "" {
		log.Info("D chosen", "dilation", spec.Dilation, "why", spec.RateChoice)
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	p, err := NewPlan(spec)
	if err != nil {
		return nil, err
	}
	ip, err := preflight(p)
	if err != nil {
		return nil, err
	}
	name := p.Spec.Name

	// Claim the name: Mkdir fails if another lab up got here first.
	if err := os.MkdirAll(p.Spec.RunRoot, 0o755); err != nil {
		return nil, fmt.Errorf("lab %s: %w", name, err)
	}
	if err := os.Mkdir(p.RunDir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lab name %q is in use: %s exists (lab down --name %s removes it)", name, p.RunDir, name)
		}
		return nil, fmt.Errorf("lab %s: %w", name, err)
	}
	st := newState(p)
	if err := errors.Join(os.Mkdir(p.LogDir, 0o755), st.save()); err != nil {
		os.RemoveAll(p.RunDir)
		return nil, fmt.Errorf("lab %s: %w", name, err)
	}

	start := time.Now()
	log.Info("bringing lab up", "lab", name, "topology", p.Spec.TopologyText(),
		"namespaces", len(p.Nodes), "links", len(p.Links), "run_dir", p.RunDir)
	if err := up(ctx, p, st, ip, log); err != nil {
		log.Warn("lab up failed; removing everything it created", "lab", name, "err", err)
		if derr := downState(p.Spec.RunRoot, name, st, log); derr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup after failure: %w", derr))
		}
		return nil, fmt.Errorf("lab %s: %w", name, err)
	}
	log.Info("lab is up", "lab", name, "took", time.Since(start).Round(time.Millisecond))
	return st, nil
}

// preflight checks what Up needs before it creates anything: ip(8) and the
// daemon binaries (bcfabd with workers, swd and hostd without).
func preflight(p *Plan) (ip string, err error) {
	ip, err = exec.LookPath("ip")
	if err != nil {
		return "", fmt.Errorf("ip (iproute2) not found: %w", err)
	}
	bins := []string{KindServer, KindSwitch}
	if len(p.Workers) > 0 {
		bins = []string{WorkerBin}
	}
	for _, kind := range bins {
		bin := filepath.Join(p.Spec.BinDir, kind)
		fi, err := os.Stat(bin)
		switch {
		case err != nil:
			return "", fmt.Errorf("bin dir %s has no usable %s binary (build it into that directory or pass --bin-dir): %w", p.Spec.BinDir, kind, err)
		case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
			return "", fmt.Errorf("bin dir %s: %s is not an executable file", p.Spec.BinDir, bin)
		}
	}
	return ip, nil
}

// up runs the stages after the state file exists.
func up(ctx context.Context, p *Plan, st *State, ip string, log *slog.Logger) error {
	stage := func(what string, f func() error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := time.Now()
		if err := f(); err != nil {
			return err
		}
		log.Debug(what, "took", time.Since(t).Round(time.Microsecond))
		return nil
	}
	if err := stage("netns dir ready", ensureNetnsDir); err != nil {
		return err
	}
	handles := make([]*netlink.Handle, len(p.Nodes))
	defer func() {
		for _, h := range handles {
			if h != nil {
				h.Close()
			}
		}
	}()
	steps := []struct {
		what string
		f    func() error
	}{
		{"namespaces created", func() error { return createNamespaces(ctx, p, handles) }},
		{"fabric links created", func() error { return createLinks(ctx, p, handles) }},
		{"configs written", func() error { return writeConfigs(p) }},
		{"ethers written", func() error { return writeEthers(p) }},
		{"hosts written", func() error {
			// Names are a convenience: a read-only /etc costs them, not the lab.
			if err := writeHosts(p); err != nil {
				log.Warn("the servers have no names inside the lab", "err", err)
			}
			return nil
		}},
	}
	for _, s := range steps {
		if err := stage(s.what, s.f); err != nil {
			return err
		}
	}
	for i, h := range handles {
		h.Close()
		handles[i] = nil
	}
	st.Phase = PhaseStarting
	if err := stage("daemons started", func() error { return startProcs(p, st, ip, log) }); err != nil {
		return err
	}
	if err := stage("daemons healthy", func() error { return waitHealthy(ctx, st, p.Spec.HealthTimeout) }); err != nil {
		return err
	}
	if p.Spec.ProbeInterval >= 0 {
		if err := stage("probes started", func() error { return startProbes(ctx, p, st) }); err != nil {
			return err
		}
		if p.Spec.Model().LinkDelay() > 0 {
			if err := stage("delay lines calibrated", func() error { return calibrate(ctx, p, st, log) }); err != nil {
				return err
			}
		}
	}
	st.Phase = PhaseUp
	return st.save()
}

// parallel runs f(0..n-1) on at most workers goroutines and returns the
// first error; after an error (or ctx's end) no new calls start.
func parallel(ctx context.Context, n int, f func(i int) error) error {
	var (
		next   atomic.Int64
		failed atomic.Bool
		once   sync.Once
		first  error
		wg     sync.WaitGroup
	)
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || failed.Load() {
					return
				}
				err := ctx.Err()
				if err == nil {
					err = f(i)
				}
				if err != nil {
					once.Do(func() { first = err })
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// createNamespaces creates every node's namespace; in a server's it also
// creates bc0 (with the server's address) <-> bc0nic. handles[i] gets a
// netlink handle in node i's namespace.
func createNamespaces(ctx context.Context, p *Plan, handles []*netlink.Handle) error {
	servers := len(p.AppLinks)
	return parallel(ctx, len(p.Nodes), func(i int) error {
		var setup func(h *netlink.Handle) error
		if i < servers { // nodes are servers first, in index order
			app := p.AppLinks[i]
			setup = func(h *netlink.Handle) error { return createAppLink(h, app) }
		}
		h, err := createNamespace(p.Nodes[i].Namespace, setup)
		handles[i] = h
		return err
	})
}

// createAppLink creates bc0 <-> bc0nic inside a server's namespace, both
// up, bc0 with the server's address.
func createAppLink(h *netlink.Handle, l Link) error {
	la := netlink.NewLinkAttrs()
	la.Name, la.HardwareAddr, la.MTU, la.Flags = l.A.Ifname, l.A.MAC, MTU, net.FlagUp
	veth := &netlink.Veth{LinkAttrs: la, PeerName: l.B.Ifname, PeerHardwareAddr: l.B.MAC, PeerMTU: MTU, PeerTxQLen: -1}
	if err := h.LinkAdd(veth); err != nil {
		return fmt.Errorf("create %s: %w", l, err)
	}
	peer, err := h.LinkByName(l.B.Ifname)
	if err == nil {
		err = h.LinkSetUp(peer)
	}
	if err != nil {
		return fmt.Errorf("%s up: %w", l.B.Ifname, err)
	}
	app, err := h.LinkByName(l.A.Ifname)
	if err == nil {
		err = h.AddrAdd(app, &netlink.Addr{IPNet: &net.IPNet{
			IP:   net.IP(l.A.Addr.Addr().AsSlice()),
			Mask: net.CIDRMask(l.A.Addr.Bits(), 32),
		}})
	}
	if err != nil {
		return fmt.Errorf("address %s on %s: %w", l.A.Addr, l.A.Ifname, err)
	}
	return nil
}

// createLinks creates every fabric veth pair from the namespace of its
// A end (a BCube server's, or the first end of a graph fabric's cable)
// with its peer placed straight into the B end's namespace, then brings
// the B ends up.
func createLinks(ctx context.Context, p *Plan, handles []*netlink.Handle) error {
	index := make(map[string]int, len(p.Nodes))
	for i, n := range p.Nodes {
		index[n.Namespace] = i
	}
	// An fd of each B end's namespace, to name it as the peer's home.
	fds := map[string]int{}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	// The cables by the namespace they are created from, in plan order.
	var from []string
	byA := map[string][]Link{}
	for _, l := range p.Links {
		if byA[l.A.Namespace] == nil {
			from = append(from, l.A.Namespace)
		}
		byA[l.A.Namespace] = append(byA[l.A.Namespace], l)
		if _, ok := fds[l.B.Namespace]; ok {
			continue
		}
		fd, err := unix.Open(filepath.Join(netnsDir, l.B.Namespace), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open namespace %s: %w", l.B.Namespace, err)
		}
		fds[l.B.Namespace] = fd
	}
	err := parallel(ctx, len(from), func(i int) error {
		h := handles[index[from[i]]]
		for _, l := range byA[from[i]] {
			la := netlink.NewLinkAttrs()
			la.Name, la.HardwareAddr, la.MTU, la.Flags = l.A.Ifname, l.A.MAC, MTU, net.FlagUp
			veth := &netlink.Veth{LinkAttrs: la, PeerName: l.B.Ifname, PeerHardwareAddr: l.B.MAC,
				PeerMTU: MTU, PeerTxQLen: -1, PeerNamespace: netlink.NsFd(fds[l.B.Namespace])}
			if err := h.LinkAdd(veth); err != nil {
				return fmt.Errorf("create link %s: %w", l, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A veth peer is created down; bring the B ends up from inside their
	// namespaces.
	var peers []string
	ports := map[string][]string{}
	for _, l := range p.Links {
		if ports[l.B.Namespace] == nil {
			peers = append(peers, l.B.Namespace)
		}
		ports[l.B.Namespace] = append(ports[l.B.Namespace], l.B.Ifname)
	}
	return parallel(ctx, len(peers), func(i int) error {
		ns := peers[i]
		h := handles[index[ns]]
		for _, ifname := range ports[ns] {
			link, err := h.LinkByName(ifname)
			if err == nil {
				err = h.LinkSetUp(link)
			}
			if err != nil {
				return fmt.Errorf("%s in %s up: %w", ifname, ns, err)
			}
		}
		return nil
	})
}

// writeConfigs writes every node's config and every worker's as JSON.
func writeConfigs(p *Plan) error {
	write := func(name, path string, v any) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("config for %s: %w", name, err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("config for %s: %w", name, err)
		}
		return nil
	}
	for _, n := range p.Nodes {
		if err := write(n.Name, n.ConfigPath, n.Config); err != nil {
			return err
		}
	}
	for _, w := range p.Workers {
		if err := write(w.Name, w.ConfigPath, w.Config); err != nil {
			return err
		}
	}
	return nil
}

// startProcs starts the processes that host the nodes: every worker as
//
//	<BinDir>/bcfabd --worker <config>
//
// in the root namespace (it enters each node's namespace itself), or,
// without workers, every node's daemon as
//
//	ip netns exec <ns> <BinDir>/<kind> --config <config>
//
// each in a session of its own (a terminal's Ctrl-C or hangup does not
// reach it), stdout and stderr appended to its log, and records each pid
// in the state file as soon as it is known.
func startProcs(p *Plan, st *State, ip string, log *slog.Logger) error {
	st.procs = make(map[string]*proc, len(p.Nodes))
	if len(p.Workers) == 0 {
		for i, n := range p.Nodes {
			d, pid, err := startProcess(p, n.Name, n.LogPath, ip, "netns", "exec", n.Namespace, n.Binary, "--config", n.ConfigPath)
			if err != nil {
				return fmt.Errorf("start %s (%s): %w", n.Name, n.Kind, err)
			}
			st.procs[n.Name] = d
			st.Nodes[i].Pid = pid
			if err := st.save(); err != nil {
				return err
			}
			log.Debug("daemon started", "node", n.Name, "kind", n.Kind, "pid", pid)
		}
		return nil
	}
	for j, w := range p.Workers {
		d, pid, err := startProcess(p, w.Name, w.LogPath, w.Binary, "--worker", w.ConfigPath)
		if err != nil {
			return fmt.Errorf("start worker %s: %w", w.Name, err)
		}
		st.Workers[j].Pid = pid
		for _, i := range w.Nodes {
			st.procs[p.Nodes[i].Name] = d
			st.Nodes[i].Pid = pid
		}
		if err := st.save(); err != nil {
			return err
		}
		log.Debug("worker started", "worker", w.Name, "nodes", len(w.Nodes), "pid", pid)
	}
	return nil
}

// startProcess starts args in a session of its own with cwd the run
// directory, stdout and stderr appended to logPath, reaped by a
// goroutine.
func startProcess(p *Plan, what, logPath string, args ...string) (*proc, int, error) {
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, err
	}
	defer logf.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = p.RunDir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	fmt.Fprintf(logf, "--- lab %s: %s at %s: %s\n", p.Spec.Name, what,
		time.Now().Format(time.RFC3339Nano), strings.Join(cmd.Args, " "))
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	d := &proc{done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	return d, cmd.Process.Pid, nil
}

// waitHealthy polls every daemon's /healthz until all answer 200. It fails
// at once if a daemon exits, and after timeout if some never answer.
func waitHealthy(ctx context.Context, st *State, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		mu      sync.Mutex
		pending = map[string]bool{}
		wg      sync.WaitGroup
		errs    = make(chan error, len(st.Nodes))
	)
	for _, n := range st.Nodes {
		pending[n.Name] = true
	}
	for _, n := range st.Nodes {
		d := st.procs[n.Name]
		wg.Go(func() {
			backoff := 5 * time.Millisecond
			for {
				hctx, hcancel := context.WithTimeout(ctx, time.Second)
				err := Healthz(hctx, n.Control)
				hcancel()
				if err == nil {
					mu.Lock()
					delete(pending, n.Name)
					mu.Unlock()
					return
				}
				select {
				case <-d.done:
					what := n.Kind
					if n.Worker != "" {
						what = "worker " + n.Worker
					}
					errs <- fmt.Errorf("%s (%s, pid %d) exited before answering /healthz: %v%s",
						n.Name, what, n.Pid, exitString(d.err), logTail(st.procLog(n)))
					cancel()
					return
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				// At most 50 ms: a lab is up when its last node answers,
				// and a longer step would mostly be time spent waiting
				// after that (measured: about 0.1 s a lab at 200 ms).
				backoff = min(2*backoff, 50*time.Millisecond)
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if len(pending) == 0 {
		return nil
	}
	names := make([]string, 0, len(pending))
	for _, n := range st.Nodes {
		if pending[n.Name] {
			names = append(names, n.Name)
		}
	}
	if len(names) > 8 {
		names = append(names[:8], fmt.Sprintf("and %d more", len(names)-8))
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("timed out after %v waiting for %d of %d daemons to answer /healthz: %s (logs in %s)",
		timeout, len(pending), len(st.Nodes), strings.Join(names, ", "), filepath.Join(st.RunDir, "logs"))
}

func exitString(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// logTail returns the last lines of a daemon's log, indented, for an
// error message.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	return fmt.Sprintf("; last lines of %s:\n    %s", path, strings.Join(lines, "\n    "))
}
