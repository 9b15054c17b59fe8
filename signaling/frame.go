package signaling

import (
	"encoding/binary"
	"errors"
	"net"

	"github.com/bcfab/bcfab/fabric/bcube"
)

// The PortFC and BFC signal frame (DESIGN §6; docs/WIRE.md). An untagged
// Ethernet frame of EtherType 0x88B5, dst the neighbour's MAC, src the
// sender's port MAC, zero-padded to 60 bytes. After the Ethernet header,
// all multi-byte fields big-endian:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  Version (1)  |    Scheme     |     Type      |     Flags     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        Sequence number                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Scheme body (16 bytes)                       |
//	+                                                               +
//	|                                                               |
//	+                                                               +
//	|                                                               |
//	+                                                               +
//	|                                                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// PortFC body:
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Class       |     Port      | Origin level  |   Reserved    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                         Origin index                          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       Zero (8 bytes)                          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// BFC body, Pause and Resume:
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|          UpstreamQ            |           Reserved            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       Zero (12 bytes)                         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// BFC body, State (the periodic pause bitmap):
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       Bitmap (64 bits)                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            Queues             |        Zero (6 bytes)         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Congestion isolation body (ICI and CI; Type Isolate, Flags 0): the
// flow to isolate, as its frames' IPv4 and UDP/TCP headers name it, the
// priority its frames carry on the link the signal goes up, and how many
// hops the signal is from the congestion root (0: sent by the root):
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      Flow source address                      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                   Flow destination address                    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|         Source port           |       Destination port        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Protocol    |   Priority    |     Hops      |   Reserved    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

const (
	// EtherTypeFC is IEEE 802's local experimental EtherType 1.
	EtherTypeFC = 0x88B5
	// Version is the only version of the frame.
	Version = 1

	// Schemes. SchemeProbe is not flow control: the timing probes of the
	// fidelity monitor, which every fabric port exchanges with its peer
	// (TypeProbe, answered by TypeEcho).
	SchemePortFC = 1
	SchemeBFC    = 2
	SchemeProbe  = 3
	// SchemeICI is congestion isolation (fc ici and ci): a signal naming
	// a flow for the upstream neighbour to isolate.
	SchemeICI = 4

	// Probe types.
	TypeProbe = 1
	TypeEcho  = 2

	// Types. TypeState is BFC's periodic bitmap; for PortFC it is a state
	// refresh of (class, port) meaning "paused".
	TypePause  = 1
	TypeResume = 2
	TypeState  = 3
	// TypeIsolate is congestion isolation's only type: isolate the flow
	// the body names (SchemeICI).
	TypeIsolate = 1

	// FlagRelayed marks a PortFC class-B signal relayed by a server.
	FlagRelayed = 0x01

	// PortFC classes.
	ClassA = 1
	ClassB = 2

	// HeaderLen is the Ethernet header plus the signal header and body.
	HeaderLen = ethLen + fcLen
	// FrameLen is the length on the wire without FCS, after padding.
	FrameLen = 60
	// MaxFrameLen is the longest frame ParseSignal accepts.
	MaxFrameLen = 1514

	// BFCMaxQueues bounds a State frame's Queues: the bitmap has 64 bits.
	BFCMaxQueues = 64
)

const (
	ethLen = 14
	// fcLen is the signal header (8) plus the scheme body (16).
	fcLen = 24

	// Offsets in the frame.
	offVersion = ethLen
	offScheme  = ethLen + 1
	offType    = ethLen + 2
	offFlags   = ethLen + 3
	offSeq     = ethLen + 4
	offBody    = ethLen + 8
)

// ErrMalformed is wrapped by every error ParseSignal returns.
var ErrMalformed = errors.New("malformed flow-control signal")

// The reasons a frame is rejected. They are fixed values, so that
// rejecting a frame allocates nothing either.
var (
	errShort       = malformed("shorter than 38 bytes")
	errLong        = malformed("longer than 1514 bytes")
	errEtherType   = malformed("EtherType is not 0x88b5")
	errVersion     = malformed("version is not 1")
	errScheme      = malformed("unknown scheme")
	errType        = malformed("unknown type")
	errFlags       = malformed("unknown flag bits set")
	errClass       = malformed("PortFC class is not A (1) or B (2)")
	errReserved    = malformed("reserved bytes are not zero")
	errQueues      = malformed("BFC state covers more than 64 queues")
	errHeaderShort = malformed("signal header shorter than 24 bytes")
	errPriority    = malformed("isolation priority above 7")
)

type malformedError string

func malformed(reason string) error { return malformedError(reason) }

func (e malformedError) Error() string { return ErrMalformed.Error() + ": " + string(e) }
func (e malformedError) Unwrap() error { return ErrMalformed }

