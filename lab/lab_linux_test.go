package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The privileged tests bring labs up and down with a fake daemon
// (internal/fakeproc, built once into a temporary directory as swd and
// hostd). A test with the real daemons needs only a different Spec.BinDir.

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
}

var fake struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	if os.Getenv("LAB_TEST_CRASH_UP") != "" {
		crashUpHelper()
		return
	}
	code := m.Run()
	for _, d := range []string{fake.dir, real.dir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

// fakeBinDir builds the fake daemon once and returns the directory that
// holds it as swd and hostd.
func fakeBinDir(t *testing.T) string {
	t.Helper()
	fake.once.Do(func() {
		dir, err := os.MkdirTemp("", "labfake")
		if err != nil {
			fake.err = err
			return
		}
		fake.dir = dir
		goBin, err := exec.LookPath("go")
		if err != nil {
			fake.err = err
			return
		}
		out, err := exec.Command(goBin, "build", "-o", filepath.Join(dir, KindSwitch), "./internal/fakeproc").CombinedOutput()
		if err != nil {
			fake.err = fmt.Errorf("build fake daemon: %v\n%s", err, out)
			return
		}
		fake.err = os.Link(filepath.Join(dir, KindSwitch), filepath.Join(dir, KindServer))
	})
	if fake.err != nil {
		t.Fatal(fake.err)
	}
	return fake.dir
}

// uniqueName is a lab name no user would pick: bt + 6 random characters.
func uniqueName() string {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte("bt")
	for range 6 {
		b = append(b, chars[rand.IntN(len(chars))])
	}
	return string(b)
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testSpec is a spec for a fresh lab of the fake daemons, removed (and
// checked gone) when the test ends, whatever happens.
func testSpec(t *testing.T, n, k int) Spec {
	t.Helper()
	requireRoot(t)
	s := Spec{Name: uniqueName(), N: n, K: k, RateBps: 1e9, BinDir: fakeBinDir(t), RunRoot: t.TempDir(), HealthTimeout: 20 * time.Second, Workers: PerNode,
		ProbeInterval: -1} // the fake daemons do not probe their links
	t.Cleanup(func() {
		if err := Down(s.RunRoot, s.Name, testLogger(t)); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		checkGone(t, s)
	})
	return s
}

func netnsList(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(netnsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// checkGone asserts that nothing of lab s is left: no namespace with its
// prefix, no directory of one in /etc/netns, no run directory, no process whose command line names a file
// of its run directory.
func checkGone(t *testing.T, s Spec) {
	t.Helper()
	if ns, _ := labNamespaces(s.Name); len(ns) > 0 {
		t.Errorf("namespaces left: %v", ns)
	}
	if _, err := os.Lstat(filepath.Join(s.RunRoot, s.Name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run dir left: %v", err)
	}
	if ents, _ := os.ReadDir(etcNetnsDir); len(ents) > 0 {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), s.Name+"-") {
				t.Errorf("%s/%s left", etcNetnsDir, e.Name())
			}
		}
	}
	run := filepath.Join(s.RunRoot, s.Name) + "/"
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(b, []byte(run)) && !gone(pid) {
			t.Errorf("process left: pid %d %q", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
}

// checkApplied asserts that every namespace, interface, MAC, MTU, address
// and veth pairing of the plan exists, and nothing else.
func checkApplied(t *testing.T, p *Plan) {
	t.Helper()
	links := map[string]map[string]netlink.Link{}
	handles := map[string]*netlink.Handle{}
	for _, ns := range p.Namespaces() {
		nsh, err := netns.GetFromPath(filepath.Join(netnsDir, ns))
		if err != nil {
			t.Fatalf("namespace %s: %v", ns, err)
		}
		h, err := netlink.NewHandleAt(nsh, unix.NETLINK_ROUTE)
		nsh.Close()
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		handles[ns] = h
		ls, err := h.LinkList()
		if err != nil {
			t.Fatal(err)
		}
		links[ns] = map[string]netlink.Link{}
		for _, l := range ls {
			links[ns][l.Attrs().Name] = l
		}
		if lo := links[ns]["lo"]; lo == nil || lo.Attrs().Flags&net.FlagUp == 0 {
			t.Errorf("%s: lo not up", ns)
		}
	}
	want := map[string]int{} // interfaces per namespace, lo included
	for _, ns := range p.Namespaces() {
		want[ns] = 1
	}
	end := func(e Endpoint) netlink.Link {
		want[e.Namespace]++
		l := links[e.Namespace][e.Ifname]
		if l == nil {
			t.Fatalf("%s: no %s", e.Namespace, e.Ifname)
		}
		a := l.Attrs()
		if l.Type() != "veth" || !bytes.Equal(a.HardwareAddr, e.MAC) || a.MTU != MTU || a.Flags&net.FlagUp == 0 {
			t.Errorf("%s %s: %s %v mtu %d %v, want veth %v mtu %d up", e.Namespace, e.Ifname, l.Type(), a.HardwareAddr, a.MTU, a.Flags, e.MAC, MTU)
		}
		return l
	}
	for _, l := range append(slices.Clone(p.Links), p.AppLinks...) {
		a, b := end(l.A), end(l.B)
		if a.Attrs().ParentIndex != b.Attrs().Index || b.Attrs().ParentIndex != a.Attrs().Index {
			t.Errorf("%v: ends are not each other's peer", l)
		}
	}
	for ns, n := range want {
		if len(links[ns]) != n {
			t.Errorf("%s has %d interfaces, want %d", ns, len(links[ns]), n)
		}
	}
	for _, l := range p.AppLinks {
		addrs, err := handles[l.A.Namespace].AddrList(links[l.A.Namespace][l.A.Ifname], netlink.FAMILY_ALL)
		if err != nil {
			t.Fatal(err)
		}
		if len(addrs) != 1 || addrs[0].IPNet.String() != l.A.Addr.String() {
			t.Errorf("%s %s: addresses %v, want %v", l.A.Namespace, l.A.Ifname, addrs, l.A.Addr)
		}
	}
}

// run runs a command in a node's namespace and returns its output.
func run(t *testing.T, lab, node string, args ...string) string {
	t.Helper()
	cmd, err := Command(lab, node, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %v\n%s", node, args, err, out)
	}
	return string(out)
}

func TestUpDown(t *testing.T) {
	requireRoot(t)
	for _, c := range []struct{ n, k int }{{2, 1}, {4, 1}} {
		t.Run(fmt.Sprintf("BCube(%d,%d)", c.n, c.k), func(t *testing.T) {
			spec := testSpec(t, c.n, c.k)
			p, err := NewPlan(spec)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			st, err := Up(t.Context(), spec, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("up %v: %v", p.Topology, time.Since(start))
			checkApplied(t, p)

			// The state file records every node and its live daemon.
			saved, err := LoadState(spec.RunRoot, spec.Name)
			if err != nil {
				t.Fatal(err)
			}
			if saved.Phase != PhaseUp || len(saved.Nodes) != len(p.Nodes) || !slices.Equal(saved.Namespaces, p.Namespaces()) {
				t.Fatalf("state: %+v", saved)
			}
			for _, n := range saved.Nodes {
				if n.Pid == 0 || !cmdlineHas(n.Pid, n.Config) {
					t.Errorf("%s: pid %d is not its daemon", n.Name, n.Pid)
				}
			}
			if st.Nodes[0].Pid != saved.Nodes[0].Pid {
				t.Errorf("returned and saved state differ")
			}

			// Status, Stats, List.
			r, err := Status(spec.RunRoot, spec.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range r.Nodes {
				ports := c.k + 2 // eth0..ethk, bc0nic
				if n.Kind == KindSwitch {
					ports = c.n
				}
				if !n.OK() || n.Stats == nil || n.Stats.Ports != ports {
					t.Errorf("status %+v (stats %+v)", n, n.Stats)
				}
			}
			stats, err := Stats(spec.RunRoot, spec.Name, "s0.0")
			if err != nil || stats.Node != "s0.0" || stats.Kind != "swd" || len(stats.Ports) != c.n || stats.Ports[0].Name != "p0" {
				t.Fatalf("Stats(s0.0) = %+v, %v", stats, err)
			}
			if _, err := Stats(spec.RunRoot, spec.Name, "h99"); err == nil || !strings.Contains(err.Error(), "no node") {
				t.Errorf("Stats(h99) = %v", err)
			}
			// Other labs' namespaces may show up as orphans of this run root.
			labs, err := List(spec.RunRoot)
			i := slices.IndexFunc(labs, func(l LabInfo) bool { return !l.Orphan })
			if err != nil || i < 0 || labs[i].Name != spec.Name || labs[i].Alive != len(p.Nodes) || labs[i].Namespaces != len(p.Nodes) {
				t.Fatalf("List = %+v, %v", labs, err)
			}

			// IPv6 is off in every kind of namespace; commands run inside.
			for _, node := range []string{"h0", "s1.0"} {
				out := run(t, spec.Name, node, "cat", "/proc/sys/net/ipv6/conf/all/disable_ipv6",
					"/proc/sys/net/ipv6/conf/default/disable_ipv6", "/proc/net/if_inet6")
				if out != "1\n1\n" {
					t.Errorf("%s: IPv6 settings and addresses %q, want off and none", node, out)
				}
			}
			cmd, _ := Command(spec.Name, "h1", "sh", "-c", "exit 7")
			var exit *exec.ExitError
			if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 7 {
				t.Errorf("exit status: %v", err)
			}
			if _, err := Command(spec.Name, "h99", "true"); err == nil {
				t.Errorf("Command on a missing node")
			}

			start = time.Now()
			if err := Down(spec.RunRoot, spec.Name, testLogger(t)); err != nil {
				t.Fatal(err)
			}
			t.Logf("down %v: %v", p.Topology, time.Since(start))
			checkGone(t, spec)
			if err := Down(spec.RunRoot, spec.Name, testLogger(t)); err != nil {
				t.Fatalf("second Down: %v", err)
			}
		})
	}
}

// Down works from the state file alone after daemons were killed with
// SIGKILL and the lab process forgot everything.
func TestDownAfterKill9(t *testing.T) {
	spec := testSpec(t, 2, 1)
	st, err := Up(t.Context(), spec, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"h1", "s0.1"} {
		n, _ := st.Node(node)
		if err := syscall.Kill(n.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	r, err := Status(spec.RunRoot, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range r.Nodes {
		if killed := n.Name == "h1" || n.Name == "s0.1"; n.Alive == killed || n.OK() == killed {
			t.Errorf("%s: alive %v ok %v", n.Name, n.Alive, n.OK())
		}
	}
	if err := Down(spec.RunRoot, spec.Name, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	checkGone(t, spec)
}

// A daemon that ignores SIGTERM is killed after the grace period.
func TestDownSIGKILL(t *testing.T) {
	spec := testSpec(t, 2, 1)
	t.Setenv("FAKED_NOTERM", "h2")
	st, err := Up(t.Context(), spec, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := st.Node("h2")
	start := time.Now()
	if err := Down(spec.RunRoot, spec.Name, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < StopGrace {
		t.Errorf("Down took %v: h2 ignores SIGTERM and should have had %v", d, StopGrace)
	}
	if !gone(n.Pid) {
		t.Errorf("h2 (pid %d) survived", n.Pid)
	}
	checkGone(t, spec)
}

// When Up fails midway it removes everything it created.
func TestUpFailsMidway(t *testing.T) {
	requireRoot(t)
	// A bin dir with a working swd and a hostd that cannot start.
	badBin := t.TempDir()
	if err := os.Link(filepath.Join(fakeBinDir(t), KindSwitch), filepath.Join(badBin, KindSwitch)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(badBin, KindServer), []byte("#!/bin/sh\necho hostd: cannot start >&2\nexit 127\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, env, envVal string
		binDir            string
		timeout           time.Duration
		cancelAfter       time.Duration
		want              []string
	}{
		{name: "bad bin dir", binDir: badBin, want: []string{"exited before answering /healthz", "exit status 127", "hostd: cannot start"}},
		{name: "daemon exits", env: "FAKED_EXIT", envVal: "h3", want: []string{"h3 (hostd, pid", "exit status 3", "FAKED_EXIT"}},
		{name: "health timeout", env: "FAKED_HANG", envVal: "s1.1", timeout: 1500 * time.Millisecond, want: []string{"timed out after 1.5s", "1 of 8 daemons", "s1.1"}},
		{name: "cancelled", env: "FAKED_HANG", envVal: "all", cancelAfter: 300 * time.Millisecond, want: []string{"context canceled"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := testSpec(t, 2, 1)
			if c.binDir != "" {
				spec.BinDir = c.binDir
			}
			if c.timeout != 0 {
				spec.HealthTimeout = c.timeout
			}
			if c.env != "" {
				t.Setenv(c.env, c.envVal)
			}
			ctx := t.Context()
			if c.cancelAfter != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(c.cancelAfter, cancel)
			}
			st, err := Up(ctx, spec, testLogger(t))
			if err == nil {
				t.Fatalf("Up succeeded: %+v", st)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			checkGone(t, spec) // before the cleanup's Down: Up itself removed everything
		})
	}
}

// Bad inputs are refused before anything is created.
func TestBadInputsCreateNothing(t *testing.T) {
	requireRoot(t)
	root := t.TempDir()
	before := netnsList(t)
	good := Spec{Name: uniqueName(), N: 2, K: 1, BinDir: fakeBinDir(t), RunRoot: root, Workers: PerNode, ProbeInterval: -1}
	for _, c := range []struct {
		name string
		mod  func(*Spec)
		want string
	}{
		{"n", func(s *Spec) { s.N = 1 }, "n = 1"},
		{"k", func(s *Spec) { s.K = 0 }, "k = 0"},
		{"name", func(s *Spec) { s.Name = "Bad-Name" }, "lab name"},
		{"too large", func(s *Spec) { s.N, s.K = 18, 1 }, "too large"},
		{"too large per node", func(s *Spec) { s.N, s.K = 13, 1 }, "a daemon process per node is limited to 160"},
		{"bin dir", func(s *Spec) { s.BinDir = "/nonexistent/bin" }, "no usable hostd binary"},
		{"xdp mode", func(s *Spec) { s.XDPMode = "turbo" }, "xdp_mode"},
		{"loss", func(s *Spec) { s.LossPPM = 2_000_000 }, "loss_ppm 2000000"},
		{"ecn", func(s *Spec) { s.ECNPmax = 2 }, "ecn: want"},
	} {
		s := good
		c.mod(&s)
		if _, err := Up(t.Context(), s, testLogger(t)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Up = %v, want an error about %q", c.name, err, c.want)
		}
	}
	// Others may create namespaces meanwhile: look for ours only.
	for _, ns := range netnsList(t) {
		if !slices.Contains(before, ns) && (strings.HasPrefix(ns, good.Name) || strings.HasPrefix(ns, "Bad")) {
			t.Errorf("namespace %s created", ns)
		}
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("run root has %v", ents)
	}
	if ents, _ := os.ReadDir(etcNetnsDir); len(ents) > 0 {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), good.Name+"-") || strings.HasPrefix(e.Name(), "Bad") {
				t.Errorf("%s/%s created", etcNetnsDir, e.Name())
			}
		}
	}
}

// A name in use is refused, and the refusal leaves the lab using it alone.
func TestNameInUse(t *testing.T) {
	spec := testSpec(t, 2, 1)
	if _, err := Up(t.Context(), spec, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := Up(t.Context(), spec, testLogger(t)); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second Up = %v, want in use", err)
	}
	r, err := Status(spec.RunRoot, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range r.Nodes {
		if !n.OK() {
			t.Errorf("first lab hurt: %+v", n)
		}
	}

	// A stray namespace with the prefix, and no run directory, also means
	// in use; Down removes the stray.
	other := testSpec(t, 2, 1)
	stray := Namespace(other.Name, "x")
	if out, err := exec.Command("ip", "netns", "add", stray).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v %s", err, out)
	}
	if _, err := Up(t.Context(), other, testLogger(t)); err == nil || !strings.Contains(err.Error(), "network namespace "+stray) {
		t.Fatalf("Up = %v, want in use by %s", err, stray)
	}
	labs, err := List(other.RunRoot)
	if err != nil || slices.ContainsFunc(labs, func(l LabInfo) bool { return l.Name == other.Name }) {
		t.Errorf("List = %+v %v (an x node is not lab-like)", labs, err)
	}
	if err := Down(other.RunRoot, other.Name, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	if namespaceExists(stray) {
		t.Errorf("%s survived Down", stray)
	}
}

// Down works on a partial state, and never signals a recorded pid that
// is not the daemon the state names; it stops whatever else runs inside
// the lab's namespaces.
func TestDownPartialState(t *testing.T) {
	spec := testSpec(t, 2, 1)
	p, err := NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	st := newState(p)
	if err := os.MkdirAll(p.LogDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ensureNetnsDir(); err != nil {
		t.Fatal(err)
	}
	// One namespace of four exists, with a process inside; h1's recorded
	// pid is an unrelated process.
	h, err := createNamespace(p.Nodes[0].Namespace, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	inside, _ := Command(spec.Name, "h0", "sleep", "60")
	if err := inside.Start(); err != nil {
		t.Fatal(err)
	}
	go inside.Wait()
	unrelated := exec.Command("sleep", "60")
	if err := unrelated.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unrelated.Process.Kill(); unrelated.Wait() })
	st.Nodes[1].Pid = unrelated.Process.Pid
	st.Nodes[2].Pid = 1 << 30 // no such process
	if err := st.save(); err != nil {
		t.Fatal(err)
	}

	if err := Down(spec.RunRoot, spec.Name, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	checkGone(t, spec)
	if gone(unrelated.Process.Pid) {
		t.Errorf("Down killed an unrelated process")
	}
	time.Sleep(50 * time.Millisecond)
	if !gone(inside.Process.Pid) {
		t.Errorf("the process inside %s survived", p.Nodes[0].Namespace)
	}
}

// Down after the lab process itself died with SIGKILL in the middle of Up:
// a helper process runs Up and is killed once daemons are starting.
func TestDownAfterCrashedUp(t *testing.T) {
	spec := testSpec(t, 4, 1)
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), "LAB_TEST_CRASH_UP="+spec.Name, "LAB_TEST_RUN_ROOT="+spec.RunRoot,
		"LAB_TEST_BIN_DIR="+spec.BinDir, "FAKED_HANG=all")
	helper.Stdout, helper.Stderr = t.Output(), t.Output()
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := LoadState(spec.RunRoot, spec.Name)
		if err == nil && st.Phase == PhaseStarting && st.Nodes[5].Pid != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("helper never got to starting daemons (%v)", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	helper.Process.Kill()
	helper.Wait()
	if ns, _ := labNamespaces(spec.Name); len(ns) != 24 {
		t.Fatalf("%d namespaces after the crash, want 24", len(ns))
	}
	if err := Down(spec.RunRoot, spec.Name, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	checkGone(t, spec)
}

func crashUpHelper() {
	spec := Spec{Name: os.Getenv("LAB_TEST_CRASH_UP"), N: 4, K: 1, RunRoot: os.Getenv("LAB_TEST_RUN_ROOT"),
		BinDir: os.Getenv("LAB_TEST_BIN_DIR"), HealthTimeout: time.Minute, Workers: PerNode}
	_, err := Up(context.Background(), spec, nil)
	fmt.Fprintln(os.Stderr, "crash helper: Up returned", err)
	os.Exit(1)
}
