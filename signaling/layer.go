package signaling

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/bcfab/bcfab/fabric/bcube"
)

// LayerTypeNumber is the gopacket layer type number of LayerTypeFC.
const LayerTypeNumber = 2885

// LayerTypeFC is the PortFC/BFC signal layer: what follows the Ethernet
// header of an EtherType 0x88B5 frame. Importing this package registers it
// with gopacket and as the decoder of EtherType 0x88B5, so
// gopacket.NewPacket(frame, layers.LayerTypeEthernet, …) decodes signals.
var LayerTypeFC = gopacket.RegisterLayerType(LayerTypeNumber, gopacket.LayerTypeMetadata{
	Name:    "FCSignal",
	Decoder: gopacket.DecodeFunc(decodeFC),
})

func init() {
	layers.EthernetTypeMetadata[EtherTypeFC] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeFC),
		Name:       "FCSignal",
		LayerType:  LayerTypeFC,
	}
}

// FC is the signal header and body as a gopacket layer, for tools, tests
// and captures; the datapath uses the Signal view. The layout is drawn in
// frame.go. Contents are the 24 bytes after the Ethernet header; the
// Ethernet padding that follows is the layer's payload and is not decoded
// further.
type FC struct {
	layers.BaseLayer

	// Version is the frame's version; SerializeTo writes Version (1)
	// when it is zero.
	Version uint8
	Scheme  uint8 // SchemePortFC, SchemeBFC or SchemeProbe
	Type    uint8 // TypePause, TypeResume or TypeState; TypeProbe or TypeEcho
	Flags   uint8 // FlagRelayed or 0
	Seq     uint32

	// PortFC.
	Class       uint8 // ClassA or ClassB
	Port        uint8
	OriginLevel uint8
	OriginIndex uint32

	// BFC: UpstreamQ for Pause and Resume, Bitmap and Queues for State.
	UpstreamQ uint16
	Bitmap    uint64
	Queues    uint16

	// Congestion isolation: the flow, its priority, the hops from the
	// root.
	Flow    bcube.FiveTuple
	FlowPCP uint8
	Hops    uint8

	// Probe: the send time (CLOCK_MONOTONIC ns) and an Echo's forward
	// one-way delay (ns).
	SentNs, ForwardNs int64
}

func (f *FC) LayerType() gopacket.LayerType  { return LayerTypeFC }
func (f *FC) CanDecode() gopacket.LayerClass { return LayerTypeFC }

// NextLayerType is LayerTypeZero: nothing but padding follows a signal.
func (f *FC) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// Relayed reports whether FlagRelayed is set.
func (f *FC) Relayed() bool { return f.Flags&FlagRelayed != 0 }

// DecodeFromBytes decodes the 24 bytes at the start of data, which is an
// Ethernet payload, with the checks of ParseSignal.
func (f *FC) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < fcLen {
		df.SetTruncated()
		return errHeaderShort
	}
	if err := validate(data[:fcLen]); err != nil {
		return err
	}
	*f = FC{BaseLayer: layers.BaseLayer{Contents: data[:fcLen], Payload: data[fcLen:]}}
	f.Version, f.Scheme, f.Type, f.Flags = data[0], data[1], data[2], data[3]
	f.Seq = binary.BigEndian.Uint32(data[4:8])
	body := data[8:fcLen]
	switch {
	case f.Scheme == SchemePortFC:
		f.Class, f.Port, f.OriginLevel = body[0], body[1], body[2]
		f.OriginIndex = binary.BigEndian.Uint32(body[4:8])
	case f.Scheme == SchemeICI:
		copy(f.Flow.Src[:], body[0:4])
		copy(f.Flow.Dst[:], body[4:8])
		f.Flow.SPort = binary.BigEndian.Uint16(body[8:10])
		f.Flow.DPort = binary.BigEndian.Uint16(body[10:12])
		f.Flow.Proto, f.FlowPCP, f.Hops = body[12], body[13], body[14]
	case f.Scheme == SchemeProbe:
		f.SentNs = int64(binary.BigEndian.Uint64(body[0:8]))
		f.ForwardNs = int64(binary.BigEndian.Uint64(body[8:16]))
	case f.Type == TypeState:
		f.Bitmap = binary.BigEndian.Uint64(body[0:8])
		f.Queues = binary.BigEndian.Uint16(body[8:10])
	default:
		f.UpstreamQ = binary.BigEndian.Uint16(body[0:2])
	}
	return nil
}

func decodeFC(data []byte, p gopacket.PacketBuilder) error {
	f := &FC{}
	if err := f.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(f)
	return nil
}

