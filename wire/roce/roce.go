// Package roce builds and parses the fabric's transport frames: RoCEv2
// (InfiniBand transport over UDP/IPv4) as the InfiniBand Architecture
// Specification's Annex A17 lays it out and as tshark decodes it ("RRoCE").
// It is the wire format of the hosts' transport (DESIGN §6-7, docs/WIRE.md);
// switches only read its IPv4 header and mark ECN.
//
// A frame, as the Put builders write it:
//
//	Ethernet (14) | 802.1Q (4) | IPv4 (20) | UDP (8) | BTH (12) | [ext] | payload | pad | ICRC (4)
//
// The 802.1Q tag carries the traffic class (PCP) and VLAN ID; IPv4 has
// DF set, TTL 64, ID 0, the flow's DSCP and ECN; UDP goes to port 4791
// from a source port the caller picks as the flow's ECMP entropy, with
// checksum 0 (RoCEv2 relies on the ICRC). Parse also accepts untagged
// frames, IPv4 options and Ethernet padding or an FCS after the datagram.
//
// The Base Transport Header, big-endian:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|    OpCode     |S|M|Pad|  TVer |           P_Key               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|F|B|  Resv6    |                 Destination QP                |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|A|  Resv7      |            Packet Sequence Number             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// S is the solicited event, M the migration state, Pad the count of zero
// bytes after the payload that align it to 4 bytes, TVer 0, F and B the
// FECN and BECN bits, A the acknowledge request. The fabric's P_Key is
// the default 0xFFFF.
//
// Extension headers by opcode (reliable connected transport only):
//
//	SEND_FIRST 0x00, SEND_MIDDLE 0x01, SEND_LAST 0x02,
//	SEND_ONLY 0x04, RDMA_WRITE_MIDDLE 0x07, RDMA_WRITE_LAST 0x08:  none
//	RDMA_WRITE_FIRST 0x06, RDMA_WRITE_ONLY 0x0A:   RETH (16): VA (8), R_Key (4), DMA length (4)
//	ACKNOWLEDGE 0x11:                              AETH (4): syndrome (1), MSN (3); no payload
//	CNP 0x81:                                      16 reserved zero bytes; no payload
//
// The AETH syndrome's bits 6-5 say ACK (00, bits 4-0 a credit count, 0x1F
// when the responder does not advertise credits), RNR NAK (01, bits 4-0
// a timer) or NAK (11, bits 4-0 an error code: 0 PSN sequence error).
//
// Acknowledgement semantics (DESIGN §7). An ACK's BTH PSN is the last PSN
// the responder received in order: it acknowledges every PSN up to and
// including it. A NAK "PSN sequence error" carries in its BTH PSN the PSN
// the responder expected, which acknowledges every PSN before it.
//
// Selective NAK. IRN's NACK (Mittal et al., "Revisiting Network Support
// for RDMA", SIGCOMM 2018) tells the sender both the cumulative point and
// the PSN of the out-of-order packet that triggered it, so the sender
// retransmits only what is missing. The fabric carries that second PSN in
// the AETH's 24-bit MSN field of a PSN-sequence-error NAK: BTH PSN =
// expected PSN, AETH syndrome = 0x60, AETH MSN = PSN that arrived out of
// order. The frame stays a plain ACKNOWLEDGE packet, so tshark decodes it
// cleanly (it shows the out-of-order PSN as the MSN); anything after the
// AETH would leave tshark unable to place the ICRC. The fabric's sender
// has no use for a NAK's MSN otherwise; in an ACK the MSN is the
// responder's to fill (InfiniBand's count of completed messages).
//
// ECN echo: under a window congestion control (DCTCP) the responder
// echoes CE marks in its ACKs rather than sending CNPs: an ACK with BECN
// set acknowledges packets that arrived marked. BECN is outside the ICRC.
//
// CNP: RoCEv2's congestion notification packet (Annex A17.9.3): BTH with
// opcode 0x81, the destination QP of the flow being notified (the data
// sender's QP), BECN set, PSN 0, then 16 reserved bytes and the ICRC.
//
// ICRC: CRC-32 (IEEE 802.3 polynomial, reflected, initial value and final
// XOR 0xFFFFFFFF, as hash/crc32.ChecksumIEEE) over
//
//  1. eight 0xFF bytes standing for the InfiniBand LRH,
//  2. the IPv4 header with TOS (DSCP and ECN), TTL and header checksum
//     replaced by 0xFF bytes,
//  3. the UDP header with its checksum replaced by 0xFF 0xFF,
//  4. the BTH with byte 4 (FECN, BECN, Resv6) replaced by 0xFF,
//  5. everything after the BTH up to the ICRC.
//
// It is written least significant byte first: the first ICRC byte on the
// wire is the CRC's low byte. The fields a router may rewrite are masked,
// so a switch marking ECN CE (with its incremental checksum update) keeps
// the ICRC valid.
//
// Captures: tshark decodes every frame as "RRoCE" (frame.protocols
// ...:udp:infiniband) and shows the ICRC as infiniband.invariant.crc, read
// big-endian, so it prints the byte-swapped CRC; it does not verify it.
// tshark 4.0 does not know the CNP opcode and shows what follows its BTH,
// ICRC included, as unknown data, without complaint. Its RPC-over-RDMA
// heuristic claims some SEND payloads and flags a SEND without payload as
// malformed; the fabric carries no RPC-over-RDMA, so read captures with
// --disable-heuristic rpcrdma_infiniband.
//
// Views (BTH, AETH, RETH) are byte slices with accessors that read fixed
// offsets; Parse validates a frame once and hands out views into it.
// Builders write whole frames into the caller's buffer. Nothing on these
// paths allocates.
package roce

