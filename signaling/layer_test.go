package signaling

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/internal/testkit/pcaptest"
	"github.com/bcfab/bcfab/internal/testkit/testtool"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// sample is a signal three ways: the layer, what Put* writes, and its
// one-line description.
type sample struct {
	fc   FC
	put  func(b []byte) int
	desc string
}

var samples = []sample{
	{
		FC{Version: 1, Scheme: SchemePortFC, Type: TypePause, Flags: FlagRelayed, Seq: 17, Class: ClassB, Port: 3, OriginLevel: 1, OriginIndex: 2},
		func(b []byte) int { return PutPortFC(b, macA, macB, TypePause, FlagRelayed, 17, ClassB, 3, 1, 2) },
		"PortFC pause class=B port=3 origin=s1.2 seq=17 relayed",
	},
	{
		FC{Version: 1, Scheme: SchemePortFC, Type: TypeResume, Seq: 18, Class: ClassA, Port: 0, OriginLevel: 0, OriginIndex: 7},
		func(b []byte) int { return PutPortFC(b, macA, macB, TypeResume, 0, 18, ClassA, 0, 0, 7) },
		"PortFC resume class=A port=0 origin=s0.7 seq=18",
	},
	{
		FC{Version: 1, Scheme: SchemePortFC, Type: TypeState, Seq: 4000000000, Class: ClassA, Port: 255, OriginLevel: 2, OriginIndex: 0xffffffff},
		func(b []byte) int {
			return PutPortFC(b, macA, macB, TypeState, 0, 4000000000, ClassA, 255, 2, 0xffffffff)
		},
		"PortFC state class=A port=255 origin=s2.4294967295 seq=4000000000",
	},
	{
		FC{Version: 1, Scheme: SchemeBFC, Type: TypePause, Seq: 3, UpstreamQ: 4},
		func(b []byte) int { return PutBFC(b, macA, macB, TypePause, 3, 4, 0, 0) },
		"BFC pause upstreamQ=4 seq=3",
	},
	{
		FC{Version: 1, Scheme: SchemeBFC, Type: TypeResume, Seq: 8, UpstreamQ: 31},
		func(b []byte) int { return PutBFC(b, macA, macB, TypeResume, 8, 31, 0, 0) },
		"BFC resume upstreamQ=31 seq=8",
	},
	{
		FC{Version: 1, Scheme: SchemeBFC, Type: TypeState, Seq: 9, Bitmap: 0x5, Queues: 32},
		func(b []byte) int { return PutBFC(b, macA, macB, TypeState, 9, 0, 0x5, 32) },
		"BFC state bitmap=0x5 queues=32 seq=9",
	},
	{
		FC{Version: 1, Scheme: SchemeBFC, Type: TypeState, Seq: 10, Bitmap: 0x8000000000000001, Queues: 64},
		func(b []byte) int { return PutBFC(b, macA, macB, TypeState, 10, 0, 0x8000000000000001, 64) },
		"BFC state bitmap=0x8000000000000001 queues=64 seq=10",
	},
	{
		FC{Version: 1, Scheme: SchemeICI, Type: TypeIsolate, Seq: 4, Flow: iciFlow, FlowPCP: PCPData},
		func(b []byte) int { return PutICI(b, macA, macB, 4, &iciFlow, PCPData, 0) },
		"ICI isolate flow=198.18.0.1:50000>198.18.0.2:4791/17 pcp=3 hops=0 seq=4",
	},
	{
		FC{Version: 1, Scheme: SchemeICI, Type: TypeIsolate, Seq: 5, Flow: iciFlow, FlowPCP: 2, Hops: 3},
		func(b []byte) int { return PutICI(b, macA, macB, 5, &iciFlow, 2, 3) },
		"ICI isolate flow=198.18.0.1:50000>198.18.0.2:4791/17 pcp=2 hops=3 seq=5",
	},
}

