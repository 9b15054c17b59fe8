package hostd

import (
	"testing"

	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/wire/transport"
)

// HPCC end to end between two NICs: data frames carry the INT shim, a
// "switch" between them stamps a record into each, the receiver echoes
// the shim in every ACK, and the sender's HPCC runs on the records.
func TestRDMAHPCC(t *testing.T) {
	p := fastParams()
	p.SetCC(transport.CCHPCC)
	pr := newPair(t, p)
	var pkt roce.Packet
	var tx uint32
	var stamped, echoed int
	pr.toBFn = func(q int, b []byte) {
		if err := roce.Parse(b, &pkt); err != nil || pkt.INT == nil || pkt.INT.Slots() != roce.INTSlots || len(pkt.Payload) != 1024 {
			t.Fatalf("data frame: %v, INT %v", err, pkt.INT)
		}
		tx += uint32(len(b))
		// A 1 Gb/s hop: one frame's time apart, 5000 bytes queued.
		if roce.StampINT(b, roce.INTRecord{TS: tx * 8, TxBytes: tx, QLen: 5000, RateKbps: 1_000_000}) {
			stamped++
		}
		pr.toB(q, b)
	}
	pr.toAFn = func(q int, b []byte) {
		if err := roce.Parse(b, &pkt); err == nil && pkt.Opcode() == roce.OpAck && pkt.INT != nil && pkt.INT.Hops() == 1 {
			echoed++
		}
		pr.toA(q, b)
	}
	if _, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 200 << 10, CC: "hpcc"}); err != nil {
		t.Fatal(err)
	}
	var fl api.RDMAFlow
	for range 20000 {
		pr.step()
		if fl = pr.a.h.RDMA([]int{1}).Flows[0]; fl.State != api.RDMARunning {
			break
		}
	}
	t.Logf("%+v; %d stamped, %d ACKs echoed", fl, stamped, echoed)
	if fl.State != api.RDMADone || fl.CC != transport.CCHPCC || fl.DCQCN || stamped == 0 || echoed == 0 || fl.WindowPackets == 0 || fl.HPCCU == 0 {
		t.Fatalf("flow %+v, %d stamped, %d echoed", fl, stamped, echoed)
	}
	if _, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 1 << 20, CC: "hpcc", MTU: api.MaxRDMAMTU}); err == nil {
		t.Fatal("HPCC took an MTU with no room for INT")
	}
	if _, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 1 << 20, CC: "cubic"}); err == nil {
		t.Fatal("cc cubic taken")
	}
	if _, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 1 << 20, CC: "dctcp"}); err == nil {
		t.Fatal("cc dctcp taken on an hpcc host")
	}
	q := newPair(t, fastParams())
	if _, err := q.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 1 << 20, CC: "hpcc"}); err == nil {
		t.Fatal("cc hpcc taken on a dcqcn host")
	}
}

// DCTCP end to end: marked data draws ACKs with BECN (no CNPs), and the
// sender cuts its window.
func TestRDMADCTCP(t *testing.T) {
	p := fastParams()
	p.SetCC(transport.CCDCTCP)
	pr := newPair(t, p)
	pr.mark = func(i int) bool { return i%10 < 3 }
	var pkt roce.Packet
	ece := 0
	pr.toAFn = func(q int, b []byte) {
		if err := roce.Parse(b, &pkt); err == nil && pkt.Opcode() == roce.OpAck && pkt.BTH.BECN() {
			ece++
		}
		pr.toA(q, b)
	}
	pr.toBFn = pr.toB
	if _, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 200 << 10}); err != nil {
		t.Fatal(err)
	}
	var fl api.RDMAFlow
	for range 20000 {
		pr.step()
		if fl = pr.a.h.RDMA([]int{1}).Flows[0]; fl.State != api.RDMARunning {
			break
		}
	}
	rx := pr.b.h.RDMA(nil).Receivers[0]
	t.Logf("%+v; %d ACKs echoed CE; receiver %v", fl, ece, rx.Stats)
	if fl.State != api.RDMADone || fl.CC != transport.CCDCTCP || ece == 0 || fl.WindowCuts == 0 || fl.Alpha <= 0 || fl.CNPs != 0 || rx.Stats["cnps"] != 0 {
		t.Fatalf("flow %+v, %d ECE ACKs", fl, ece)
	}
	// DCQCN would hear no CNP from these receivers; the older switch
	// turning DCQCN off is none.
	if _, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 1 << 20, CC: "dcqcn"}); err == nil {
		t.Fatal("cc dcqcn taken on a dctcp host")
	}
	off := false
	if fs, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 10 << 10, DCQCN: &off}); err != nil || fs[0].CC != transport.CCNone {
		t.Fatalf("dcqcn off: %v", err)
	}
}
