package signaling

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
)

// The IEEE 802.1Qbb priority-based flow control frame (DESIGN §6;
// docs/WIRE.md): a MAC control frame, untagged, to the reserved group
// address 01:80:C2:00:00:01, zero-padded to the 60-byte minimum. After the
// Ethernet header, big-endian:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|      Opcode (0x0101)          |  Reserved (0) | Class enable  |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        Time, priority 0       |        Time, priority 1       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|              ...              |        Time, priority 7       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Zero padding (26 bytes)                   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Bit i of the class-enable vector says time i is valid. A time is in
// quanta of 512 bit times at the link's rate: the receiver stops
// transmitting priority i for that long; 0 lets it go at once.

const (
	// EtherTypeMACControl is the MAC control EtherType (802.3 clause 31).
	EtherTypeMACControl = 0x8808
	// OpcodePFC is 802.1Qbb's MAC control opcode.
	OpcodePFC = 0x0101
	// OpcodePause is 802.3x PAUSE, which the fabric never sends.
	OpcodePause = 0x0001
	// PFCLen is the frame's length without FCS: the Ethernet minimum.
	PFCLen = 60
	// QuantumBits is the bit times one pause quantum lasts.
	QuantumBits = 512
	// MaxQuanta is the longest pause a frame can ask for.
	MaxQuanta = 0xFFFF

	pfcBody = 2 + 2 + 16 // opcode, class-enable vector, eight times
)

// PFCDst is the reserved group address MAC control frames go to; bridges
// never forward it.
var PFCDst = net.HardwareAddr{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01}

// ErrMalformedPFC is wrapped by every error ParsePFC returns.
var ErrMalformedPFC = errors.New("malformed PFC frame")

var (
	errNotPFC       = malformedPFC("not a MAC control frame")
	errPFCShort     = malformedPFC("shorter than opcode, class-enable vector and eight times")
	errPFCOpcode    = malformedPFC("opcode is not 0x0101")
	errPFCReserved  = malformedPFC("reserved bits of the class-enable vector set")
	errPFCNoClasses = malformedPFC("no class enabled")
)

type malformedPFC string

func (e malformedPFC) Error() string { return ErrMalformedPFC.Error() + ": " + string(e) }
func (e malformedPFC) Unwrap() error { return ErrMalformedPFC }

// PFCFrame is a byte view of an 802.1Qbb frame, Ethernet header included.
// Obtain one from ParsePFC; the accessors assume it was checked.
type PFCFrame []byte

// IsMACControl reports whether the untagged frame b is a MAC control
// frame (PFC or PAUSE), for a datapath's first check.
func IsMACControl(b []byte) bool {
	return len(b) >= ethLen && binary.BigEndian.Uint16(b[12:14]) == EtherTypeMACControl
}

// ParsePFC checks b as an 802.1Qbb frame: MAC control EtherType, opcode
// 0x0101, a class-enable vector with reserved bits clear and at least one
// class enabled, and room for the eight times. The destination address is
// not checked (802.1Qbb receivers accept any, as 802.3x does).
func ParsePFC(b []byte) (PFCFrame, error) {
	if !IsMACControl(b) {
		return nil, errNotPFC
	}
	if err := checkPFCBody(b[ethLen:]); err != nil {
		return nil, err
	}
	return PFCFrame(b), nil
}

// checkPFCBody checks what follows the Ethernet header.
func checkPFCBody(p []byte) error {
	switch {
	case len(p) < pfcBody:
		return errPFCShort
	case binary.BigEndian.Uint16(p) != OpcodePFC:
		return errPFCOpcode
	case p[2] != 0:
		return errPFCReserved
	case p[3] == 0:
		return errPFCNoClasses
	}
	return nil
}

// Enable is the class-enable vector: bit i set when priority i's time is
// valid.
func (f PFCFrame) Enable() uint8 { return f[ethLen+3] }

// Quanta is priority i's pause time in quanta (meaningful when bit i of
// Enable is set).
func (f PFCFrame) Quanta(i int) uint16 { return binary.BigEndian.Uint16(f[ethLen+4+2*i:]) }

// Src is the sender's MAC address.
func (f PFCFrame) Src() net.HardwareAddr { return net.HardwareAddr(f[6:12]) }

// PutPFC writes a complete 60-byte 802.1Qbb frame into b (len(b) >=
// PFCLen) from src, pausing every priority i with bit i of enable set for
// quanta[i] (0: resume), and returns PFCLen.
func PutPFC(b []byte, src net.HardwareAddr, enable uint8, quanta *[8]uint16) int {
	b = b[:PFCLen]
	clear(b)
	copy(b[0:6], PFCDst)
	copy(b[6:12], src)
	binary.BigEndian.PutUint16(b[12:14], EtherTypeMACControl)
	p := b[ethLen:]
	binary.BigEndian.PutUint16(p, OpcodePFC)
	p[3] = enable
	for i := range 8 {
		if enable&(1<<i) != 0 {
			binary.BigEndian.PutUint16(p[4+2*i:], quanta[i])
		}
	}
	return PFCLen
}

// PauseNs is how long quanta pause a link of rateBps (bit/s).
func PauseNs(quanta uint16, rateBps uint64) int64 {
	if rateBps == 0 {
		rateBps = 1_000_000_000
	}
	return int64(uint64(quanta) * QuantumBits * 1_000_000_000 / rateBps)
}

// DescribeMACControl is a one-line description of a MAC control frame,
// for captures: "PFC enable=0x08 P3=65535" (quanta; 0 resumes),
// "PAUSE quanta=N", or why it is malformed.
func DescribeMACControl(b []byte) string {
	if len(b) >= ethLen+2 && binary.BigEndian.Uint16(b[ethLen:]) == OpcodePause && IsMACControl(b) {
		if len(b) < ethLen+4 {
			return "PAUSE, truncated"
		}
		return fmt.Sprintf("PAUSE quanta=%d", binary.BigEndian.Uint16(b[ethLen+2:]))
	}
	f, err := ParsePFC(b)
	if err != nil {
		if errors.Is(err, errPFCOpcode) {
			return fmt.Sprintf("MAC control opcode 0x%04x", binary.BigEndian.Uint16(b[ethLen:]))
		}
		return err.Error()
	}
	var s strings.Builder
	fmt.Fprintf(&s, "PFC enable=0x%02x", f.Enable())
	for i := range 8 {
		if f.Enable()&(1<<i) != 0 {
			fmt.Fprintf(&s, " P%d=%d", i, f.Quanta(i))
		}
	}
	return s.String()
}
