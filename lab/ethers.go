package lab

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// The lab's MACs by name. Wireshark names a MAC from its manufacturers'
// file unless an ethers file names it, and the lab's locally
// administered MACs (02:10:..., 02:20:...) fall in blocks that file
// gives Microsoft's NLB: tshark shows "MS-NLB-PhysServer-16_00:00:03:00"
// for h3's eth0. So Up writes an ethers file naming every MAC by its
// node and port (h3.eth0, s0.1.p2, h3.bc0, h3.bc0nic) into a directory
// of the run directory that serves Wireshark as its personal
// configuration directory:
//
//	WIRESHARK_CONFIG_DIR=/run/bcfab/<lab>/wireshark tshark -r capture.pcap
//
// A directory of its own keeps what the Wireshark GUI writes to its
// configuration directory (recent files, profiles) out of the lab's.
// lab capture names the MACs of the lines it prints from the same file.

// WiresharkDir is the directory, in a lab's run directory, that holds
// the lab's ethers file: Wireshark's configuration directory for the
// lab's captures (WIRESHARK_CONFIG_DIR).
const WiresharkDir = "wireshark"

// EthersPath is the ethers file of lab name under runRoot ("":
// DefaultRunRoot).
func EthersPath(runRoot, name string) string {
	if runRoot == "" {
		runRoot = DefaultRunRoot
	}
	if name == "" {
		name = DefaultName
	}
	return filepath.Join(runRoot, name, WiresharkDir, "ethers")
}

// MACName is a MAC of the lab and the node and port that own it.
type MACName struct {
	MAC  net.HardwareAddr
	Name string // <node>.<port>: h3.eth0, s0.1.p2, h3.bc0
}

// Ethers are every MAC of p's lab with its node and port: both ends of
// every fabric cable and of every server's bc0 pair.
func (p *Plan) Ethers() []MACName {
	var out []MACName
	for _, l := range append(append([]Link(nil), p.Links...), p.AppLinks...) {
		for _, e := range []Endpoint{l.A, l.B} {
			out = append(out, MACName{e.MAC, e.Node + "." + e.Ifname})
		}
	}
	return out
}

// WriteEthers writes names as an ethers(5) file, one "MAC name" a
// line, after comment lines that say what it is for lab (a name and
// its fabric).
func WriteEthers(w io.Writer, lab string, names []MACName) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "# The MACs of lab %s by node and port, for Wireshark and tshark:\n", lab)
	fmt.Fprintf(b, "#   WIRESHARK_CONFIG_DIR=<this directory> tshark -r capture.pcap\n")
	for _, n := range names {
		fmt.Fprintf(b, "%s %s\n", n.MAC, n.Name)
	}
	return b.Flush()
}

// writeEthers writes p's ethers file (see EthersPath).
func writeEthers(p *Plan) error {
	dir := filepath.Join(p.RunDir, WiresharkDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("ethers: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "ethers"))
	if err != nil {
		return fmt.Errorf("ethers: %w", err)
	}
	err = WriteEthers(f, fmt.Sprintf("%s (%s)", p.Spec.Name, p.Spec.TopologyText()), p.Ethers())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("ethers: %w", err)
	}
	return nil
}

// ReadEthers reads an ethers file: the names by MAC, as
// net.HardwareAddr prints it (lower case, colons). Comments and blank
// lines are skipped.
func ReadEthers(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		mac, err := net.ParseMAC(fields[0])
		if err != nil || len(fields) < 2 {
			return nil, fmt.Errorf("%s:%d: want a MAC and a name", path, n)
		}
		names[mac.String()] = fields[1]
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return names, nil
}
