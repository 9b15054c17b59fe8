package dataplane

import (
	"testing"

	"github.com/bcfab/bcfab/wire/roce"
)

// intFrame is a RoCEv2 SEND with an empty INT shim, as HPCC's senders
// make them.
func intFrame(t testing.TB) []byte {
	f := roce.Flow{SrcMAC: [6]byte{2, 0x10, 0, 0, 0, 0}, DstMAC: [6]byte{2, 0x20, 0, 0, 0, 0}, PCP: 3,
		SrcIP: [4]byte{10, 0, 0, 1}, DstIP: [4]byte{10, 0, 0, 2}, SrcPort: 49152, DestQP: 0x400001}
	b := make([]byte, 2048)
	n := roce.PutData(b, &f, &roce.Data{Opcode: roce.OpSendMiddle, PSN: 1, Payload: 512, INTSlots: roce.INTSlots})
	return b[:n]
}

// With Options.INT every frame with a shim leaving a port gets the port's
// record: its bytes sent so far with the frame, the queue behind it,
// the time and the rate; the ICRC stays valid. Frames without one are
// left alone, and the port counts what it stamped.
func TestEngineStampsINT(t *testing.T) {
	r := newRigOpts(t, 0, Options{BufferBytes: 1 << 20, INT: true})
	frame := intFrame(t)
	var p roce.Packet
	for i := 1; i <= 3; i++ {
		before := r.e.Now()
		r.sendBytes(frame, len(frame))
		r.e.pass()
		if r.far[1].Receive(r.desc[:]) != 1 {
			t.Fatalf("frame %d not delivered", i)
		}
		d := r.desc[0]
		got := r.farMem[1][d.Addr : d.Addr+uint64(d.Len)]
		if err := roce.Parse(got, &p); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		rec := p.INT.Record(0)
		// The time is the engine's clock mod 2^32, taken between before
		// and now (unshaped: when the frame left the queue).
		if p.INT.Hops() != 1 || rec.TxBytes != uint32(i*len(frame)) || rec.QLen != 0 || rec.RateKbps != 0 ||
			rec.TS-uint32(before) > uint32(r.e.Now()-before) {
			t.Fatalf("frame %d: hops %d, record %+v", i, p.INT.Hops(), rec)
		}
		r.addrs[0] = d.Addr &^ (tFrame - 1)
		r.far[1].Fill(r.addrs[:1])
	}
	r.send(200) // no shim: not stamped
	r.e.pass()
	r.recv()
	ps, _ := r.e.Snapshot()
	if ps[1].INTStamped != 3 || ps[0].INTStamped != 0 {
		t.Fatalf("stamped: %d, %d", ps[1].INTStamped, ps[0].INTStamped)
	}
}

func TestEngineINTZeroAllocs(t *testing.T) {
	r := newRigOpts(t, 0, Options{BufferBytes: 1 << 20, INT: true})
	frame := intFrame(t)
	for range 100 {
		r.sendBytes(frame, len(frame))
		r.e.pass()
		r.recv()
	}
	if a := testing.AllocsPerRun(1000, func() {
		r.sendBytes(frame, len(frame))
		r.e.pass()
		r.recv()
	}); a != 0 {
		t.Fatalf("%v allocations per frame", a)
	}
}
