package lab

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/signaling"
)

// ethersFile writes the ethers file of BCube(n,k) lab name into a
// temporary directory and returns the directory.
func ethersFile(t *testing.T, n, k int) (dir string, p *Plan) {
	t.Helper()
	p, err := NewPlan(Spec{Name: "et", N: n, K: k, RunRoot: t.TempDir(), BinDir: "/opt/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.RunDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeEthers(p); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(p.RunDir, WiresharkDir), p
}

// The ethers file names every MAC of the lab by its node and port, once
// each, as the design's MAC scheme gives them.
func TestEthers(t *testing.T) {
	dir, p := ethersFile(t, 4, 1)
	if got := EthersPath(p.Spec.RunRoot, "et"); got != filepath.Join(dir, "ethers") {
		t.Errorf("EthersPath %s, want %s", got, filepath.Join(dir, "ethers"))
	}
	names, err := ReadEthers(filepath.Join(dir, "ethers"))
	if err != nil {
		t.Fatal(err)
	}
	// Both ends of 32 cables and of 16 bc0 pairs.
	if len(names) != 2*32+2*16 {
		t.Errorf("%d names, want 96", len(names))
	}
	for mac, want := range map[string]string{
		bcube.HostPortMAC(3, 0).String():      "h3.eth0",
		bcube.HostPortMAC(15, 1).String():     "h15.eth1",
		bcube.SwitchPortMAC(0, 1, 2).String(): "s0.1.p2",
		bcube.SwitchPortMAC(1, 3, 0).String(): "s1.3.p0",
		bcube.AppMAC(7).String():              "h7.bc0",
		bcube.AppNICMAC(7).String():           "h7.bc0nic",
		"02:10:00:00:03:00":                   "h3.eth0",
		"02:20:00:00:01:02":                   "s0.1.p2",
	} {
		if got := names[mac]; got != want {
			t.Errorf("%s: %q, want %q", mac, got, want)
		}
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("name %s twice", n)
		}
		seen[n] = true
	}
	b, err := os.ReadFile(filepath.Join(dir, "ethers"))
	if err != nil || !bytes.HasPrefix(b, []byte("# The MACs of lab et (BCube(4,1)) by node and port")) ||
		!bytes.Contains(b, []byte("\n02:10:00:00:03:00 h3.eth0\n")) {
		t.Errorf("ethers file %v:\n%s", err, b)
	}
	if _, err := ReadEthers(filepath.Join(t.TempDir(), "none")); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "ethers")
	if err := os.WriteFile(bad, []byte("02:10:00:00:03:00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadEthers(bad); err == nil || !strings.Contains(err.Error(), ":1: want a MAC and a name") {
		t.Errorf("a line without a name: %v", err)
	}
}

// lab capture's lines name the MACs the ethers file names, and print
// the others as they are.
func TestDescribeFrameNames(t *testing.T) {
	src, dst := bcube.SwitchPortMAC(0, 0, 3), bcube.HostPortMAC(3, 0)
	names := map[string]string{src.String(): "s0.0.p3", dst.String(): "h3.eth0"}
	b := make([]byte, signaling.FrameLen)
	signaling.PutPortFC(b, dst, src, signaling.TypePause, 0, 17, signaling.ClassB, 3, 0, 0)
	if l, _ := describeFrame(b, false, names); !strings.HasPrefix(l, "s0.0.p3 > h3.eth0 PortFC pause class=B port=3") {
		t.Errorf("signal: %q", l)
	}
	fl := bcube.FiveTuple{Src: bcube.ServerIP(5).As4(), Dst: bcube.ServerIP(3).As4(), Proto: 17, SPort: 20065, DPort: 5999}
	signaling.PutICI(b, dst, src, 7, &fl, signaling.PCPData, 0)
	if l, _ := describeFrame(b, false, names); !strings.HasPrefix(l, "s0.0.p3 > h3.eth0 ICI isolate flow=198.18.0.5:20065>198.18.0.3:5999/17 pcp=3 hops=0 seq=7") {
		t.Errorf("isolation: %q", l)
	}
	signaling.PutPortFC(b, dst, src, signaling.TypePause, 0, 17, signaling.ClassB, 3, 0, 0)
	arp := arpFrame(src)
	arp[21] = 2 // a reply
	if l, _ := describeFrame(arp, true, names); l != "s0.0.p3 > ff:ff:ff:ff:ff:ff ARP 198.18.0.0 is-at s0.0.p3, 60 bytes" {
		t.Errorf("ARP: %q", l)
	}
	if l, _ := describeFrame(b, false, nil); !strings.HasPrefix(l, "02:20:00:00:00:03 > 02:10:00:00:03:00 PortFC") {
		t.Errorf("no names: %q", l)
	}
}

// tshark, pointed at the lab's Wireshark directory, names the nodes of a
// capture by the ethers file, where it names them after Microsoft's NLB
// without it.
func TestEthersTshark(t *testing.T) {
	tshark := testtool.Require(t, "tshark", "read a capture with the lab's ethers")
	dir, _ := ethersFile(t, 4, 1)
	src, dst := bcube.SwitchPortMAC(0, 0, 3), bcube.HostPortMAC(3, 0)
	pcap := filepath.Join(t.TempDir(), "s0.0-p3.pcap")
	f, err := os.Create(pcap)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i, fr := range [][]byte{signalFrame(dst, src), arpFrame(src)} {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(int64(i), 0), CaptureLength: len(fr), Length: len(fr)}
		if err := w.WritePacket(ci, fr); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	read := func(env ...string) string {
		t.Helper()
		cmd := exec.Command(tshark, "-r", pcap, "-T", "fields", "-e", "eth.src_resolved", "-e", "eth.dst_resolved")
		// Neither the user's Wireshark configuration nor /etc/ethers
		// has a say: an empty configuration directory without the file.
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("tshark %v: %v", env, err)
		}
		return string(out)
	}
	got := read("WIRESHARK_CONFIG_DIR=" + dir)
	if want := "s0.0.p3\th3.eth0\ns0.0.p3\tBroadcast\n"; got != want {
		t.Errorf("tshark with the lab's ethers:\n%s\nwant\n%s", got, want)
	}
	if without := read("WIRESHARK_CONFIG_DIR=" + t.TempDir()); strings.Contains(without, "s0.0.p3") {
		t.Errorf("tshark named the nodes without the ethers file:\n%s", without)
	}
}

