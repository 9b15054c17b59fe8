package roce

import (
	"encoding/binary"

	"github.com/bcfab/bcfab/wire/header"
)

// Flow is what every frame of one direction of a connection shares: the
// addresses, the traffic class and the destination queue pair. Frames
// going the other way (ACKs, NAKs, CNPs to the data sender) use another
// Flow, usually made by Reverse.
type Flow struct {
	SrcMAC, DstMAC [6]byte
	PCP            uint8  // 802.1Q priority, 0-7
	VID            uint16 // 802.1Q VLAN ID, 0-4095
	SrcIP, DstIP   [4]byte
	DSCP           uint8 // 0-63
	ECN            uint8 // ECN codepoint written into every frame, 0-3
	// SrcPort is the UDP source port: the flow's entropy for ECMP
	// hashing, chosen by the caller.
	SrcPort uint16
	// DestQP is the receiving queue pair (24 bits).
	DestQP uint32
	// PKey is the partition key; 0 stands for DefaultPKey.
	PKey uint16
}

// Reverse is the flow the other way: addresses swapped, DestQP set to qp,
// the rest kept.
func (f *Flow) Reverse(qp uint32) Flow {
	r := *f
	r.SrcMAC, r.DstMAC = f.DstMAC, f.SrcMAC
	r.SrcIP, r.DstIP = f.DstIP, f.SrcIP
	r.DestQP = qp
	return r
}

// Data describes one SEND or RDMA WRITE packet.
type Data struct {
	Opcode Opcode
	PSN    uint32
	AckReq bool
	SE     bool // solicited event, meaningful on the last packet of a message
	// Payload is the payload length in bytes, before padding.
	Payload int
	// The RETH, written for OpWriteFirst and OpWriteOnly only.
	VA     uint64
	RKey   uint32
	DMALen uint32
	// INTSlots reserves an empty INT shim of that many records between
	// the extension header and the payload (int.go); 0: none.
	INTSlots int
	// Zeros: the payload is zero bytes, which PutData writes itself; it
	// then computes the ICRC over them without reading them (a NIC whose
	// packets carry no data of their own).
	Zeros bool
}

// INTShimLen is the length of an INT shim of slots records (0: none).
func INTShimLen(slots int) int {
	if slots <= 0 {
		return 0
	}
	return INTHeaderLen + slots*INTRecordLen
}

// pad is the count of zero bytes that align a payload of n bytes to 4.
func pad(n int) int { return -n & 3 }

// DataFrameLen is the length (without FCS) of a tagged frame of opcode
// op carrying payload bytes: headers, RETH if op has one, payload, pad
// to a multiple of 4, ICRC.
func DataFrameLen(op Opcode, payload int) int {
	return HeadersLen + op.ExtLen() + payload + pad(payload) + ICRCLen
}

// PayloadOffset is where the payload of a tagged frame of opcode op
// starts.
func PayloadOffset(op Opcode) int { return HeadersLen + op.ExtLen() }

// MaxPayload is the largest payload, a multiple of 4, that a tagged frame
// of opcode op carries within frameLen bytes (without FCS); 0 when not
// even the headers fit.
func MaxPayload(op Opcode, frameLen int) int {
	n := frameLen - HeadersLen - op.ExtLen() - ICRCLen
	if n < 0 {
		return 0
	}
	return n &^ 3
}

// PutData writes a complete data frame into b and returns its length,
// DataFrameLen(d.Opcode, d.Payload) + INTShimLen(d.INTSlots). The payload
// is taken as it is in b[PayloadOffset(d.Opcode)+INTShimLen(d.INTSlots):]:
// write it there first, or call SetICRC after changing it; with d.Zeros
// PutData writes zeros there. The pad bytes are zeroed. It panics when
// d.Opcode is not a data opcode or b is shorter than the frame.
func PutData(b []byte, f *Flow, d *Data) int {
	if !d.Opcode.IsData() {
		panic("roce: PutData with opcode " + d.Opcode.String())
	}
	shim := INTShimLen(d.INTSlots)
	n := DataFrameLen(d.Opcode, d.Payload) + shim
	b = b[:n]
	p := pad(d.Payload)
	h := putHeaders(b, f, n, d.Opcode, d.PSN, d.AckReq, p)
	h.SetSE(d.SE)
	if d.Opcode.HasRETH() {
		r := RETH(b[HeadersLen : HeadersLen+RETHLen])
		r.SetVA(d.VA)
		r.SetRKey(d.RKey)
		r.SetDMALen(d.DMALen)
	}
	if shim > 0 {
		h.SetINT(true)
		PutINT(b[PayloadOffset(d.Opcode):], d.INTSlots)
	}
	if d.Zeros {
		off := PayloadOffset(d.Opcode) + shim
		clear(b[off : n-ICRCLen])
		putICRCZeros(b, EthLen+VLANLen, IPv4Len, off, n)
		return n
	}
	clear(b[n-ICRCLen-p : n-ICRCLen])
	putICRC(b, EthLen+VLANLen, IPv4Len, n)
	return n
}