// Signal is a view of a whole PortFC or BFC signal frame, Ethernet header
// included. Obtain one from ParseSignal; its accessors then read fixed
// offsets. It is a slice of the caller's buffer, not a copy.
type Signal []byte

// ParseSignal validates b as a signal frame of 38 to 1514 bytes (padding
// after the 38th byte is ignored) and returns it as a Signal. Errors wrap
// ErrMalformed. It does not allocate.
func ParseSignal(b []byte) (Signal, error) {
	switch {
	case len(b) < HeaderLen:
		return nil, errShort
	case len(b) > MaxFrameLen:
		return nil, errLong
	case !IsSignal(b):
		return nil, errEtherType
	}
	if err := validate(b[ethLen:HeaderLen]); err != nil {
		return nil, err
	}
	return Signal(b), nil
}

// validate checks the 24 bytes after the Ethernet header. ParseSignal and
// the gopacket layer share it, so they accept exactly the same frames.
func validate(h []byte) error {
	if len(h) < fcLen {
		return errHeaderShort
	}
	if h[0] != Version {
		return errVersion
	}
	if h[3]&^FlagRelayed != 0 {
		return errFlags
	}
	typ := h[2]
	if typ < TypePause || typ > TypeState {
		return errType
	}
	body := h[8:24]
	switch h[1] {
	case SchemeProbe:
		if typ != TypeProbe && typ != TypeEcho {
			return errType
		}
		if h[3] != 0 {
			return errFlags
		}
	case SchemePortFC:
		if body[0] != ClassA && body[0] != ClassB {
			return errClass
		}
		if body[3] != 0 || !zero(body[8:]) {
			return errReserved
		}
	case SchemeICI:
		if typ != TypeIsolate {
			return errType
		}
		if h[3] != 0 {
			return errFlags
		}
		if body[13] > 7 {
			return errPriority
		}
		if body[15] != 0 {
			return errReserved
		}
	case SchemeBFC:
		if typ == TypeState {
			if binary.BigEndian.Uint16(body[8:10]) > BFCMaxQueues {
				return errQueues
			}
			if !zero(body[10:]) {
				return errReserved
			}
		} else if !zero(body[2:]) {
			return errReserved
		}
	default:
		return errScheme
	}
	return nil
}

func zero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// IsSignal reports whether b is an Ethernet frame of EtherType 0x88B5: the
// cheap test the datapath makes before ParseSignal.
func IsSignal(b []byte) bool {
	return len(b) >= ethLen && b[12] == EtherTypeFC>>8 && b[13] == EtherTypeFC&0xff
}

func (s Signal) Dst() net.HardwareAddr { return net.HardwareAddr(s[0:6]) }
func (s Signal) Src() net.HardwareAddr { return net.HardwareAddr(s[6:12]) }
func (s Signal) Version() uint8        { return s[offVersion] }
func (s Signal) Scheme() uint8         { return s[offScheme] }
func (s Signal) Type() uint8           { return s[offType] }
func (s Signal) Flags() uint8          { return s[offFlags] }
func (s Signal) Relayed() bool         { return s[offFlags]&FlagRelayed != 0 }
func (s Signal) Seq() uint32           { return binary.BigEndian.Uint32(s[offSeq:]) }

// PortFC fields; meaningful when Scheme is SchemePortFC.

// Class is ClassA or ClassB.
func (s Signal) Class() uint8 { return s[offBody] }

// Port is the congested egress port p at the originating switch.
func (s Signal) Port() uint8 { return s[offBody+1] }

// OriginLevel is the originating switch's level l.
func (s Signal) OriginLevel() uint8 { return s[offBody+2] }

// OriginIndex is the originating switch's index w.
func (s Signal) OriginIndex() uint32 { return binary.BigEndian.Uint32(s[offBody+4:]) }

// BFC fields; meaningful when Scheme is SchemeBFC.

// UpstreamQ is the queue at the upstream node that a Pause or Resume
// is for.
func (s Signal) UpstreamQ() uint16 { return binary.BigEndian.Uint16(s[offBody:]) }

// Bitmap of a State frame: bit q set means upstream queue q is held
// paused.
func (s Signal) Bitmap() uint64 { return binary.BigEndian.Uint64(s[offBody:]) }

// BitmapQueues is how many queues a State frame's bitmap covers (<= 64).
func (s Signal) BitmapQueues() uint16 { return binary.BigEndian.Uint16(s[offBody+8:]) }

// Congestion isolation fields; meaningful when Scheme is SchemeICI.

// Flow is the flow an Isolate frame names.
func (s Signal) Flow() (f bcube.FiveTuple) {
	b := s[offBody:]
	copy(f.Src[:], b[0:4])
	copy(f.Dst[:], b[4:8])
	f.SPort = binary.BigEndian.Uint16(b[8:10])
	f.DPort = binary.BigEndian.Uint16(b[10:12])
	f.Proto = b[12]
	return f
}