func serialize(t testing.TB, fc *FC) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: macB, DstMAC: macA, EthernetType: EtherTypeFC}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, fc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Layer -> bytes -> layer is the identity, and the bytes are Put*'s.
func TestLayerRoundTrip(t *testing.T) {
	for _, c := range samples {
		t.Run(c.desc, func(t *testing.T) {
			wire := serialize(t, &c.fc)
			want := make([]byte, FrameLen)
			c.put(want)
			if !bytes.Equal(wire, want) {
				t.Fatalf("serialized\n% x\nPut* wrote\n% x", wire, want)
			}
			p := gopacket.NewPacket(wire, layers.LayerTypeEthernet, gopacket.Default)
			if el := p.ErrorLayer(); el != nil {
				t.Fatalf("decode: %v", el.Error())
			}
			l, ok := p.Layer(LayerTypeFC).(*FC)
			if !ok {
				t.Fatalf("no FC layer in %v", p)
			}
			got := *l
			got.BaseLayer = layers.BaseLayer{}
			if !reflect.DeepEqual(got, c.fc) {
				t.Errorf("decoded %+v\nwant    %+v", got, c.fc)
			}
			if len(l.LayerContents()) != 24 || len(l.LayerPayload()) != FrameLen-HeaderLen {
				t.Errorf("contents %d bytes, payload %d bytes", len(l.LayerContents()), len(l.LayerPayload()))
			}
			if l.String() != c.desc || Describe(Signal(wire)) != c.desc {
				t.Errorf("String %q, Describe %q; want %q", l.String(), Describe(Signal(wire)), c.desc)
			}
			if eth := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet); eth.NextLayerType() != LayerTypeFC {
				t.Errorf("Ethernet's next layer is %v", eth.NextLayerType())
			}
			if len(p.Layers()) != 2 {
				t.Errorf("layers %v, want Ethernet and FC only", p.Layers())
			}
		})
	}
}

// A DecodingLayerParser, as tools would use, decodes Ethernet + FC and
// stops there.
func TestDecodingLayerParser(t *testing.T) {
	var eth layers.Ethernet
	var fc FC
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &fc)
	decoded := []gopacket.LayerType{}
	for _, c := range samples {
		wire := make([]byte, FrameLen)
		c.put(wire)
		if err := parser.DecodeLayers(wire, &decoded); err != nil {
			t.Fatalf("%s: %v", c.desc, err)
		}
		if len(decoded) != 2 || decoded[1] != LayerTypeFC || fc.String() != c.desc {
			t.Errorf("%s: decoded %v, %s", c.desc, decoded, fc.String())
		}
	}
}

// The layer rejects what ParseSignal rejects, with the same reason.
func TestLayerMalformed(t *testing.T) {
	for _, c := range malformedCases {
		t.Run(c.name, func(t *testing.T) {
			b := c.frame()
			if len(b) < ethLen || !IsSignal(b) || len(b) > MaxFrameLen {
				return // not the layer's business: ParseSignal checks the frame
			}
			want := c.want
			if len(b) < HeaderLen {
				want = errHeaderShort
			}
			var fc FC
			err := fc.DecodeFromBytes(b[ethLen:], gopacket.NilDecodeFeedback)
			if err != want {
				t.Errorf("DecodeFromBytes = %v, want %v", err, want)
			}
			p := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
			if p.ErrorLayer() == nil || p.Layer(LayerTypeFC) != nil {
				t.Errorf("NewPacket decoded a malformed frame: %v", p)
			}
		})
	}
}

func TestSerializeRejects(t *testing.T) {
	for _, fc := range []FC{
		{Scheme: 0, Type: TypePause},
		{Scheme: SchemePortFC, Type: TypePause, Class: 0},
		{Scheme: SchemePortFC, Type: 4, Class: ClassA},
		{Scheme: SchemeBFC, Type: TypePause, Flags: 0x10},
		{Scheme: SchemeBFC, Type: TypeState, Queues: 65},
		{Version: 2, Scheme: SchemeBFC, Type: TypeResume},
	} {
		buf := gopacket.NewSerializeBuffer()
		if err := fc.SerializeTo(buf, gopacket.SerializeOptions{}); !errors.Is(err, ErrMalformed) {
			t.Errorf("SerializeTo(%+v) = %v, want ErrMalformed", fc, err)
		}
	}
	// Version 0 means the current version.
	wire := serialize(t, &FC{Scheme: SchemeBFC, Type: TypeResume, UpstreamQ: 1})
	if s, err := ParseSignal(wire); err != nil || s.Version() != Version {
		t.Errorf("version left zero: %v", err)
	}
}

