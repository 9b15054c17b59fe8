package patch

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/bcfab/bcfab/xdp"
)

const (
	tChunk = 2048
	tRing  = 16
)

// rig is a cable whose end a sends frames of its own memory and end b
// receives them into frames the test gives it.
type rig struct {
	a, b     *End
	amem     []byte
	bmem     []byte
	notified int
}

func newRig(t testing.TB) *rig {
	r := &rig{amem: make([]byte, 2*tRing*tChunk), bmem: make([]byte, 2*tRing*tChunk)}
	var err error
	if r.a, r.b, err = Pair(r.amem, r.bmem, tChunk, tRing); err != nil {
		t.Fatal(err)
	}
	r.b.SetNotify(func() { r.notified++ })
	return r
}

// fill gives b n receive frames.
func (r *rig) fill(n int) {
	addrs := make([]uint64, n)
	for i := range addrs {
		addrs[i] = uint64((tRing + i) * tChunk)
	}
	r.b.Fill(addrs)
}

// batch is what a steady stream of 1000-byte frames across the cable
// needs, n at a time, allocated once.
type batch struct {
	descs, recv []xdp.Desc
	addrs       []uint64
}

// newBatch gives b n receive frames and returns the batch that moves n
// frames across.
func (r *rig) newBatch(n int) *batch {
	bt := &batch{descs: make([]xdp.Desc, n), recv: make([]xdp.Desc, n), addrs: make([]uint64, n)}
	for i := range bt.descs {
		bt.descs[i] = xdp.Desc{Addr: uint64(i * tChunk), Len: 1000}
	}
	r.fill(n)
	return bt
}

// cross moves the batch across: transmit, kick, complete, receive, and
// give b its frames back.
func (r *rig) cross(bt *batch) {
	r.a.Transmit(bt.descs)
	_ = r.a.Kick()
	r.a.Complete(bt.addrs)
	k := r.b.Receive(bt.recv)
	for j := range k {
		bt.addrs[j] = bt.recv[j].Addr &^ (tChunk - 1)
	}
	r.b.Fill(bt.addrs[:k])
}

// send sends n frames from a, frame i of length 60+i whose first byte is
// seq+i, and kicks.
func (r *rig) send(t testing.TB, seq byte, n int) {
	descs := make([]xdp.Desc, n)
	for i := range descs {
		a := uint64(i * tChunk)
		l := 60 + i
		for j := range l {
			r.amem[a+uint64(j)] = seq + byte(i)
		}
		descs[i] = xdp.Desc{Addr: a, Len: uint32(l)}
	}
	if got := r.a.Transmit(descs); got != n {
		t.Fatalf("Transmit took %d of %d", got, n)
	}
	if err := r.a.Kick(); err != nil {
		t.Fatal(err)
	}
	comp := make([]uint64, tRing)
	if got := r.a.Complete(comp); got != n {
		t.Fatalf("completed %d of %d", got, n)
	}
}

// A kick moves frames into b's fill frames, 256 bytes in, intact, and
// tells b's worker; a's frames complete at once.
func TestPatchDelivers(t *testing.T) {
	r := newRig(t)
	r.fill(4)
	r.send(t, 10, 4)
	var d [8]xdp.Desc
	n := r.b.Receive(d[:])
	if n != 4 || r.notified != 1 {
		t.Fatalf("received %d frames, notified %d times; want 4, 1", n, r.notified)
	}
	for i, x := range d[:n] {
		if x.Addr%tChunk != Headroom || x.Len != uint32(60+i) {
			t.Errorf("frame %d at %d, %d bytes; want offset %d, %d bytes", i, x.Addr, x.Len, Headroom, 60+i)
		}
		if !bytes.Equal(r.bmem[x.Addr:x.Addr+uint64(x.Len)], bytes.Repeat([]byte{10 + byte(i)}, int(x.Len))) {
			t.Errorf("frame %d damaged", i)
		}
	}
	c := r.b.Counters()
	if c.RX != 4 || c.Redirect != 4 || c.RxDropped+c.RxRingFull+c.Loss+c.Down != 0 {
		t.Errorf("counters %+v", c)
	}
	if r.a.TxFree() != tRing {
		t.Errorf("TxFree %d after completion, want %d", r.a.TxFree(), tRing)
	}
}

