package roce

import (
	"bytes"
	"errors"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

func TestLayerRoundTrip(t *testing.T) {
	for _, s := range samples() {
		t.Run(s.name, func(t *testing.T) {
			pkt := gopacket.NewPacket(s.frame, layers.LayerTypeEthernet, gopacket.Default)
			if el := pkt.ErrorLayer(); el != nil {
				t.Fatalf("decode error: %v", el.Error())
			}
			l, ok := pkt.Layer(LayerTypeBTH).(*BTHLayer)
			if !ok {
				t.Fatalf("gopacket found no RoCEv2 layer: %v", pkt)
			}
			if l.Opcode != s.op || l.PSN != s.psn || l.DestQP != s.qp || l.AckReq != s.ackReq || l.PKey != DefaultPKey ||
				len(l.Payload) != s.payload || int(l.PadCnt) != pad(s.payload) {
				t.Errorf("layer %+v", l)
			}
			if s.op == OpAck && (l.Syndrome != s.syn || l.MSN != s.msn) {
				t.Errorf("AETH %v msn %d", l.Syndrome, l.MSN)
			}
			if s.op == OpCNP && !l.BECN {
				t.Error("CNP without BECN")
			}
			if s.op.HasRETH() && (l.VA != 0x10000 || l.RKey != 0x77 || l.DMALen != 4096) {
				t.Errorf("RETH %#x %#x %d", l.VA, l.RKey, l.DMALen)
			}
			if l.ICRC != refICRC(s.frame) {
				t.Errorf("ICRC %#x, reference %#x", l.ICRC, refICRC(s.frame))
			}
			if app := pkt.ApplicationLayer(); s.payload > 0 && (app == nil || !bytes.Equal(app.Payload(), l.Payload)) {
				t.Error("the payload is not the application layer")
			}
			// Serializing the decoded layers gives the frame back, ICRC
			// included (the layer carries it as decoded).
			var ls []gopacket.SerializableLayer
			for _, x := range pkt.Layers() {
				ls = append(ls, x.(gopacket.SerializableLayer))
			}
			buf := gopacket.NewSerializeBuffer()
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, ls...); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), s.frame) {
				t.Errorf("re-serialized\n% x\nwant\n% x", buf.Bytes(), s.frame)
			}
		})
	}
}

// TestLayerBuildsWhatPutBuilds builds frames from gopacket's own
// Ethernet, 802.1Q, IPv4 and UDP layers and the BTH layer, lets SetICRC
// fill in the ICRC, and expects PutData's bytes exactly.
func TestLayerBuildsWhatPutBuilds(t *testing.T) {
	for _, s := range samples() {
		if s.ce {
			continue
		}
		f := dataFlow
		if !s.op.IsData() {
			f = ackFlow
		}
		l := &BTHLayer{Opcode: s.op, PKey: DefaultPKey, DestQP: s.qp, AckReq: s.ackReq, PSN: s.psn, Syndrome: s.syn, MSN: s.msn, BECN: s.op == OpCNP}
		if s.op.HasRETH() {
			l.VA, l.RKey, l.DMALen = 0x10000, 0x77, 4096
		}
		payload := make([]byte, s.payload)
		fill(payload)
		ip := &layers.IPv4{Version: 4, TOS: f.DSCP<<2 | f.ECN, Flags: layers.IPv4DontFragment, TTL: 64,
			Protocol: layers.IPProtocolUDP, SrcIP: net.IP(f.SrcIP[:]), DstIP: net.IP(f.DstIP[:])}
		udp := &layers.UDP{SrcPort: layers.UDPPort(f.SrcPort), DstPort: UDPPort}
		_ = udp.SetNetworkLayerForChecksum(ip)
		buf := gopacket.NewSerializeBuffer()
		err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			&layers.Ethernet{SrcMAC: f.SrcMAC[:], DstMAC: f.DstMAC[:], EthernetType: layers.EthernetTypeDot1Q},
			&layers.Dot1Q{Priority: f.PCP, VLANIdentifier: f.VID, Type: layers.EthernetTypeIPv4},
			ip, udp, l, gopacket.Payload(payload))
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		b := buf.Bytes()
		// gopacket computed a UDP checksum over the zero ICRC. The ICRC
		// masks it, so it would stay valid, but RoCEv2 senders send 0.
		b[EthLen+VLANLen+IPv4Len+6], b[EthLen+VLANLen+IPv4Len+7] = 0, 0
		if err := CheckICRC(b); err != ErrBadICRC {
			t.Errorf("%s: CheckICRC before SetICRC: %v", s.name, err)
		}
		if err := SetICRC(b); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !bytes.Equal(b, s.frame) {
			t.Errorf("%s: gopacket built\n% x\nPut built\n% x", s.name, b, s.frame)
		}
	}
}

