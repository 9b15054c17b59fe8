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

// CaptureNamesSuffix is what KeepNames adds to a capture file's path for
// the directory that keeps its names.
const CaptureNamesSuffix = ".wireshark"

// KeepNames copies lab name's ethers file beside a capture file, into
// <file>.wireshark/ethers: a Wireshark configuration directory of the
// capture's own, so that tshark names the capture's nodes after the lab,
// and its run directory, are gone. It returns the directory.
func KeepNames(runRoot, name, file string) (string, error) {
	b, err := os.ReadFile(EthersPath(runRoot, name))
	if err != nil {
		return "", err
	}
	dir := file + CaptureNamesSuffix
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "ethers"), b, 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

// DissectorScript is the project's Wireshark dissector of its frames
// (EtherType 0x88B5), in the source tree.
const DissectorScript = "scripts/bcfab.lua"

// Dissector is the absolute path of the project's dissector: in the tree
// of the running program (<tree>/bin/lab, <tree>/scripts), else in the
// working directory or one above it; "" when none holds it.
func Dissector() string {
	var dirs []string
	if bin, err := DefaultBinDir(); err == nil {
		dirs = append(dirs, filepath.Dir(bin))
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			dirs = append(dirs, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, DissectorScript)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// TsharkCommand is the command that reads capture file with its nodes
// named by the ethers file of configDir and, when dissector is not "",
// the project's frames decoded by it.
func TsharkCommand(file, configDir, dissector string) string {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	s := "WIRESHARK_CONFIG_DIR=" + shellQuote(abs(configDir)) + " tshark"
	if dissector != "" {
		s += " -X " + shellQuote("lua_script:"+dissector)
	}
	return s + " -o nameres.mac_name:TRUE -r " + shellQuote(abs(file))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
