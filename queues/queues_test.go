package queues

import (
	"math"
	"testing"
	"time"
)

func TestFIFO(t *testing.T) {
	if _, err := NewFIFO(3); err == nil {
		t.Fatal("capacity 3 accepted")
	}
	q, _ := NewFIFO(4)
	for i := 0; i < 4; i++ {
		if !q.Push(Packet{Addr: uint64(i), Len: 100}) {
			t.Fatalf("push %d refused", i)
		}
	}
	if q.Push(Packet{Len: 1}) || !q.Full() || q.Bytes() != 400 {
		t.Fatalf("full fifo: len %d bytes %d", q.Len(), q.Bytes())
	}
	// Wrap around several times, in order.
	for i := 0; i < 20; i++ {
		p, ok := q.Pop()
		if !ok || p.Addr != uint64(i) {
			t.Fatalf("pop %d = %v %v", i, p, ok)
		}
		q.Push(Packet{Addr: uint64(i + 4), Len: 100})
	}
	if q.Len() != 4 || q.Bytes() != 400 {
		t.Fatalf("len %d bytes %d", q.Len(), q.Bytes())
	}
}

// Over one second of virtual time a backlogged shaper sends within 0.1% of
// its rate, counting the wire overhead, for several rates and frame sizes.
func TestShaperRate(t *testing.T) {
	for _, rate := range []uint64{1e8, 1e9, 2.5e9, 1e10, 1e11} {
		for _, size := range []int{64, 1000, 1518} {
			s := NewShaper(rate, 50*time.Microsecond, 50*time.Microsecond)
			var now, bits int64
			const step = 10_000 // the datapath wakes every 10 us
			for now = 0; now < 1e9; now += step {
				for s.Ready(now) {
					s.Send(now, size)
					bits += int64(size+WireOverhead) * 8
				}
			}
			got := float64(bits) / 1.0
			if math.Abs(got-float64(rate))/float64(rate) > 0.001 {
				t.Errorf("rate %d size %d: %.0f bit/s", rate, size, got)
			}
		}
	}
}

func TestShaperIdleDoesNotAccumulate(t *testing.T) {
	s := NewShaper(1e9, 20*time.Microsecond, 20*time.Microsecond)
	s.Send(0, 1500)
	// After a long idle period only one burst may go at once.
	now := int64(time.Second)
	s.Restart(now)
	n := 0
	for s.Ready(now) {
		s.Send(now, 1500)
		n++
	}
	// 20 us at 1 Gb/s = 2500 bytes: the first frame plus what fits in the burst.
	if n < 1 || n > 3 {
		t.Fatalf("%d frames in one burst", n)
	}
	if at := s.ReadyAt(); at <= now {
		t.Fatalf("ReadyAt %d not after now %d", at, now)
	}
}

// A backlogged port served late (the daemon was descheduled) catches up
// on at most one burst of lost time, and its long-run rate stays exact.
func TestShaperCatchUp(t *testing.T) {
	const burst = 100 * time.Microsecond
	s := NewShaper(1e9, burst, burst)
	var now, bytes int64
	sent := func() {
		for s.Ready(now) {
			s.Send(now, 1476)
			bytes += 1500
		}
	}
	sent()
	bytes = 0
	now += int64(500 * time.Microsecond) // a stall of 500 us
	sent()
	// One burst ahead plus one burst of catch-up: 200 us at 1 Gb/s.
	if max := int64(2*burst/time.Microsecond) * 125; bytes > max+1500 || bytes < max-1500 {
		t.Fatalf("after a stall sent %d bytes at once, want about %d", bytes, max)
	}
	// Served every 75 us (WakeAt) for a second: exact rate.
	bytes = 0
	start := now
	for now < start+int64(time.Second) {
		now = s.WakeAt()
		sent()
	}
	got := float64(bytes*8) / (float64(now-start) / 1e9)
	if math.Abs(got-1e9)/1e9 > 0.01 {
		t.Fatalf("rate %.0f bit/s", got)
	}
}

func TestDelayLine(t *testing.T) {
	d, _ := NewDelayLine(8)
	d.Put(100_000, Packet{Addr: 1})
	d.Put(150_000, Packet{Addr: 2})
	d.Put(120_000, Packet{Addr: 3}) // due earlier, leaves after the one ahead
	if _, ok := d.Take(99_999); ok {
		t.Fatal("early")
	}
	if p, ok := d.Take(100_000); !ok || p.Addr != 1 {
		t.Fatal("first not due")
	}
	if due, _ := d.NextDue(); due != 150_000 {
		t.Fatalf("next due %d", due)
	}
	if _, ok := d.Take(149_999); ok {
		t.Fatal("second early")
	}
	for _, want := range []uint64{2, 3} {
		if p, ok := d.Take(150_000); !ok || p.Addr != want {
			t.Fatalf("got %v %v, want %d", p.Addr, ok, want)
		}
	}
}

