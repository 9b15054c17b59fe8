package lab

// Hostile frames into the live ports of a real lab: runts, foreign and bad
// EtherTypes, bad MAC control opcodes and signal headers, bad VLAN tags,
// truncated IPv4, UDP and BTH, frames for nobody, oversize frames. They
// are written with a packet socket from the namespace of the port's peer,
// on its veth end, so they reach the node's XDP program and AF_XDP socket
// exactly as a neighbour's frames do, while a flow crosses the same ports.
// Then the fuzzers' corpora (the seed files go test replays) the same way.

import (
	"encoding/binary"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/roce"
	"golang.org/x/sys/unix"
)

// hostileFrame is one frame of the corpus and what the receiving node
// must do with it: drop it and count it under drop reason Drop, or take
// it as a flow-control frame that is not its own and count it under its
// signals' "ignored" (Ignored).
type hostileFrame struct {
	name    string
	frame   []byte
	drop    string
	ignored bool
}

// hostile frames' addresses: a MAC no node has, and an address of the
// benchmarking block that is no server of a BCube(2,1) (ServerIndex -1).
var (
	foreignMAC = net.HardwareAddr{0x02, 0xbc, 0xfa, 0xb0, 0x0b, 0xad}
	nobodyIP   = netip.MustParseAddr("198.18.0.200")
)

// ethFrame is dst, src, EtherType and body.
func ethFrame(dst net.HardwareAddr, et uint16, body []byte) []byte {
	b := append(slices.Clone([]byte(dst)), foreignMAC...)
	b = binary.BigEndian.AppendUint16(b, et)
	return append(b, body...)
}

// vlanFrame is ethFrame with an 802.1Q tag (pcp, vid) before et.
func vlanFrame(dst net.HardwareAddr, pcp uint8, vid uint16, et uint16, body []byte) []byte {
	tag := binary.BigEndian.AppendUint16(nil, uint16(pcp)<<13|vid&0xfff)
	tag = binary.BigEndian.AppendUint16(tag, et)
	return ethFrame(dst, 0x8100, append(tag, body...))
}

// ipv4UDP is an IPv4 header (version/IHL byte vihl, total length tl) and
// a UDP header to dport, then payload; tl 0 means the true length.
func ipv4UDP(vihl byte, tl int, src, dst netip.Addr, dport uint16, payload []byte) []byte {
	udp := binary.BigEndian.AppendUint16(nil, 40000)
	udp = binary.BigEndian.AppendUint16(udp, dport)
	udp = binary.BigEndian.AppendUint16(udp, uint16(8+len(payload)))
	udp = append(udp, 0, 0)
	udp = append(udp, payload...)
	if tl == 0 {
		tl = 20 + len(udp)
	}
	ip := []byte{vihl, 0}
	ip = binary.BigEndian.AppendUint16(ip, uint16(tl))
	ip = append(ip, 0, 0, 0x40, 0, 64, 17, 0, 0)
	ip = append(ip, src.AsSlice()...)
	ip = append(ip, dst.AsSlice()...)
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
	return append(ip, udp...)
}

