package roce

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/bcfab/bcfab/wire/header"
	"github.com/gopacket/gopacket"
)

// dataFlow is the flow most samples use: lossless class 3, VLAN 1,
// DSCP 26, ECT(0).
var dataFlow = Flow{
	SrcMAC: [6]byte{2, 0, 0, 0, 0, 1}, DstMAC: [6]byte{2, 0, 0, 0, 0, 2},
	PCP: 3, VID: 1,
	SrcIP: [4]byte{198, 18, 0, 1}, DstIP: [4]byte{198, 18, 0, 2},
	DSCP: 26, ECN: 2,
	SrcPort: 49152, DestQP: 0x12,
}

// ackFlow goes back to the data sender's QP: control class 6, DSCP 48,
// not ECN-capable.
var ackFlow = func() Flow {
	f := dataFlow.Reverse(0x34)
	f.PCP, f.DSCP, f.ECN = 6, 48, 0
	return f
}()

// sample is a frame with the fields it was built with.
type sample struct {
	name    string
	op      Opcode
	psn     uint32
	qp      uint32
	ackReq  bool
	payload int // before padding
	syn     Syndrome
	msn     uint32
	ce      bool // marked CE after building, as a switch would
	frame   []byte
}

// fill writes the samples' payload pattern.
func fill(p []byte) {
	for i := range p {
		p[i] = byte(i*7 + 1)
	}
}

func dataSample(name string, op Opcode, psn uint32, ackReq bool, n int) sample {
	b := make([]byte, DataFrameLen(op, n))
	fill(b[PayloadOffset(op) : PayloadOffset(op)+n])
	d := Data{Opcode: op, PSN: psn, AckReq: ackReq, Payload: n}
	if op.HasRETH() {
		d.VA, d.RKey, d.DMALen = 0x10000, 0x77, 4096
	}
	PutData(b, &dataFlow, &d)
	return sample{name: name, op: op, psn: psn, qp: dataFlow.DestQP, ackReq: ackReq, payload: n, frame: b}
}

func ackSample(name string, s Syndrome, psn, msn uint32) sample {
	b := make([]byte, AckLen)
	PutAck(b, &ackFlow, s, psn, msn)
	return sample{name: name, op: OpAck, psn: psn, qp: ackFlow.DestQP, syn: s, msn: msn, frame: b}
}

// samples are the frames most tests run over: every opcode, payloads
// that need 0 to 3 pad bytes, PSNs near the wrap, ECN CE.
func samples() []sample {
	ce := dataSample("send middle CE", OpSendMiddle, 0x10, false, 1024)
	if !header.IPv4(ce.frame[EthLen+VLANLen:]).SetCE() {
		panic("sample flow is not ECN-capable")
	}
	ce.ce = true
	nak := make([]byte, AckLen)
	PutSelectiveNAK(nak, &ackFlow, 100, 103)
	cnp := make([]byte, CNPLen)
	PutCNP(cnp, &ackFlow)
	return []sample{
		dataSample("send only", OpSendOnly, 5, true, 32),
		dataSample("send first", OpSendFirst, PSNMask, false, 1024),
		ce,
		dataSample("send last, 3 pad bytes", OpSendLast, 0, true, 13),
		dataSample("send last, 2 pad bytes", OpSendLast, 1, true, 14),
		dataSample("send last, 1 pad byte", OpSendLast, 2, true, 15),
		dataSample("send only, MTU", OpSendOnly, 0x123456, true, MaxPayload(OpSendOnly, 1518)),
		dataSample("write first", OpWriteFirst, 7, false, 256),
		dataSample("write middle", OpWriteMiddle, 8, false, 256),
		dataSample("write last", OpWriteLast, 9, true, 100),
		dataSample("write only", OpWriteOnly, 10, true, 1),
		ackSample("ack", SyndromeACK, 99, 3),
		ackSample("ack with credits", ACKSyndrome(4), 99, 3),
		ackSample("rnr nak", RNRSyndrome(14), 99, 3),
		ackSample("nak invalid request", NAKSyndrome(NAKInvalidRequest), 99, 3),
		{name: "selective nak", op: OpAck, psn: 100, qp: ackFlow.DestQP, syn: SyndromePSNSeq, msn: 103, frame: nak},
		{name: "cnp", op: OpCNP, qp: ackFlow.DestQP, frame: cnp},
	}
}