// A frame's arrival in the model leaves the delay line with it, whatever
// its hold; Put's frames arrive when they are due.
func TestDelayLineArrival(t *testing.T) {
	d, _ := NewDelayLine(4)
	d.PutAt(100, 160, Packet{Addr: 1}) // a hold 60 ns short of the model's
	d.Put(200, Packet{Addr: 2})
	if _, _, ok := d.TakeAt(99); ok {
		t.Fatal("early")
	}
	for _, want := range []struct {
		now, at int64
		addr    uint64
	}{{100, 160, 1}, {200, 200, 2}} {
		p, at, ok := d.TakeAt(want.now)
		if !ok || p.Addr != want.addr || at != want.at {
			t.Fatalf("TakeAt(%d) = %d, at %d, %v; want %d at %d", want.now, p.Addr, at, ok, want.addr, want.at)
		}
	}
}

// A frame that reached an idle port late starts when it arrived, up to
// the catch-up bound before now; one that arrived ahead of its time
// starts then in the link's schedule: at once within the burst, else
// when the burst reaches it.
func TestShaperRestartAt(t *testing.T) {
	const rate = 1e9 // 8 ns a byte
	catchup := 100 * time.Microsecond
	ser := int64((1000 + WireOverhead) * 8)
	for _, tc := range []struct {
		name   string
		t, now int64
		start  int64
		ready  int64 // when it may leave
	}{
		{"on time", 1_000_000, 1_000_000, 1_000_000, 1_000_000},
		{"late", 1_000_000, 1_050_000, 1_000_000, 1_050_000},
		{"later than the bound", 1_000_000, 1_300_000, 1_200_000, 1_300_000},
		{"ahead, within the burst", 1_008_000, 1_000_000, 1_008_000, 1_000_000},
		{"ahead, beyond the burst", 1_020_000, 1_000_000, 1_020_000, 1_010_000},
	} {
		s := NewShaper(rate, 10*time.Microsecond, catchup)
		s.RestartAt(tc.t, tc.now)
		if got := s.ReadyAt(); max(got, tc.now) != tc.ready || !s.Ready(tc.ready) || (tc.ready > tc.now && s.Ready(tc.now)) {
			t.Errorf("%s: ready at %d, want %d", tc.name, max(got, tc.now), tc.ready)
		}
		s.Send(tc.ready, 1000)
		if got := s.Free(); got != tc.start+ser {
			t.Errorf("%s: the frame ends at %d, want %d", tc.name, got, tc.start+ser)
		}
		if lost := s.Lag().LostNs; lost != 0 {
			t.Errorf("%s: %d ns of link time lost on an idle link", tc.name, lost)
		}
	}
}

// A FIFO that empties starts again at its first slot, and keeps its
// order across the wrap it made before; a delay line's due times follow
// their frames through both.
func TestFIFORestartsWhenEmpty(t *testing.T) {
	q, _ := NewFIFO(4)
	for i := range 3 {
		q.Push(Packet{Addr: uint64(i), Len: 1})
	}
	q.Pop()
	q.Pop()
	q.Push(Packet{Addr: 3, Len: 1})
	q.Push(Packet{Addr: 4, Len: 1}) // wraps to slot 0
	for _, want := range []uint64{2, 3, 4} {
		if p, ok := q.Pop(); !ok || p.Addr != want {
			t.Fatalf("pop %d %v, want %d", p.Addr, ok, want)
		}
	}
	if q.head != 0 || q.tail != 0 || q.Len() != 0 || q.Bytes() != 0 {
		t.Fatalf("empty fifo at head %d tail %d, len %d, %d bytes; want slot 0", q.head, q.tail, q.Len(), q.Bytes())
	}
	d, _ := NewDelayLine(4)
	d.Put(10, Packet{Addr: 1})
	d.Put(20, Packet{Addr: 2})
	d.Take(10)
	d.Put(30, Packet{Addr: 3})
	d.Take(20)
	d.Take(30) // empty: restarts
	d.Put(40, Packet{Addr: 4})
	if due, ok := d.NextDue(); !ok || due != 40 {
		t.Fatalf("after a restart the head is due at %d (%v), want 40", due, ok)
	}
	if p, ok := d.Take(40); !ok || p.Addr != 4 {
		t.Fatalf("take %d %v, want frame 4", p.Addr, ok)
	}
}

