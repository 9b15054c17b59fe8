package signaling

import (
	"bytes"
	"errors"
	"github.com/bcfab/bcfab/fabric/bcube"
	"net"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
)

var (
	macA = net.HardwareAddr{0x02, 0x20, 0x01, 0x00, 0x02, 0x03}
	macB = net.HardwareAddr{0x02, 0x10, 0x00, 0x00, 0x0e, 0x01}
)

func TestPortFCFields(t *testing.T) {
	for _, c := range []struct {
		name                     string
		typ, flags               uint8
		seq                      uint32
		class, port, originLevel uint8
		originIndex              uint32
	}{
		{"pause A", TypePause, 0, 1, ClassA, 0, 0, 0},
		{"resume B relayed", TypeResume, FlagRelayed, 17, ClassB, 3, 1, 2},
		{"state", TypeState, 0, 0xfffffffe, ClassB, 255, 255, 0xdeadbeef},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := bytes.Repeat([]byte{0xee}, 80) // padding must be zeroed, not left
			if n := PutPortFC(b, macA, macB, c.typ, c.flags, c.seq, c.class, c.port, c.originLevel, c.originIndex); n != FrameLen {
				t.Fatalf("PutPortFC = %d, want %d", n, FrameLen)
			}
			if !bytes.Equal(b[HeaderLen:FrameLen], make([]byte, FrameLen-HeaderLen)) || b[FrameLen] != 0xee {
				t.Fatalf("padding % x, byte after the frame %#x", b[HeaderLen:FrameLen], b[FrameLen])
			}
			s, err := ParseSignal(b[:FrameLen])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(s.Dst(), macA) || !bytes.Equal(s.Src(), macB) || s.Version() != Version ||
				s.Scheme() != SchemePortFC || s.Type() != c.typ || s.Flags() != c.flags ||
				s.Relayed() != (c.flags&FlagRelayed != 0) || s.Seq() != c.seq ||
				s.Class() != c.class || s.Port() != c.port || s.OriginLevel() != c.originLevel || s.OriginIndex() != c.originIndex {
				t.Errorf("parsed %s, dst %v src %v; want %+v", Describe(s), s.Dst(), s.Src(), c)
			}
		})
	}
}

func TestBFCFields(t *testing.T) {
	for _, c := range []struct {
		name      string
		typ       uint8
		seq       uint32
		upstreamQ uint16
		bitmap    uint64
		queues    uint16
	}{
		{"pause", TypePause, 5, 31, 0, 0},
		{"resume", TypeResume, 6, 0xffff, 0, 0},
		{"state", TypeState, 9, 0, 0x5, 32},
		{"state all 64", TypeState, 10, 0, ^uint64(0), 64},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := make([]byte, FrameLen)
			PutBFC(b, macA, macB, c.typ, c.seq, c.upstreamQ, c.bitmap, c.queues)
			s, err := ParseSignal(b)
			if err != nil {
				t.Fatal(err)
			}
			if s.Scheme() != SchemeBFC || s.Type() != c.typ || s.Flags() != 0 || s.Seq() != c.seq {
				t.Errorf("header: %s", Describe(s))
			}
			if c.typ == TypeState {
				if s.Bitmap() != c.bitmap || s.BitmapQueues() != c.queues {
					t.Errorf("bitmap %#x queues %d, want %#x %d", s.Bitmap(), s.BitmapQueues(), c.bitmap, c.queues)
				}
			} else if s.UpstreamQ() != c.upstreamQ {
				t.Errorf("upstreamQ %d, want %d", s.UpstreamQ(), c.upstreamQ)
			}
		})
	}
	// A Pause carries no bitmap even when handed one.
	b := make([]byte, FrameLen)
	PutBFC(b, macA, macB, TypePause, 1, 7, 0xff, 8)
	if _, err := ParseSignal(b); err != nil {
		t.Errorf("pause with a stray bitmap argument: %v", err)
	}
}

