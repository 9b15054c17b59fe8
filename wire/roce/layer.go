package roce

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// LayerTypeBTHNumber is the gopacket layer type number of LayerTypeBTH.
const LayerTypeBTHNumber = 2887

// LayerTypeBTH is the RoCEv2 transport layer: the UDP payload of a frame
// to port 4791, BTH through ICRC. Importing this package registers it as
// the decoder of UDP port 4791, which gopacket leaves to its Payload.
var LayerTypeBTH = gopacket.RegisterLayerType(LayerTypeBTHNumber, gopacket.LayerTypeMetadata{
	Name:    "RoCEv2",
	Decoder: gopacket.DecodeFunc(decodeBTH),
})

func init() {
	layers.RegisterUDPPortLayerType(UDPPort, LayerTypeBTH)
}

// BTHLayer is a RoCEv2 packet as a gopacket layer, for tools, tests and
// captures; the datapath uses Parse and the views. Contents are the BTH,
// its extension header (RETH, AETH or the CNP's reserved bytes) and the
// INT shim if any; Payload is the data without pad bytes or ICRC.
//
// The ICRC covers the IPv4 and UDP headers, which a layer does not see:
// DecodeFromBytes does not check it and SerializeTo writes ICRC as it is.
// Check a decoded frame with CheckICRC and fix a serialized one with
// SetICRC.
type BTHLayer struct {
	layers.BaseLayer
	Opcode Opcode
	SE     bool
	MigReq bool
	PadCnt uint8 // pad bytes after the payload
	TVer   uint8
	PKey   uint16
	FECN   bool
	BECN   bool
	DestQP uint32
	AckReq bool
	PSN    uint32
	// AETH, for OpAck.
	Syndrome Syndrome
	MSN      uint32
	// RETH, for OpWriteFirst and OpWriteOnly.
	VA     uint64
	RKey   uint32
	DMALen uint32
	// INT shim (int.go): INTSlots records reserved (0: no shim, the BTH's
	// INT bit clear) and the records the hops filled, in their order.
	INTSlots int
	INT      []INTRecord
	// ICRC as the frame carries it, in the byte order ComputeICRC
	// returns.
	ICRC uint32
}

func (l *BTHLayer) LayerType() gopacket.LayerType  { return LayerTypeBTH }
func (l *BTHLayer) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// NextLayerType is gopacket's Payload when there is data, else nothing.
func (l *BTHLayer) NextLayerType() gopacket.LayerType {
	if len(l.Payload) == 0 {
		return gopacket.LayerTypeZero
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes a UDP payload, BTH through ICRC, with Parse's
// checks of the transport headers.
func (l *BTHLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	ext, intl, payEnd, err := checkTransport(data)
	if err != nil {
		if err == errShortBTH || err == errShortExt {
			df.SetTruncated()
		}
		return err
	}
	h := BTH(data)
	hl := BTHLen + ext + intl
	*l = BTHLayer{
		BaseLayer: layers.BaseLayer{Contents: data[:hl], Payload: data[hl:payEnd]},
		Opcode:    h.Opcode(),
		SE:        h.SE(),
		MigReq:    h.MigReq(),
		PadCnt:    uint8(h.PadCnt()),
		TVer:      h.TVer(),
		PKey:      h.PKey(),
		FECN:      h.FECN(),
		BECN:      h.BECN(),
		DestQP:    h.DestQP(),
		AckReq:    h.AckReq(),
		PSN:       h.PSN(),
		ICRC:      storedICRC(data, len(data)),
	}
	switch {
	case l.Opcode == OpAck:
		a := AETH(data[BTHLen:])
		l.Syndrome, l.MSN = a.Syndrome(), a.MSN()
	case l.Opcode.HasRETH():
		r := RETH(data[BTHLen:])
		l.VA, l.RKey, l.DMALen = r.VA(), r.RKey(), r.DMALen()
	}
	if intl > 0 {
		s := INT(data[BTHLen+ext : hl])
		l.INTSlots = s.Slots()
		for i := range min(s.Hops(), s.Slots()) {
			l.INT = append(l.INT, s.Record(i))
		}
	}
	return nil
}

func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	l := &BTHLayer{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	if len(l.Payload) == 0 {
		return nil
	}
	return p.NextDecoder(gopacket.LayerTypePayload)
}

// SerializeTo prepends the BTH and its extension header to the payload
// already in b, and appends PadCnt zero bytes and the ICRC field. With
// opts.FixLengths, PadCnt is first set to what aligns the payload to 4
// bytes.
func (l *BTHLayer) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if !l.Opcode.Known() {
		return fmt.Errorf("serialize roce: %w", errOpcode)
	}
	n := len(b.Bytes())
	if !l.Opcode.IsData() && (n != 0 || l.PadCnt != 0) {
		return fmt.Errorf("serialize roce %v: %w", l.Opcode, errTrailing)
	}
	if opts.FixLengths {
		l.PadCnt = uint8(pad(n))
	}
	if l.PadCnt > 3 {
		return fmt.Errorf("serialize roce: pad count %d: %w", l.PadCnt, errPad)
	}
	tail, err := b.AppendBytes(int(l.PadCnt) + ICRCLen)
	if err != nil {
		return err
	}
	clear(tail)
	binary.LittleEndian.PutUint32(tail[l.PadCnt:], l.ICRC)
	ext := l.Opcode.ExtLen()
	intl := 0
	if l.INTSlots > 0 {
		if l.Opcode == OpCNP || len(l.INT) > l.INTSlots || l.INTSlots > 255 {
			return fmt.Errorf("serialize roce: %d INT records in %d slots on %v: %w", len(l.INT), l.INTSlots, l.Opcode, errINT)
		}
		intl = INTHeaderLen + l.INTSlots*INTRecordLen
	}
	hdr, err := b.PrependBytes(BTHLen + ext + intl)
	if err != nil {
		return err
	}
	clear(hdr)
	h := BTH(hdr)
	h.SetOpcode(l.Opcode)
	h.SetSE(l.SE)
	h.SetMigReq(l.MigReq)
	h.SetPadCnt(int(l.PadCnt))
	h[1] |= l.TVer & 0x0f
	h.SetPKey(l.PKey)
	h.SetFECN(l.FECN)
	h.SetBECN(l.BECN)
	h.SetDestQP(l.DestQP)
	h.SetAckReq(l.AckReq)
	h.SetPSN(l.PSN)
	switch {
	case l.Opcode == OpAck:
		a := AETH(hdr[BTHLen:])
		a.SetSyndrome(l.Syndrome)
		a.SetMSN(l.MSN)
	case l.Opcode.HasRETH():
		r := RETH(hdr[BTHLen:])
		r.SetVA(l.VA)
		r.SetRKey(l.RKey)
		r.SetDMALen(l.DMALen)
	}
	if intl > 0 {
		h.SetINT(true)
		s := INT(hdr[BTHLen+ext:])
		PutINT(s, l.INTSlots)
		for _, v := range l.INT {
			s.Push(v)
		}
	}
	return nil
}
