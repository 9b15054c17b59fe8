package roce

import (
	"encoding/binary"
	"errors"

	"github.com/bcfab/bcfab/wire/header"
)

// ErrMalformed is wrapped by every error Parse returns for a frame that is
// not a well-formed RoCEv2 frame of an opcode the package knows.
var ErrMalformed = errors.New("malformed RoCEv2 frame")

// ErrBadICRC is returned for a well-formed frame whose ICRC does not
// match its contents.
var ErrBadICRC = errors.New("RoCEv2 ICRC mismatch")

// Declared as errors, not as malformed values, so that returning one
// does not box a string on every rejected frame.
var (
	errL2L3       error = malformed("bad Ethernet, 802.1Q or IPv4 header")
	errNotIPv4    error = malformed("not IPv4")
	errNotUDP     error = malformed("not UDP")
	errFragment   error = malformed("IPv4 fragment")
	errIPChecksum error = malformed("bad IPv4 header checksum")
	errShortUDP   error = malformed("truncated UDP header")
	errNotRoCE    error = malformed("UDP destination port is not 4791")
	errUDPLen     error = malformed("UDP length disagrees with IPv4 total length")
	errShortBTH   error = malformed("shorter than BTH and ICRC")
	errTVer       error = malformed("BTH transport version is not 0")
	errOpcode     error = malformed("unsupported BTH opcode")
	errShortExt   error = malformed("truncated extension header")
	errTrailing   error = malformed("bytes between AETH or CNP and ICRC")
	errPad        error = malformed("pad count exceeds the payload")
	errSyndrome   error = malformed("reserved AETH syndrome")
	errINT        error = malformed("truncated INT shim, or one on a CNP")
)

type malformed string

func (e malformed) Error() string { return ErrMalformed.Error() + ": " + string(e) }
func (e malformed) Unwrap() error { return ErrMalformed }

// Packet is what Parse finds in a frame. Its views and Payload point into
// the parsed frame.
type Packet struct {
	// Tagged is true when an 802.1Q tag follows the MACs; PCP and VID are
	// its fields.
	Tagged bool
	PCP    uint8
	VID    uint16
	// IP is the offset of the IPv4 header in the frame.
	IP           int
	SrcIP, DstIP [4]byte
	DSCP, ECN    uint8
	// SrcPort is the UDP source port, the flow's entropy.
	SrcPort uint16

	BTH  BTH
	AETH AETH // ACKNOWLEDGE only, else nil
	RETH RETH // RDMA_WRITE_FIRST and RDMA_WRITE_ONLY only, else nil
	// INT is the INT shim (int.go) of a data packet or ACK whose BTH
	// says it has one, else nil.
	INT INT
	// Payload is the data after the extension headers, without pad
	// bytes or ICRC; empty for ACKNOWLEDGE and CNP.
	Payload []byte
	// Len is the frame's length up to and including the ICRC; what
	// follows (Ethernet padding, an FCS) is not part of the packet.
	Len int
}

// Opcode is the BTH opcode.
func (p *Packet) Opcode() Opcode { return p.BTH.Opcode() }

// PSN is the BTH packet sequence number.
func (p *Packet) PSN() uint32 { return p.BTH.PSN() }

// DestQP is the BTH destination queue pair.
func (p *Packet) DestQP() uint32 { return p.BTH.DestQP() }

// SelectiveNAK reports whether p is a PSN-sequence-error NAK and returns
// the PSN the responder expects (everything before it arrived) and the
// PSN whose out-of-order arrival triggered the NAK (see the package doc).
func (p *Packet) SelectiveNAK() (expected, got uint32, ok bool) {
	if p.AETH == nil || p.AETH.Syndrome() != SyndromePSNSeq {
		return 0, 0, false
	}
	return p.BTH.PSN(), p.AETH.MSN(), true
}

// layout is where the headers of a checked frame are.
type layout struct {
	ip     int // IPv4 header offset
	ihl    int // IPv4 header length
	bth    int // BTH offset
	ext    int // extension header length
	intl   int // INT shim length
	pay    int // payload offset
	payEnd int // end of the payload, before pad
	end    int // end of the UDP datagram, after the ICRC
}

// frame reads b's Ethernet, 802.1Q and IPv4 headers into f with
// header.Parse, the datapath's one parser of them.
func frame(b []byte, f *header.Frame) error {
	switch header.Parse(b, f) {
	case header.KindIPv4:
		return nil
	case header.KindMalformed:
		return errL2L3
	}
	return errNotIPv4
}

// parseAll checks all of b's headers but the ICRC and fills l.
func (l *layout) parseAll(b []byte) error {
	var f header.Frame
	if err := frame(b, &f); err != nil {
		return err
	}
	return l.parse(b, &f)
}

