//go:build linux

package bench

// Open vSwitch's AF_XDP datapath as a device under test, private to one run:
//
//  1. a private directory (OVS_RUNDIR, OVS_DBDIR, OVS_LOGDIR and
//     OVS_SYSCONFDIR point at it): a fresh database, the sockets, pid files
//     and logs; nothing under /var/run/openvswitch or /etc/openvswitch;
//  2. ovsdb-server, then ovs-vswitchd --disable-system (userspace datapath
//     only, no kernel module), both children of this process in the
//     device's namespace, on the device's cores;
//  3. a netdev bridge with p0 and p1 as afxdp ports (OVS loads its own XDP
//     program), its PMD thread on the device's cores;
//  4. the flow table replaced by one rule, in_port=p0,actions=output:p1: a
//     port-to-port path, as swd's and xdpfwd's;
//  5. stop: delete the bridge (OVS detaches its XDP programs), SIGTERM each
//     daemon by pid, detach whatever a dead OVS left on p0 and p1, remove
//     the directory. A start that fails runs stop for what it did.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

const ovsBridge = "ovsbr0" // not br0: the bridge device's name in the same namespace

var ovsTools = []string{"ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl"}

// ovsLookPath finds an OVS tool on PATH or in the sbin directories, which a
// non-login root shell may not have on PATH.
func ovsLookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/usr/local/sbin", "/sbin"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

func ovsSchema() string {
	dir := os.Getenv("OVS_PKGDATADIR")
	if dir == "" {
		dir = "/usr/share/openvswitch"
	}
	return filepath.Join(dir, "vswitch.ovsschema")
}

// OVSMissing says why the ovs device cannot run on this machine (Open
// vSwitch is not installed), or "" when it can.
func OVSMissing() string {
	var missing []string
	for _, t := range ovsTools {
		if _, err := ovsLookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	if _, err := os.Stat(ovsSchema()); err != nil {
		missing = append(missing, ovsSchema())
	}
	if len(missing) == 0 {
		return ""
	}
	return "Open vSwitch is not installed (no " + strings.Join(missing, ", ") + "; Debian: apt-get install openvswitch-switch)"
}

// ovsProc is one OVS process (ovsdb-server or ovs-vswitchd), a child of
// this process.
type ovsProc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited; err is then its Wait's
	err  error
}