import (
	"encoding/binary"
	"fmt"

	"github.com/bcfab/bcfab/wire/header"
)

// UDPPort is the RoCEv2 destination port (IANA "roce").
const UDPPort = 4791

// Header lengths in bytes; Ethernet, 802.1Q and IPv4 are package
// header's.
const (
	EthLen     = header.EthLen
	VLANLen    = header.VLANLen
	IPv4Len    = header.IPv4Min // without options, as the builders write it
	UDPLen     = 8
	BTHLen     = 12
	AETHLen    = 4
	RETHLen    = 16
	CNPResvLen = 16 // reserved bytes after a CNP's BTH
	ICRCLen    = 4
	HeadersLen = EthLen + VLANLen + IPv4Len + UDPLen + BTHLen // a tagged frame up to the end of the BTH
)

const (
	ipv4MaxLen  = 60
	ethTypeIPv4 = header.EtherTypeIPv4
	ethTypeVLAN = header.EtherTypeVLAN
	protoUDP    = header.ProtoUDP
)

// Frame lengths without FCS, as the builders write them.
const (
	AckLen = HeadersLen + AETHLen + ICRCLen    // ACKNOWLEDGE: 66
	CNPLen = HeadersLen + CNPResvLen + ICRCLen // CNP: 78
)

// DefaultPKey is the default partition key, full membership.
const DefaultPKey = 0xFFFF

// PSNMask keeps the 24 bits of a packet sequence number.
const PSNMask = 0xFFFFFF

// QPMask keeps the 24 bits of a queue pair number.
const QPMask = 0xFFFFFF

// Opcode is a BTH opcode: bits 7-5 the transport (000 reliable
// connected), bits 4-0 the operation.
type Opcode uint8

// Opcodes of the reliable connected transport the fabric uses, and CNP.
const (
	OpSendFirst   Opcode = 0x00
	OpSendMiddle  Opcode = 0x01
	OpSendLast    Opcode = 0x02
	OpSendOnly    Opcode = 0x04
	OpWriteFirst  Opcode = 0x06
	OpWriteMiddle Opcode = 0x07
	OpWriteLast   Opcode = 0x08
	OpWriteOnly   Opcode = 0x0A
	OpAck         Opcode = 0x11
	OpCNP         Opcode = 0x81
)

// Known reports whether the package can build and parse op.
func (op Opcode) Known() bool {
	switch op {
	case OpSendFirst, OpSendMiddle, OpSendLast, OpSendOnly,
		OpWriteFirst, OpWriteMiddle, OpWriteLast, OpWriteOnly, OpAck, OpCNP:
		return true
	}
	return false
}

