package roce

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/internal/testkit/pcaptest"
	"github.com/bcfab/bcfab/internal/testkit/testtool"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// A data frame with an INT shim: parsed empty, stamped hop by hop (the
// ICRC kept valid), echoed in an ACK, and seen the same by the gopacket
// layer.
func TestINT(t *testing.T) {
	const payload = 1000
	b := make([]byte, 2048)
	n := PutData(b, &dataFlow, &Data{Opcode: OpSendMiddle, PSN: 7, Payload: payload, INTSlots: INTSlots})
	if n != DataFrameLen(OpSendMiddle, payload)+INTLen || INTLen != 84 {
		t.Fatalf("frame %d bytes, INTLen %d", n, INTLen)
	}
	b = b[:n]
	var p Packet
	if err := Parse(b, &p); err != nil {
		t.Fatal(err)
	}
	if !p.BTH.INT() || p.INT == nil || p.INT.Hops() != 0 || p.INT.Slots() != INTSlots || len(p.Payload) != payload {
		t.Fatalf("parsed: INT %v, hops %d, payload %d", p.BTH.INT(), p.INT.Hops(), len(p.Payload))
	}
	recs := []INTRecord{
		{TS: 1_000, TxBytes: 5_000, QLen: 0, RateKbps: 20_000},
		{TS: 4_294_967_000, TxBytes: 1 << 31, QLen: 30_000, RateKbps: 20_000},
		{TS: 3, TxBytes: 4_294_967_295, QLen: 1, RateKbps: 100_000_000},
	}
	for _, r := range recs {
		if !StampINT(b, r) {
			t.Fatal("not stamped")
		}
	}
	if err := Parse(b, &p); err != nil {
		t.Fatalf("after stamping: %v", err)
	}
	if p.INT.Hops() != len(recs) {
		t.Fatalf("hops %d", p.INT.Hops())
	}
	for i, r := range recs {
		if got := p.INT.Record(i); got != r {
			t.Errorf("record %d: %+v, want %+v", i, got, r)
		}
	}
	// The receiver's ACK carries the shim back.
	a := make([]byte, 256)
	an := PutAckINT(a, &ackFlow, 7, p.INT)
	var q Packet
	if err := Parse(a[:an], &q); err != nil || an != AckINTLen {
		t.Fatalf("ACK: %v (%d bytes)", err, an)
	}
	if q.Opcode() != OpAck || q.PSN() != 7 || q.AETH.Syndrome() != SyndromeACK || q.INT.Hops() != 3 || q.INT.Record(1) != recs[1] || len(q.Payload) != 0 {
		t.Fatalf("ACK parsed: %+v", q)
	}
	// gopacket sees the same records, and writes the same frame.
	pkt := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
	l, ok := pkt.Layer(LayerTypeBTH).(*BTHLayer)
	if !ok {
		t.Fatalf("no BTH layer: %v", pkt.ErrorLayer())
	}
	if l.INTSlots != INTSlots || len(l.INT) != 3 || l.INT[2] != recs[2] || len(l.Payload) != payload {
		t.Fatalf("layer: slots %d, %d records, payload %d", l.INTSlots, len(l.INT), len(l.Payload))
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, l, gopacket.Payload(l.Payload)); err != nil {
		t.Fatal(err)
	}
	udp := p.IP + IPv4Len + UDPLen
	if got := buf.Bytes(); string(got) != string(b[udp:n]) {
		t.Fatalf("serialized layer differs:\n%x\n%x", got, b[udp:n])
	}
	// Full: a sixth hop finds no slot; the frame is left as it is.
	for range INTSlots - len(recs) {
		StampINT(b, recs[0])
	}
	c := string(b)
	if StampINT(b, recs[0]) || string(b) != c {
		t.Fatal("stamped a full shim")
	}
}