// SerializeTo prepends the 24-byte header and body. Only the fields of the
// frame's scheme and type are written; the rest of the body is zero. It
// refuses a layer ParseSignal would reject.
func (f *FC) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(fcLen)
	if err != nil {
		return err
	}
	clear(h)
	h[0] = f.Version
	if h[0] == 0 {
		h[0] = Version
	}
	h[1], h[2], h[3] = f.Scheme, f.Type, f.Flags
	binary.BigEndian.PutUint32(h[4:8], f.Seq)
	body := h[8:]
	switch {
	case f.Scheme == SchemePortFC:
		body[0], body[1], body[2] = f.Class, f.Port, f.OriginLevel
		binary.BigEndian.PutUint32(body[4:8], f.OriginIndex)
	case f.Scheme == SchemeICI:
		copy(body[0:4], f.Flow.Src[:])
		copy(body[4:8], f.Flow.Dst[:])
		binary.BigEndian.PutUint16(body[8:10], f.Flow.SPort)
		binary.BigEndian.PutUint16(body[10:12], f.Flow.DPort)
		body[12], body[13], body[14] = f.Flow.Proto, f.FlowPCP, f.Hops
	case f.Scheme == SchemeProbe:
		binary.BigEndian.PutUint64(body[0:8], uint64(f.SentNs))
		binary.BigEndian.PutUint64(body[8:16], uint64(f.ForwardNs))
	case f.Type == TypeState:
		binary.BigEndian.PutUint64(body[0:8], f.Bitmap)
		binary.BigEndian.PutUint16(body[8:10], f.Queues)
	default:
		binary.BigEndian.PutUint16(body[0:2], f.UpstreamQ)
	}
	if err := validate(h); err != nil {
		return fmt.Errorf("serialize signal: %w", err)
	}
	return nil
}

// String is Describe's line.
func (f *FC) String() string {
	var b strings.Builder
	switch f.Scheme {
	case SchemePortFC:
		b.WriteString("PortFC")
	case SchemeBFC:
		b.WriteString("BFC")
	case SchemeProbe:
		b.WriteString("Probe")
	case SchemeICI:
		b.WriteString("ICI")
	default:
		fmt.Fprintf(&b, "scheme(%d)", f.Scheme)
	}
	b.WriteByte(' ')
	if f.Scheme == SchemeProbe {
		if f.Type == TypeEcho {
			fmt.Fprintf(&b, "echo sent=%d forward=%dns seq=%d", f.SentNs, f.ForwardNs, f.Seq)
		} else {
			fmt.Fprintf(&b, "probe sent=%d seq=%d", f.SentNs, f.Seq)
		}
		return b.String()
	}
	if f.Scheme == SchemeICI {
		fl := &f.Flow
		fmt.Fprintf(&b, "isolate flow=%s:%d>%s:%d/%d pcp=%d hops=%d seq=%d",
			netip.AddrFrom4(fl.Src), fl.SPort, netip.AddrFrom4(fl.Dst), fl.DPort, fl.Proto, f.FlowPCP, f.Hops, f.Seq)
		return b.String()
	}
	b.WriteString(TypeName(f.Type))
	switch {
	case f.Scheme == SchemePortFC:
		fmt.Fprintf(&b, " class=%s port=%d origin=%s", ClassName(f.Class), f.Port,
			bcube.SwitchName(int(f.OriginLevel), int(f.OriginIndex)))
	case f.Type == TypeState:
		fmt.Fprintf(&b, " bitmap=%#x queues=%d", f.Bitmap, f.Queues)
	default:
		fmt.Fprintf(&b, " upstreamQ=%d", f.UpstreamQ)
	}
	fmt.Fprintf(&b, " seq=%d", f.Seq)
	if f.Relayed() {
		b.WriteString(" relayed")
	}
	return b.String()
}

// TypeName is "pause", "resume", "state" or "type(N)".
func TypeName(t uint8) string {
	switch t {
	case TypePause:
		return "pause"
	case TypeResume:
		return "resume"
	case TypeState:
		return "state"
	}
	return fmt.Sprintf("type(%d)", t)
}

// ClassName is "A", "B" or "class(N)".
func ClassName(c uint8) string {
	switch c {
	case ClassA:
		return "A"
	case ClassB:
		return "B"
	}
	return fmt.Sprintf("class(%d)", c)
}

// Describe is a one-line description of a signal, for logs and captures:
//
//	PortFC pause class=B port=3 origin=s1.2 seq=17 relayed
//	BFC resume upstreamQ=4 seq=8
//	BFC state bitmap=0x5 queues=32 seq=9
//	ICI isolate flow=198.18.0.1:50000>198.18.0.2:4791/17 pcp=3 hops=0 seq=4
//
// A frame ParseSignal rejects is described by the reason.
func Describe(s Signal) string {
	if _, err := ParseSignal(s); err != nil {
		return err.Error()
	}
	var f FC
	if err := f.DecodeFromBytes(s[ethLen:], gopacket.NilDecodeFeedback); err != nil {
		return err.Error()
	}
	return f.String()
}
