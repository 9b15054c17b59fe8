package fabrictest

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

func udp(t *testing.T, src, dst int, sport uint16, payload []byte) []byte {
	t.Helper()
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: bcube.ServerIP(src).AsSlice(), DstIP: bcube.ServerIP(dst).AsSlice()}
	u := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: 5001}
	_ = u.SetNetworkLayerForChecksum(ip)
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		&layers.Ethernet{SrcMAC: bcube.AppMAC(src), DstMAC: bcube.AppNICMAC(src), EthernetType: layers.EthernetTypeIPv4},
		ip, u, gopacket.Payload(payload))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func arpRequest(t *testing.T, src, target int) []byte {
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{},
		&layers.Ethernet{SrcMAC: bcube.AppMAC(src), DstMAC: layers.EthernetBroadcast, EthernetType: layers.EthernetTypeARP},
		&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
			Operation: layers.ARPRequest, SourceHwAddress: bcube.AppMAC(src), SourceProtAddress: bcube.ServerIP(src).AsSlice(),
			DstHwAddress: make([]byte, 6), DstProtAddress: bcube.ServerIP(target).AsSlice()})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func drops(ps []api.PortStats) uint64 {
	var n uint64
	for i := range ps {
		n += ps[i].TotalDrops()
	}
	return n
}

// Every pair of servers reaches each other on every policy: ARP on bc0 is
// answered by the NIC, frames cross 2- and 4-hop paths (relays included),
// arrive untagged and unchanged at the destination's bc0, and nothing is
// dropped.
func TestAllPairs(t *testing.T) {
	for _, c := range []struct {
		n, k     int
		policy   string
		queueing string
	}{{2, 1, "hash", "portfc"}, {4, 1, "hash", "portfc"}, {4, 1, "1,0", "priority"}, {3, 2, "ascending", "portfc"}} {
		tp := bcube.MustNew(c.n, c.k)
		pol, err := tp.ParsePolicy(c.policy)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(tp.String()+"/"+c.policy+"/"+c.queueing, func(t *testing.T) {
			f, err := New(tp, Options{Policy: pol, FC: NoFC(c.queueing == "priority")})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := f.Close(); err != nil {
					t.Error(err)
				}
			}()
			for src := 0; src < tp.Servers(); src++ {
				for dst := 0; dst < tp.Servers(); dst++ {
					if src == dst {
						continue
					}
					a := f.Apps[src]
					if err := a.Send(arpRequest(t, src, dst)); err != nil {
						t.Fatal(err)
					}
					rep := a.Recv(2 * time.Second)
					p := gopacket.NewPacket(rep, layers.LayerTypeEthernet, gopacket.Default)
					arp, ok := p.Layer(layers.LayerTypeARP).(*layers.ARP)
					if !ok || arp.Operation != layers.ARPReply || !bytes.Equal(arp.SourceHwAddress, bcube.AppNICMAC(src)) ||
						!bytes.Equal(arp.SourceProtAddress, bcube.ServerIP(dst).AsSlice()) {
						t.Fatalf("h%d ARP for h%d: %v", src, dst, p)
					}
					payload := make([]byte, 100)
					binary.BigEndian.PutUint32(payload, uint32(src<<16|dst))
					sent := udp(t, src, dst, uint16(1000+dst), payload)
					if err := a.Send(sent); err != nil {
						t.Fatal(err)
					}
					got := f.Apps[dst].Recv(2 * time.Second)
					if got == nil {
						t.Fatalf("h%d -> h%d: nothing delivered", src, dst)
					}
					want := append([]byte(nil), sent...)
					copy(want[0:6], bcube.AppMAC(dst))
					copy(want[6:12], bcube.AppNICMAC(dst))
					if !bytes.Equal(got, want) {
						t.Fatalf("h%d -> h%d: delivered\n%x\nwant\n%x", src, dst, got, want)
					}
				}
			}
			for i, e := range append(f.Hosts, f.Sws...) {
				if ps, _ := e.Snapshot(); drops(ps) != 0 {
					t.Errorf("node %d dropped frames: %+v", i, ps)
				}
			}
		})
	}
}

// Frames the fabric cannot carry are dropped and counted with their reason.
func TestDropReasons(t *testing.T) {
	tp := bcube.MustNew(2, 1)
	f, err := New(tp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := f.Apps[0]
	outside := udp(t, 0, 1, 1, nil)
	copy(outside[14+16:], net.IPv4(10, 0, 0, 1).To4())
	short := []byte{1, 2, 3}
	v6 := udp(t, 0, 1, 1, nil)
	v6[12], v6[13] = 0x86, 0xdd
	for _, fr := range [][]byte{outside, short, v6, udp(t, 0, 0, 1, nil)} {
		if err := a.Send(fr); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]uint64{"no_route": 1, "malformed": 1, "unsupported": 1, "hairpin": 1}
	var got map[string]uint64
	if !f.Poll(10*time.Millisecond, 2*time.Second, func() bool {
		ps, _ := f.Hosts[0].Snapshot()
		got = ps[tp.Levels()].Drops
		ok := true
		for r, n := range want {
			ok = ok && got[r] == n
		}
		return ok
	}) {
		t.Fatalf("drops %v, want %v", got, want)
	}
}

// A shaped fabric delivers a burst at the configured rate, not faster.
func TestShapedThroughput(t *testing.T) {
	tp := bcube.MustNew(2, 1)
	const rate = 100e6
	f, err := New(tp, Options{RateBps: rate})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const frames, size = 200, 1000
	// The bound is one-sided: the last frame cannot arrive before the
	// link could have carried them all.
	start := f.Now()
	// The sender, on the fabric's time: 16 frames a millisecond, 128 Mb/s,
	// faster than the link, slower than the NIC's ring; a frame the ring
	// refuses is sent again 100 µs later.
	frame := udp(t, 0, 3, 7, make([]byte, size-42))
	sent := 0
	var send func()
	send = func() {
		if f.Apps[0].Send(frame) != nil {
			f.Sim.After(100*time.Microsecond, send)
			return
		}
		sent++
		switch {
		case sent == frames:
		case sent%16 == 0:
			f.Sim.After(time.Millisecond, send)
		default:
			send()
		}
	}
	f.Sim.At(f.Sim.Now(), send)
	for i := 0; i < frames; i++ {
		if f.Apps[3].Recv(5*time.Second) == nil {
			t.Fatalf("frame %d not delivered", i)
		}
	}
	elapsed := f.Now() - start
	// Two shaped hops; each may run one burst ahead.
	min := time.Duration(float64(frames*(size+24)*8)/rate*1e9) - 2*dataplaneBurst
	t.Logf("%d frames of %d B in %v over a %.0f Mb/s link (no faster than %v)", frames, size, elapsed, rate/1e6, min)
	if elapsed < min {
		t.Fatalf("shaper let %d frames through in %v, the link needs %v", frames, elapsed, min)
	}
}

const dataplaneBurst = 2 * 100 * time.Microsecond // ahead + catch-up