// refICRC computes the ICRC the slow way the package doc describes it:
// a masked copy of the headers behind eight 0xFF bytes, through
// crc32.ChecksumIEEE.
func refICRC(frame []byte) uint32 {
	ip := EthLen
	if binary.BigEndian.Uint16(frame[12:14]) == 0x8100 {
		ip += VLANLen
	}
	ihl := int(frame[ip]&0x0f) * 4
	tl := int(binary.BigEndian.Uint16(frame[ip+2:]))
	d := append(bytes.Repeat([]byte{0xFF}, 8), frame[ip:ip+tl-ICRCLen]...)
	for _, i := range []int{1, 8, 10, 11, ihl + 6, ihl + 7, ihl + 8 + 4} {
		d[8+i] = 0xFF
	}
	return crc32.ChecksumIEEE(d)
}

func TestSamples(t *testing.T) {
	for _, s := range samples() {
		t.Run(s.name, func(t *testing.T) {
			var p Packet
			if err := Parse(s.frame, &p); err != nil {
				t.Fatal(err)
			}
			if p.Opcode() != s.op || p.PSN() != s.psn || p.DestQP() != s.qp || p.BTH.AckReq() != s.ackReq {
				t.Errorf("BTH op %v psn %#x qp %#x ackreq %v", p.Opcode(), p.PSN(), p.DestQP(), p.BTH.AckReq())
			}
			if p.BTH.PKey() != DefaultPKey || p.BTH.TVer() != 0 || p.Len != len(s.frame) || !p.Tagged || p.IP != EthLen+VLANLen {
				t.Errorf("pkey %#x tver %d len %d tagged %v ip %d", p.BTH.PKey(), p.BTH.TVer(), p.Len, p.Tagged, p.IP)
			}
			if len(p.Payload) != s.payload || p.BTH.PadCnt() != pad(s.payload) {
				t.Errorf("payload %d pad %d, want %d %d", len(p.Payload), p.BTH.PadCnt(), s.payload, pad(s.payload))
			}
			want := make([]byte, s.payload)
			fill(want)
			if !bytes.Equal(p.Payload, want) {
				t.Error("payload bytes differ")
			}
			f := dataFlow
			if !s.op.IsData() {
				f = ackFlow
			}
			ecn := f.ECN
			if s.ce {
				ecn = header.ECNCE
			}
			if p.PCP != f.PCP || p.VID != f.VID || p.DSCP != f.DSCP || p.ECN != ecn || p.SrcPort != f.SrcPort || p.SrcIP != f.SrcIP || p.DstIP != f.DstIP {
				t.Errorf("L2-L4 fields %+v", p)
			}
			if got, want := binary.LittleEndian.Uint32(s.frame[len(s.frame)-4:]), refICRC(s.frame); got != want {
				t.Errorf("ICRC %#08x, reference %#08x", got, want)
			}
			switch s.op {
			case OpAck:
				if p.AETH == nil || p.AETH.Syndrome() != s.syn || p.AETH.MSN() != s.msn || p.RETH != nil {
					t.Errorf("AETH %x", p.AETH)
				}
				exp, got, ok := p.SelectiveNAK()
				if ok != (s.syn == SyndromePSNSeq) || ok && (exp != s.psn || got != s.msn) {
					t.Errorf("SelectiveNAK = %d %d %v", exp, got, ok)
				}
			case OpCNP:
				if !p.BTH.BECN() || p.PSN() != 0 || p.AETH != nil || len(s.frame) != CNPLen {
					t.Errorf("CNP BTH % x", p.BTH)
				}
			case OpWriteFirst, OpWriteOnly:
				if p.RETH == nil || p.RETH.VA() != 0x10000 || p.RETH.RKey() != 0x77 || p.RETH.DMALen() != 4096 {
					t.Errorf("RETH % x", p.RETH)
				}
			default:
				if p.AETH != nil || p.RETH != nil {
					t.Error("extension header on a plain SEND or WRITE")
				}
			}
			ip := header.IPv4(s.frame[p.IP:])
			if ip.DSCP() != f.DSCP || ip[8] != 64 || ip[6] != 0x40 || header.IPv4Checksum(ip[:IPv4Len]) != 0 {
				t.Errorf("IPv4 header % x", ip[:IPv4Len])
			}
			if udp := s.frame[p.IP+IPv4Len:]; binary.BigEndian.Uint16(udp[6:8]) != 0 || int(binary.BigEndian.Uint16(udp[4:6])) != len(s.frame)-EthLen-VLANLen-IPv4Len {
				t.Errorf("UDP header % x", udp[:UDPLen])
			}
		})
	}
}