// The bytes of the frame are the specification's, field by field.
func TestPortFCBytes(t *testing.T) {
	b := make([]byte, FrameLen)
	PutPortFC(b, macA, macB, TypePause, FlagRelayed, 0x01020304, ClassB, 3, 1, 0x0a0b0c0d)
	want := []byte{
		0x02, 0x20, 0x01, 0x00, 0x02, 0x03, // dst
		0x02, 0x10, 0x00, 0x00, 0x0e, 0x01, // src
		0x88, 0xb5, // EtherType
		1, SchemePortFC, TypePause, FlagRelayed,
		0x01, 0x02, 0x03, 0x04, // seq
		ClassB, 3, 1, 0, // class, port, origin level, reserved
		0x0a, 0x0b, 0x0c, 0x0d, // origin index
		0, 0, 0, 0, 0, 0, 0, 0,
	}
	want = append(want, make([]byte, FrameLen-len(want))...)
	if !bytes.Equal(b, want) {
		t.Errorf("PortFC frame\n% x\nwant\n% x", b, want)
	}
	b = make([]byte, FrameLen)
	PutBFC(b, macA, macB, TypeState, 9, 0, 0x0102030405060708, 0x20)
	if got, want := b[14:38], []byte{1, SchemeBFC, TypeState, 0, 0, 0, 0, 9,
		1, 2, 3, 4, 5, 6, 7, 8, 0, 0x20, 0, 0, 0, 0, 0, 0}; !bytes.Equal(got, want) {
		t.Errorf("BFC state\n% x\nwant\n% x", got, want)
	}
	PutBFC(b, macA, macB, TypeResume, 9, 0x1234, 0, 0)
	if got, want := b[14:38], []byte{1, SchemeBFC, TypeResume, 0, 0, 0, 0, 9,
		0x12, 0x34, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}; !bytes.Equal(got, want) {
		t.Errorf("BFC resume\n% x\nwant\n% x", got, want)
	}
}

func validPortFC() []byte {
	b := make([]byte, FrameLen)
	PutPortFC(b, macA, macB, TypePause, 0, 1, ClassA, 1, 0, 1)
	return b
}

var iciFlow = bcube.FiveTuple{Src: [4]byte{198, 18, 0, 1}, Dst: [4]byte{198, 18, 0, 2}, Proto: 17, SPort: 50000, DPort: 4791}

func validICI() []byte {
	b := make([]byte, FrameLen)
	PutICI(b, macA, macB, 4, &iciFlow, PCPData, 0)
	return b
}

func validBFCState() []byte {
	b := make([]byte, FrameLen)
	PutBFC(b, macA, macB, TypeState, 1, 0, 3, 32)
	return b
}

func validBFCPause() []byte {
	b := make([]byte, FrameLen)
	PutBFC(b, macA, macB, TypePause, 1, 4, 0, 0)
	return b
}

// malformedCases are frames ParseSignal must reject, each with its reason.
var malformedCases = []struct {
	name  string
	frame func() []byte
	want  error
}{
	{"empty", func() []byte { return nil }, errShort},
	{"37 bytes", func() []byte { return validPortFC()[:37] }, errShort},
	{"1515 bytes", func() []byte { return append(validPortFC(), make([]byte, 1515-FrameLen)...) }, errLong},
	{"IPv4 EtherType", func() []byte { b := validPortFC(); b[12], b[13] = 0x08, 0x00; return b }, errEtherType},
	{"802.1Q tagged", func() []byte { b := validPortFC(); b[12], b[13] = 0x81, 0x00; return b }, errEtherType},
	{"version 0", func() []byte { b := validPortFC(); b[offVersion] = 0; return b }, errVersion},
	{"version 2", func() []byte { b := validPortFC(); b[offVersion] = 2; return b }, errVersion},
	{"scheme 0", func() []byte { b := validPortFC(); b[offScheme] = 0; return b }, errScheme},
	{"scheme 5", func() []byte { b := validPortFC(); b[offScheme] = 5; return b }, errScheme},
	{"ICI resume", func() []byte { b := validICI(); b[offType] = TypeResume; return b }, errType},
	{"ICI relayed", func() []byte { b := validICI(); b[offFlags] = FlagRelayed; return b }, errFlags},
	{"ICI priority 8", func() []byte { b := validICI(); b[offBody+13] = 8; return b }, errPriority},
	{"ICI reserved byte", func() []byte { b := validICI(); b[offBody+15] = 1; return b }, errReserved},
	{"probe type", func() []byte { b := validPortFC(); b[offScheme] = SchemeProbe; b[offType] = TypeState; return b }, errType},
	{"probe flags", func() []byte { b := validPortFC(); b[offScheme] = SchemeProbe; b[offFlags] = FlagRelayed; return b }, errFlags},
	{"type 0", func() []byte { b := validPortFC(); b[offType] = 0; return b }, errType},
	{"type 4", func() []byte { b := validBFCState(); b[offType] = 4; return b }, errType},
	{"flag 0x02", func() []byte { b := validPortFC(); b[offFlags] = 0x02; return b }, errFlags},
	{"flags 0x81", func() []byte { b := validPortFC(); b[offFlags] = 0x81; return b }, errFlags},
	{"class 0", func() []byte { b := validPortFC(); b[offBody] = 0; return b }, errClass},
	{"class 3", func() []byte { b := validPortFC(); b[offBody] = 3; return b }, errClass},
	{"PortFC reserved byte", func() []byte { b := validPortFC(); b[offBody+3] = 1; return b }, errReserved},
	{"PortFC zero tail", func() []byte { b := validPortFC(); b[HeaderLen-1] = 1; return b }, errReserved},
	{"BFC pause reserved u16", func() []byte { b := validBFCPause(); b[offBody+3] = 1; return b }, errReserved},
	{"BFC pause zero tail", func() []byte { b := validBFCPause(); b[offBody+8] = 1; return b }, errReserved},
	{"BFC state 65 queues", func() []byte { b := validBFCState(); b[offBody+9] = 65; return b }, errQueues},
	{"BFC state queues 0x0100", func() []byte { b := validBFCState(); b[offBody+8] = 1; return b }, errQueues},
	{"BFC state zero tail", func() []byte { b := validBFCState(); b[HeaderLen-1] = 1; return b }, errReserved},
}

