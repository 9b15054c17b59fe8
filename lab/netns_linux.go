package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

var netnsDirMu sync.Mutex

// ensureNetnsDir makes /run/netns a shared mount point, as ip netns add
// does, so that namespaces mounted there later show up in every mount
// namespace, including the private one ip netns exec gives each daemon.
func ensureNetnsDir() error {
	netnsDirMu.Lock()
	defer netnsDirMu.Unlock()
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", netnsDir, err)
	}
	bound := false
	for {
		err := unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EINVAL) || bound {
			return fmt.Errorf("make %s a shared mount: %w", netnsDir, err)
		}
		// Not a mount point yet: bind it onto itself first.
		if err := unix.Mount(netnsDir, netnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind-mount %s: %w", netnsDir, err)
		}
		bound = true
	}
}

// createNamespace creates the named network namespace /run/netns/<name>,
// turns IPv6 off and lo up in it, runs setup inside it, and returns a
// netlink handle bound to it.
//
// The work runs on a dedicated, locked OS thread that moves into the new
// namespace and is never unlocked: the Go runtime ends such a thread when
// its goroutine returns, so no other goroutine ever runs in the lab's
// namespace by accident.
func createNamespace(name string, setup func(h *netlink.Handle) error) (*netlink.Handle, error) {
	type result struct {
		h   *netlink.Handle
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		h, err := enterNewNamespace(name, setup)
		done <- result{h, err}
	}()
	r := <-done
	if r.err != nil {
		return nil, fmt.Errorf("namespace %s: %w", name, r.err)
	}
	return r.h, nil
}

// enterNewNamespace runs on a locked thread that it moves into a new
// network namespace.
func enterNewNamespace(name string, setup func(h *netlink.Handle) error) (*netlink.Handle, error) {
	path := filepath.Join(netnsDir, name)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if errors.Is(err, os.ErrExist) {
		return nil, errors.New("already exists")
	}
	if err != nil {
		return nil, err
	}
	f.Close()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("unshare: %w", err)
	}
	self := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
	if err := unix.Mount(self, path, "none", unix.MS_BIND, ""); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("bind-mount: %w", err)
	}
	// /proc/sys/net shows the namespace of the thread that opens it.
	// Only IPv4 and ARP should ever leave a lab interface: no router
	// solicitations, no MLD, no DAD.
	for _, conf := range []string{"all", "default"} {
		p := "/proc/sys/net/ipv6/conf/" + conf + "/disable_ipv6"
		if err := os.WriteFile(p, []byte("1"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("disable IPv6: %w", err)
		}
	}
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink: %w", err)
	}
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetUp(lo)
	}
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("lo up: %w", err)
	}
	if setup != nil {
		if err := setup(h); err != nil {
			h.Close()
			return nil, err
		}
	}
	return h, nil
}

// deleteNamespace unmounts and removes /run/netns/<name>. The kernel
// destroys the namespace, and the veths in it, once nothing holds it; it
// is not an error if it does not exist.
func deleteNamespace(name string) error {
	path := filepath.Join(netnsDir, name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("delete namespace %s: unmount: %w", name, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	return nil
}

// namespaceExists reports whether /run/netns/<name> is a mounted network
// namespace.
func namespaceExists(name string) bool {
	_, ok := namespaceInode(name)
	return ok
}

// namespaceInode returns the inode of the network namespace mounted at
// /run/netns/<name>; ok is false when nothing of type nsfs is mounted
// there.
func namespaceInode(name string) (ino uint64, ok bool) {
	path := filepath.Join(netnsDir, name)
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil || fs.Type != unix.NSFS_MAGIC {
		return 0, false
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, false
	}
	return st.Ino, true
}

// processNetns returns the inode of pid's network namespace; ok is false
// for a process that is gone or a zombie.
func processNetns(pid int) (ino uint64, ok bool) {
	link, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return 0, false
	}
	s, found := strings.CutPrefix(link, "net:[")
	if !found {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64)
	return v, err == nil
}

// residents returns the pids of every process whose network namespace is
// one of inodes (inode -> namespace name), with that namespace's name.
func residents(inodes map[uint64]string) map[int]string {
	out := map[int]string{}
	if len(inodes) == 0 {
		return out
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if ino, ok := processNetns(pid); ok {
			if ns, ok := inodes[ino]; ok {
				out[pid] = ns
			}
		}
	}
	return out
}