// knownAnswers are frames built field by field with an independent
// RoCEv2 implementation (scapy's contrib/roce), ICRC included.
var knownAnswers = []struct {
	name  string
	frame string
	put   func(b []byte) int
}{
	{"send only",
		"020000000002020000000001810060010800456a003c000040004011ae1fc6120001c6120002c00012b7002800000400ffff0000001280000005000102030405060708090a0b0c0d0e0f4e6684d4",
		func(b []byte) int {
			for i := range 16 {
				b[HeadersLen+i] = byte(i)
			}
			return PutData(b, &dataFlow, &Data{Opcode: OpSendOnly, PSN: 5, AckReq: true, Payload: 16})
		}},
	{"send first",
		"020000000002020000000001810060010800456a006c000040004011adefc6120001c6120002c00012b7005800000000ffff00abcdef00fffffe000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f2e6fb432",
		func(b []byte) int {
			for i := range 64 {
				b[HeadersLen+i] = byte(i)
			}
			f := dataFlow
			f.DestQP = 0xabcdef
			return PutData(b, &f, &Data{Opcode: OpSendFirst, PSN: 0xfffffe, Payload: 64})
		}},
	// The same frame two hops on (TTL 62) and marked CE: same ICRC.
	{"send first, CE, TTL 62",
		"020000000002020000000001810060010800456b006c000040003e11afeec6120001c6120002c00012b7005800000000ffff00abcdef00fffffe000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f2e6fb432",
		nil},
	{"ack",
		"02000000000202000000000181006001080045c00030000040004011add5c6120001c6120002c00012b7001c00001100ffff00000034000000071f000003ec800265",
		func(b []byte) int {
			f := dataFlow
			f.DestQP, f.DSCP, f.ECN = 0x34, 48, 0
			return PutAck(b, &f, SyndromeACK, 7, 3)
		}},
	{"selective nak",
		"02000000000202000000000181006001080045c00030000040004011add5c6120001c6120002c00012b7001c00001100ffff00000034000000076000000938d98bb6",
		func(b []byte) int {
			f := dataFlow
			f.DestQP, f.DSCP, f.ECN = 0x34, 48, 0
			return PutSelectiveNAK(b, &f, 7, 9)
		}},
	{"cnp",
		"02000000000202000000000181006001080045c0003c000040004011adc9c6120001c6120002c00012b7002800008100ffff400000340000000000000000000000000000000000000000c4c4c7d5",
		func(b []byte) int {
			f := dataFlow
			f.DestQP, f.DSCP, f.ECN = 0x34, 48, 0
			return PutCNP(b, &f)
		}},
}

func TestKnownAnswers(t *testing.T) {
	for _, k := range knownAnswers {
		want, err := hex.DecodeString(k.frame)
		if err != nil {
			t.Fatal(err)
		}
		var p Packet
		if err := Parse(want, &p); err != nil {
			t.Errorf("%s: Parse: %v", k.name, err)
		}
		if got := refICRC(want); got != binary.LittleEndian.Uint32(want[len(want)-4:]) {
			t.Errorf("%s: the reference ICRC disagrees: %#08x", k.name, got)
		}
		if k.put == nil {
			continue
		}
		b := make([]byte, 2048)
		n := k.put(b)
		if !bytes.Equal(b[:n], want) {
			t.Errorf("%s: built\n%x\nwant\n%x", k.name, b[:n], want)
		}
	}
}

