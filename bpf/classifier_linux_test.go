package bpf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/bcfab/bcfab/internal/testkit/testns"
)

// tcxNext is TCX_NEXT (-1) as prog.Run returns it.
const tcxNext = 0xffffffff

// ipv4 returns an Ethernet/IPv4 frame of protocol proto and DSCP dscp,
// with 40 bytes of payload.
func ipv4(dscp, proto uint8) []byte {
	f := make([]byte, 14+20+40)
	copy(f[0:12], []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[1], ip[9] = 0x45, dscp<<2|1, proto // ECT(1): ECN bits are not DSCP
	binary.BigEndian.PutUint16(ip[2:], 60)
	ip[8] = 64
	copy(ip[12:], []byte{198, 18, 0, 0, 198, 18, 0, 3})
	return f
}

func loadClassifierT(t *testing.T, m map[uint8]uint8) *Classifier {
	t.Helper()
	testns.RequireRoot(t)
	c, err := loadClassifier(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// The class each frame gets, read off the counters: the map first, then
// ICMP's control priority, then best effort; what is not IPv4 stays
// untagged. Every frame goes on.
func TestClassifierRun(t *testing.T) {
	arp := ipv4(0, 0)
	arp[12], arp[13] = 0x08, 0x06
	v6 := ipv4(0, 0)
	v6[12], v6[13], v6[14] = 0x86, 0xdd, 0x60
	for _, c := range []struct {
		name  string
		m     map[uint8]uint8
		frame []byte
		class int // 8: untagged
	}{
		{"RoCE's DSCP 26 -> 3", map[uint8]uint8{26: 3}, ipv4(26, 17), 3},
		{"DSCP 46 -> 5", map[uint8]uint8{26: 3, 46: 5}, ipv4(46, 6), 5},
		{"unmapped TCP: best effort", map[uint8]uint8{26: 3}, ipv4(10, 6), 0},
		{"unmapped ICMP: control", map[uint8]uint8{26: 3}, ipv4(0, 1), 6},
		{"mapped ICMP: the map", map[uint8]uint8{0: 3}, ipv4(0, 1), 3},
		{"DSCP 0 mapped", map[uint8]uint8{0: 3}, ipv4(0, 6), 3},
		{"empty map", nil, ipv4(26, 17), 0},
		{"ARP", map[uint8]uint8{26: 3}, arp, 8},
		{"IPv6", map[uint8]uint8{26: 3}, v6, 8},
		{"runt", nil, arp[:20], 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := loadClassifierT(t, c.m)
			for i := 1; i <= 3; i++ {
				ret, err := cl.objs.TcClassify.Run(&ebpf.RunOptions{Data: c.frame})
				if err != nil {
					t.Fatal(err)
				}
				if ret != tcxNext {
					t.Errorf("returned %#x, want TCX_NEXT", ret)
				}
				cnt, err := cl.Counters()
				if err != nil {
					t.Fatal(err)
				}
				var want ClassifierCounters
				if c.class == 8 {
					want.Untagged = ClassCount{uint64(i), uint64(i * len(c.frame))}
				} else {
					want.Classes[c.class] = ClassCount{uint64(i), uint64(i * len(c.frame))}
				}
				if cnt != want {
					t.Errorf("after %d frames: %+v, want %+v", i, cnt, want)
				}
			}
		})
	}
	if _, err := loadClassifier(map[uint8]uint8{64: 3}); err == nil {
		t.Error("DSCP 64 accepted")
	}
	if _, err := loadClassifier(map[uint8]uint8{26: 8}); err == nil {
		t.Error("priority 8 accepted")
	}
}

// tcxPrograms is the number of TCX egress programs on ifindex.
func tcxPrograms(t *testing.T, ifindex int) int {
	t.Helper()
	r, err := link.QueryPrograms(link.QueryOptions{Target: ifindex, Attach: ebpf.AttachTCXEgress})
	if err != nil {
		t.Fatal(err)
	}
	return len(r.Programs)
}

func TestClassifierAttach(t *testing.T) {
	testns.New(t)
	a, _ := testns.Veth(t, "ca", "cb")
	c, err := AttachClassifier(a.Attrs().Index, map[uint8]uint8{26: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Attached() || tcxPrograms(t, a.Attrs().Index) != 1 {
		t.Errorf("attached %v, %d programs on the egress", c.Attached(), tcxPrograms(t, a.Attrs().Index))
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := tcxPrograms(t, a.Attrs().Index); n != 0 {
		t.Errorf("%d programs after Close", n)
	}
	if _, err := AttachClassifier(1<<30, nil); err == nil {
		t.Error("attach to a missing device: no error")
	}
}

// The attachment is a TCX link: a process that attached it and is killed
// with SIGKILL leaves nothing on the device.
func TestClassifierDiesWithProcess(t *testing.T) {
	testns.New(t)
	a, _ := testns.Veth(t, "ca", "cb")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BPF_TEST_TCX_CHILD="+strconv.Itoa(a.Attrs().Index))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make([]byte, 64)
	n, err := stdout.Read(line)
	if err != nil || !bytes.HasPrefix(line[:n], []byte("attached")) {
		t.Fatalf("child: %q, %v", line[:n], err)
	}
	if n := tcxPrograms(t, a.Attrs().Index); n != 1 {
		t.Fatalf("child attached, but the egress has %d programs", n)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for tcxPrograms(t, a.Attrs().Index) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the classifier is still attached after its owner was killed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tcxChild attaches the classifier to ifindex s, says so, and waits to be
// killed.
func tcxChild(s string) int {
	ifindex, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if _, err := AttachClassifier(ifindex, map[uint8]uint8{26: 3}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("attached")
	time.Sleep(time.Minute)
	return 1
}
