package roce

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/bits"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/internal/testkit/pcaptest"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
)

// tsharkRun runs tshark on path with a private profile (no user
// preferences) and returns its standard output.
func tsharkRun(t *testing.T, tshark, path string, args ...string) string {
	t.Helper()
	dir := filepath.Dir(path)
	cmd := exec.Command(tshark, append([]string{"-n", "-r", path}, args...)...)
	cmd.Env = append(cmd.Environ(), "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// tsharkFields runs tshark -T fields and returns one map per frame.
func tsharkFields(t *testing.T, tshark, path string, fields []string, args ...string) []map[string]string {
	t.Helper()
	args = append(args, "-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=,")
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	var rows []map[string]string
	for _, line := range strings.Split(strings.TrimRight(tsharkRun(t, tshark, path, args...), "\n"), "\n") {
		vals := strings.Split(line, "|")
		if len(vals) != len(fields) {
			t.Fatalf("tshark line %q has %d fields, want %d", line, len(vals), len(fields))
		}
		row := map[string]string{}
		for i, f := range fields {
			row[f] = vals[i]
		}
		rows = append(rows, row)
	}
	return rows
}

// rpcrdmaOff turns off tshark's RPC-over-RDMA heuristic. The fabric never
// carries RPC-over-RDMA, and tshark 4.0's heuristic claims SEND payloads
// it cannot tell apart from it (it takes a zero-filled SEND_ONLY without
// showing it, and throws "Malformed Packet" on a SEND without payload).
var rpcrdmaOff = []string{"--disable-heuristic", "rpcrdma_infiniband"}

// TestTshark checks that Wireshark's own InfiniBand dissector reads every
// kind of frame the package builds as RoCEv2 with the fields written,
// finds the ICRC where the package put it, and flags nothing.
//
// tshark (4.0 here) shows the ICRC but does not verify it; where a
// version exposes a verification status, the test requires "good". The
// ICRC values themselves are checked against an independent
// implementation in TestKnownAnswers and against refICRC everywhere.
func TestTshark(t *testing.T) {
	tshark := testtool.Require(t, "tshark", "check RoCEv2 frames against Wireshark's dissector")
	ss := samples()
	empty := dataSample("send only, no payload", OpSendOnly, 42, true, 0)
	ss = append(ss, empty)
	var frames [][]byte
	for _, s := range ss {
		frames = append(frames, s.frame)
	}
	path := filepath.Join(t.TempDir(), "roce.pcap")
	pcaptest.Write(t, path, frames)

	fields := []string{
		"frame.protocols", "vlan.priority", "vlan.id", "ip.dsfield.dscp", "ip.dsfield.ecn", "ip.ttl", "ip.flags.df",
		"udp.srcport", "udp.dstport", "udp.length",
		"infiniband.bth.opcode", "infiniband.bth.padcnt", "infiniband.bth.tver", "infiniband.bth.p_key",
		"infiniband.bth.destqp", "infiniband.bth.a", "infiniband.bth.psn",
		"infiniband.aeth.syndrome", "infiniband.aeth.msn",
		"infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
		"infiniband.invariant.crc", "infiniband.vendor",
		"_ws.malformed", "_ws.expert.severity",
	}
	status := hasField(t, tshark, "infiniband.invariant.crc.status")
	if status {
		fields = append(fields, "infiniband.invariant.crc.status")
	}
	rows := tsharkFields(t, tshark, path, fields, rpcrdmaOff...)
	if len(rows) != len(ss) {
		t.Fatalf("tshark printed %d frames, want %d", len(rows), len(ss))
	}
	for i, s := range ss {
		r := rows[i]
		f := dataFlow
		if !s.op.IsData() {
			f = ackFlow
		}
		ecn := f.ECN
		if s.ce {
			ecn = 3
		}
		want := map[string]string{
			"vlan.priority": fmt.Sprint(f.PCP), "vlan.id": fmt.Sprint(f.VID),
			"ip.dsfield.dscp": fmt.Sprint(f.DSCP), "ip.dsfield.ecn": fmt.Sprint(ecn), "ip.ttl": "64", "ip.flags.df": "1",
			"udp.srcport": fmt.Sprint(f.SrcPort), "udp.dstport": "4791",
			"udp.length":            fmt.Sprint(len(s.frame) - EthLen - VLANLen - IPv4Len),
			"infiniband.bth.opcode": fmt.Sprint(uint8(s.op)), "infiniband.bth.tver": "0",
			"infiniband.bth.p_key":  "65535",
			"infiniband.bth.destqp": fmt.Sprintf("0x%06x", s.qp),
			"infiniband.bth.a":      map[bool]string{false: "0", true: "1"}[s.ackReq],
			"infiniband.bth.psn":    fmt.Sprint(s.psn),
			"infiniband.bth.padcnt": fmt.Sprint(pad(s.payload)),
			"_ws.malformed":         "", "_ws.expert.severity": "",
		}
		icrc := refICRC(s.frame)
		switch s.op {
		case OpAck:
			want["infiniband.aeth.syndrome"] = fmt.Sprint(uint8(s.syn))
			want["infiniband.aeth.msn"] = fmt.Sprint(s.msn)
		case OpWriteFirst, OpWriteOnly:
			want["infiniband.reth.va"] = "0x0000000000010000"
			want["infiniband.reth.r_key"] = "0x00000077"
			want["infiniband.reth.dmalen"] = "4096"
		}
		if s.op == OpCNP {
			// tshark 4.0 does not know the CNP opcode: it shows the
			// reserved bytes and the ICRC together as unknown data (a
			// subtree over the first four, then all of them).
			want["infiniband.vendor"] = hex.EncodeToString(s.frame[HeadersLen:HeadersLen+4]) + "," + hex.EncodeToString(s.frame[HeadersLen:])
		} else {
			// tshark reads the ICRC big-endian; the package writes the
			// CRC least significant byte first.
			want["infiniband.invariant.crc"] = fmt.Sprintf("0x%08x", bits.ReverseBytes32(icrc))
		}
		if status && s.op != OpCNP {
			want["infiniband.invariant.crc.status"] = "1" // PROTO_CHECKSUM_E_GOOD
		}
		if !strings.Contains(r["frame.protocols"], ":udp:infiniband") {
			t.Errorf("frame %d (%s): protocols %q, not RoCEv2", i+1, s.name, r["frame.protocols"])
		}
		for k, v := range want {
			if r[k] != v {
				t.Errorf("frame %d (%s): %s = %q, want %q", i+1, s.name, k, r[k], v)
			}
		}
	}

	// With tshark's defaults (every heuristic on) all frames but the
	// empty SEND, the last one, still decode without complaint.
	filter := fmt.Sprintf("frame.number != %d && (_ws.malformed || _ws.expert.severity >= warning || !infiniband)", len(ss))
	if out := tsharkRun(t, tshark, path, "-Y", filter); out != "" {
		t.Errorf("with tshark's default heuristics, frames are flagged:\n%s", out)
	}
	if out := tsharkRun(t, tshark, path, append(rpcrdmaOff, "-Y", "_ws.malformed || _ws.expert.severity >= warning || !infiniband")...); out != "" {
		t.Errorf("tshark flags frames:\n%s", out)
	}
}

// hasField reports whether this tshark knows a display field.
func hasField(t *testing.T, tshark, name string) bool {
	out, err := exec.Command(tshark, "-G", "fields").Output()
	if err != nil {
		t.Fatalf("tshark -G fields: %v", err)
	}
	return bytes.Contains(out, []byte("\t"+name+"\t"))
}