func TestICRCMasking(t *testing.T) {
	base := samples()[1].frame // send first, ECT(0)
	ip := EthLen + VLANLen
	for _, c := range []struct {
		name   string
		change func(b []byte)
		err    error
	}{
		{"CE marked by a switch", func(b []byte) { header.IPv4(b[ip:]).SetCE() }, nil},
		{"DSCP rewritten", func(b []byte) { b[ip+1] = 46<<2 | 2; fixIPChecksum(b) }, nil},
		{"TTL decremented", func(b []byte) { b[ip+8]--; fixIPChecksum(b) }, nil},
		{"UDP checksum filled in", func(b []byte) { b[ip+IPv4Len+6] = 0x12; b[ip+IPv4Len+7] = 0x34 }, nil},
		{"FECN set", func(b []byte) { BTH(b[ip+IPv4Len+UDPLen:]).SetFECN(true) }, nil},
		{"VLAN rewritten", func(b []byte) { header.SetPCP(b, 5); b[15] = 9 }, nil},
		{"PSN changed", func(b []byte) { BTH(b[ip+IPv4Len+UDPLen:]).SetPSN(1) }, ErrBadICRC},
		{"source port changed", func(b []byte) { b[ip+IPv4Len] ^= 1 }, ErrBadICRC},
		{"source address changed", func(b []byte) { b[ip+12] ^= 1; fixIPChecksum(b) }, ErrBadICRC},
		{"payload bit flipped", func(b []byte) { b[HeadersLen+500] ^= 0x10 }, ErrBadICRC},
		{"ICRC bit flipped", func(b []byte) { b[len(b)-1] ^= 0x80 }, ErrBadICRC},
	} {
		b := bytes.Clone(base)
		c.change(b)
		var p Packet
		if err := Parse(b, &p); err != c.err {
			t.Errorf("%s: Parse error %v, want %v", c.name, err, c.err)
		}
		if err := CheckICRC(b); err != c.err {
			t.Errorf("%s: CheckICRC %v, want %v", c.name, err, c.err)
		}
		if c.err == nil {
			continue
		}
		if p.BTH == nil || p.Len != len(b) {
			t.Errorf("%s: a bad ICRC leaves the packet unfilled", c.name)
		}
		if err := SetICRC(b); err != nil {
			t.Fatal(err)
		}
		if err := Parse(b, &p); err != nil {
			t.Errorf("%s: after SetICRC: %v", c.name, err)
		}
		if v, err := ComputeICRC(b); err != nil || v != refICRC(b) {
			t.Errorf("%s: ComputeICRC = %#x, %v", c.name, v, err)
		}
	}
}

func fixIPChecksum(b []byte) {
	ip := b[EthLen+VLANLen : EthLen+VLANLen+IPv4Len]
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:12], header.IPv4Checksum(ip))
}

func TestUntaggedOptionsTrailer(t *testing.T) {
	tagged := samples()[0].frame
	// Untagged: the ICRC does not cover Ethernet.
	untagged := append(bytes.Clone(tagged[:12]), tagged[16:]...)
	var p Packet
	if err := Parse(untagged, &p); err != nil || p.Tagged || p.IP != EthLen || p.PSN() != 5 {
		t.Errorf("untagged: %v %+v", err, p)
	}
	// An FCS (or Ethernet padding) after the datagram is not the ICRC.
	withFCS := append(bytes.Clone(tagged), 0xde, 0xad, 0xbe, 0xef)
	if err := Parse(withFCS, &p); err != nil || p.Len != len(tagged) || len(p.Payload) != 32 {
		t.Errorf("with FCS: %v len %d", err, p.Len)
	}
	// IPv4 options: a 24-byte header (one NOP-padded option word).
	opt := append(bytes.Clone(tagged[:EthLen+VLANLen+IPv4Len]), 1, 1, 1, 0)
	opt = append(opt, tagged[EthLen+VLANLen+IPv4Len:]...)
	ip := opt[EthLen+VLANLen:]
	ip[0] = 0x46
	binary.BigEndian.PutUint16(ip[2:4], uint16(len(ip)))
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:12], header.IPv4Checksum(ip[:24]))
	if err := Parse(opt, &p); err != ErrBadICRC {
		t.Errorf("options: Parse %v before SetICRC, want ErrBadICRC", err)
	}
	if err := SetICRC(opt); err != nil {
		t.Fatal(err)
	}
	if err := Parse(opt, &p); err != nil || p.PSN() != 5 || len(p.Payload) != 32 {
		t.Errorf("options: %v", err)
	}
	if got := binary.LittleEndian.Uint32(opt[len(opt)-4:]); got != refICRC(opt) {
		t.Errorf("options: ICRC %#x, reference %#x", got, refICRC(opt))
	}
}

