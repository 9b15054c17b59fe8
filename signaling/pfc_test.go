package signaling

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/internal/testkit/pcaptest"
	"github.com/bcfab/bcfab/internal/testkit/testtool"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// pfcSample is a PFC frame as the layer and as PutPFC writes it.
type pfcSample struct {
	enable uint8
	quanta [8]uint16
	desc   string
}

var pfcSamples = []pfcSample{
	{0x08, [8]uint16{3: 0xFFFF}, "PFC enable=0x08 P3=65535"},
	{0x08, [8]uint16{}, "PFC enable=0x08 P3=0"},
	{0x18, [8]uint16{3: 0xFFFF, 4: 100}, "PFC enable=0x18 P3=65535 P4=100"},
	{0xFF, [8]uint16{1, 2, 3, 4, 5, 6, 7, 8}, "PFC enable=0xff P0=1 P1=2 P2=3 P3=4 P4=5 P5=6 P6=7 P7=8"},
	{0x80, [8]uint16{7: 1}, "PFC enable=0x80 P7=1"},
}

func (s pfcSample) frame() []byte {
	b := make([]byte, PFCLen)
	PutPFC(b, macA, s.enable, &s.quanta)
	return b
}

func TestPFCBytes(t *testing.T) {
	b := make([]byte, 64)
	for i := range b {
		b[i] = 0xAA
	}
	q := [8]uint16{3: 0xFFFF, 5: 0x1234}
	if n := PutPFC(b, macA, 0x08, &q); n != 60 {
		t.Fatalf("PutPFC wrote %d bytes, want 60", n)
	}
	want := []byte{
		0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, // dst
		macA[0], macA[1], macA[2], macA[3], macA[4], macA[5],
		0x88, 0x08, // MAC control
		0x01, 0x01, // opcode
		0x00, 0x08, // class-enable vector: priority 3
		0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, // times: only enabled ones are written
	}
	want = append(want, make([]byte, 60-len(want))...)
	if !bytes.Equal(b[:60], want) {
		t.Errorf("frame\n% x\nwant\n% x", b[:60], want)
	}
	if b[60] != 0xAA {
		t.Error("PutPFC wrote past 60 bytes")
	}
}

func TestPFCRoundTrip(t *testing.T) {
	for _, s := range pfcSamples {
		b := s.frame()
		f, err := ParsePFC(b)
		if err != nil {
			t.Fatalf("%s: %v", s.desc, err)
		}
		if f.Enable() != s.enable || !bytes.Equal(f.Src(), macA) {
			t.Errorf("%s: enable %#x src %v", s.desc, f.Enable(), f.Src())
		}
		for i := range 8 {
			if s.enable&(1<<i) != 0 && f.Quanta(i) != s.quanta[i] {
				t.Errorf("%s: P%d quanta %d, want %d", s.desc, i, f.Quanta(i), s.quanta[i])
			}
		}
		if got := DescribeMACControl(b); got != s.desc {
			t.Errorf("describe %q, want %q", got, s.desc)
		}
		// gopacket decodes it from the Ethernet layer on...
		p := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
		l, ok := p.Layer(LayerTypePFC).(*PFCLayer)
		if !ok {
			t.Fatalf("%s: gopacket found no PFC layer: %v", s.desc, p)
		}
		if l.Enable != s.enable || len(l.Payload) != PFCLen-ethLen-pfcBody {
			t.Errorf("%s: layer enable %#x payload %d", s.desc, l.Enable, len(l.Payload))
		}
		// ...and serializes it back to the same 60 bytes.
		eth := &layers.Ethernet{DstMAC: PFCDst, SrcMAC: macA, EthernetType: EtherTypeMACControl}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, l); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), b) {
			t.Errorf("%s: serialized\n% x\nwant\n% x", s.desc, buf.Bytes(), b)
		}
	}
	if err := gopacket.SerializeLayers(gopacket.NewSerializeBuffer(), gopacket.SerializeOptions{}, &PFCLayer{}); err == nil {
		t.Error("a PFC layer with no class enabled serialized")
	}
}

var pfcMalformed = []struct {
	name  string
	frame func() []byte
}{
	{"empty", func() []byte { return nil }},
	{"ethernet only", func() []byte { return pfcSamples[0].frame()[:14] }},
	{"no times", func() []byte { return pfcSamples[0].frame()[:18] }},
	{"short times", func() []byte { return pfcSamples[0].frame()[:33] }},
	{"other ethertype", func() []byte { b := pfcSamples[0].frame(); b[13] = 0x09; return b }},
	{"802.3x pause", func() []byte { b := pfcSamples[0].frame(); b[15] = 0x01; b[14] = 0; return b }},
	{"unknown opcode", func() []byte { b := pfcSamples[0].frame(); b[15] = 0x02; return b }},
	{"reserved enable bits", func() []byte { b := pfcSamples[0].frame(); b[16] = 0x01; return b }},
	{"nothing enabled", func() []byte { b := pfcSamples[0].frame(); b[17] = 0; return b }},
}