func TestParseMalformed(t *testing.T) {
	for _, c := range malformedCases {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSignal(c.frame())
			if !errors.Is(err, ErrMalformed) || err != c.want || s != nil {
				t.Errorf("ParseSignal = %v, %v; want %v", s, err, c.want)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	for _, c := range []struct {
		name  string
		frame func() []byte
	}{
		{"38 bytes, no padding", func() []byte { return validPortFC()[:HeaderLen] }},
		{"1514 bytes", func() []byte { return append(validBFCState(), make([]byte, MaxFrameLen-FrameLen)...) }},
		{"padding not zero", func() []byte { b := validPortFC(); b[FrameLen-1] = 0xff; return b }},
		{"PortFC state", func() []byte { b := validPortFC(); b[offType] = TypeState; return b }},
		{"BFC relayed", func() []byte { b := validBFCPause(); SetRelayed(b); return b }},
		{"BFC bitmap beyond queues", func() []byte { b := validBFCState(); b[offBody] = 0x80; return b }},
		{"BFC state 0 queues", func() []byte { b := validBFCState(); b[offBody+9] = 0; return b }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ParseSignal(c.frame()); err != nil {
				t.Error(err)
			}
		})
	}
}

// An Isolate frame carries the flow, its priority and hops as written.
func TestICIFrame(t *testing.T) {
	b := make([]byte, FrameLen)
	f := bcube.FiveTuple{Src: [4]byte{198, 18, 0, 255}, Dst: [4]byte{198, 19, 1, 2}, Proto: 6, SPort: 65535, DPort: 1}
	PutICI(b, macA, macB, 1<<31, &f, 2, 255)
	s, err := ParseSignal(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.Scheme() != SchemeICI || s.Type() != TypeIsolate || s.Flags() != 0 || s.Seq() != 1<<31 ||
		s.Flow() != f || s.FlowPCP() != 2 || s.Hops() != 255 {
		t.Errorf("got %s", Describe(s))
	}
	if got, want := Describe(s), "ICI isolate flow=198.18.0.255:65535>198.19.1.2:1/6 pcp=2 hops=255 seq=2147483648"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	if len(b) != FrameLen || !zero(b[HeaderLen:]) {
		t.Error("not padded with zeros to 60 bytes")
	}
}

func TestSetRelayed(t *testing.T) {
	b := make([]byte, FrameLen)
	PutPortFC(b, macA, macB, TypePause, 0, 17, ClassB, 3, 1, 2)
	SetRelayed(b)
	SetRelayed(b) // idempotent
	s, err := ParseSignal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Relayed() || s.Flags() != FlagRelayed || s.Class() != ClassB || s.Seq() != 17 {
		t.Errorf("after SetRelayed: %s", Describe(s))
	}
}

func TestIsSignal(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want bool
	}{
		{nil, false},
		{validPortFC()[:13], false},
		{validPortFC()[:14], true},
		{validPortFC(), true},
		{append(make([]byte, 12), 0x08, 0x00), false},
		{append(make([]byte, 12), 0xb5, 0x88), false},
	} {
		if got := IsSignal(c.b); got != c.want {
			t.Errorf("IsSignal(% x) = %v", c.b, got)
		}
	}
}

func TestErrorText(t *testing.T) {
	_, err := ParseSignal(validPortFC()[:10])
	if got, want := err.Error(), "malformed flow-control signal: shorter than 38 bytes"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
}

// Building, parsing and reading a frame allocates nothing; neither does
// rejecting one.
func TestZeroAllocs(t *testing.T) {
	buf := make([]byte, FrameLen)
	bad := validPortFC()
	bad[offVersion] = 9
	var sink uint64
	allocs := testing.AllocsPerRun(100, func() {
		PutPortFC(buf, macA, macB, TypePause, 0, 1, ClassB, 3, 1, 2)
		SetRelayed(buf)
		if !IsSignal(buf) {
			panic("not a signal")
		}
		s, err := ParseSignal(buf)
		if err != nil {
			panic(err)
		}
		sink += uint64(s.Dst()[0]) + uint64(s.Src()[0]) + uint64(s.Version()) + uint64(s.Scheme()) + uint64(s.Type()) +
			uint64(s.Flags()) + uint64(s.Seq()) + uint64(s.Class()) + uint64(s.Port()) + uint64(s.OriginLevel()) + uint64(s.OriginIndex())
		if s.Relayed() {
			sink++
		}
		PutBFC(buf, macA, macB, TypeState, 2, 0, 5, 32)
		if s, err = ParseSignal(buf); err != nil {
			panic(err)
		}
		sink += s.Bitmap() + uint64(s.BitmapQueues()) + uint64(s.UpstreamQ())
		if _, err := ParseSignal(bad); err == nil {
			panic("accepted a bad version")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per frame, want 0", allocs)
	}
	_ = sink
}

func BenchmarkParseSignal(b *testing.B) {
	frame := validPortFC()
	b.ReportAllocs()
	b.SetBytes(FrameLen)
	var sink uint32
	for b.Loop() {
		s, err := ParseSignal(frame)
		if err != nil {
			b.Fatal(err)
		}
		sink += s.Seq() + uint32(s.Port())
	}
	_ = sink
}

func BenchmarkPutPortFC(b *testing.B) {
	buf := make([]byte, FrameLen)
	b.ReportAllocs()
	b.SetBytes(FrameLen)
	for i := 0; b.Loop(); i++ {
		PutPortFC(buf, macA, macB, TypePause, 0, uint32(i), ClassA, 1, 0, 1)
	}
}

// A probe and its echo: written, parsed by the datapath's view and by the
// gopacket layer, with the send time set in place.
func TestProbeFrame(t *testing.T) {
	dst, src := []byte{2, 0x20, 1, 0, 2, 3}, []byte{2, 0x10, 0, 0, 14, 1}
	b := make([]byte, FrameLen)
	if n := PutProbe(b, dst, src, TypeEcho, 7, 5_000_123); n != FrameLen {
		t.Fatalf("PutProbe = %d", n)
	}
	if !IsProbe(b) {
		t.Fatal("not a probe")
	}
	SetProbeSent(b, 1<<40+17)
	s, err := ParseSignal(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.Scheme() != SchemeProbe || s.Type() != TypeEcho || s.Seq() != 7 || s.ProbeSent() != 1<<40+17 || s.ProbeForward() != 5_000_123 {
		t.Errorf("parsed %v", s)
	}
	var f FC
	if err := f.DecodeFromBytes(b[ethLen:], gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if f.SentNs != 1<<40+17 || f.ForwardNs != 5_000_123 || !strings.Contains(f.String(), "echo") {
		t.Errorf("layer %+v: %s", f, f.String())
	}
	if IsProbe(validPortFC()) {
		t.Error("a PortFC frame is a probe")
	}
}