func TestTruncations(t *testing.T) {
	for _, s := range samples() {
		for n := range len(s.frame) {
			var p Packet
			err := Parse(s.frame[:n], &p)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("%s cut at %d: Parse error %v, want ErrMalformed", s.name, n, err)
			}
			if p.BTH != nil || p.Payload != nil {
				t.Fatalf("%s cut at %d: packet left filled", s.name, n)
			}
			if err := CheckICRC(s.frame[:n]); !errors.Is(err, ErrMalformed) {
				t.Fatalf("%s cut at %d: CheckICRC %v", s.name, n, err)
			}
		}
	}
}

// malformedCases change one thing in a good frame and say which check
// must catch it.
var malformedCases = []struct {
	name   string
	sample int // index in samples()
	change func(b []byte)
	err    error
}{
	{"ARP", 0, func(b []byte) { b[16], b[17] = 0x08, 0x06 }, errL2L3}, // not a valid ARP packet either
	{"double tag", 0, func(b []byte) { b[16], b[17] = 0x81, 0x00 }, errNotIPv4},
	{"IPv6", 0, func(b []byte) { b[18] = 0x65 }, errL2L3},
	{"IHL 4", 0, func(b []byte) { b[18] = 0x44 }, errL2L3},
	{"IHL past the frame", 11, func(b []byte) { b[18] = 0x4f }, errL2L3},
	{"total length past the frame", 0, func(b []byte) { b[20]++; fixIPChecksum(b) }, errL2L3},
	{"TCP", 0, func(b []byte) { b[27] = 6; fixIPChecksum(b) }, errNotUDP},
	{"more fragments", 0, func(b []byte) { b[24] = 0x20; fixIPChecksum(b) }, errFragment},
	{"fragment offset", 0, func(b []byte) { b[25] = 1; fixIPChecksum(b) }, errFragment},
	{"IPv4 checksum", 0, func(b []byte) { b[28] ^= 1 }, errIPChecksum},
	{"not port 4791", 0, func(b []byte) { b[41]++ }, errNotRoCE},
	{"UDP length short", 0, func(b []byte) { b[43]-- }, errUDPLen},
	{"UDP length long", 0, func(b []byte) { b[43]++ }, errUDPLen},
	{"transport version 1", 0, func(b []byte) { b[47] |= 1 }, errTVer},
	{"SEND_LAST with immediate", 0, func(b []byte) { b[46] = 0x03 }, errOpcode},
	{"UD SEND_ONLY", 0, func(b []byte) { b[46] = 0x64 }, errOpcode},
	{"reserved syndrome", 11, func(b []byte) { b[58] = 0x40 }, errSyndrome},
	{"syndrome bit 7", 11, func(b []byte) { b[58] = 0x9f }, errSyndrome},
}

func TestMalformed(t *testing.T) {
	ss := samples()
	for _, c := range malformedCases {
		b := bytes.Clone(ss[c.sample].frame)
		c.change(b)
		var p Packet
		if err := Parse(b, &p); err != c.err || !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Parse error %v, want %v", c.name, err, c.err)
		}
	}
	// Trailing bytes after an ACK's AETH or a CNP's reserved bytes, and a
	// pad count larger than the payload: grow or shrink the datagram and
	// fix the lengths so only that check fails.
	for _, c := range []struct {
		name  string
		frame []byte
		delta int
		err   error
	}{
		{"ack with payload", ss[11].frame, 4, errTrailing},
		{"cnp with payload", ss[16].frame, 4, errTrailing},
		{"cnp short", ss[16].frame, -4, errShortExt},
		{"write first without RETH", ss[7].frame[:HeadersLen+ICRCLen], 0, errShortExt},
		{"pad count beyond the payload", ss[3].frame[:HeadersLen+2+ICRCLen], 0, errPad},
	} {
		b := resize(c.frame, c.delta)
		var p Packet
		if err := Parse(b, &p); err != c.err {
			t.Errorf("%s: Parse error %v, want %v", c.name, err, c.err)
		}
	}
}

// resize adds (or removes) delta bytes before the ICRC of a tagged
// frame, or keeps a cut frame as it is, and fixes the IPv4 and UDP
// lengths and IPv4 checksum to match.
func resize(frame []byte, delta int) []byte {
	b := bytes.Clone(frame)
	switch {
	case delta > 0:
		b = append(b[:len(b)-ICRCLen], append(make([]byte, delta), b[len(b)-ICRCLen:]...)...)
	case delta < 0:
		b = append(b[:len(b)-ICRCLen+delta], b[len(b)-ICRCLen:]...)
	}
	binary.BigEndian.PutUint16(b[EthLen+VLANLen+2:], uint16(len(b)-EthLen-VLANLen))
	binary.BigEndian.PutUint16(b[EthLen+VLANLen+IPv4Len+4:], uint16(len(b)-EthLen-VLANLen-IPv4Len))
	fixIPChecksum(b)
	return b
}

