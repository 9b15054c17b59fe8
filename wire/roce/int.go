package roce

import (
	"encoding/binary"

	"github.com/bcfab/bcfab/wire/header"
)

// In-band network telemetry (INT) for HPCC (Li et al., SIGCOMM 2019): a
// shim of per-hop records that every egress a data packet crosses fills
// in, and that the receiver copies into its ACK for the sender.
//
// A packet carries the shim when bit 5 of BTH byte 4 (0x20, the first of
// the BTH's six reserved bits after FECN and BECN) is set. The shim
// follows the BTH's extension header: in a data packet between the BTH
// (or RETH) and the payload, in an ACK after the AETH. The sender
// reserves every slot, so the frame keeps its length on the way:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  Hops (n)     |  Slots (m)    |        Reserved (zero)        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|              record 0 (16 bytes) ... record m-1               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// and a record, in the order the hops stamped them:
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|              Timestamp (ns, the egress's clock, mod 2^32)     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|              TxBytes (bytes the egress has sent, mod 2^32)    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|              QLen (bytes queued at the egress)                |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|              Rate (the link's, kbit/s; 0: unshaped)           |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// An egress stamps a packet as it leaves its queue: the time its last bit
// is on the link, its byte counter with the packet counted, the bytes
// left queued behind it and its rate; it writes record n, increments n
// (a full shim is left as it is) and writes the ICRC again, which covers
// the shim. Timestamps and byte counters are a hop's own and only ever
// compared with that hop's: their difference between two packets is what
// the link sent in that time.

// INT sizes.
const (
	INTHeaderLen = 4
	INTRecordLen = 16
	// INTSlots is the records a sender reserves: HPCC's five hops, more
	// than the three egresses of a BCube(n,1) path after the NIC's own.
	INTSlots = 5
	// INTLen is the shim with INTSlots records: what a data packet and
	// an ACK grow by under HPCC.
	INTLen = INTHeaderLen + INTSlots*INTRecordLen
	// AckINTLen is an ACK's frame length with the shim.
	AckINTLen = AckLen + INTLen
)

// bthINT is the BTH byte 4 bit that says an INT shim follows.
const bthINT = 0x20

// INT reports whether the packet carries an INT shim.
func (h BTH) INT() bool { return h[4]&bthINT != 0 }

// SetINT sets or clears the INT bit (outside the ICRC).
func (h BTH) SetINT(v bool) { h[4] = setBit(h[4], bthINT, v) }

// INTRecord is one hop's record.
type INTRecord struct {
	TS       uint32 // ns, the hop's clock, mod 2^32
	TxBytes  uint32 // bytes sent, mod 2^32
	QLen     uint32 // bytes queued
	RateKbps uint32
}

// INT is a view of an INT shim.
type INT []byte

// Hops is the records filled.
func (s INT) Hops() int { return int(s[0]) }

// Slots is the records reserved.
func (s INT) Slots() int { return int(s[1]) }

// Len is the shim's length, header and slots.
func (s INT) Len() int { return INTHeaderLen + s.Slots()*INTRecordLen }

// Record is record i (i < Slots).
func (s INT) Record(i int) INTRecord {
	r := s[INTHeaderLen+i*INTRecordLen:]
	_ = r[INTRecordLen-1]
	return INTRecord{
		TS:       binary.BigEndian.Uint32(r[0:4]),
		TxBytes:  binary.BigEndian.Uint32(r[4:8]),
		QLen:     binary.BigEndian.Uint32(r[8:12]),
		RateKbps: binary.BigEndian.Uint32(r[12:16]),
	}
}

// SetRecord writes record i (i < Slots).
func (s INT) SetRecord(i int, v INTRecord) {
	r := s[INTHeaderLen+i*INTRecordLen:]
	_ = r[INTRecordLen-1]
	binary.BigEndian.PutUint32(r[0:4], v.TS)
	binary.BigEndian.PutUint32(r[4:8], v.TxBytes)
	binary.BigEndian.PutUint32(r[8:12], v.QLen)
	binary.BigEndian.PutUint32(r[12:16], v.RateKbps)
}

// Push appends v as the next record; false when every slot is taken.
func (s INT) Push(v INTRecord) bool {
	n := s.Hops()
	if n >= s.Slots() {
		return false
	}
	s.SetRecord(n, v)
	s[0] = uint8(n + 1)
	return true
}

// PutINT writes an empty shim of slots records into b (len(b) >= its
// length) and returns that length.
func PutINT(b []byte, slots int) int {
	n := INTHeaderLen + slots*INTRecordLen
	clear(b[:n])
	b[1] = uint8(slots)
	return n
}

// StampINT stamps record v into frame b if it is a tagged or untagged
// RoCEv2 frame with an INT shim and a free slot, and writes its ICRC
// again; it reports whether it did. Anything else is left alone: a
// frame that is not IPv4, UDP 4791 or that has no shim costs a few
// comparisons. It trusts the frame's headers as far as they fit (the
// receiver's Parse checks them), so it never reads or writes past
// len(b).
func StampINT(b []byte, v INTRecord) bool {
	var f header.Frame
	if header.Parse(b, &f) != header.KindIPv4 {
		return false
	}
	ip := header.IPv4(b[f.L3:])
	ihl, tl := ip.HeaderLen(), ip.TotalLen()
	bth := f.L3 + ihl + UDPLen
	end := f.L3 + tl
	if ip.Protocol() != header.ProtoUDP || end > len(b) || bth+BTHLen+ICRCLen > end ||
		binary.BigEndian.Uint16(b[f.L3+ihl+2:]) != UDPPort {
		return false
	}
	h := BTH(b[bth : bth+BTHLen])
	op := h.Opcode()
	if !h.INT() || !op.Known() || !op.IsData() {
		return false
	}
	at := bth + BTHLen + op.ExtLen()
	if at+INTHeaderLen > end-ICRCLen {
		return false
	}
	s := INT(b[at : end-ICRCLen])
	if s.Len() > len(s) || !s.Push(v) {
		return false
	}
	putICRC(b, f.L3, ihl, end)
	return true
}