func TestPFCMalformed(t *testing.T) {
	for _, c := range pfcMalformed {
		b := c.frame()
		if _, err := ParsePFC(b); !errors.Is(err, ErrMalformedPFC) {
			t.Errorf("%s: ParsePFC error %v, want ErrMalformedPFC", c.name, err)
		}
		if IsMACControl(b) { // the layer sees only what follows the EtherType
			var l PFCLayer
			if err := l.DecodeFromBytes(b[14:], gopacket.NilDecodeFeedback); err == nil {
				t.Errorf("%s: the layer decodes it", c.name)
			}
		}
		_ = DescribeMACControl(b)
	}
	b := pfcSamples[0].frame()
	b[15] = 0x01
	b[14] = 0
	binary.BigEndian.PutUint16(b[16:], 42)
	if got := DescribeMACControl(b); got != "PAUSE quanta=42" {
		t.Errorf("802.3x described as %q", got)
	}
}

func TestPauseNs(t *testing.T) {
	for _, c := range []struct {
		quanta uint16
		rate   uint64
		want   int64
	}{
		{0xFFFF, 100_000_000, 335_539_200}, // 65535 x 512 bits at 100 Mb/s
		{0xFFFF, 100_000_000_000, 335_539}, // at 100 Gb/s: 335.5 us
		{1, 1_000_000_000, 512},            // one quantum at 1 Gb/s
		{0, 500_000_000, 0},                // resume
		{1000, 0, 512_000},                 // unshaped counts as 1 Gb/s
	} {
		if got := PauseNs(c.quanta, c.rate); got != c.want {
			t.Errorf("PauseNs(%d, %d) = %d, want %d", c.quanta, c.rate, got, c.want)
		}
	}
}

func TestPFCZeroAllocs(t *testing.T) {
	b := make([]byte, PFCLen)
	q := [8]uint16{3: 0xFFFF}
	n := testing.AllocsPerRun(100, func() {
		PutPFC(b, macA, 0x08, &q)
		f, err := ParsePFC(b)
		if err != nil || f.Quanta(3) != 0xFFFF {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("PutPFC+ParsePFC: %v allocations, want 0", n)
	}
}

func FuzzParsePFC(f *testing.F) {
	for _, s := range pfcSamples {
		f.Add(s.frame())
	}
	for _, c := range pfcMalformed {
		f.Add(c.frame())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = DescribeMACControl(b)
		p, err := ParsePFC(b)
		var l PFCLayer
		lerr := error(nil)
		if IsMACControl(b) {
			lerr = l.DecodeFromBytes(b[14:], gopacket.NilDecodeFeedback)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformedPFC) {
				t.Fatalf("error %v does not wrap ErrMalformedPFC", err)
			}
			return
		}
		if lerr != nil {
			t.Fatalf("ParsePFC accepts what the layer rejects: %v", lerr)
		}
		// Whatever is accepted re-serializes to the same opcode, vector
		// and enabled times.
		q := l.Quanta
		out := make([]byte, PFCLen)
		PutPFC(out, p.Src(), p.Enable(), &q)
		back, err := ParsePFC(out)
		if err != nil || back.Enable() != p.Enable() {
			t.Fatalf("re-put: %v", err)
		}
		for i := range 8 {
			if p.Enable()&(1<<i) != 0 && back.Quanta(i) != p.Quanta(i) {
				t.Fatalf("P%d: %d became %d", i, p.Quanta(i), back.Quanta(i))
			}
		}
	})
}

func BenchmarkPutParsePFC(b *testing.B) {
	buf := make([]byte, PFCLen)
	q := [8]uint16{3: 0xFFFF}
	b.ReportAllocs()
	for b.Loop() {
		PutPFC(buf, macA, 0x08, &q)
		if _, err := ParsePFC(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTsharkPFC checks that Wireshark's own dissector reads PutPFC's
// frames as 802.1Qbb CBFC with the classes and quanta written, and
// flags nothing.
func TestTsharkPFC(t *testing.T) {
	tshark := testtool.Require(t, "tshark", "check PFC frames")
	dir := t.TempDir()
	path := filepath.Join(dir, "pfc.pcap")
	var frames [][]byte
	for _, s := range pfcSamples {
		frames = append(frames, s.frame())
	}
	pcaptest.Write(t, path, frames)
	fields := []string{"eth.dst", "macc.opcode", "macc.cbfc.enbv"}
	for i := range 8 {
		fields = append(fields, fmt.Sprintf("macc.cbfc.pause_time.c%d", i))
	}
	args := []string{"-n", "-r", path, "-T", "fields", "-E", "separator=|"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(tshark, args...)
	cmd.Env = append(cmd.Environ(), "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(pfcSamples) {
		t.Fatalf("tshark printed %d lines for %d frames:\n%s", len(lines), len(pfcSamples), out)
	}
	for i, s := range pfcSamples {
		want := []string{"01:80:c2:00:00:01", "0x0101", fmt.Sprintf("0x%04x", s.enable)}
		for p := range 8 {
			// tshark shows every time; those not enabled are zero.
			q := uint16(0)
			if s.enable&(1<<p) != 0 {
				q = s.quanta[p]
			}
			want = append(want, fmt.Sprint(q))
		}
		if lines[i] != strings.Join(want, "|") {
			t.Errorf("frame %d (%s):\ngot  %s\nwant %s", i+1, s.desc, lines[i], strings.Join(want, "|"))
		}
	}
	cmd = exec.Command(tshark, "-n", "-r", path, "-Y", "_ws.malformed || _ws.expert.severity >= warning || !macc.cbfc.enbv")
	cmd.Env = append(cmd.Environ(), "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	if out, err := cmd.Output(); err != nil || len(out) != 0 {
		t.Errorf("tshark flags PFC frames (err %v):\n%s", err, out)
	}
}