func TestPadding(t *testing.T) {
	for n := range 9 {
		b := make([]byte, DataFrameLen(OpSendOnly, n)+8)
		for i := range b {
			b[i] = 0xAA // pad bytes must come out zero
		}
		got := PutData(b, &dataFlow, &Data{Opcode: OpSendOnly, Payload: n})
		if got != HeadersLen+n+pad(n)+ICRCLen || got%4 != (HeadersLen+ICRCLen)%4 {
			t.Errorf("payload %d: frame %d bytes", n, got)
		}
		if b[got] != 0xAA {
			t.Errorf("payload %d: wrote past the frame", n)
		}
		for i := HeadersLen + n; i < got-ICRCLen; i++ {
			if b[i] != 0 {
				t.Errorf("payload %d: pad byte %d is %#x", n, i, b[i])
			}
		}
		var p Packet
		if err := Parse(b[:got], &p); err != nil || len(p.Payload) != n || p.BTH.PadCnt() != pad(n) {
			t.Errorf("payload %d: %v, parsed %d with pad %d", n, err, len(p.Payload), p.BTH.PadCnt())
		}
	}
	if MaxPayload(OpSendOnly, 1518) != 1456 || MaxPayload(OpWriteOnly, 1518) != 1440 || MaxPayload(OpSendOnly, 40) != 0 {
		t.Errorf("MaxPayload %d %d %d", MaxPayload(OpSendOnly, 1518), MaxPayload(OpWriteOnly, 1518), MaxPayload(OpSendOnly, 40))
	}
	if n := DataFrameLen(OpSendOnly, MaxPayload(OpSendOnly, 1518)); n != 1518 {
		t.Errorf("an MTU-sized payload makes a %d-byte frame", n)
	}
}

func TestPutDataRejectsControlOpcodes(t *testing.T) {
	for _, op := range []Opcode{OpAck, OpCNP, 0x03, 0x64} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("PutData with %v did not panic", op)
				}
			}()
			PutData(make([]byte, 128), &dataFlow, &Data{Opcode: op})
		}()
	}
}

func TestViews(t *testing.T) {
	h := BTH(make([]byte, BTHLen))
	h.SetOpcode(OpSendLast)
	h.SetSE(true)
	h.SetMigReq(true)
	h.SetPadCnt(3)
	h.SetPKey(0x8001)
	h.SetFECN(true)
	h.SetBECN(true)
	h.SetDestQP(0x1abcdef) // the 25th bit is dropped
	h.SetAckReq(true)
	h.SetPSN(0xfedcba)
	want := []byte{0x02, 0xf0, 0x80, 0x01, 0xc0, 0xab, 0xcd, 0xef, 0x80, 0xfe, 0xdc, 0xba}
	if !bytes.Equal(h, want) {
		t.Fatalf("BTH % x, want % x", []byte(h), want)
	}
	if h.Opcode() != OpSendLast || !h.SE() || !h.MigReq() || h.PadCnt() != 3 || h.PKey() != 0x8001 ||
		!h.FECN() || !h.BECN() || h.DestQP() != 0xabcdef || !h.AckReq() || h.PSN() != 0xfedcba || h.TVer() != 0 {
		t.Error("BTH accessors disagree with the setters")
	}
	h.SetSE(false)
	h.SetMigReq(false)
	h.SetPadCnt(0)
	h.SetFECN(false)
	h.SetBECN(false)
	h.SetAckReq(false)
	if h[1] != 0 || h[4] != 0 || h[8] != 0 {
		t.Errorf("clearing flags left % x", []byte(h))
	}
	a := AETH(make([]byte, AETHLen))
	a.SetSyndrome(SyndromePSNSeq)
	a.SetMSN(0x123456)
	if !bytes.Equal(a, []byte{0x60, 0x12, 0x34, 0x56}) || a.MSN() != 0x123456 || a.Syndrome() != 0x60 {
		t.Errorf("AETH % x", []byte(a))
	}
	r := RETH(make([]byte, RETHLen))
	r.SetVA(0x0102030405060708)
	r.SetRKey(0x0a0b0c0d)
	r.SetDMALen(0x10000)
	if r.VA() != 0x0102030405060708 || r.RKey() != 0x0a0b0c0d || r.DMALen() != 0x10000 || r[0] != 1 || r[15] != 0 {
		t.Errorf("RETH % x", []byte(r))
	}
}