// hostileCorpus is the corpus for a node of kind swd or hostd that
// receives on a port whose peer is a server at the frames' source side
// (peer) or a switch, under scheme fc. self is the receiving server
// (hostd) or the server on the other end (swd); other is a server that
// the receiver would send back out of the receiving port (a hairpin).
func hostileCorpus(t *testing.T, kind, fc string, self, other int) []hostileFrame {
	t.Helper()
	bcast := net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	selfIP, otherIP := bcube.ServerIP(self), bcube.ServerIP(other)
	pfc := scheme.OverPFC(fc)
	var c []hostileFrame
	add := func(name string, b []byte, drop string) {
		c = append(c, hostileFrame{name: name, frame: b, drop: drop})
	}

	// Runts: a packet socket writes no less than an Ethernet header.
	add("runt: Ethernet header, IPv4, no IP header", ethFrame(foreignMAC, 0x0800, nil), "malformed")
	add("runt: half a VLAN tag", ethFrame(foreignMAC, 0x8100, []byte{0x60}), "malformed")
	add("runt: IPv4 header cut at 10 bytes", ethFrame(foreignMAC, 0x0800, ipv4UDP(0x45, 0, nobodyIP, selfIP, 9, nil)[:10]), "malformed")

	// Foreign and bad EtherTypes.
	add("EtherType IPv6", ethFrame(foreignMAC, 0x86dd, make([]byte, 40)), "unsupported")
	add("EtherType 0x1234", ethFrame(foreignMAC, 0x1234, make([]byte, 46)), "unsupported")
	add("LLDP", ethFrame(net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 0x0e}, 0x88cc, make([]byte, 46)), "unsupported")
	arp := []byte{0, 1, 8, 0, 6, 4, 0, 1}
	arp = append(arp, foreignMAC...)
	arp = append(arp, nobodyIP.AsSlice()...)
	arp = append(arp, make([]byte, 6)...)
	arp = append(arp, selfIP.AsSlice()...)
	add("ARP request from the fabric side", ethFrame(bcast, 0x0806, arp), "unsupported")
	badARP := slices.Clone(arp)
	badARP[4] = 7 // hardware address length
	add("ARP with a hardware address of 7 bytes", ethFrame(bcast, 0x0806, badARP), "malformed")

	// MAC control: 802.3x PAUSE, a short PFC, PFC enabling no class.
	pause := make([]byte, 46)
	binary.BigEndian.PutUint16(pause, 0x0001)
	binary.BigEndian.PutUint16(pause[2:], 0xffff)
	add("MAC control opcode 0x0001 (802.3x PAUSE)", ethFrame(net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 1}, 0x8808, pause), "malformed")
	add("MAC control opcode 0x0101 cut at 4 bytes", ethFrame(net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 1}, 0x8808, []byte{0x01, 0x01, 0, 0x08}), "malformed")
	noClass := make([]byte, 46)
	binary.BigEndian.PutUint16(noClass, 0x0101)
	add("PFC enabling no class", ethFrame(net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 1}, 0x8808, noClass), "malformed")
	if !pfc {
		// A well-formed PFC frame (class 7 resumed) at a node that runs
		// no PFC.
		b := make([]byte, 64)
		var q [8]uint16
		n := signaling.PutPFC(b, foreignMAC, 0x80, &q)
		add("PFC at a node without PFC", b[:n], "unsupported")
	}

	// Signal frames (EtherType 0x88B5) with bad headers, and a
	// well-formed one of a scheme the node does not run.
	sig := func(mod func(b []byte)) []byte {
		b := make([]byte, signaling.FrameLen)
		signaling.PutPortFC(b, foreignMAC, foreignMAC, signaling.TypePause, signaling.FlagRelayed, 1, signaling.ClassB, 0, 0, 0)
		mod(b)
		return b
	}
	add("signal of version 9", sig(func(b []byte) { b[14] = 9 }), "malformed")
	add("signal of type 7", sig(func(b []byte) { b[16] = 7 }), "malformed")
	add("signal of unknown flags", sig(func(b []byte) { b[17] = 0x80 }), "malformed")
	add("signal cut to its Ethernet header and 4 bytes", sig(func(b []byte) {})[:18], "malformed")
	foreign := make([]byte, signaling.FrameLen)
	switch fc {
	case scheme.NamePortFC:
		signaling.PutBFC(foreign, foreignMAC, foreignMAC, signaling.TypePause, 1, 0, 0, 0)
	default:
		signaling.PutPortFC(foreign, foreignMAC, foreignMAC, signaling.TypePause, signaling.FlagRelayed, 1, signaling.ClassB, 0, 0, 0)
	}
	if pfc {
		add("signal at a node that runs PFC", foreign, "unsupported")
	} else {
		c = append(c, hostileFrame{name: "signal of another scheme", frame: foreign, ignored: true})
	}

	// Bad VLAN tags.
	add("two VLAN tags", vlanFrame(foreignMAC, 3, 1, 0x8100, make([]byte, 46)), "unsupported")
	add("VLAN tag, then nothing", ethFrame(foreignMAC, 0x8100, []byte{0x60, 0x01}), "malformed")
	add("VID 4095 PCP 7 to no server", vlanFrame(foreignMAC, 7, 4095, 0x0800, ipv4UDP(0x45, 0, nobodyIP, nobodyIP, 9, make([]byte, 18))), "no_route")

	// Bad and truncated IPv4.
	add("IPv4 of version 6", ethFrame(foreignMAC, 0x0800, ipv4UDP(0x65, 0, nobodyIP, selfIP, 9, make([]byte, 18))), "malformed")
	add("IPv4 header length 16", ethFrame(foreignMAC, 0x0800, ipv4UDP(0x44, 0, nobodyIP, selfIP, 9, make([]byte, 18))), "malformed")
	add("IPv4 longer than its frame", ethFrame(foreignMAC, 0x0800, ipv4UDP(0x45, 1000, nobodyIP, selfIP, 9, make([]byte, 18))), "malformed")
	add("IPv4 total length under its header", ethFrame(foreignMAC, 0x0800, ipv4UDP(0x45, 12, nobodyIP, selfIP, 9, make([]byte, 18))), "malformed")
	add("IPv4 to no server", ethFrame(foreignMAC, 0x0800, ipv4UDP(0x45, 0, selfIP, nobodyIP, 9, make([]byte, 18))), "no_route")
	add("oversize: 1514 bytes to no server", ethFrame(foreignMAC, 0x0800, ipv4UDP(0x45, 0, selfIP, nobodyIP, 9, make([]byte, 1500-28))), "no_route")
	add("oversize: 1518 bytes tagged to no server", vlanFrame(foreignMAC, 3, 0, 0x0800, ipv4UDP(0x45, 0, selfIP, nobodyIP, 9, make([]byte, 1500-28))), "no_route")

	// Truncated UDP and BTH, and RoCE frames for no queue pair of the
	// receiver, with a good ICRC unless said.
	roceFlow := roce.Flow{PCP: 3, DestQP: 0xabcdef}
	copy(roceFlow.SrcMAC[:], foreignMAC)
	copy(roceFlow.DstMAC[:], foreignMAC)
	roceFlow.SrcIP, roceFlow.DstIP = otherIP.As4(), selfIP.As4()
	ack := make([]byte, roce.AckLen)
	roce.PutAck(ack, &roceFlow, roce.ACKSyndrome(0), 1, 1)
	udpCut := ipv4UDP(0x45, 22, nobodyIP, selfIP, roce.UDPPort, make([]byte, 18))[:22] // 2 bytes of UDP
	bthCut := ipv4UDP(0x45, 0, otherIP, selfIP, roce.UDPPort, make([]byte, 6))         // 6 bytes of BTH
	switch kind {
	case "swd":
		// A switch forwards IPv4 without reading past its header: to
		// the server it came from, these are hairpins.
		add("UDP cut at 2 bytes, back to its sender", ethFrame(foreignMAC, 0x0800, udpCut), "hairpin")
		add("BTH cut at 6 bytes, back to its sender", ethFrame(foreignMAC, 0x0800, bthCut), "hairpin")
		add("RoCE ACK back to its sender", ack, "hairpin")
	case "hostd":
		// What the server would relay back out of the port it came in by.
		add("IPv4 relayed back to the switch it came from", ethFrame(foreignMAC, 0x0800, ipv4UDP(0x45, 0, nobodyIP, otherIP, 9, make([]byte, 18))), "hairpin")
		add("BTH cut at 6 bytes", ethFrame(foreignMAC, 0x0800, bthCut), "malformed")
		bad := slices.Clone(ack)
		bad[len(bad)-1] ^= 0xff
		add("RoCE ACK with a bad ICRC", bad, "malformed")
		add("RoCE ACK for no queue pair", ack, "unsupported")
		rnr := make([]byte, roce.AckLen)
		roce.PutAck(rnr, &roceFlow, roce.RNRSyndrome(1), 1, 1)
		add("RoCE RNR NAK", rnr, "unsupported")
		cnp := make([]byte, roce.CNPLen)
		roce.PutCNP(cnp, &roceFlow)
		add("CNP for no queue pair", cnp, "unsupported")
	default:
		t.Fatalf("hostile corpus: node kind %q", kind)
	}
	return c
}