// Frames without a shim, and shims that do not fit, are left alone or
// rejected.
func TestINTNotStamped(t *testing.T) {
	b := make([]byte, 2048)
	n := PutData(b, &dataFlow, &Data{Opcode: OpSendOnly, PSN: 1, Payload: 64})
	c := string(b[:n])
	if StampINT(b[:n], INTRecord{TS: 1}) || string(b[:n]) != c {
		t.Fatal("stamped a frame without a shim")
	}
	a := make([]byte, 128)
	an := PutAck(a, &ackFlow, SyndromeACK, 1, 0)
	if StampINT(a[:an], INTRecord{TS: 1}) {
		t.Fatal("stamped an ACK")
	}
	if StampINT(a[:20], INTRecord{TS: 1}) {
		t.Fatal("stamped a runt")
	}
	// A shim that claims more slots than the frame holds is malformed.
	n = PutData(b, &dataFlow, &Data{Opcode: OpSendOnly, PSN: 1, Payload: 0, INTSlots: 1})
	b[PayloadOffset(OpSendOnly)+1] = 9
	var p Packet
	if err := Parse(b[:n], &p); !errors.Is(err, ErrMalformed) {
		t.Fatalf("oversized shim: %v", err)
	}
	if StampINT(b[:n], INTRecord{TS: 1}) {
		t.Fatal("stamped an oversized shim")
	}
}

func TestINTAllocs(t *testing.T) {
	b := make([]byte, 2048)
	n := PutData(b, &dataFlow, &Data{Opcode: OpSendMiddle, PSN: 7, Payload: 1024, INTSlots: INTSlots})
	r := INTRecord{TS: 1, TxBytes: 2, QLen: 3, RateKbps: 4}
	if a := testing.AllocsPerRun(1000, func() {
		b[PayloadOffset(OpSendMiddle)] = 0 // empty again
		StampINT(b[:n], r)
	}); a != 0 {
		t.Errorf("StampINT: %v allocations", a)
	}
	var p Packet
	if a := testing.AllocsPerRun(1000, func() { _ = Parse(b[:n], &p); _ = p.INT.Record(0) }); a != 0 {
		t.Errorf("Parse with INT: %v allocations", a)
	}
}

// scripts/bcfab.lua decodes the INT shim of data frames and ACKs, and
// finds none in a frame without it.
func TestTsharkINT(t *testing.T) {
	tshark := testtool.Require(t, "tshark", "check scripts/bcfab.lua's INT decoding")
	script, err := filepath.Abs("../../scripts/bcfab.lua")
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 2048)
	n := PutData(data, &dataFlow, &Data{Opcode: OpSendMiddle, PSN: 7, Payload: 256, INTSlots: INTSlots})
	data = data[:n]
	StampINT(data, INTRecord{TS: 1000, TxBytes: 5000, QLen: 0, RateKbps: 20_000})
	StampINT(data, INTRecord{TS: 2000, TxBytes: 6000, QLen: 30_000, RateKbps: 20_000})
	var p Packet
	if err := Parse(data, &p); err != nil {
		t.Fatal(err)
	}
	ack := make([]byte, 256)
	ack = ack[:PutAckINT(ack, &ackFlow, 7, p.INT)]
	plain := make([]byte, 2048)
	plain = plain[:PutData(plain, &dataFlow, &Data{Opcode: OpSendOnly, PSN: 8, Payload: 64})]
	path := filepath.Join(t.TempDir(), "int.pcap")
	pcaptest.Write(t, path, [][]byte{data, ack, plain})
	rows := tsharkFields(t, tshark, path, []string{"bcfab.int.hops", "bcfab.int.slots", "bcfab.int.ts", "bcfab.int.txbytes", "bcfab.int.qlen", "bcfab.int.rate", "infiniband.bth.opcode"},
		append([]string{"-X", "lua_script:" + script}, rpcrdmaOff...)...)
	want := []string{
		"2|5|1000,2000|5000,6000|0,30000|20000,20000|1",
		"2|5|1000,2000|5000,6000|0,30000|20000,20000|17",
		"||||||4",
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		got := strings.Join([]string{r["bcfab.int.hops"], r["bcfab.int.slots"], r["bcfab.int.ts"], r["bcfab.int.txbytes"], r["bcfab.int.qlen"], r["bcfab.int.rate"], r["infiniband.bth.opcode"]}, "|")
		if got != want[i] {
			t.Errorf("frame %d: %s, want %s", i, got, want[i])
		}
	}
}
