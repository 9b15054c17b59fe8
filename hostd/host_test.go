package hostd

import (
	"encoding/binary"
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/wire/header"
	"github.com/bcfab/bcfab/xdp"
)

// appFrame is an IPv4 frame from h0's kernel to h1, tagged with pcp
// (pcp < 0: untagged), of IP protocol proto.
func appFrame(pcp int, proto uint8) []byte {
	var b []byte
	eth := []byte{2, 0x30, 0, 0, 0, 0, 2, 0x31, 0, 0, 0, 0}
	if pcp >= 0 {
		b = append(eth, 0x81, 0, byte(pcp<<5), 0, 0x08, 0)
	} else {
		b = append(eth, 0x08, 0)
	}
	ip := make([]byte, 20+8)
	ip[0], ip[8], ip[9] = 0x45, 64, proto
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
	copy(ip[12:], []byte{198, 18, 0, 0, 198, 18, 0, 1})
	return append(b, ip...)
}

// The class a frame from the kernel rides: the one the bc0 classifier
// tagged it with; untagged (no classifier), data or, for ICMP, control.
func TestFromAppClass(t *testing.T) {
	n := newNIC(t, bcube.MustNew(2, 1), 0, fastParams())
	app := n.h.AppPort()
	hq := n.h.t.ServerHQ()
	for _, c := range []struct {
		name    string
		pcp     int
		proto   uint8
		wantPCP uint8
		hq      bool
	}{
		{"tagged 3 (DSCP 26)", 3, header.ProtoUDP, 3, false},
		{"tagged 5", 5, header.ProtoTCP, 5, false},
		{"tagged 0 (best effort)", 0, header.ProtoTCP, 0, false},
		{"tagged ICMP 0 (mapped)", 0, header.ProtoICMP, 0, false},
		{"tagged ICMP 6", 6, header.ProtoICMP, 6, true},
		{"untagged UDP", -1, header.ProtoUDP, 3, false},
		{"untagged ICMP", -1, header.ProtoICMP, 6, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := appFrame(c.pcp, c.proto)
			// Headroom in front, for the tag an untagged frame gets.
			d := xdp.Desc{Addr: n.scratch.Addr + 64, Len: uint32(len(b))}
			copy(n.e.Frame(&d), b)
			var v dataplane.Verdict
			n.h.Handle(app, &d, &v)
			out := n.e.Frame(&d)
			var f header.Frame
			if v.Drop != 0 || v.Port != 0 || header.Parse(out, &f) != header.KindIPv4 || !f.Tagged {
				t.Fatalf("verdict %+v, frame tagged %v", v, f.Tagged)
			}
			if f.PCP != c.wantPCP || (v.Queue == hq) != c.hq {
				t.Errorf("PCP %d in queue %d; want PCP %d, HQ %v", f.PCP, v.Queue, c.wantPCP, c.hq)
			}
		})
	}
}
