package header

import "encoding/binary"

// Result of Parse. Kind tells which fields are meaningful.
type Frame struct {
	Kind Kind
	// L3 is the offset of the ARP or IPv4 header.
	L3 int
	// Tagged is true when an 802.1Q tag follows the MACs; PCP and VID are
	// its fields.
	Tagged bool
	PCP    uint8
	VID    uint16
	// IPv4 fields.
	Src, Dst     [4]byte
	Proto        uint8
	SPort, DPort uint16 // zero without ports or for fragments
}

// Kind of frame.
type Kind uint8

const (
	KindMalformed Kind = iota
	KindOther          // a well-formed frame of an EtherType the datapath does not forward
	KindARP
	KindIPv4
)

// Parse validates b as Ethernet [802.1Q] (ARP | IPv4 [TCP/UDP ports]) and
// fills f. It never reads past len(b).
func Parse(b []byte, f *Frame) Kind {
	*f = Frame{}
	if len(b) < EthLen {
		return KindMalformed
	}
	et := binary.BigEndian.Uint16(b[12:14])
	off := EthLen
	if et == EtherTypeVLAN {
		if len(b) < EthLen+VLANLen {
			return KindMalformed
		}
		tci := binary.BigEndian.Uint16(b[14:16])
		f.Tagged, f.PCP, f.VID = true, uint8(tci>>13), tci&0x0fff
		et = binary.BigEndian.Uint16(b[16:18])
		off += VLANLen
	}
	f.L3 = off
	switch et {
	case EtherTypeARP:
		if !ARP(b[off:]).Valid() {
			return KindMalformed
		}
		f.Kind = KindARP
		return KindARP
	case EtherTypeIPv4:
	default:
		f.Kind = KindOther
		return KindOther
	}
	ip := IPv4(b[off:])
	if len(ip) < IPv4Min || ip[0]>>4 != 4 {
		return KindMalformed
	}
	hl := ip.HeaderLen()
	tl := ip.TotalLen()
	if hl < IPv4Min || tl < hl || len(ip) < tl {
		return KindMalformed
	}
	f.Src, f.Dst, f.Proto = ip.Src(), ip.Dst(), ip.Protocol()
	if (f.Proto == ProtoTCP || f.Proto == ProtoUDP) && !ip.Fragment() && tl >= hl+4 {
		f.SPort = binary.BigEndian.Uint16(ip[hl:])
		f.DPort = binary.BigEndian.Uint16(ip[hl+2:])
	}
	f.Kind = KindIPv4
	return KindIPv4
}

// PushVLAN inserts an 802.1Q tag after the MACs of the untagged frame that
// ends at b's end and starts VLANLen bytes into b: the caller passes the
// frame with 4 bytes of headroom in front. It returns the tagged frame
// (b itself, now starting at the moved MACs).
func PushVLAN(b []byte, pcp uint8, vid uint16) []byte {
	copy(b[0:12], b[VLANLen:VLANLen+12])
	binary.BigEndian.PutUint16(b[12:14], EtherTypeVLAN)
	binary.BigEndian.PutUint16(b[14:16], uint16(pcp)<<13|vid&0x0fff)
	// b[16:18] already holds the inner EtherType (it was b[12+4:14+4]).
	return b
}

// PopVLAN removes the 802.1Q tag of a tagged frame and returns the untagged
// frame, which starts VLANLen bytes later in the same memory.
func PopVLAN(b []byte) []byte {
	copy(b[VLANLen:VLANLen+12], b[0:12])
	return b[VLANLen:]
}

// SetPCP rewrites the priority of a tagged frame.
func SetPCP(b []byte, pcp uint8) {
	b[14] = b[14]&0x1f | pcp<<5
}

// SetVID rewrites the VLAN ID of a tagged frame, keeping its priority and
// DEI bit.
func SetVID(b []byte, vid uint16) {
	tci := binary.BigEndian.Uint16(b[14:16])
	binary.BigEndian.PutUint16(b[14:16], tci&0xf000|vid&0x0fff)
}

// IPv4Offset is the offset of the IPv4 header of the Ethernet [802.1Q]
// frame b, or -1 when b carries no IPv4 header (another EtherType, or too
// short for the header's fixed part). It is Parse's L3 for the IPv4 frames
// Parse accepts, without the checks a forwarding decision needs: an
// egress that marks packets as they leave (ECN at dequeue) finds the
// header with it.
func IPv4Offset(b []byte) int {
	if len(b) < EthLen {
		return -1
	}
	et, off := binary.BigEndian.Uint16(b[12:14]), EthLen
	if et == EtherTypeVLAN {
		if len(b) < EthLen+VLANLen {
			return -1
		}
		et, off = binary.BigEndian.Uint16(b[16:18]), EthLen+VLANLen
	}
	if et != EtherTypeIPv4 || len(b) < off+IPv4Min || b[off]>>4 != 4 {
		return -1
	}
	return off
}