func signalFrame(dst, src net.HardwareAddr) []byte {
	b := make([]byte, signaling.FrameLen)
	signaling.PutPortFC(b, dst, src, signaling.TypePause, 0, 1, signaling.ClassB, 3, 0, 0)
	return b
}

func arpFrame(src net.HardwareAddr) []byte {
	b := append(append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, src...), 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1)
	b = append(b, src...)
	b = append(b, 198, 18, 0, 0, 0, 0, 0, 0, 0, 0, 198, 18, 0, 1)
	return append(b, make([]byte, 60-len(b))...)
}

// A capture's names are kept beside it, and the tshark command that reads
// it names that directory and the dissector, by absolute paths.
func TestKeepNames(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Dir(EthersPath(root, "kn")), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(EthersPath(root, "kn"), []byte("02:10:00:00:00:00 h0.eth0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "my capture.pcap")
	dir, err := KeepNames(root, "kn", file)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := ReadEthers(filepath.Join(dir, "ethers")); err != nil || names["02:10:00:00:00:00"] != "h0.eth0" {
		t.Errorf("kept names %v, %v", names, err)
	}
	d := Dissector()
	if !strings.HasSuffix(d, "/"+DissectorScript) || !filepath.IsAbs(d) {
		t.Errorf("Dissector() = %q, want the tree's %s", d, DissectorScript)
	}
	want := "WIRESHARK_CONFIG_DIR='" + file + ".wireshark' tshark -X lua_script:" + d + " -o nameres.mac_name:TRUE -r '" + file + "'"
	if got := TsharkCommand(file, dir, d); got != want {
		t.Errorf("TsharkCommand:\n got %s\nwant %s", got, want)
	}
}
