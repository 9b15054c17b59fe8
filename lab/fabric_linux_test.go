package lab

// End-to-end tests with the real daemons: real namespaces, veths, AF_XDP
// sockets and XDP programs, and the kernel's ping and tcpdump on top.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/internal/testkit/testns"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/node/config"
	"github.com/cilium/ebpf"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

var real struct {
	once sync.Once
	dir  string
	err  error
}

// realBinDir builds swd and hostd once into a temporary directory.
func realBinDir(t *testing.T) string {
	t.Helper()
	testns.RequireLab(t)
	real.once.Do(func() {
		real.dir, real.err = os.MkdirTemp("", "labreal")
		if real.err != nil {
			return
		}
		for _, c := range []string{KindSwitch, KindServer, WorkerBin} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(real.dir, c), "github.com/bcfab/bcfab/cmd/"+c).CombinedOutput()
			if err != nil {
				real.err = fmt.Errorf("build %s: %v\n%s", c, err, out)
				return
			}
		}
	})
	if real.err != nil {
		t.Fatal(real.err)
	}
	return real.dir
}

// realSpec is a lab of the real daemons, brought down and checked gone —
// namespaces, run dir, processes and XDP programs — when the test ends.
func realSpec(t *testing.T, n, k int) Spec {
	t.Helper()
	requireRoot(t)
	s := Spec{Name: uniqueName(), N: n, K: k, RateBps: 500e6, BinDir: realBinDir(t), RunRoot: t.TempDir(), HealthTimeout: 60 * time.Second}
	progs := xdpPrograms(t)
	t.Cleanup(func() {
		if err := Down(s.RunRoot, s.Name, testLogger(t)); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		checkGone(t, s)
		// The daemons' XDP programs and classifiers are bpf_links of their
		// processes: they are gone with them. The kernel frees them after
		// the process, one RCU grace period per TCX link: a large lab's
		// take seconds.
		deadline := time.Now().Add(20 * time.Second)
		for xdpPrograms(t) > progs && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if now := xdpPrograms(t); now > progs {
			t.Errorf("%d BPF programs left behind (%d before the lab, %d after)", now-progs, progs, now)
		}
	})
	return s
}

// xdpPrograms counts the loaded BPF programs of the kinds the daemons
// use: XDP on every port, the classifier on a server's bc0.
func xdpPrograms(t *testing.T) int {
	t.Helper()
	n := 0
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return n
			}
			t.Fatalf("list BPF programs: %v", err)
		}
		id = next
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue // gone meanwhile
		}
		// The daemons' XDP programs, and the classifiers of servers' bc0.
		if info, err := p.Info(); err == nil && (info.Type == ebpf.XDP && strings.HasPrefix(info.Name, "xdp_redirect") ||
			info.Type == ebpf.SchedCLS && strings.HasPrefix(info.Name, "tc_classify")) {
			n++
		}
		p.Close()
	}
}

func ping(lab, node, dst string) error {
	out, err := exec.Command("ip", "netns", "exec", Namespace(lab, node), "ping", "-c", "1", "-W", "2", "-q", dst).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s -> %s: %v\n%s", node, dst, err, out)
	}
	return nil
}

