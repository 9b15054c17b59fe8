package header

import (
	"bytes"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

func build(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var (
	macA = net.HardwareAddr{2, 0, 0, 0, 0, 1}
	macB = net.HardwareAddr{2, 0, 0, 0, 0, 2}
)

func udpFrame(t testing.TB, tagged bool) []byte {
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IP{198, 18, 0, 1}, DstIP: net.IP{198, 18, 0, 15}, TOS: 0x2a<<2 | 1}
	udp := &layers.UDP{SrcPort: 1234, DstPort: 4791}
	_ = udp.SetNetworkLayerForChecksum(ip)
	if tagged {
		return build(t, &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeDot1Q},
			&layers.Dot1Q{Priority: 3, VLANIdentifier: 7, Type: layers.EthernetTypeIPv4}, ip, udp, gopacket.Payload(make([]byte, 32)))
	}
	return build(t, &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeIPv4}, ip, udp, gopacket.Payload(make([]byte, 32)))
}

func TestParse(t *testing.T) {
	arp := build(t, &layers.Ethernet{SrcMAC: macA, DstMAC: layers.EthernetBroadcast, EthernetType: layers.EthernetTypeARP},
		&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
			Operation: layers.ARPRequest, SourceHwAddress: macA, SourceProtAddress: []byte{198, 18, 0, 1},
			DstHwAddress: make([]byte, 6), DstProtAddress: []byte{198, 18, 0, 9}})
	frag := udpFrame(t, false)
	frag[EthLen+6] = 0x20 // MF
	v6 := build(t, &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeIPv6}, gopacket.Payload(make([]byte, 40)))
	badLen := udpFrame(t, false)
	badLen[EthLen+2] = 0xff
	for _, c := range []struct {
		name   string
		b      []byte
		kind   Kind
		tagged bool
		sport  uint16
	}{
		{"udp", udpFrame(t, false), KindIPv4, false, 1234},
		{"udp tagged", udpFrame(t, true), KindIPv4, true, 1234},
		{"fragment has no ports", frag, KindIPv4, false, 0},
		{"arp", arp, KindARP, false, 0},
		{"ipv6 is other", v6, KindOther, false, 0},
		{"short", make([]byte, 13), KindMalformed, false, 0},
		{"bad total length", badLen, KindMalformed, false, 0},
		{"truncated tag", udpFrame(t, true)[:16], KindMalformed, false, 0},
		{"truncated ip", udpFrame(t, false)[:30], KindMalformed, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f Frame
			if k := Parse(c.b, &f); k != c.kind || f.Tagged != c.tagged || f.SPort != c.sport {
				t.Fatalf("Parse = %v tagged=%v sport=%d, want %v %v %d", k, f.Tagged, f.SPort, c.kind, c.tagged, c.sport)
			}
			if c.kind == KindIPv4 && (f.Dst != [4]byte{198, 18, 0, 15} || f.Proto != ProtoUDP) {
				t.Fatalf("fields %+v", f)
			}
			if c.tagged && (f.PCP != 3 || f.VID != 7 || f.L3 != 18) {
				t.Fatalf("tag %+v", f)
			}
			// IPv4Offset finds the header of every IPv4 frame Parse
			// accepts, and none of a frame of another kind.
			want := -1
			if c.kind == KindIPv4 {
				want = f.L3
			}
			if c.name == "bad total length" {
				want = EthLen // the fixed header is whole: an egress may mark it
			}
			if got := IPv4Offset(c.b); got != want {
				t.Fatalf("IPv4Offset = %d, want %d", got, want)
			}
		})
	}
}

func TestVLANPushPop(t *testing.T) {
	plain := udpFrame(t, false)
	buf := append(make([]byte, VLANLen), plain...)
	tagged := PushVLAN(buf, 5, 0)
	p := gopacket.NewPacket(tagged, layers.LayerTypeEthernet, gopacket.Default)
	q, ok := p.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q)
	if !ok || q.Priority != 5 || q.VLANIdentifier != 0 || p.Layer(layers.LayerTypeUDP) == nil || p.ErrorLayer() != nil {
		t.Fatalf("pushed frame decodes as %v", p)
	}
	SetPCP(tagged, 6)
	var f Frame
	if Parse(tagged, &f) != KindIPv4 || f.PCP != 6 {
		t.Fatalf("SetPCP: %+v", f)
	}
	if got := PopVLAN(tagged); !bytes.Equal(got, plain) {
		t.Fatalf("pop does not restore the frame")
	}
}

