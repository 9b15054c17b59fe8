package testns

import (
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// New locks the calling goroutine to its OS thread, moves that thread into
// a new network namespace and returns a handle to it. A cleanup moves the
// thread back, closes the handle and unlocks the thread. It calls
// RequireRoot first.
func New(tb testing.TB) netns.NsHandle {
	tb.Helper()
	RequireRoot(tb)

	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		tb.Fatalf("testns: get current netns: %v", err)
	}
	ns, err := netns.New() // unshare(CLONE_NEWNET) on this thread
	if err != nil {
		orig.Close()
		runtime.UnlockOSThread()
		tb.Fatalf("testns: new netns: %v", err)
	}
	tb.Cleanup(func() {
		err := netns.Set(orig)
		ns.Close()
		orig.Close()
		if err != nil {
			// Leave the thread locked: the runtime then discards it
			// when the test goroutine exits, instead of handing a thread
			// in the wrong namespace to other goroutines.
			tb.Errorf("testns: restore netns: %v", err)
			return
		}
		runtime.UnlockOSThread()
	})
	return ns
}

// Veth creates the veth pair a <-> b in the current thread's namespace with
// MTU 1500 and sets both ends up. Call it after New; the pair is deleted by
// a cleanup (and in any case disappears with the namespace).
func Veth(tb testing.TB, a, b string) (netlink.Link, netlink.Link) {
	tb.Helper()
	veth := &netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{Name: a, MTU: 1500},
		PeerName:  b,
		PeerMTU:   1500,
	}
	if err := netlink.LinkAdd(veth); err != nil {
		tb.Fatalf("testns: add veth %s/%s: %v", a, b, err)
	}
	tb.Cleanup(func() {
		// Deleting one end deletes the pair; the namespace may already be
		// gone, which is fine.
		if l, err := netlink.LinkByName(a); err == nil {
			if err := netlink.LinkDel(l); err != nil {
				tb.Logf("testns: delete veth %s: %v", a, err)
			}
		}
	})
	links := make([]netlink.Link, 2)
	for i, name := range []string{a, b} {
		l, err := netlink.LinkByName(name)
		if err != nil {
			tb.Fatalf("testns: veth %s: %v", name, err)
		}
		if err := netlink.LinkSetUp(l); err != nil {
			tb.Fatalf("testns: set %s up: %v", name, err)
		}
		// Re-read so that the returned attributes show the device up.
		if l, err = netlink.LinkByName(name); err != nil {
			tb.Fatalf("testns: veth %s: %v", name, err)
		}
		links[i] = l
	}
	return links[0], links[1]
}

// DisableIPv6 turns IPv6 off in the current thread's namespace for devices
// created afterwards, so that new links stay silent: no router
// solicitations, duplicate address detection or MLD reports that a test
// counting frames would have to tell from its own.
func DisableIPv6(tb testing.TB) {
	tb.Helper()
	// /proc/sys/net shows the namespace of the thread that opens it.
	for _, conf := range []string{"all", "default"} {
		p := "/proc/sys/net/ipv6/conf/" + conf + "/disable_ipv6"
		if err := os.WriteFile(p, []byte("1\n"), 0); err != nil {
			tb.Fatalf("testns: disable IPv6: %v", err)
		}
	}
}