// A frame waits on the receiving ring until it is due there: its Options
// (its arrival in the model) less the sender's lead (SetLead). ReceiveBy
// takes the frames due by its time, in order, and stops at the first due
// later, across the 2^32 ns wrap; a frame that carries no time (Options
// 0) is due at once. The receiver's notification says when the kick's
// first frame is due; Receive takes every frame, due or not.
func TestPatchHoldsFramesUntilDue(t *testing.T) {
	r := newRig(t)
	var dues []uint32
	r.b.SetNotifyAt(func(due uint32) { dues = append(dues, due) })
	r.fill(8)
	r.a.SetLead(300)
	base := uint32(1<<32 - 1000) // the stamps wrap past 2^32
	stamps := []uint32{base + 500, base + 1500, base + 2500, 0}
	for i, o := range stamps {
		r.a.Transmit([]xdp.Desc{{Addr: uint64(i * tChunk), Len: 60, Options: o}})
	}
	if err := r.a.Kick(); err != nil {
		t.Fatal(err)
	}
	if len(dues) != 1 || dues[0] != base+200 {
		t.Fatalf("notified of dues %v, want [%d]", dues, base+200)
	}
	if due, ok := r.b.Head(); !ok || due != base+200 {
		t.Fatalf("Head = %d, %v; want %d, true", due, ok, base+200)
	}
	var d [8]xdp.Desc
	for _, step := range []struct {
		by   uint32
		want []uint32 // the Options of what is taken
	}{
		{base + 199, nil},
		{base + 200, []uint32{base + 500}},
		{base + 1100, nil},
		{base + 2300, []uint32{base + 1500, base + 2500, 0}}, // past the wrap; the untimed frame follows at once
	} {
		n := r.b.ReceiveBy(d[:], step.by)
		var got []uint32
		for _, x := range d[:n] {
			got = append(got, x.Options)
		}
		if !slices.Equal(got, step.want) {
			t.Fatalf("ReceiveBy(%d) took %v, want %v", step.by, got, step.want)
		}
	}
	if _, ok := r.b.Head(); ok {
		t.Fatal("Head reports a frame after all were taken")
	}
	r.a.SetLead(0)
	r.a.Transmit([]xdp.Desc{{Addr: 0, Len: 60, Options: base + 9000}})
	_ = r.a.Kick()
	if n := r.b.Receive(d[:]); n != 1 || d[0].Options != base+9000 {
		t.Fatalf("Receive took %d frames (%+v), want the one not yet due", n, d[0])
	}
}

// The receive side counts as the kernel's veth, XDP program and socket
// would: down and loss first (program), then a full receive ring
// (rx_ring_full) and no fill frame (rx_dropped, rx_fill_ring_empty).
func TestPatchDropsCountAsTheKernel(t *testing.T) {
	t.Run("fill empty", func(t *testing.T) {
		r := newRig(t)
		r.fill(2)
		r.send(t, 0, 5)
		c := r.b.Counters()
		if c.RX != 5 || c.Redirect != 5 || c.RxDropped != 3 || c.RxFillRingEmpty != 3 || c.RxRingFull != 0 {
			t.Errorf("counters %+v", c)
		}
	})
	t.Run("ring full", func(t *testing.T) {
		r := newRig(t)
		r.fill(tRing)
		r.send(t, 0, tRing)
		// The ring holds tRing frames nobody took; refill and send again.
		addrs := []uint64{uint64(0)}
		r.b.Fill(addrs)
		r.send(t, 0, 2)
		c := r.b.Counters()
		if c.RX != tRing+2 || c.RxRingFull != 2 || c.RxDropped != 0 {
			t.Errorf("counters %+v", c)
		}
	})
	t.Run("down", func(t *testing.T) {
		r := newRig(t)
		r.fill(4)
		r.b.SetImpairment(0, true)
		r.send(t, 0, 4)
		c := r.b.Counters()
		if c.RX != 4 || c.Down != 4 || c.Redirect != 0 || r.notified != 0 {
			t.Errorf("counters %+v, notified %d", c, r.notified)
		}
		r.b.SetImpairment(0, false)
		r.send(t, 0, 4)
		var d [8]xdp.Desc
		if n := r.b.Receive(d[:]); n != 4 {
			t.Errorf("received %d after the link came up, want 4", n)
		}
	})
	t.Run("loss", func(t *testing.T) {
		r := newRig(t)
		r.b.SetImpairment(250_000, false)
		var d [tRing]xdp.Desc
		lost := 0
		const rounds = 2000
		for range rounds {
			r.fill(8)
			r.send(t, 0, 8)
			n := r.b.Receive(d[:])
			lost += 8 - n
		}
		c := r.b.Counters()
		if c.Loss != uint64(lost) || c.RX != 8*rounds || c.Redirect != c.RX-c.Loss {
			t.Errorf("counters %+v, lost %d", c, lost)
		}
		if share := float64(lost) / (8 * rounds); share < 0.23 || share > 0.27 {
			t.Errorf("lost %.3f of the frames at 25%%", share)
		}
	})
}