func (d *ovsProc) running() bool {
	if d == nil {
		return false
	}
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

// stop ends the daemon by its pid: SIGTERM, SIGKILL after 5 s. Ending by
// our SIGTERM is a clean exit. Errors carry an exit status as text, not as
// an *exec.ExitError, which lab would take for its own command's status.
func (d *ovsProc) stop() error {
	if d == nil {
		return nil
	}
	if d.running() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(5 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
			return fmt.Errorf("bench: %s (pid %d) ignored SIGTERM; killed", d.name, d.cmd.Process.Pid)
		}
	}
	var ee *exec.ExitError
	if errors.As(d.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	if d.err != nil {
		return fmt.Errorf("bench: %s (pid %d): %v", d.name, d.cmd.Process.Pid, d.err)
	}
	return nil
}

// ovsSwitch is a running private Open vSwitch.
type ovsSwitch struct {
	dir            string
	env            []string
	nsName         string
	ns             netns.NsHandle
	db, vswitchd   *ovsProc
	vsctlP, ofctlP string
}

// startOVS brings up OVS between p0 and p1 of the namespace nsName (handle
// ns). xdpMode is swd's: native, generic or auto.
func startOVS(nsName string, ns netns.NsHandle, prefix, xdpMode string, c cores) (o *ovsSwitch, err error) {
	mode, ok := map[string]string{"native": "native", "generic": "generic", "auto": "best-effort"}[xdpMode]
	if !ok {
		return nil, fmt.Errorf("bench: ovs: xdp mode %q (want native, generic or auto)", xdpMode)
	}
	tools := map[string]string{}
	for _, t := range ovsTools {
		if tools[t], err = ovsLookPath(t); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", prefix+"-ovs-")
	if err != nil {
		return nil, err
	}
	o = &ovsSwitch{dir: dir, nsName: nsName, ns: ns, vsctlP: tools["ovs-vsctl"], ofctlP: tools["ovs-ofctl"]}
	defer func() {
		if err != nil {
			err = errors.Join(err, o.stop())
			o = nil
		}
	}()
	o.env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir, "OVS_SYSCONFDIR="+dir)

	// 1. The database.
	db := filepath.Join(dir, "conf.db")
	if out, err := o.command(tools["ovsdb-tool"], "create", db, ovsSchema()).CombinedOutput(); err != nil {
		return o, fmt.Errorf("ovsdb-tool create: %v: %s", err, bytes.TrimSpace(out))
	}
	// 2. The daemons.
	sock := filepath.Join(dir, "db.sock")
	if o.db, err = o.startProc(c, tools["ovsdb-server"], db, "--remote=punix:"+sock); err != nil {
		return o, err
	}
	if err := o.waitFor(o.db, sock); err != nil {
		return o, err
	}
	if _, err := o.vsctl("--no-wait", "init"); err != nil {
		return o, err
	}
	if o.vswitchd, err = o.startProc(c, tools["ovs-vswitchd"], "unix:"+sock, "--disable-system"); err != nil {
		return o, err
	}
	// 3. The bridge and its ports; ovs-vsctl waits until ovs-vswitchd has
	// applied them.
	port := func(name, ofport string) []string {
		return []string{"--", "add-port", ovsBridge, name, "--", "set", "interface", name, "type=afxdp",
			"options:xdp-mode=" + mode, "ofport_request=" + ofport}
	}
	args := []string{"--", "set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0x" + c.mask(),
		"--", "add-br", ovsBridge, "--", "set", "bridge", ovsBridge, "datapath_type=netdev", "fail_mode=secure"}
	args = append(append(args, port("p0", "1")...), port("p1", "2")...)
	if _, err := o.vsctl(args...); err != nil {
		return o, err
	}
	for _, p := range []string{"p0", "p1"} {
		e, err := o.vsctl("get", "interface", p, "error")
		if err != nil {
			return o, err
		}
		if e != "[]" {
			return o, fmt.Errorf("port %s: %s%s", p, e, o.logTail())
		}
	}
	// 4. One rule instead of the default table.
	for _, a := range [][]string{{"del-flows", ovsBridge}, {"add-flow", ovsBridge, "in_port=p0,actions=output:p1"}} {
		if out, err := o.command(o.ofctlP, a...).CombinedOutput(); err != nil {
			return o, fmt.Errorf("ovs-ofctl %s: %v: %s", a[0], err, bytes.TrimSpace(out))
		}
	}
	return o, nil
}

func (o *ovsSwitch) command(path string, args ...string) *exec.Cmd {
	cmd := exec.Command(path, args...)
	cmd.Env = o.env
	return cmd
}

// startProc starts an OVS process in the device's namespace with its
// pid file, control socket and log in the private directory, and what it
// writes on stderr in a file beside the log.
func (o *ovsSwitch) startProc(c cores, path string, args ...string) (*ovsProc, error) {
	name := filepath.Base(path)
	args = append(args, "--pidfile="+filepath.Join(o.dir, name+".pid"), "--unixctl="+filepath.Join(o.dir, name+".ctl"),
		"--log-file="+filepath.Join(o.dir, name+".log"), "-vconsole:off")
	stderr, err := os.Create(filepath.Join(o.dir, name+".stderr"))
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	cmd := o.command("ip", append([]string{"netns", "exec", o.nsName, path}, args...)...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := startOn(cmd.Start, c.device); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &ovsProc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { d.err = cmd.Wait(); close(d.done) }()
	return d, nil
}

// waitFor waits until d has created path.
func (o *ovsSwitch) waitFor(d *ovsProc, path string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if !d.running() {
			return fmt.Errorf("%s exited: %v%s", d.name, d.err, o.logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s after 10 s%s", path, o.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (o *ovsSwitch) vsctl(args ...string) (string, error) {
	return o.vsctlTimeout(20, args...)
}

func (o *ovsSwitch) vsctlTimeout(secs int, args ...string) (string, error) {
	all := append([]string{"--db=unix:" + filepath.Join(o.dir, "db.sock"), fmt.Sprintf("--timeout=%d", secs)}, args...)
	var stderr bytes.Buffer
	cmd := o.command(o.vsctlP, all...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("ovs-vsctl %s: %v: %s%s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()), o.logTail())
	}
	return strings.TrimSpace(string(out)), nil
}

// logTail is the last lines of ovs-vswitchd's log and stderr, for errors.
func (o *ovsSwitch) logTail() string {
	var s string
	for _, f := range []string{"ovs-vswitchd.log", "ovs-vswitchd.stderr"} {
		b, err := os.ReadFile(filepath.Join(o.dir, f))
		if err != nil || len(b) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		s += "\n" + f + ":\n  " + strings.Join(lines[max(0, len(lines)-8):], "\n  ")
	}
	return s
}

// pids are the daemons' process ids (ip netns exec execs the daemon, so
// the child's pid is the daemon's).
func (o *ovsSwitch) pids() []int {
	var p []int
	for _, d := range []*ovsProc{o.db, o.vswitchd} {
		if d != nil {
			p = append(p, d.cmd.Process.Pid)
		}
	}
	return p
}

// stop tears down what startOVS did, whatever state it got to.
func (o *ovsSwitch) stop() error {
	var errs []error
	if o.vswitchd.running() && o.db.running() {
		if _, err := o.vsctlTimeout(5, "--if-exists", "del-br", ovsBridge); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, o.vswitchd.stop(), o.db.stop(), o.cleanLinks(), os.RemoveAll(o.dir))
	return errors.Join(errs...)
}

// cleanLinks leaves the namespace as OVS found it even if OVS died
// holding it: no XDP program on p0 or p1, no ovs-netdev or bridge device.
func (o *ovsSwitch) cleanLinks() error {
	return inNS(o.ns, func() error {
		var errs []error
		for _, n := range []string{"p0", "p1"} {
			l, err := netlink.LinkByName(n)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if x := l.Attrs().Xdp; x != nil && x.Attached {
				errs = append(errs, fmt.Errorf("bench: ovs left an XDP program on %s", n), netlink.LinkSetXdpFd(l, -1))
			}
		}
		for _, n := range []string{"ovs-netdev", ovsBridge} {
			if l, err := netlink.LinkByName(n); err == nil {
				errs = append(errs, netlink.LinkDel(l))
			}
		}
		return errors.Join(errs...)
	})
}
