package roce

import (
	"bytes"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// shiftZeros steps a CRC register over n zero bytes as crc32.Update over
// them does, for counts around every table's bit and past the largest.
func TestShiftZeros(t *testing.T) {
	zeros := make([]byte, 3<<zeroShiftBits)
	r := rand.New(rand.NewPCG(1, 2))
	ns := []int{0, 1, 2, 3, 4, 7, 8, 63, 64, 1023, 1024, 1027, 4093, 9000, 1<<zeroShiftBits - 1, 1 << zeroShiftBits, 1<<(zeroShiftBits+1) + 5}
	for _, n := range ns {
		for range 8 {
			c := r.Uint32()
			want := ^crc32.Update(^c, crc32.IEEETable, zeros[:n])
			if got := shiftZeros(c, n); got != want {
				t.Fatalf("shiftZeros(%#08x, %d) = %#08x, want %#08x", c, n, got, want)
			}
		}
	}
}

// A data frame whose payload PutData zeroes itself (Data.Zeros) is the
// frame built over a zeroed payload, byte for byte, its ICRC the
// reference's, whatever the buffer held before, with and without a
// RETH, an INT shim and padding.
func TestPutDataZeros(t *testing.T) {
	for _, c := range []struct {
		op      Opcode
		payload int
		slots   int
	}{
		{OpSendOnly, 0, 0}, {OpSendOnly, 1, 0}, {OpSendMiddle, 1024, 0}, {OpSendLast, 1021, 0},
		{OpWriteFirst, 1024, 0}, {OpSendMiddle, 1024, INTSlots}, {OpSendOnly, 3, 1}, {OpSendMiddle, 4096, 0},
	} {
		d := Data{Opcode: c.op, PSN: 9, AckReq: true, Payload: c.payload, INTSlots: c.slots}
		if c.op.HasRETH() {
			d.VA, d.RKey, d.DMALen = 0x10000, 0x77, 4096
		}
		n := DataFrameLen(c.op, c.payload) + INTShimLen(c.slots)
		want := make([]byte, n)
		if got := PutData(want, &dataFlow, &d); got != n {
			t.Fatalf("%v %d B: PutData = %d, want %d", c.op, c.payload, got, n)
		}
		got := bytes.Repeat([]byte{0xA5}, n)
		d.Zeros = true
		if m := PutData(got, &dataFlow, &d); m != n {
			t.Fatalf("%v %d B, zeros: PutData = %d, want %d", c.op, c.payload, m, n)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%v %d B, %d INT slots: the frame with Zeros differs from the one over a zeroed payload", c.op, c.payload, c.slots)
		}
		if err := CheckICRC(got); err != nil {
			t.Errorf("%v %d B, %d INT slots: %v", c.op, c.payload, c.slots, err)
		}
		if c.slots == 0 {
			if r := refICRC(got); storedICRC(got, len(got)) != r {
				t.Errorf("%v %d B: ICRC %#08x, reference %#08x", c.op, c.payload, storedICRC(got, len(got)), r)
			}
		}
	}
	b := make([]byte, DataFrameLen(OpSendMiddle, 1024))
	d := Data{Opcode: OpSendMiddle, PSN: 1, Payload: 1024, Zeros: true}
	if a := testing.AllocsPerRun(1000, func() { PutData(b, &dataFlow, &d) }); a != 0 {
		t.Errorf("PutData with Zeros allocates %.1f times", a)
	}
}

// BenchmarkPutDataZeros is a NIC's data packet of 1,024 zero bytes:
// zeroed by the caller and read for the ICRC, or zeroed by PutData and
// stepped over (Zeros).
func BenchmarkPutDataZeros(b *testing.B) {
	for _, zeros := range []bool{false, true} {
		name := "payload"
		if zeros {
			name = "zeros"
		}
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, DataFrameLen(OpSendMiddle, 1024))
			d := Data{Opcode: OpSendMiddle, PSN: 1, Payload: 1024, Zeros: zeros}
			off := PayloadOffset(OpSendMiddle)
			b.ReportAllocs()
			for range b.N {
				if !zeros {
					clear(buf[off : off+1024])
				}
				PutData(buf, &dataFlow, &d)
			}
		})
	}
}