// Free is the end of the last frame's serialisation: a store-and-forward
// link delivers it then.
func TestShaperFree(t *testing.T) {
	s := NewShaper(1e9, 0, 0)
	s.Send(1000, 1000-WireOverhead) // 1000 bytes on the wire: 8 µs at 1 Gb/s
	if got := s.Free(); got != 9000 {
		t.Fatalf("Free() = %d, want 9000", got)
	}
	s.Send(2000, 1000-WireOverhead) // starts when the link frees
	if got := s.Free(); got != 17000 {
		t.Fatalf("Free() = %d, want 17000", got)
	}
}

func BenchmarkFIFOPushPop(b *testing.B) {
	q, _ := NewFIFO(1024)
	b.ReportAllocs()
	for b.Loop() {
		q.Push(Packet{Len: 64})
		q.Pop()
	}
}

// A backlogged port served late reports it: the frame that starts after a
// 500 us stall is late by about the stall less the burst it may run
// ahead, and the link time beyond the catch-up bound is lost. A port
// served on time, or idle, reports nothing.
func TestShaperLag(t *testing.T) {
	const burst = 100 * time.Microsecond
	s := NewShaper(1e9, burst, burst)
	var now int64
	for s.Ready(now) {
		s.Send(now, 1476)
	}
	for range 1000 { // served on time (WakeAt)
		now = s.WakeAt()
		for s.Ready(now) {
			s.Send(now, 1476)
		}
	}
	if l := s.Lag(); l != (Lag{}) {
		t.Fatalf("served on time: %+v", l)
	}
	free := s.freePs / 1000
	now = free + int64(500*time.Microsecond)
	s.Send(now, 1476)
	l := s.Lag()
	late := now - int64(burst/time.Nanosecond) - free
	if l.LateFrames != 1 || l.MaxNs != late {
		t.Errorf("after a stall: %+v, want 1 late frame, %d ns late", l, late)
	}
	if lost := now - int64(burst/time.Nanosecond) - free; l.LostNs != lost {
		t.Errorf("lost %d ns of link time, want %d", l.LostNs, lost)
	}
	idle := NewShaper(1e9, burst, burst)
	idle.Restart(int64(time.Second))
	idle.Send(int64(time.Second), 1476)
	if l := idle.Lag(); l != (Lag{}) {
		t.Errorf("a frame on an idle port: %+v", l)
	}
}

// The queues of two egresses share one pool: any queue may take every
// slot, each keeps its own order, and slots freed by one are taken by
// another.
func TestPoolShared(t *testing.T) {
	pool, err := NewPool(8)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPool(0); err == nil {
		t.Fatal("empty pool accepted")
	}
	a, _ := NewEgress(EgressConfig{Queues: 2, HQ: -1, Pool: pool})
	b, _ := NewEgress(EgressConfig{Queues: 1, HQ: -1, Pool: pool})
	for i := 0; i < 6; i++ {
		if ok, _ := a.Enqueue(i%2, Packet{Addr: uint64(i), Len: 10}, 0); !ok {
			t.Fatalf("enqueue %d refused", i)
		}
	}
	for i := 0; i < 2; i++ {
		if ok, _ := b.Enqueue(0, Packet{Addr: uint64(100 + i), Len: 10}, 0); !ok {
			t.Fatalf("b enqueue %d refused", i)
		}
	}
	if ok, _ := b.Enqueue(0, Packet{Addr: 102, Len: 10}, 0); ok || pool.Len() != 8 {
		t.Fatalf("full pool took a packet (%d of %d used)", pool.Len(), pool.Cap())
	}
	var got []uint64
	for {
		p, _, ok := a.Dequeue(0)
		if !ok {
			break
		}
		got = append(got, p.Addr)
	}
	if len(got) != 6 || a.QueueLen(0) != 0 || pool.Len() != 2 {
		t.Fatalf("dequeued %v, pool %d used", got, pool.Len())
	}
	for i := 0; i < 6; i++ {
		if ok, _ := b.Enqueue(0, Packet{Addr: uint64(102 + i), Len: 10}, 0); !ok {
			t.Fatalf("b took only %d freed slots", i)
		}
	}
	for i := 0; i < 8; i++ {
		if p, _, ok := b.Dequeue(0); !ok || p.Addr != uint64(100+i) {
			t.Fatalf("b dequeue %d = %v %v", i, p.Addr, ok)
		}
	}
	if pool.Len() != 0 {
		t.Fatalf("%d slots still used", pool.Len())
	}
}

func BenchmarkPoolEnqueueDequeue(b *testing.B) {
	pool, _ := NewPool(4096)
	e, _ := NewEgress(EgressConfig{Queues: 8, HQ: 7, Pool: pool})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e.Enqueue(i&3, Packet{Len: 1000}, 0)
		e.Dequeue(0)
		i++
	}
}