// IsData reports whether op carries a payload (a SEND or RDMA WRITE).
func (op Opcode) IsData() bool { return op.Known() && op != OpAck && op != OpCNP }

// HasRETH reports whether op carries a RETH: the first or only packet of
// an RDMA WRITE.
func (op Opcode) HasRETH() bool { return op == OpWriteFirst || op == OpWriteOnly }

// ExtLen is the length of what follows the BTH before the payload: the
// RETH, the AETH or the CNP's reserved bytes; 0 for other opcodes.
func (op Opcode) ExtLen() int {
	switch op {
	case OpWriteFirst, OpWriteOnly:
		return RETHLen
	case OpAck:
		return AETHLen
	case OpCNP:
		return CNPResvLen
	}
	return 0
}

// Last reports whether op ends a message (SEND or WRITE, LAST or ONLY).
func (op Opcode) Last() bool {
	return op == OpSendLast || op == OpSendOnly || op == OpWriteLast || op == OpWriteOnly
}

// String is the opcode's name in the specification's spelling.
func (op Opcode) String() string {
	switch op {
	case OpSendFirst:
		return "SEND_FIRST"
	case OpSendMiddle:
		return "SEND_MIDDLE"
	case OpSendLast:
		return "SEND_LAST"
	case OpSendOnly:
		return "SEND_ONLY"
	case OpWriteFirst:
		return "RDMA_WRITE_FIRST"
	case OpWriteMiddle:
		return "RDMA_WRITE_MIDDLE"
	case OpWriteLast:
		return "RDMA_WRITE_LAST"
	case OpWriteOnly:
		return "RDMA_WRITE_ONLY"
	case OpAck:
		return "ACKNOWLEDGE"
	case OpCNP:
		return "CNP"
	}
	return fmt.Sprintf("opcode 0x%02x", uint8(op))
}

// BTH is a view of a Base Transport Header (BTHLen bytes).
type BTH []byte

func (h BTH) Opcode() Opcode { return Opcode(h[0]) }
func (h BTH) SE() bool       { return h[1]&0x80 != 0 }
func (h BTH) MigReq() bool   { return h[1]&0x40 != 0 }
func (h BTH) PadCnt() int    { return int(h[1]>>4) & 3 }
func (h BTH) TVer() uint8    { return h[1] & 0x0f }
func (h BTH) PKey() uint16   { return binary.BigEndian.Uint16(h[2:4]) }
func (h BTH) FECN() bool     { return h[4]&0x80 != 0 }
func (h BTH) BECN() bool     { return h[4]&0x40 != 0 }
func (h BTH) DestQP() uint32 { return be24(h[5:8]) }
func (h BTH) AckReq() bool   { return h[8]&0x80 != 0 }
func (h BTH) PSN() uint32    { return be24(h[9:12]) }

func (h BTH) SetOpcode(op Opcode) { h[0] = uint8(op) }
func (h BTH) SetSE(v bool)        { h[1] = setBit(h[1], 0x80, v) }
func (h BTH) SetMigReq(v bool)    { h[1] = setBit(h[1], 0x40, v) }
func (h BTH) SetPadCnt(n int)     { h[1] = h[1]&^0x30 | uint8(n&3)<<4 }
func (h BTH) SetPKey(k uint16)    { binary.BigEndian.PutUint16(h[2:4], k) }
func (h BTH) SetFECN(v bool)      { h[4] = setBit(h[4], 0x80, v) }
func (h BTH) SetBECN(v bool)      { h[4] = setBit(h[4], 0x40, v) }
func (h BTH) SetDestQP(qp uint32) { put24(h[5:8], qp) }
func (h BTH) SetAckReq(v bool)    { h[8] = setBit(h[8], 0x80, v) }
func (h BTH) SetPSN(psn uint32)   { put24(h[9:12], psn) }

// AETH is a view of an ACK Extended Transport Header (AETHLen bytes).
type AETH []byte

func (a AETH) Syndrome() Syndrome     { return Syndrome(a[0]) }
func (a AETH) MSN() uint32            { return be24(a[1:4]) }
func (a AETH) SetSyndrome(s Syndrome) { a[0] = uint8(s) }
func (a AETH) SetMSN(msn uint32)      { put24(a[1:4], msn) }