// Every server pings every other, 2-hop and 4-hop (relayed) alike, and no
// daemon counts a drop.
func TestFabricPingsAllPairs(t *testing.T) {
	for _, c := range []struct{ n, k int }{{2, 1}, {4, 1}} {
		t.Run(fmt.Sprintf("BCube(%d,%d)", c.n, c.k), func(t *testing.T) {
			s := realSpec(t, c.n, c.k)
			st, err := Up(t.Context(), s, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			tp := bcube.MustNew(st.Spec.N, st.Spec.K)
			for src := 0; src < tp.Servers(); src++ {
				for dst := 0; dst < tp.Servers(); dst++ {
					if src != dst {
						if err := ping(s.Name, bcube.HostName(src), bcube.ServerIP(dst).String()); err != nil {
							t.Error(err)
						}
					}
				}
			}
			checkNoDrops(t, s)
			checkPingsInHQ(t, s, tp)
		})
	}
}

// checkPingsInHQ asserts that every fabric port queued the pings (ICMP,
// priority 6) in its HQ and nothing in a data queue.
func checkPingsInHQ(t *testing.T, s Spec, tp bcube.Topology) {
	t.Helper()
	rep, err := Status(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	var hq uint64
	for _, n := range rep.Nodes {
		st, err := Stats(s.RunRoot, s.Name, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Ports {
			for _, q := range p.Queues {
				switch {
				case q.Name == "HQ":
					hq += q.EnqPackets
				case q.EnqPackets != 0 && len(p.Queues) > 1:
					t.Errorf("%s %s queue %s holds %d frames of ICMP traffic", n.Name, p.Name, q.Name, q.EnqPackets)
				}
			}
		}
	}
	// Each echo and reply crosses at least two fabric egresses.
	if pairs := uint64(tp.Servers() * (tp.Servers() - 1)); hq < 4*pairs {
		t.Errorf("HQs carried %d frames for %d pings", hq, pairs)
	}
}

// checkNoDrops asserts that every node is up and that the emulator lost
// no frame anywhere. Frames dropped on purpose (injected loss, a link set
// down) are not drops (PortStats.TotalDrops leaves them out), so a lab
// with injected loss passes when only those were lost. In a run the
// machine was late for (late), the XSK rings' drops are the emulator's
// and only logged (the run's health names them); it returns them.
func checkNoDrops(t *testing.T, s Spec, late ...bool) (ringDrops uint64) {
	t.Helper()
	wasLate := len(late) > 0 && late[0]
	rep, err := Status(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range rep.Nodes {
		if !n.OK() {
			t.Errorf("%s not OK: %+v", n.Name, n)
		}
		st, err := Stats(s.RunRoot, s.Name, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Ports {
			d, rings := p.TotalDrops(), p.RingDrops()
			ringDrops += rings
			if wasLate && rings > 0 {
				// A late run's ring drops are the emulator's, its health
				// says so; any other drop is the scheme's.
				t.Logf("%s %s: %d frames dropped by its XSK rings in a late run", n.Name, p.Name, rings)
				d -= rings
			}
			if d != 0 {
				t.Errorf("%s %s dropped %d: %v xsk %v xdp %v", n.Name, p.Name, d, p.Drops, p.XSK, p.XDP)
			}
		}
	}
	return ringDrops
}

// tcpdump on a switch port shows the frames the switch transmits there
// and, on a patched cable, those it receives there, as on a real
// interface: the daemon sees the capture, and the port's frames are
// written through its veth as well.
func TestFabricTcpdumpOnSwitchPort(t *testing.T) {
	for _, mode := range []string{config.LinksPatch, config.LinksVeth} {
		t.Run(mode, func(t *testing.T) { testTcpdumpOnSwitchPort(t, mode) })
	}
}

func testTcpdumpOnSwitchPort(t *testing.T, mode string) {
	testtool.Require(t, "tcpdump", "capture on a switch port")
	s := realSpec(t, 4, 1)
	s.LinkMode = mode
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	// h0 -> h3 crosses s0.0 and leaves it by p3; h3's replies come in
	// there.
	pcap := filepath.Join(t.TempDir(), "p3.pcap")
	dump := exec.Command("ip", "netns", "exec", Namespace(s.Name, "s0.0"), "timeout", "20", "tcpdump", "-i", "p3", "-U", "-c", "6", "-w", pcap, "vlan and icmp")
	if mode == config.LinksVeth {
		dump.Args[len(dump.Args)-4] = "3" // only what it sends shows
	}
	var stderr bytes.Buffer
	dump.Stderr = &stderr
	if err := dump.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- dump.Wait() }()
	pinger := exec.Command("ip", "netns", "exec", Namespace(s.Name, "h0"), "ping", "-i", "0.2", "-w", "15", "198.18.0.3")
	if err := pinger.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pinger.Process.Kill(); _ = pinger.Wait() }()
	if err := <-done; err != nil {
		t.Fatalf("tcpdump: %v\n%s", err, stderr.String())
	}
	f, err := os.Open(pcap)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, in := 0, 0
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
		eth := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
		ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		switch {
		case ip == nil:
			t.Errorf("captured frame is not IPv4: %v", p)
		case bytes.Equal(eth.SrcMAC, bcube.SwitchPortMAC(0, 0, 3)) && bytes.Equal(eth.DstMAC, bcube.HostPortMAC(3, 0)) &&
			ip.DstIP.Equal(bcube.ServerIP(3).AsSlice()):
			out++
		case bytes.Equal(eth.SrcMAC, bcube.HostPortMAC(3, 0)) && bytes.Equal(eth.DstMAC, bcube.SwitchPortMAC(0, 0, 3)) &&
			ip.SrcIP.Equal(bcube.ServerIP(3).AsSlice()):
			in++
		default:
			t.Errorf("captured frame is neither s0.0 p3 -> h3 nor h3 -> s0.0 p3: %v", p)
		}
	}
	want := 3
	if mode == config.LinksPatch {
		want = 6
		if out == 0 || in == 0 {
			t.Errorf("captured %d frames sent and %d received, want both directions", out, in)
		}
	} else if in != 0 {
		t.Errorf("captured %d received frames on a veth, whose received frames go XDP -> XSK", in)
	}
	if out+in != want {
		t.Fatalf("captured %d frames, want %d", out+in, want)
	}
	checkNoDrops(t, s)
}

// A capture of every frame on a switch port holds exactly what each end
// of the cable transmitted between the tally's snapshots: every frame
// the port sent, and on a patched cable every frame its peer sent toward
// it; nothing else. On a patched cable, the worker's copier wrote
// every copy (and the tally divides them by its instants).
func TestFabricCaptureTally(t *testing.T) {
	for _, mode := range []string{config.LinksPatch, config.LinksVeth} {
		t.Run(mode, func(t *testing.T) { testCaptureTally(t, mode) })
	}
}

func testCaptureTally(t *testing.T, mode string) {
	testtool.Require(t, "tcpdump", "capture on a switch port")
	s := realSpec(t, 4, 1)
	s.LinkMode = mode
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	names, err := ReadEthers(EthersPath(s.RunRoot, s.Name))
	if err != nil {
		t.Fatal(err)
	}
	tally, err := NewTally(s.RunRoot, s.Name, "s0.0", "p3", names)
	if err != nil {
		t.Fatal(err)
	}
	// h0 -> h3 crosses s0.0 and leaves it by p3; h3's replies come in
	// there: 500 pings a second each way, and the links' probes.
	pinger := exec.Command("ip", "netns", "exec", Namespace(s.Name, "h0"), "ping", "-q", "-i", "0.002", "-s", "1000", "-w", "12", "198.18.0.3")
	if err := pinger.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pinger.Process.Kill(); _ = pinger.Wait() }()
	var res CaptureResult
	opts := CaptureOptions{All: true, Duration: 4 * time.Second, Names: names, Result: &res,
		OnFrame: tally.Frame, BeforeStop: func() { _ = tally.Stop() }}
	started := make(chan error, 1)
	opts.OnListening = func() { go func() { started <- tally.Start(t.Context()) }() }
	args, err := tcpdumpArgs("p3", &opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Command(s.Name, "s0.0", args...)
	if err != nil {
		t.Fatal(err)
	}
	if err := runCapture(t.Context(), c, &opts, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	r, err := tally.Result()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\ntcpdump: %+v", r, res)
	if !res.Known || res.DroppedByKernel != 0 {
		t.Errorf("tcpdump's counts %+v: want them said, and nothing dropped", res)
	}
	if !r.Exact() {
		t.Errorf("the capture is not the frames the cable carried:\n%s", r)
	}
	if r.Sent < 500 {
		t.Errorf("s0.0 p3 sent %d frames in the window, want the pings' 500 a second", r.Sent)
	}
	if r.Patched != (mode == config.LinksPatch) {
		t.Errorf("tally says patched %v on a %s cable", r.Patched, mode)
	}
	if r.Patched && r.ReceivedCaptured < 500 {
		t.Errorf("captured %d frames h3 sent, want the replies' 500 a second", r.ReceivedCaptured)
	}
	if r.Patched {
		// The worker's copier wrote the copies, every one, none dropped.
		st, err := Stats(s.RunRoot, s.Name, "s0.0")
		if err != nil {
			t.Fatal(err)
		}
		p := findPort(st, "p3")
		if p == nil || p.Copies["written"] < r.Sent || p.Copies["queue_full"]+p.Copies["write_errors"] != 0 {
			t.Errorf("s0.0 p3's capture copies: %+v", p)
		}
	}
	checkNoDrops(t, s)
}

// kill -9 of a daemon, then down: nothing of the lab is left (checked by
// realSpec's cleanup), and the lab reports the dead daemon first.
func TestFabricDownAfterKill9(t *testing.T) {
	s := realSpec(t, 2, 1)
	st, err := Up(t.Context(), s, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	victim := st.Nodes[rand.IntN(len(st.Nodes))]
	p, err := os.FindProcess(victim.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		rep, err := Status(s.RunRoot, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		dead := false
		for _, n := range rep.Nodes {
			dead = dead || (n.Name == victim.Name && !n.Alive)
		}
		if dead {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status still shows %s alive", victim.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BCube(8,1): 64 servers, 16 switches, 80 daemons come up on this machine,
// a sample of pairs (2- and 4-hop) ping, and it all goes away.
func TestFabricScaleBCube8(t *testing.T) {
	if testing.Short() {
		t.Skip("short: skipping the 80-daemon fabric")
	}
	s := realSpec(t, 8, 1)
	start := time.Now()
	st, err := Up(t.Context(), s, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("BCube(8,1) up in %v", time.Since(start))
	tp := bcube.MustNew(st.Spec.N, st.Spec.K)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 24 {
		src, dst := rng.IntN(tp.Servers()), rng.IntN(tp.Servers())
		if src == dst {
			continue
		}
		if err := ping(s.Name, bcube.HostName(src), bcube.ServerIP(dst).String()); err != nil {
			t.Error(err)
		}
	}
	if err := ping(s.Name, "h0", "198.18.0.63"); err != nil {
		t.Error(err)
	}
	checkNoDrops(t, s)
}