func TestARPReply(t *testing.T) {
	b := build(t, &layers.Ethernet{SrcMAC: macA, DstMAC: layers.EthernetBroadcast, EthernetType: layers.EthernetTypeARP},
		&layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
			Operation: layers.ARPRequest, SourceHwAddress: macA, SourceProtAddress: []byte{198, 18, 0, 1},
			DstHwAddress: make([]byte, 6), DstProtAddress: []byte{198, 18, 0, 9}})
	ARP(b[EthLen:]).MakeReply(macB)
	p := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
	a := p.Layer(layers.LayerTypeARP).(*layers.ARP)
	if a.Operation != layers.ARPReply || !bytes.Equal(a.SourceHwAddress, macB) || !bytes.Equal(a.SourceProtAddress, []byte{198, 18, 0, 9}) ||
		!bytes.Equal(a.DstHwAddress, macA) || !bytes.Equal(a.DstProtAddress, []byte{198, 18, 0, 1}) {
		t.Fatalf("reply %+v", a)
	}
}

func TestParseAllocs(t *testing.T) {
	b := udpFrame(t, true)
	var f Frame
	if n := testing.AllocsPerRun(1000, func() { Parse(b, &f) }); n != 0 {
		t.Fatalf("%v allocs", n)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(udpFrame(f, false))
	f.Add(udpFrame(f, true))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr Frame
		if Parse(b, &fr) == KindIPv4 {
			ip := IPv4(b[fr.L3:])
			if fr.L3+ip.TotalLen() > len(b) {
				t.Fatalf("accepted a truncated datagram")
			}
		}
	})
}

func BenchmarkParse(b *testing.B) {
	fr := udpFrame(b, true)
	var f Frame
	b.ReportAllocs()
	for b.Loop() {
		Parse(fr, &f)
	}
}

func TestSetCE(t *testing.T) {
	for _, ecn := range []uint8{0, 1, 2, 3} {
		b := udpFrame(t, false)
		ip := IPv4(b[EthLen:])
		ip[1] = ip[1]&^3 | ecn
		// Recompute a valid checksum for the starting point.
		p := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
		l := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		buf := gopacket.NewSerializeBuffer()
		_ = l.SerializeTo(buf, gopacket.SerializeOptions{ComputeChecksums: true})
		copy(ip, buf.Bytes()[:20])
		marked := ip.SetCE()
		if marked != (ecn != 0) {
			t.Fatalf("ecn %d: SetCE = %v", ecn, marked)
		}
		want := ecn
		if ecn != 0 {
			want = 3
		}
		p = gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
		l = p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		cs := l.Checksum
		buf = gopacket.NewSerializeBuffer()
		_ = l.SerializeTo(buf, gopacket.SerializeOptions{ComputeChecksums: true})
		if got := IPv4(buf.Bytes()).Checksum(); got != cs || ip.ECN() != want {
			t.Fatalf("ecn %d: checksum %#x, recomputed %#x, ecn now %d", ecn, cs, got, ip.ECN())
		}
	}
}

// IPv4Checksum is 0 over a header gopacket checksummed, and, over the
// header with its checksum field zeroed, the value gopacket stored.
func TestIPv4Checksum(t *testing.T) {
	for _, tagged := range []bool{false, true} {
		b := udpFrame(t, tagged)
		var f Frame
		Parse(b, &f)
		ip := IPv4(b[f.L3 : f.L3+IPv4Min])
		if c := IPv4Checksum(ip); c != 0 {
			t.Fatalf("tagged %v: %#04x over a correct header", tagged, c)
		}
		want := ip.Checksum()
		ip[10], ip[11] = 0, 0
		if got := IPv4Checksum(ip); got != want {
			t.Fatalf("tagged %v: %#04x, gopacket's %#04x", tagged, got, want)
		}
	}
}