// FlowPCP is the priority the flow's frames carry on the link the
// Isolate frame went up.
func (s Signal) FlowPCP() uint8 { return s[offBody+13] }

// Hops is how many hops the Isolate frame is from the congestion root
// (0: sent by the root).
func (s Signal) Hops() uint8 { return s[offBody+14] }

// PutICI writes an Isolate frame naming flow f, whose frames carry
// priority pcp, hops from the root, into b, which must hold FrameLen
// bytes, and returns FrameLen.
func PutICI(b []byte, dst, src []byte, seq uint32, f *bcube.FiveTuple, pcp, hops uint8) int {
	putHeader(b, dst, src, SchemeICI, TypeIsolate, 0, seq)
	body := b[offBody:]
	copy(body[0:4], f.Src[:])
	copy(body[4:8], f.Dst[:])
	binary.BigEndian.PutUint16(body[8:10], f.SPort)
	binary.BigEndian.PutUint16(body[10:12], f.DPort)
	body[12], body[13], body[14] = f.Proto, pcp, hops
	return FrameLen
}

// putHeader writes the Ethernet header and the 8-byte signal header into
// b[:60] and zeroes the rest of it (body and padding).
func putHeader(b []byte, dst, src []byte, scheme, typ, flags uint8, seq uint32) {
	b = b[:FrameLen]
	copy(b[0:6], dst)
	copy(b[6:12], src)
	b[12], b[13] = EtherTypeFC>>8, EtherTypeFC&0xff
	b[offVersion] = Version
	b[offScheme] = scheme
	b[offType] = typ
	b[offFlags] = flags
	binary.BigEndian.PutUint32(b[offSeq:], seq)
	clear(b[offBody:])
}

// PutPortFC writes a PortFC frame into b, which must hold FrameLen bytes,
// and returns FrameLen. Values are written as given; the state machines
// are trusted to pass valid ones.
func PutPortFC(b []byte, dst, src []byte, typ, flags uint8, seq uint32, class, port, originLevel uint8, originIndex uint32) int {
	putHeader(b, dst, src, SchemePortFC, typ, flags, seq)
	b[offBody] = class
	b[offBody+1] = port
	b[offBody+2] = originLevel
	binary.BigEndian.PutUint32(b[offBody+4:], originIndex)
	return FrameLen
}

// PutBFC writes a BFC frame into b, which must hold FrameLen bytes, and
// returns FrameLen. A TypeState frame carries bitmap and queues, a Pause
// or Resume upstreamQ; the fields the type does not carry are ignored.
func PutBFC(b []byte, dst, src []byte, typ uint8, seq uint32, upstreamQ uint16, bitmap uint64, queues uint16) int {
	putHeader(b, dst, src, SchemeBFC, typ, 0, seq)
	if typ == TypeState {
		binary.BigEndian.PutUint64(b[offBody:], bitmap)
		binary.BigEndian.PutUint16(b[offBody+8:], queues)
	} else {
		binary.BigEndian.PutUint16(b[offBody:], upstreamQ)
	}
	return FrameLen
}

// Probe fields: the monotonic time (ns, CLOCK_MONOTONIC, shared by every
// node of a machine) at which the frame's last bit left its sender's
// link, and in an Echo the one-way delay the echoing node measured for
// the Probe it answers.

// ProbeSent is a probe frame's send time.
func (s Signal) ProbeSent() int64 { return int64(binary.BigEndian.Uint64(s[offBody:])) }

// ProbeForward is an Echo's forward one-way delay in ns.
func (s Signal) ProbeForward() int64 { return int64(binary.BigEndian.Uint64(s[offBody+8:])) }

// PutProbe writes a probe frame (TypeProbe, or TypeEcho with the forward
// delay fwd) into b, which must hold FrameLen bytes, and returns FrameLen.
// Its send time is written when its last bit is known to leave
// (SetProbeSent).
func PutProbe(b []byte, dst, src []byte, typ uint8, seq uint32, fwd int64) int {
	putHeader(b, dst, src, SchemeProbe, typ, 0, seq)
	binary.BigEndian.PutUint64(b[offBody+8:], uint64(fwd))
	return FrameLen
}

// IsProbe reports whether b is a probe frame (the test the datapath makes
// on every frame of its strict high-priority queue and on receive).
func IsProbe(b []byte) bool {
	return len(b) >= HeaderLen && IsSignal(b) && b[offScheme] == SchemeProbe
}

// SetProbeSent writes the send time of the probe frame b in place.
func SetProbeSent(b []byte, ns int64) { binary.BigEndian.PutUint64(b[offBody:], uint64(ns)) }

// SetRelayed sets the relayed flag of the signal frame b in place: a server
// relaying a class-B signal forwards the frame it received.
func SetRelayed(b []byte) { b[offFlags] |= FlagRelayed }