// RETH is a view of an RDMA Extended Transport Header (RETHLen bytes).
type RETH []byte

func (r RETH) VA() uint64         { return binary.BigEndian.Uint64(r[0:8]) }
func (r RETH) RKey() uint32       { return binary.BigEndian.Uint32(r[8:12]) }
func (r RETH) DMALen() uint32     { return binary.BigEndian.Uint32(r[12:16]) }
func (r RETH) SetVA(va uint64)    { binary.BigEndian.PutUint64(r[0:8], va) }
func (r RETH) SetRKey(k uint32)   { binary.BigEndian.PutUint32(r[8:12], k) }
func (r RETH) SetDMALen(n uint32) { binary.BigEndian.PutUint32(r[12:16], n) }

// Syndrome is an AETH syndrome byte.
type Syndrome uint8

// SyndromeKind is what bits 6-5 of a syndrome say.
type SyndromeKind uint8

const (
	KindACK      SyndromeKind = 0 // positive acknowledgement; Value is a credit count
	KindRNR      SyndromeKind = 1 // receiver not ready; Value is a timer
	KindReserved SyndromeKind = 2
	KindNAK      SyndromeKind = 3 // negative acknowledgement; Value is an error code
)

// NoCredits is the credit count of an ACK from a responder that does not
// advertise end-to-end credits ("invalid credit count").
const NoCredits = 0x1F

// NAK codes (Value of a KindNAK syndrome).
const (
	NAKPSNSequenceError       = 0
	NAKInvalidRequest         = 1
	NAKRemoteAccessError      = 2
	NAKRemoteOperationalError = 3
	NAKInvalidRDRequest       = 4
)

// Syndromes the fabric sends.
const (
	SyndromeACK    = Syndrome(KindACK<<5 | NoCredits)           // 0x1F
	SyndromePSNSeq = Syndrome(KindNAK<<5 | NAKPSNSequenceError) // 0x60
)

// ACKSyndrome is the syndrome of an ACK advertising credits (NoCredits:
// none).
func ACKSyndrome(credits uint8) Syndrome { return Syndrome(credits & 0x1F) }

// RNRSyndrome is the syndrome of an RNR NAK with the given timer code.
func RNRSyndrome(timer uint8) Syndrome { return Syndrome(KindRNR)<<5 | Syndrome(timer&0x1F) }

// NAKSyndrome is the syndrome of a NAK with the given error code.
func NAKSyndrome(code uint8) Syndrome { return Syndrome(KindNAK)<<5 | Syndrome(code&0x1F) }

// Kind is the syndrome's kind: ACK, RNR NAK or NAK.
func (s Syndrome) Kind() SyndromeKind { return SyndromeKind(s>>5) & 3 }

// Value is the low five bits: credits, timer or NAK code by Kind.
func (s Syndrome) Value() uint8 { return uint8(s) & 0x1F }

// String describes the syndrome as tshark's columns do, briefly.
func (s Syndrome) String() string {
	switch s.Kind() {
	case KindACK:
		return fmt.Sprintf("ACK credits=%d", s.Value())
	case KindRNR:
		return fmt.Sprintf("RNR NAK timer=%d", s.Value())
	case KindNAK:
		if s.Value() == NAKPSNSequenceError {
			return "NAK PSN sequence error"
		}
		return fmt.Sprintf("NAK code=%d", s.Value())
	}
	return fmt.Sprintf("reserved syndrome 0x%02x", uint8(s))
}

// NextPSN is psn advanced by n, modulo 2^24.
func NextPSN(psn, n uint32) uint32 { return (psn + n) & PSNMask }

// PSNDiff is a - b as a signed distance in 24-bit serial arithmetic:
// positive when a is after b, within ±2^23.
func PSNDiff(a, b uint32) int32 { return int32((a-b)<<8) >> 8 }

// PSNBefore reports whether a comes before b in 24-bit serial arithmetic.
func PSNBefore(a, b uint32) bool { return PSNDiff(a, b) < 0 }

func be24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

func put24(b []byte, v uint32) {
	_ = b[2]
	b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
}

func setBit(b, bit uint8, v bool) uint8 {
	if v {
		return b | bit
	}
	return b &^ bit
}