func TestDecodingLayerParser(t *testing.T) {
	var (
		eth     layers.Ethernet
		dot1q   layers.Dot1Q
		ip4     layers.IPv4
		udp     layers.UDP
		bth     BTHLayer
		payload gopacket.Payload
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &dot1q, &ip4, &udp, &bth, &payload)
	var decoded []gopacket.LayerType
	for _, s := range samples() {
		payload = nil
		if err := parser.DecodeLayers(s.frame, &decoded); err != nil {
			t.Fatalf("%s: %v (decoded %v)", s.name, err, decoded)
		}
		want := 5
		if s.payload > 0 {
			want = 6
		}
		if len(decoded) != want || decoded[4] != LayerTypeBTH || bth.PSN != s.psn || len(payload) != s.payload {
			t.Errorf("%s: decoded %v psn %d payload %d", s.name, decoded, bth.PSN, len(payload))
		}
	}
}

func TestLayerRejects(t *testing.T) {
	ss := samples()
	ack := ss[11].frame[HeadersLen-BTHLen:]
	var l BTHLayer
	for n := range len(ack) {
		err := l.DecodeFromBytes(ack[:n], gopacket.NilDecodeFeedback)
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("ack cut at %d: %v", n, err)
		}
	}
	// Bytes after the datagram (an FCS) are not the ICRC.
	fcs := append(bytes.Clone(ss[0].frame), 0xde, 0xad, 0xbe, 0xef)
	pkt := gopacket.NewPacket(fcs, layers.LayerTypeEthernet, gopacket.Default)
	if l, ok := pkt.Layer(LayerTypeBTH).(*BTHLayer); !ok || l.ICRC != refICRC(ss[0].frame) || len(l.Payload) != ss[0].payload {
		t.Errorf("with an FCS: %v", pkt)
	}
	// A truncated packet is reported as truncated through gopacket.
	pkt = gopacket.NewPacket(ss[0].frame[:HeadersLen-2], layers.LayerTypeEthernet, gopacket.Default)
	if pkt.Layer(LayerTypeBTH) != nil {
		t.Error("decoded a BTH from a truncated frame")
	}
	for _, c := range []struct {
		name string
		l    *BTHLayer
		pay  []byte
	}{
		{"unknown opcode", &BTHLayer{Opcode: 0x03}, nil},
		{"ack with payload", &BTHLayer{Opcode: OpAck}, []byte{1}},
		{"cnp with pad", &BTHLayer{Opcode: OpCNP, PadCnt: 1}, nil},
		{"pad count 4", &BTHLayer{Opcode: OpSendOnly, PadCnt: 4}, []byte{1, 2, 3, 4}},
	} {
		err := gopacket.SerializeLayers(gopacket.NewSerializeBuffer(), gopacket.SerializeOptions{}, c.l, gopacket.Payload(c.pay))
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: serialize error %v", c.name, err)
		}
	}
}

func BenchmarkDecodingLayerParser(b *testing.B) {
	frame := samples()[1].frame
	var (
		eth     layers.Ethernet
		dot1q   layers.Dot1Q
		ip4     layers.IPv4
		udp     layers.UDP
		bth     BTHLayer
		payload gopacket.Payload
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &dot1q, &ip4, &udp, &bth, &payload)
	decoded := make([]gopacket.LayerType, 0, 8)
	b.ReportAllocs()
	for b.Loop() {
		if err := parser.DecodeLayers(frame, &decoded); err != nil {
			b.Fatal(err)
		}
	}
}