func TestSyndromes(t *testing.T) {
	for _, c := range []struct {
		s     Syndrome
		b     uint8
		kind  SyndromeKind
		value uint8
		str   string
	}{
		{SyndromeACK, 0x1f, KindACK, NoCredits, "ACK credits=31"},
		{ACKSyndrome(4), 0x04, KindACK, 4, "ACK credits=4"},
		{RNRSyndrome(14), 0x2e, KindRNR, 14, "RNR NAK timer=14"},
		{SyndromePSNSeq, 0x60, KindNAK, NAKPSNSequenceError, "NAK PSN sequence error"},
		{NAKSyndrome(NAKRemoteAccessError), 0x62, KindNAK, 2, "NAK code=2"},
		{Syndrome(0x41), 0x41, KindReserved, 1, "reserved syndrome 0x41"},
	} {
		if uint8(c.s) != c.b || c.s.Kind() != c.kind || c.s.Value() != c.value || c.s.String() != c.str {
			t.Errorf("%#02x: kind %d value %d %q", uint8(c.s), c.s.Kind(), c.s.Value(), c.s.String())
		}
	}
	for op, want := range map[Opcode]string{OpSendOnly: "SEND_ONLY", OpAck: "ACKNOWLEDGE", OpCNP: "CNP", OpWriteLast: "RDMA_WRITE_LAST", 0x03: "opcode 0x03"} {
		if op.String() != want {
			t.Errorf("%#x: %q", uint8(op), op.String())
		}
	}
	if !OpSendLast.Last() || !OpWriteOnly.Last() || OpSendMiddle.Last() || OpAck.IsData() || !OpWriteMiddle.IsData() || Opcode(0x03).IsData() {
		t.Error("opcode predicates")
	}
}

func TestPSN(t *testing.T) {
	if NextPSN(PSNMask, 1) != 0 || NextPSN(5, 3) != 8 {
		t.Error("NextPSN does not wrap at 2^24")
	}
	for _, c := range []struct {
		a, b uint32
		diff int32
	}{
		{5, 3, 2}, {3, 5, -2}, {0, PSNMask, 1}, {PSNMask, 0, -1}, {0x800000, 0, -0x800000}, {0x7fffff, 0, 0x7fffff},
	} {
		if d := PSNDiff(c.a, c.b); d != c.diff {
			t.Errorf("PSNDiff(%#x, %#x) = %d, want %d", c.a, c.b, d, c.diff)
		}
		if PSNBefore(c.a, c.b) != (c.diff < 0) {
			t.Errorf("PSNBefore(%#x, %#x)", c.a, c.b)
		}
	}
}

func TestReverse(t *testing.T) {
	r := dataFlow.Reverse(0x99)
	if r.SrcMAC != dataFlow.DstMAC || r.DstIP != dataFlow.SrcIP || r.DestQP != 0x99 || r.SrcPort != dataFlow.SrcPort || r.PCP != dataFlow.PCP {
		t.Errorf("Reverse = %+v", r)
	}
}