func TestDescribeMalformed(t *testing.T) {
	b := validPortFC()
	b[offBody] = 9
	if got := Describe(b); !strings.Contains(got, "class") || !strings.HasPrefix(got, "malformed") {
		t.Errorf("Describe of class 9: %q", got)
	}
	if got := Describe(nil); !strings.Contains(got, "shorter") {
		t.Errorf("Describe(nil) = %q", got)
	}
}

func FuzzParseSignal(f *testing.F) {
	for _, c := range samples {
		b := make([]byte, FrameLen)
		c.put(b)
		f.Add(b)
		f.Add(b[:HeaderLen])
	}
	for _, c := range malformedCases {
		f.Add(c.frame())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSignal(b)
		var fc FC
		lerr := error(nil)
		if len(b) >= ethLen {
			lerr = fc.DecodeFromBytes(b[ethLen:], gopacket.NilDecodeFeedback)
		}
		_ = Describe(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if lerr != nil {
			t.Fatalf("ParseSignal accepts what the layer rejects: %v", lerr)
		}
		_ = s.Dst().String() + s.Src().String()
		_ = uint64(s.Seq()) + uint64(s.Class()) + uint64(s.Port()) + uint64(s.OriginLevel()) + uint64(s.OriginIndex()) +
			uint64(s.UpstreamQ()) + s.Bitmap() + uint64(s.BitmapQueues())
		// Whatever is accepted re-serializes to the same 38 bytes.
		eth := &layers.Ethernet{DstMAC: s.Dst(), SrcMAC: s.Src(), EthernetType: EtherTypeFC}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, &fc); err != nil {
			t.Fatalf("re-serialize %+v: %v", fc, err)
		}
		if got := buf.Bytes(); !bytes.Equal(got[:HeaderLen], b[:HeaderLen]) {
			t.Fatalf("re-serialized\n% x\nfrom\n% x", got[:HeaderLen], b[:HeaderLen])
		}
	})
}

func BenchmarkDecodeLayer(b *testing.B) {
	wire := make([]byte, FrameLen)
	samples[0].put(wire)
	var eth layers.Ethernet
	var fc FC
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &fc)
	decoded := make([]gopacket.LayerType, 0, 4)
	b.ReportAllocs()
	b.SetBytes(FrameLen)
	for b.Loop() {
		if err := parser.DecodeLayers(wire, &decoded); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSerializeLayer(b *testing.B) {
	eth := &layers.Ethernet{SrcMAC: macB, DstMAC: macA, EthernetType: EtherTypeFC}
	fc := samples[5].fc
	buf := gopacket.NewSerializeBuffer()
	b.ReportAllocs()
	for b.Loop() {
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, &fc); err != nil {
			b.Fatal(err)
		}
	}
}

