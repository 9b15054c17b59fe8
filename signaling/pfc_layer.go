package signaling

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// LayerTypePFCNumber is the gopacket layer type number of LayerTypePFC.
const LayerTypePFCNumber = 2886

// LayerTypePFC is the 802.1Qbb layer: what follows the Ethernet header of
// a MAC control frame with opcode 0x0101. Importing this package registers
// it as the decoder of EtherType 0x8808, which gopacket leaves unknown.
var LayerTypePFC = gopacket.RegisterLayerType(LayerTypePFCNumber, gopacket.LayerTypeMetadata{
	Name:    "PFC",
	Decoder: gopacket.DecodeFunc(decodePFC),
})

func init() {
	layers.EthernetTypeMetadata[EtherTypeMACControl] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodePFC),
		Name:       "MACControl",
		LayerType:  LayerTypePFC,
	}
}

// PFCLayer is an 802.1Qbb frame body as a gopacket layer, for tools and
// tests; the datapath uses the PFC view. Contents are the 20 bytes of
// opcode, class-enable vector and times; the padding is the payload.
type PFCLayer struct {
	layers.BaseLayer
	Enable uint8     // bit i: Quanta[i] is valid
	Quanta [8]uint16 // pause times in 512-bit-time quanta
}

func (l *PFCLayer) LayerType() gopacket.LayerType  { return LayerTypePFC }
func (l *PFCLayer) CanDecode() gopacket.LayerClass { return LayerTypePFC }

// NextLayerType is LayerTypeZero: only padding follows.
func (l *PFCLayer) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes the body at the start of data (an Ethernet
// payload) with ParsePFC's checks.
func (l *PFCLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < pfcBody {
		df.SetTruncated()
	}
	if err := checkPFCBody(data); err != nil {
		return err
	}
	*l = PFCLayer{BaseLayer: layers.BaseLayer{Contents: data[:pfcBody], Payload: data[pfcBody:]}, Enable: data[3]}
	for i := range 8 {
		l.Quanta[i] = binary.BigEndian.Uint16(data[4+2*i:])
	}
	return nil
}

func decodePFC(data []byte, p gopacket.PacketBuilder) error {
	l := &PFCLayer{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	return nil
}

// SerializeTo prepends the body and 26 bytes of padding, so that with an
// Ethernet layer the frame is the 60-byte minimum. Times of priorities
// not enabled are written as zero.
func (l *PFCLayer) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if l.Enable == 0 {
		return fmt.Errorf("serialize pfc: %w", errPFCNoClasses)
	}
	h, err := b.PrependBytes(PFCLen - ethLen)
	if err != nil {
		return err
	}
	clear(h)
	binary.BigEndian.PutUint16(h, OpcodePFC)
	h[3] = l.Enable
	for i := range 8 {
		if l.Enable&(1<<i) != 0 {
			binary.BigEndian.PutUint16(h[4+2*i:], l.Quanta[i])
		}
	}
	return nil
}