// injectFrames writes every frame reps times, as they are, out of
// interface ifname of node's namespace in lab name, by a packet socket
// that receives nothing (so the node's daemon, which watches its
// namespace for captures, keeps its AF_XDP transmit path). A short pause
// every 64 frames keeps the peer's receive ring from overflowing.
func injectFrames(t *testing.T, name, node, ifname string, frames [][]byte, reps int) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		// Never unlocked: the runtime ends the thread, still in the
		// lab's namespace, with the goroutine.
		runtime.LockOSThread()
		done <- func() error {
			ns, err := unix.Open(netnsDir+"/"+Namespace(name, node), unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(ns)
			if err := unix.Setns(ns, unix.CLONE_NEWNET); err != nil {
				return fmt.Errorf("enter %s: %w", node, err)
			}
			ifi, err := net.InterfaceByName(ifname)
			if err != nil {
				return err
			}
			fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifi.Index}); err != nil {
				return err
			}
			sent := 0
			for r := 0; r < reps; r++ {
				for i, b := range frames {
					if _, err := unix.Write(fd, b); err != nil {
						return fmt.Errorf("frame %d (%d bytes): %w", i, len(b), err)
					}
					if sent++; sent%64 == 0 {
						time.Sleep(2 * time.Millisecond)
					}
				}
			}
			return nil
		}()
	}()
	if err := <-done; err != nil {
		t.Fatalf("inject into %s's peer from %s %s: %v", node, node, ifname, err)
	}
}