// The Lua dissector in scripts/ decodes every field of every sample as the
// Go side does, and flags malformed frames.
func TestTsharkDissector(t *testing.T) {
	tshark := testtool.Require(t, "tshark", "check scripts/bcfab.lua")
	script, err := filepath.Abs("../scripts/bcfab.lua")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pcap")
	var frames [][]byte
	for _, c := range samples {
		b := make([]byte, FrameLen)
		c.put(b)
		frames = append(frames, b)
	}
	pcaptest.Write(t, good, frames)

	run := func(args ...string) string {
		t.Helper()
		all := append([]string{"-n", "-X", "lua_script:" + script, "-o", "gui.update.enabled:FALSE"}, args...)
		cmd := exec.Command(tshark, all...)
		// A private config dir: no profile of the machine's user changes
		// what is decoded.
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir, "HOME="+dir)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("tshark %q: %v\n%s", args, err, stderr.String())
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			// tshark warns about running as root; anything else (a Lua
			// error) fails the test.
			if line != "" && !strings.Contains(line, "This could be dangerous") {
				t.Errorf("tshark stderr: %s", line)
			}
		}
		return stdout.String()
	}

	// Every field, frame by frame.
	fields := []string{"bcfab.version", "bcfab.scheme", "bcfab.type", "bcfab.flags", "bcfab.flags.relayed", "bcfab.seq",
		"bcfab.portfc.class", "bcfab.portfc.port", "bcfab.portfc.origin_level", "bcfab.portfc.origin_index",
		"bcfab.portfc.origin", "bcfab.bfc.upstreamq", "bcfab.bfc.bitmap", "bcfab.bfc.queues",
		"bcfab.ici.src", "bcfab.ici.dst", "bcfab.ici.sport", "bcfab.ici.dport", "bcfab.ici.proto", "bcfab.ici.pcp", "bcfab.ici.hops",
		"_ws.col.Info"}
	args := []string{"-r", good, "-T", "fields", "-E", "separator=|"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	lines := strings.Split(strings.TrimSpace(run(args...)), "\n")
	if len(lines) != len(samples) {
		t.Fatalf("tshark printed %d lines for %d frames:\n%s", len(lines), len(samples), strings.Join(lines, "\n"))
	}
	for i, c := range samples {
		fc := c.fc
		relayed := "0"
		if fc.Relayed() {
			relayed = "1"
		}
		want := []string{"1", fmt.Sprint(fc.Scheme), fmt.Sprint(fc.Type), fmt.Sprintf("0x%02x", fc.Flags), relayed, fmt.Sprint(fc.Seq),
			"", "", "", "", "", "", "", "", "", "", "", "", "", "", "", c.desc}
		switch {
		case fc.Scheme == SchemeICI:
			fl := &fc.Flow
			want[14], want[15] = netip.AddrFrom4(fl.Src).String(), netip.AddrFrom4(fl.Dst).String()
			want[16], want[17], want[18] = fmt.Sprint(fl.SPort), fmt.Sprint(fl.DPort), fmt.Sprint(fl.Proto)
			want[19], want[20] = fmt.Sprint(fc.FlowPCP), fmt.Sprint(fc.Hops)
		case fc.Scheme == SchemePortFC:
			want[6], want[7], want[8], want[9] = fmt.Sprint(fc.Class), fmt.Sprint(fc.Port), fmt.Sprint(fc.OriginLevel), fmt.Sprint(fc.OriginIndex)
			want[10] = fmt.Sprintf("s%d.%d", fc.OriginLevel, fc.OriginIndex)
		case fc.Type == TypeState:
			want[12], want[13] = fmt.Sprintf("0x%016x", fc.Bitmap), fmt.Sprint(fc.Queues)
		default:
			want[11] = fmt.Sprint(fc.UpstreamQ)
		}
		if got := lines[i]; got != strings.Join(want, "|") {
			t.Errorf("frame %d (%s):\ngot  %s\nwant %s", i+1, c.desc, got, strings.Join(want, "|"))
		}
	}

	// The verbose tree names every field.
	verbose := run("-r", good, "-V")
	for _, name := range []string{"bcfab flow-control signal", "Version: 1", "Scheme: PortFC (1)", "Scheme: BFC (2)",
		"Type: Pause (1)", "Type: Resume (2)", "Type: State (3)", "Relayed: True", "Sequence number: 17",
		"Class: B (2)", "Port: 3", "Origin level: 1", "Origin index: 2", "[Origin switch: s1.2]",
		"Upstream queue: 4", "Paused bitmap: 0x0000000000000005", "Queues: 32",
		"Scheme: ICI (4)", "Type: Pause (1) (Isolate)", "Flow source address: 198.18.0.1", "Flow destination address: 198.18.0.2",
		"Flow source port: 50000", "Flow destination port: 4791", "Flow protocol: 17", "Flow priority: 2",
		"Hops from the congestion root: 3"} {
		if !strings.Contains(verbose, name) {
			t.Errorf("tshark -V shows no %q", name)
		}
	}
	if t.Failed() {
		t.Logf("tshark -V:\n%s", verbose)
	}
	if out := run("-r", good, "-Y", "_ws.malformed || _ws.expert.severity >= warning"); out != "" {
		t.Errorf("valid frames flagged:\n%s", out)
	}

	// Every malformed body is flagged, and only those.
	bad := filepath.Join(dir, "bad.pcap")
	var badFrames [][]byte
	for _, c := range malformedCases {
		if b := c.frame(); len(b) >= HeaderLen && IsSignal(b) && len(b) <= MaxFrameLen {
			badFrames = append(badFrames, b)
		}
	}
	pcaptest.Write(t, bad, append(badFrames, frames[0]))
	out := strings.Fields(run("-r", bad, "-Y", "_ws.malformed", "-T", "fields", "-e", "frame.number"))
	if len(out) != len(badFrames) || (len(out) > 0 && out[len(out)-1] != fmt.Sprint(len(badFrames))) {
		t.Errorf("tshark flags frames %v as malformed, want 1..%d", out, len(badFrames))
	}
}
