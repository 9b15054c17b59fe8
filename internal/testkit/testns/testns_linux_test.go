package testns

import (
	"net"
	"os"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

func TestNewIsolates(t *testing.T) {
	RequireRoot(t)
	outer, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Close()

	t.Run("inner", func(t *testing.T) {
		ns := New(t)
		cur, err := netns.Get()
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close()
		if !cur.Equal(ns) || cur.Equal(outer) {
			t.Fatalf("thread is in %v, want new namespace %v (outer %v)", cur, ns, outer)
		}
		DisableIPv6(t)
		a, b := Veth(t, "tns0", "tns1")
		for _, l := range []netlink.Link{a, b} {
			if l.Attrs().MTU != 1500 || l.Attrs().Flags&net.FlagUp == 0 {
				t.Errorf("%s: mtu %d flags %v, want 1500 and up", l.Attrs().Name, l.Attrs().MTU, l.Attrs().Flags)
			}
			v, err := os.ReadFile("/proc/sys/net/ipv6/conf/" + l.Attrs().Name + "/disable_ipv6")
			if err != nil || string(v) != "1\n" {
				t.Errorf("%s: disable_ipv6 %q, %v", l.Attrs().Name, v, err)
			}
		}
	})

	// The subtest's cleanups ran on its own goroutine; this one never left
	// the outer namespace, and the veth is not visible here.
	cur, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	if !cur.Equal(outer) {
		t.Fatalf("outer test moved to %v", cur)
	}
	if _, err := netlink.LinkByName("tns0"); err == nil {
		t.Fatal("veth tns0 leaked into the outer namespace")
	}
}