// portCounters are the counters of one port that hostile frames move.
type portCounters struct {
	drops   map[string]uint64
	ignored uint64
	xsk     uint64
}

func portOf(t *testing.T, s Spec, node, port string) portCounters {
	t.Helper()
	st, err := Stats(s.RunRoot, s.Name, node)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Ports {
		if p.Name == port {
			return portCounters{drops: maps.Clone(p.Drops), ignored: p.Signals["ignored"], xsk: p.RingDrops()}
		}
	}
	t.Fatalf("%s has no port %s", node, port)
	return portCounters{}
}

// fuzzCorpora are the seed corpora of the fuzz targets that parse whole
// frames, as go test replays them (testdata/fuzz/<target>/ of their
// packages).
var fuzzCorpora = []string{
	"../wire/header/testdata/fuzz/FuzzParse",
	"../wire/roce/testdata/fuzz/FuzzParse",
	"../signaling/testdata/fuzz/FuzzParseSignal",
	"../signaling/testdata/fuzz/FuzzParsePFC",
}

// fuzzFrames reads every input of fuzzCorpora (each a file of the
// fuzzer's format, "go test fuzz v1" and one []byte). The targets parse
// whole frames, so the inputs are written as they are; the few shorter
// than an Ethernet header, which a packet socket does not write, are
// padded with zeros to one.
func fuzzFrames(t *testing.T) [][]byte {
	t.Helper()
	var frames [][]byte
	for _, dir := range fuzzCorpora {
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil || len(files) == 0 {
			t.Fatalf("corpus %s: %d files, %v", dir, len(files), err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			arg, ok := strings.CutPrefix(lines[len(lines)-1], "[]byte(")
			if len(lines) != 2 || lines[0] != "go test fuzz v1" || !ok {
				t.Fatalf("%s: not one []byte of a fuzz corpus", f)
			}
			frame, err := strconv.Unquote(strings.TrimSuffix(arg, ")"))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(frame) < 14 {
				frame += strings.Repeat("\x00", 14-len(frame))
			}
			frames = append(frames, []byte(frame))
		}
	}
	return frames
}

// Under every lossless scheme, on a live BCube(2,1): while h1 sends a
// flow to h0 through s0.0, the hostile corpus is written into s0.0's port
// p0 (from h0's eth0) and into h0's eth0 (from s0.0's p0), each frame 20
// times: every hostile frame is counted at the port it came in by under
// the drop reason (or the ignored signals) the corpus names, and nothing
// else is dropped anywhere. Then the fuzzers' corpora are written into
// the same ports, each input 3 times, while the flow still crosses them:
// whatever a node forwards of them may be dropped further on, but only
// on receive, under a reason. Every node is still up; at every port of
// every node each frame received is forwarded, consumed or dropped
// under a reason, and the XDP program redirected exactly what the
// daemon received (the kernel's ring dropping nothing); no node lost a
// frame for want of room; the links' round trips are still the nodes'
// own (no forged probe entered them); and the flow delivers every frame
// it sent, in order.
//
// The cables are veths: frames written into a patched cable's veth are
// capture copies to its XDP program, dropped and counted as "mirror"
// before any daemon sees them, so hostile frames reach a daemon only
// through a veth cable (or from its peer's engine, which builds its own).
func TestHostileFramesLab(t *testing.T) {
	const reps, fuzzReps = 20, 3
	fuzz := fuzzFrames(t)
	for _, fc := range []string{scheme.NamePortFC, scheme.NamePFC, scheme.NamePFCStar, scheme.NameBFC} {
		t.Run(fc, func(t *testing.T) {
			s := realSpec(t, 2, 1)
			s.FC, s.RateBps, s.LinkMode = fc, 20e6, config.LinksVeth
			if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
				t.Fatal(err)
			}
			// The frames below cross the flow's ports while it runs: they
			// are written within about 0.2 s of its start (logged), and
			// the test fails if the flow ended first.
			flowStart := time.Now()
			if _, err := StartFlow(s.RunRoot, s.Name, "h1", api.GenRequest{Dst: 0, Duration: int64(1500 * time.Millisecond)}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "h0 hearing h1's flow", func() bool {
				r, err := Flows(s.RunRoot, s.Name, "h0")
				return err == nil && len(r.Sink) == 1 && r.Sink[0].Packets > 0
			})

			targets := []struct {
				node, port, from, fromPort, kind string
				self, other                      int
			}{
				{"s0.0", "p0", "h0", "eth0", "swd", 0, 1},
				{"h0", "eth0", "s0.0", "p0", "hostd", 0, 1},
			}
			for _, tg := range targets {
				corpus := hostileCorpus(t, tg.kind, fc, tg.self, tg.other)
				want := map[string]uint64{}
				var wantIgnored uint64
				var frames [][]byte
				for _, h := range corpus {
					frames = append(frames, h.frame)
					if h.ignored {
						wantIgnored += reps
					} else {
						want[h.drop] += reps
					}
				}
				before := portOf(t, s, tg.node, tg.port)
				injectFrames(t, s.Name, tg.from, tg.fromPort, frames, reps)
				var after portCounters
				// The node counts what it received within its next
				// polls; the ring may hand it over a little later.
				waitFor(t, 5*time.Second, tg.node+" counting the hostile frames", func() bool {
					after = portOf(t, s, tg.node, tg.port)
					var n, w uint64
					for r, v := range after.drops {
						n += v - before.drops[r]
					}
					for _, v := range want {
						w += v
					}
					return n+after.ignored-before.ignored >= w+wantIgnored
				})
				got := map[string]uint64{}
				for r, v := range after.drops {
					if d := v - before.drops[r]; d != 0 {
						got[r] = d
					}
				}
				if !maps.Equal(got, want) {
					t.Errorf("%s %s: %d frames of %d kinds counted as %v, want %v", tg.node, tg.port, reps*len(corpus), len(corpus), got, want)
					for _, h := range corpus {
						t.Logf("  %-50s %s", h.name, map[bool]string{true: "ignored signal", false: h.drop}[h.ignored])
					}
				}
				t.Logf("%s %s: %d hostile frames (%d kinds x %d) counted: drops %v, ignored signals %d", tg.node, tg.port, reps*len(corpus), len(corpus), reps, got, after.ignored-before.ignored)
				if d := after.ignored - before.ignored; d != wantIgnored {
					t.Errorf("%s %s: %d signals ignored, want %d", tg.node, tg.port, d, wantIgnored)
				}
				if after.xsk != before.xsk {
					t.Errorf("%s %s: the receive ring dropped %d frames", tg.node, tg.port, after.xsk-before.xsk)
				}
			}

			// The hostile frames are the only drops so far.
			rep, err := Status(s.RunRoot, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			drops0 := map[string]map[string]uint64{} // by node and port
			for _, n := range rep.Nodes {
				st, err := Stats(s.RunRoot, s.Name, n.Name)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range st.Ports {
					drops0[n.Name+" "+p.Name] = maps.Clone(p.Drops)
					injected := (n.Name == "s0.0" && p.Name == "p0") || (n.Name == "h0" && p.Name == "eth0")
					if d := p.TotalDrops(); d != 0 && !injected {
						t.Errorf("%s %s dropped %d: %v xsk %v", n.Name, p.Name, d, p.Drops, p.XSK)
					}
				}
			}

			// The fuzzers' corpora, while the flow still crosses both
			// ports.
			for _, tg := range targets {
				before := rxOf(t, s, tg.node, tg.port)
				injectFrames(t, s.Name, tg.from, tg.fromPort, fuzz, fuzzReps)
				waitFor(t, 5*time.Second, fmt.Sprintf("%s %s receiving %d fuzz inputs", tg.node, tg.port, fuzzReps*len(fuzz)), func() bool {
					return rxOf(t, s, tg.node, tg.port) >= before+uint64(fuzzReps*len(fuzz))
				})
			}
			t.Logf("the hostile frames and fuzz inputs written %v into h1's flow", time.Since(flowStart).Round(time.Millisecond))
			if r, err := Flows(s.RunRoot, s.Name, "h1"); err != nil || len(r.Flows) != 1 || r.Flows[0].Done {
				t.Errorf("h1's flow ended before the fuzz inputs were written: the test proves less than it says (%v)", err)
			}

			// The flow ends and drains; its every frame arrived.
			var sent uint64
			waitFor(t, 15*time.Second, "h1's flow to end", func() bool {
				r, err := Flows(s.RunRoot, s.Name, "h1")
				if err != nil || len(r.Flows) != 1 || !r.Flows[0].Done {
					return false
				}
				sent = r.Flows[0].Packets
				sink, err := Flows(s.RunRoot, s.Name, "h0")
				return err == nil && len(sink.Sink) == 1 && sink.Sink[0].Packets == sent
			})
			sink, err := Flows(s.RunRoot, s.Name, "h0")
			if err != nil {
				t.Fatal(err)
			}
			if f := sink.Sink[0]; f.Gaps != 0 || f.Packets != sent || sent == 0 {
				t.Errorf("h1 -> h0: %d frames sent, %d received, %d missing", sent, f.Packets, f.Gaps)
			}

			// Every node is up, and accounts for every frame.
			rep, err = Status(s.RunRoot, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range rep.Nodes {
				if !n.OK() {
					t.Errorf("%s not OK after the hostile frames: %+v", n.Name, n)
				}
				accounted(t, s, n.Name, drops0)
			}
		})
	}
}

// rxOf is the frames port of node has received.
func rxOf(t *testing.T, s Spec, node, port string) uint64 {
	t.Helper()
	st, err := Stats(s.RunRoot, s.Name, node)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Ports {
		if p.Name == port {
			return p.RxPackets
		}
	}
	t.Fatalf("%s has no port %s", node, port)
	return 0
}

// accounted checks every port of node: each frame it received was
// forwarded, consumed or dropped under a receive reason; its XDP program
// redirected to the daemon exactly what the daemon received (waiting a
// little for frames still in the ring); the kernel's rings dropped
// nothing and no queue lost a frame for want of room or to the
// watchdog; since drops0 (drops by "node port") only receive reasons
// counted; and the probes' round trips are a link's, none forged.
func accounted(t *testing.T, s Spec, node string, drops0 map[string]map[string]uint64) {
	t.Helper()
	var st *api.Stats
	waitFor(t, 2*time.Second, node+"'s XDP programs and engine agreeing", func() bool {
		var err error
		if st, err = Stats(s.RunRoot, s.Name, node); err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Ports {
			if p.XDP["redirect"] != p.RxPackets+p.RingDrops() {
				return false
			}
		}
		return true
	})
	for _, p := range st.Ports {
		at := node + " " + p.Name
		if p.RxPackets != p.RxForwarded+p.RxConsumed+p.RxDrops() {
			t.Errorf("%s: received %d, forwarded %d + consumed %d + dropped %d on receive (%v)", at, p.RxPackets, p.RxForwarded, p.RxConsumed, p.RxDrops(), p.Drops)
		}
		if d := p.RingDrops() + p.Drops["buffer_full"] + p.Drops["no_frames"] + p.Drops["watchdog"] + p.Drops["tx_error"]; d != 0 {
			t.Errorf("%s lost %d frames (not on receive): %v xsk %v", at, d, p.Drops, p.XSK)
		}
		got := map[string]uint64{}
		for r, v := range p.Drops {
			if d := v - drops0[at][r]; d != 0 {
				got[r] = d
			}
		}
		if len(got) > 0 {
			t.Logf("%s: the fuzz inputs dropped %v (received %d: %d forwarded, %d consumed, %d dropped)", at, got, p.RxPackets, p.RxForwarded, p.RxConsumed, p.RxDrops())
		}
		if rtt := p.RTT; rtt != nil && (rtt.MinNs <= 0 || rtt.MaxNs >= int64(5*time.Second)) {
			t.Errorf("%s: probe round trips from %v to %v: a forged probe entered them", at, time.Duration(rtt.MinNs), time.Duration(rtt.MaxNs))
		}
	}
}

// waitFor polls cond every 20 ms until it holds, and fails the test
// naming what when it does not within d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