func TestZeroAllocs(t *testing.T) {
	data := make([]byte, DataFrameLen(OpSendOnly, 4096))
	ack := make([]byte, AckLen)
	cnp := make([]byte, CNPLen)
	d := Data{Opcode: OpSendOnly, PSN: 1, AckReq: true, Payload: 4096}
	var p Packet
	n := testing.AllocsPerRun(100, func() {
		PutData(data, &dataFlow, &d)
		PutAck(ack, &ackFlow, SyndromeACK, 1, 1)
		PutSelectiveNAK(ack, &ackFlow, 1, 3)
		PutCNP(cnp, &ackFlow)
		for _, b := range [][]byte{data, ack, cnp} {
			if err := Parse(b, &p); err != nil {
				t.Fatal(err)
			}
		}
		header.IPv4(data[EthLen+VLANLen:]).SetCE()
		if CheckICRC(data) != nil || SetICRC(data) != nil {
			t.Fatal("ICRC")
		}
		if Parse(data[:40], &p) == nil {
			t.Fatal("a truncated frame parsed")
		}
	})
	if n != 0 {
		t.Errorf("build, parse and check: %v allocations, want 0", n)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range samples() {
		f.Add(s.frame)
	}
	for _, k := range knownAnswers {
		b, _ := hex.DecodeString(k.frame)
		f.Add(b)
	}
	for _, c := range malformedCases {
		b := bytes.Clone(samples()[c.sample].frame)
		c.change(b)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Packet
		err := Parse(b, &p)
		var l BTHLayer
		if len(b) > 42 {
			_ = l.DecodeFromBytes(b[42:], gopacket.NilDecodeFeedback) // must not panic on anything
		}
		if err != nil && err != ErrBadICRC {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v wraps neither sentinel", err)
			}
			if SetICRC(bytes.Clone(b)) == nil {
				t.Fatal("SetICRC accepts what Parse rejects")
			}
			return
		}
		// Accepted (ICRC aside): the views lie inside the frame and agree
		// with the layer, and SetICRC makes the ICRC good.
		if p.Len > len(b) || len(p.BTH) != BTHLen || len(p.Payload) > p.Len {
			t.Fatalf("packet out of the frame: len %d of %d", p.Len, len(b))
		}
		if (p.AETH != nil) != (p.Opcode() == OpAck) || (p.RETH != nil) != p.Opcode().HasRETH() {
			t.Fatal("extension views disagree with the opcode")
		}
		ihl := int(b[p.IP]&0x0f) * 4
		if err := l.DecodeFromBytes(b[p.IP+ihl+UDPLen:p.Len], gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("the layer rejects an accepted frame: %v", err)
		}
		if l.Opcode != p.Opcode() || l.PSN != p.PSN() || l.DestQP != p.DestQP() || !bytes.Equal(l.Payload, p.Payload) {
			t.Fatalf("layer %+v disagrees with Parse", l)
		}
		if (CheckICRC(b) == nil) != (err == nil) || l.ICRC != binary.LittleEndian.Uint32(b[p.Len-4:]) {
			t.Fatal("CheckICRC disagrees with Parse")
		}
		c := bytes.Clone(b)
		if err := SetICRC(c); err != nil {
			t.Fatal(err)
		}
		if err := Parse(c, &p); err != nil {
			t.Fatalf("after SetICRC: %v", err)
		}
		if got := binary.LittleEndian.Uint32(c[p.Len-4:]); got != refICRC(c[:p.Len]) {
			t.Fatalf("ICRC %#x, reference %#x", got, refICRC(c[:p.Len]))
		}
	})
}

func BenchmarkPutData(b *testing.B) {
	buf := make([]byte, DataFrameLen(OpSendOnly, 1024))
	d := Data{Opcode: OpSendMiddle, Payload: 1024}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		d.PSN++
		PutData(buf, &dataFlow, &d)
	}
}

func BenchmarkParse(b *testing.B) {
	buf := make([]byte, DataFrameLen(OpSendOnly, 1024))
	PutData(buf, &dataFlow, &Data{Opcode: OpSendMiddle, Payload: 1024})
	var p Packet
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Parse(buf, &p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPutParseAck(b *testing.B) {
	buf := make([]byte, AckLen)
	var p Packet
	b.ReportAllocs()
	for b.Loop() {
		PutAck(buf, &ackFlow, SyndromeACK, 7, 3)
		if err := Parse(buf, &p); err != nil {
			b.Fatal(err)
		}
	}
}

// foldHeader's eight bytes a step equal the byte loop at every length a
// header may have (and the lengths in between), from any register.
func TestFoldHeader(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, ipv4MaxLen+UDPLen+BTHLen)
	for n := 0; n <= len(buf); n++ {
		for range 4 {
			for i := range buf {
				buf[i] = byte(rng.Uint32())
			}
			crc := rng.Uint32()
			want := crc
			for _, v := range buf[:n] {
				want = crc32.IEEETable[byte(want)^v] ^ want>>8
			}
			if got := foldHeader(crc, buf[:n]); got != want {
				t.Fatalf("%d bytes from %#x: %#x, the byte loop %#x", n, crc, got, want)
			}
		}
	}
}
