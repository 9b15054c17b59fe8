// Package header holds byte-slice views of the headers the datapath reads
// and rewrites: Ethernet, 802.1Q, ARP and IPv4 with its L4 ports. A view is
// validated once by Parse; accessors then read fixed offsets without bounds
// surprises. Nothing here allocates.
package header

import "encoding/binary"

// EtherTypes the datapath knows.
const (
	EtherTypeIPv4 = 0x0800
	EtherTypeARP  = 0x0806
	EtherTypeVLAN = 0x8100
	EtherTypeIPv6 = 0x86DD
)

// IP protocols with ports.
const (
	ProtoICMP = 1
	ProtoTCP  = 6
	ProtoUDP  = 17
)

const (
	EthLen  = 14
	VLANLen = 4
	IPv4Min = 20
	ARPLen  = 28
)

// Ethernet is a view of an Ethernet header.
type Ethernet []byte

func (e Ethernet) Dst() []byte       { return e[0:6] }
func (e Ethernet) Src() []byte       { return e[6:12] }
func (e Ethernet) Type() uint16      { return binary.BigEndian.Uint16(e[12:14]) }
func (e Ethernet) SetDst(mac []byte) { copy(e[0:6], mac) }
func (e Ethernet) SetSrc(mac []byte) { copy(e[6:12], mac) }

// IPv4 is a view of an IPv4 header.
type IPv4 []byte

func (ip IPv4) HeaderLen() int      { return int(ip[0]&0x0f) * 4 }
func (ip IPv4) TotalLen() int       { return int(binary.BigEndian.Uint16(ip[2:4])) }
func (ip IPv4) TOS() uint8          { return ip[1] }
func (ip IPv4) DSCP() uint8         { return ip[1] >> 2 }
func (ip IPv4) ECN() uint8          { return ip[1] & 3 }
func (ip IPv4) Protocol() uint8     { return ip[9] }
func (ip IPv4) Src() [4]byte        { return [4]byte(ip[12:16]) }
func (ip IPv4) Dst() [4]byte        { return [4]byte(ip[16:20]) }
func (ip IPv4) Checksum() uint16    { return binary.BigEndian.Uint16(ip[10:12]) }
func (ip IPv4) FragOffset() int     { return int(binary.BigEndian.Uint16(ip[6:8])&0x1fff) * 8 }
func (ip IPv4) MoreFragments() bool { return ip[6]&0x20 != 0 }

// Fragment reports whether the datagram is a fragment (first or later).
func (ip IPv4) Fragment() bool { return ip.MoreFragments() || ip.FragOffset() != 0 }

// ARP is a view of an Ethernet/IPv4 ARP packet.
type ARP []byte

const (
	ARPRequest = 1
	ARPReply   = 2
)

func (a ARP) Op() uint16        { return binary.BigEndian.Uint16(a[6:8]) }
func (a ARP) SenderMAC() []byte { return a[8:14] }
func (a ARP) SenderIP() [4]byte { return [4]byte(a[14:18]) }
func (a ARP) TargetMAC() []byte { return a[18:24] }
func (a ARP) TargetIP() [4]byte { return [4]byte(a[24:28]) }

// Valid reports whether a is Ethernet (1) / IPv4 (0x0800), 6 / 4.
func (a ARP) Valid() bool {
	return len(a) >= ARPLen && a[0] == 0 && a[1] == 1 && a[2] == 0x08 && a[3] == 0 && a[4] == 6 && a[5] == 4
}

// MakeReply turns a request in place into the reply "ip is at mac".
func (a ARP) MakeReply(mac []byte) {
	var sip [4]byte
	copy(sip[:], a[14:18])
	tip := a.TargetIP()
	copy(a[18:24], a[8:14]) // target <- sender
	copy(a[24:28], sip[:])
	copy(a[8:14], mac)
	copy(a[14:18], tip[:])
	binary.BigEndian.PutUint16(a[6:8], ARPReply)
}

// ECN codepoints (RFC 3168).
const (
	ECNNotECT = 0
	ECNCE     = 3
)

// SetCE marks the datagram Congestion Experienced and updates the header
// checksum incrementally (RFC 1624). It reports false, changing nothing,
// when the datagram is not ECN-capable.
func (ip IPv4) SetCE() bool {
	old := ip[1]
	if old&3 == ECNNotECT {
		return false
	}
	if old&3 == ECNCE {
		return true
	}
	ip[1] = old | ECNCE
	// HC' = ~(~HC + ~m + m'), on the 16-bit word holding TOS (bytes 0-1).
	m := uint32(ip[0])<<8 | uint32(old)
	m2 := uint32(ip[0])<<8 | uint32(ip[1])
	sum := uint32(^binary.BigEndian.Uint16(ip[10:12])) + (^m & 0xffff) + m2
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(ip[10:12], ^uint16(sum))
	return true
}

// IPv4Checksum is the ones' complement sum of the header h folded and
// complemented (RFC 791): 0 over a header whose checksum is correct; over
// one whose checksum field is zero, the value to store there.
func IPv4Checksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