// parse checks what follows b's IPv4 header, which header.Parse has
// checked into f (a well-formed IPv4 header whose total length fits the
// frame): everything but the ICRC. It fills l.
func (l *layout) parse(b []byte, f *header.Frame) error {
	if f.Kind != header.KindIPv4 {
		return errNotIPv4
	}
	off := f.L3
	ip := header.IPv4(b[off:])
	ihl, tl := ip.HeaderLen(), ip.TotalLen()
	switch {
	case ip.Protocol() != header.ProtoUDP:
		return errNotUDP
	case ip.Fragment():
		return errFragment
	case header.IPv4Checksum(ip[:ihl]) != 0:
		return errIPChecksum
	case tl < ihl+UDPLen:
		return errShortUDP
	}
	udp := ip[ihl:tl]
	if binary.BigEndian.Uint16(udp[2:4]) != UDPPort {
		return errNotRoCE
	}
	if int(binary.BigEndian.Uint16(udp[4:6])) != len(udp) {
		return errUDPLen
	}
	ext, intl, payEnd, err := checkTransport(udp[UDPLen:])
	if err != nil {
		return err
	}
	l.ip, l.ihl = off, ihl
	l.bth = off + ihl + UDPLen
	l.ext, l.intl = ext, intl
	l.pay = l.bth + BTHLen + ext + intl
	l.payEnd = l.bth + payEnd
	l.end = off + tl
	return nil
}

// checkTransport checks t, a UDP payload from the BTH to the ICRC, and
// returns the extension headers' and INT shim's lengths and where the
// payload ends (before the pad bytes), as offsets in t.
func checkTransport(t []byte) (ext, intl, payEnd int, err error) {
	if len(t) < BTHLen+ICRCLen {
		return 0, 0, 0, errShortBTH
	}
	h := BTH(t)
	if h.TVer() != 0 {
		return 0, 0, 0, errTVer
	}
	op := h.Opcode()
	if !op.Known() {
		return 0, 0, 0, errOpcode
	}
	ext = op.ExtLen()
	if len(t) < BTHLen+ext+ICRCLen {
		return 0, 0, 0, errShortExt
	}
	if h.INT() {
		rest := len(t) - BTHLen - ext - ICRCLen
		if op == OpCNP || rest < INTHeaderLen {
			return 0, 0, 0, errINT
		}
		if intl = INT(t[BTHLen+ext:]).Len(); intl > rest {
			return 0, 0, 0, errINT
		}
	}
	n := len(t) - BTHLen - ext - intl - ICRCLen // payload and pad
	if !op.IsData() && n != 0 {
		return 0, 0, 0, errTrailing
	}
	if h.PadCnt() > n {
		return 0, 0, 0, errPad
	}
	if op == OpAck {
		if s := AETH(t[BTHLen:]).Syndrome(); s&0x80 != 0 || s.Kind() == KindReserved {
			return 0, 0, 0, errSyndrome
		}
	}
	return ext, intl, BTHLen + ext + intl + n - h.PadCnt(), nil
}

// Parse checks b as Ethernet [802.1Q] / IPv4 / UDP 4791 / BTH / [RETH,
// AETH or CNP's reserved bytes] / payload / ICRC and fills p. The error
// wraps ErrMalformed when the headers are wrong; it is ErrBadICRC when
// only the ICRC is, and then p is filled all the same. Parse never reads
// past len(b) and does not allocate.
//
// The Ethernet, 802.1Q and IPv4 headers are header.Parse's; a datapath
// that has parsed them already calls ParseFrame.
func Parse(b []byte, p *Packet) error {
	var f header.Frame
	if err := frame(b, &f); err != nil {
		*p = Packet{}
		return err
	}
	return ParseFrame(b, &f, p)
}

// ParseFrame is Parse for a frame b whose Ethernet, 802.1Q and IPv4
// headers header.Parse has read into f: it checks and reads only what
// follows them, so a frame is parsed once on its way through a node.
func ParseFrame(b []byte, f *header.Frame, p *Packet) error {
	var l layout
	if err := l.parse(b, f); err != nil {
		*p = Packet{}
		return err
	}
	ip := header.IPv4(b[l.ip:])
	*p = Packet{
		Tagged:  f.Tagged,
		PCP:     f.PCP,
		VID:     f.VID,
		IP:      l.ip,
		SrcIP:   f.Src,
		DstIP:   f.Dst,
		DSCP:    ip.DSCP(),
		ECN:     ip.ECN(),
		SrcPort: binary.BigEndian.Uint16(ip[l.ihl:]),
		BTH:     BTH(b[l.bth : l.bth+BTHLen]),
		Payload: b[l.pay:l.payEnd],
		Len:     l.end,
	}
	x := l.bth + BTHLen + l.ext
	switch op := p.BTH.Opcode(); {
	case op == OpAck:
		p.AETH = AETH(b[l.bth+BTHLen : x])
	case op.HasRETH():
		p.RETH = RETH(b[l.bth+BTHLen : x])
	}
	if l.intl > 0 {
		p.INT = INT(b[x : x+l.intl])
	}
	if icrc(b, l.ip, l.ihl, l.end) != storedICRC(b, l.end) {
		return ErrBadICRC
	}
	return nil
}