// PutAck writes an ACKNOWLEDGE frame (AckLen bytes) with the given AETH
// syndrome, BTH PSN and AETH MSN into b and returns AckLen. For an ACK
// (SyndromeACK) psn is the last PSN received in order; for a PSN sequence
// error NAK it is the PSN expected next.
func PutAck(b []byte, f *Flow, s Syndrome, psn, msn uint32) int {
	b = b[:AckLen]
	putHeaders(b, f, AckLen, OpAck, psn, false, 0)
	a := AETH(b[HeadersLen : HeadersLen+AETHLen])
	a.SetSyndrome(s)
	a.SetMSN(msn)
	putICRC(b, EthLen+VLANLen, IPv4Len, AckLen)
	return AckLen
}

// PutAckINT writes an ACK as PutAck does, carrying a copy of echo, the
// INT shim of the data packet it answers, after its AETH; it returns the
// frame's length, AckLen + len(echo).
func PutAckINT(b []byte, f *Flow, psn uint32, echo INT) int {
	n := AckLen + len(echo)
	b = b[:n]
	h := putHeaders(b, f, n, OpAck, psn, false, 0)
	h.SetINT(true)
	a := AETH(b[HeadersLen : HeadersLen+AETHLen])
	a.SetSyndrome(SyndromeACK)
	a.SetMSN(0)
	copy(b[HeadersLen+AETHLen:], echo)
	putICRC(b, EthLen+VLANLen, IPv4Len, n)
	return n
}

// PutSelectiveNAK writes the fabric's selective NAK (see the package
// doc): a PSN sequence error NAK for expected that also names got, the
// PSN that arrived out of order. It returns AckLen.
func PutSelectiveNAK(b []byte, f *Flow, expected, got uint32) int {
	return PutAck(b, f, SyndromePSNSeq, expected, got)
}

// PutCNP writes a congestion notification packet (CNPLen bytes) to
// f.DestQP, the QP of the flow's data sender, and returns CNPLen.
func PutCNP(b []byte, f *Flow) int {
	b = b[:CNPLen]
	h := putHeaders(b, f, CNPLen, OpCNP, 0, false, 0)
	h.SetBECN(true)
	clear(b[HeadersLen : HeadersLen+CNPResvLen])
	putICRC(b, EthLen+VLANLen, IPv4Len, CNPLen)
	return CNPLen
}

// putHeaders writes Ethernet, 802.1Q, IPv4, UDP and BTH for a frame of n
// bytes and returns the BTH.
func putHeaders(b []byte, f *Flow, n int, op Opcode, psn uint32, ackReq bool, padCnt int) BTH {
	_ = b[HeadersLen-1]
	copy(b[0:6], f.DstMAC[:])
	copy(b[6:12], f.SrcMAC[:])
	binary.BigEndian.PutUint16(b[12:14], ethTypeVLAN)
	binary.BigEndian.PutUint16(b[14:16], uint16(f.PCP&7)<<13|f.VID&0x0fff)
	binary.BigEndian.PutUint16(b[16:18], ethTypeIPv4)

	ip := b[EthLen+VLANLen : EthLen+VLANLen+IPv4Len]
	ip[0] = 0x45
	ip[1] = f.DSCP<<2 | f.ECN&3
	binary.BigEndian.PutUint16(ip[2:4], uint16(n-EthLen-VLANLen))
	binary.BigEndian.PutUint16(ip[4:6], 0)      // ID: unused with DF (RFC 6864)
	binary.BigEndian.PutUint16(ip[6:8], 0x4000) // DF
	ip[8] = 64                                  // TTL
	ip[9] = protoUDP
	binary.BigEndian.PutUint16(ip[10:12], 0)
	copy(ip[12:16], f.SrcIP[:])
	copy(ip[16:20], f.DstIP[:])
	binary.BigEndian.PutUint16(ip[10:12], header.IPv4Checksum(ip))

	udp := b[EthLen+VLANLen+IPv4Len : HeadersLen-BTHLen]
	binary.BigEndian.PutUint16(udp[0:2], f.SrcPort)
	binary.BigEndian.PutUint16(udp[2:4], UDPPort)
	binary.BigEndian.PutUint16(udp[4:6], uint16(n-EthLen-VLANLen-IPv4Len))
	binary.BigEndian.PutUint16(udp[6:8], 0) // RoCEv2 leaves it to the ICRC

	h := BTH(b[HeadersLen-BTHLen : HeadersLen])
	pkey := f.PKey
	if pkey == 0 {
		pkey = DefaultPKey
	}
	h[0] = uint8(op)
	h[1] = uint8(padCnt&3) << 4 // SE 0, M 0, TVer 0
	h.SetPKey(pkey)
	h[4] = 0
	h.SetDestQP(f.DestQP)
	h[8] = 0
	h.SetAckReq(ackReq)
	h.SetPSN(psn)
	return h
}