// An end receives only while its engine is on a worker (SetNotify), and
// a panel pairs ends by cable name, lets one be replaced, and refuses a
// third.
func TestPanelPlugUnplug(t *testing.T) {
	p := NewPanel()
	amem, bmem := make([]byte, 2*tRing*tChunk), make([]byte, 2*tRing*tChunk)
	a, err := p.Plug("h0:eth0-s0.0:p0", amem, tChunk, tRing)
	if err != nil {
		t.Fatal(err)
	}
	send := func() {
		a.Transmit([]xdp.Desc{{Addr: 0, Len: 60}})
		_ = a.Kick()
		var c [4]uint64
		a.Complete(c[:])
	}
	send()
	if a.Counters().NoPeer != 1 {
		t.Fatalf("a frame without a peer: %+v", a.Counters())
	}
	b, err := p.Plug("h0:eth0-s0.0:p0", bmem, tChunk, tRing)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Plug("h0:eth0-s0.0:p0", bmem, tChunk, tRing); !errors.Is(err, ErrCableFull) {
		t.Fatalf("a third end: %v", err)
	}
	b.Fill([]uint64{tChunk})
	send()
	if c := b.Counters(); c.RX != 0 || a.Counters().NoPeer != 2 {
		t.Fatalf("an end not on a worker received: %+v", c)
	}
	b.SetNotify(func() {})
	send()
	if c := b.Counters(); c.Redirect != 1 {
		t.Fatalf("a live end: %+v", c)
	}
	b.SetNotify(nil)
	b.Unplug()
	b2, err := p.Plug("h0:eth0-s0.0:p0", bmem, tChunk, tRing)
	if err != nil {
		t.Fatalf("plug after unplug: %v", err)
	}
	b2.SetNotify(func() {})
	b2.Fill([]uint64{tChunk})
	send()
	if c := b2.Counters(); c.Redirect != 1 {
		t.Fatalf("the new end: %+v", c)
	}
	a.Unplug()
	b2.Unplug()
	if len(p.cables) != 0 {
		t.Errorf("%d cables left after both ends left", len(p.cables))
	}
}

type writes struct{ frames [][]byte }

func (w *writes) WriteFrame(b []byte) error {
	w.frames = append(w.frames, append([]byte(nil), b...))
	return nil
}

// While a's port is captured, every frame it sends is written through its
// veth; while only b's is, those b received.
func TestPatchMirrorsForCaptures(t *testing.T) {
	r := newRig(t)
	w := &writes{}
	r.a.SetMirror(w)
	r.fill(8)
	r.send(t, 0, 2)
	if len(w.frames) != 0 {
		t.Fatalf("%d copies without a capture", len(w.frames))
	}
	r.a.SetTapped(true)
	r.b.SetImpairment(0, true)
	r.send(t, 0, 2)
	if len(w.frames) != 2 {
		t.Fatalf("%d copies with the sender captured, want 2 (lost ones too)", len(w.frames))
	}
	r.a.SetTapped(false)
	r.b.SetTapped(true)
	r.send(t, 0, 2)
	if len(w.frames) != 2 {
		t.Fatalf("%d copies of frames b never received", len(w.frames)-2)
	}
	r.b.SetImpairment(0, false)
	r.send(t, 0, 3)
	if len(w.frames) != 5 || r.a.Counters().Mirrored != 5 {
		t.Fatalf("%d copies with the receiver captured, want 5", len(w.frames))
	}
}

// Moving frames across allocates nothing.
func TestPatchZeroAllocs(t *testing.T) {
	r := newRig(t)
	bt := r.newBatch(8)
	allocs := testing.AllocsPerRun(1000, func() { r.cross(bt) })
	if allocs != 0 {
		t.Errorf("%v allocations per batch, want 0", allocs)
	}
}

// BenchmarkPatchFrame is one 1000-byte frame's way across, in batches of
// 8: transmit, kick (copy), complete, receive, refill.
func BenchmarkPatchFrame(b *testing.B) {
	r := newRig(b)
	const n = 8
	bt := r.newBatch(n)
	b.ReportAllocs()
	b.SetBytes(1000)
	for i := 0; i < b.N; i += n {
		r.cross(bt)
	}
}

// BenchmarkPatchFrameCold is BenchmarkPatchFrame with frames that waited:
// each batch is sent from chunks spread over 256 MiB of the sender's
// memory, as a lab's frames leave from queues and delay lines where they
// sat for milliseconds, long out of the CPU's caches. The copy then
// costs what reading the frame from memory costs.
func BenchmarkPatchFrameCold(b *testing.B) {
	r := newRig(b)
	const n = 8
	bt := r.newBatch(n)
	big := make([]byte, 256<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	r.a.mem = big
	chunks := uint64(len(big) / tChunk)
	x := uint64(88172645463325252)
	b.ReportAllocs()
	b.SetBytes(1000)
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		for j := range bt.descs {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			bt.descs[j].Addr = (x % chunks) * tChunk
		}
		r.cross(bt)
	}
}
