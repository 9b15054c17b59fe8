package xdp

import (
	"sync/atomic"
	"testing"
	"unsafe"
)

// The ring tests play the kernel's side on ordinary memory laid out as the
// kernel lays out a ring: producer, consumer and flags words on separate
// cache lines, then the entries.
var fakeOffsets = ringOffsets{Producer: 0, Consumer: 64, Flags: 128, Desc: 192}

func fakeMem(n int, size uintptr) []byte {
	// A []uint64 backing keeps the entries 8-byte aligned.
	words := make([]uint64, (ringSize(fakeOffsets, n, size)+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
}

// fakeKernel holds the kernel's view of a ring: its index words and its
// entries.
type fakeKernel[T uint64 | Desc] struct {
	producer, consumer, flags *atomic.Uint32
	entries                   []T
}

// fakeRing returns a ring of n entries on ordinary memory, user space at
// end, and the kernel's view of it.
func fakeRing[T uint64 | Desc](n int, end ringEnd) (*ring[T], fakeKernel[T]) {
	mem := fakeMem(n, unsafe.Sizeof(*new(T)))
	q := new(ring[T])
	q.init(mem, fakeOffsets, n, end)
	p, c, f := ringWords(mem, fakeOffsets)
	return q, fakeKernel[T]{p, c, f, ringEntries[T](mem, fakeOffsets, n)}
}

func TestFillQueue(t *testing.T) {
	const n = 8
	q, k := fakeRing[uint64](n, produces)
	ring := k.entries

	next := uint64(0) // next address user space posts
	seen := uint64(0) // next address the kernel expects
	post := func(want, got int) {
		t.Helper()
		addrs := make([]uint64, want)
		for i := range addrs {
			addrs[i] = next + uint64(i)
		}
		if m := q.produce(addrs); m != got {
			t.Fatalf("produce(%d) = %d, want %d", want, m, got)
		}
		next += uint64(got)
		if p := k.producer.Load(); p != uint32(next) {
			t.Fatalf("producer %d, want %d", p, next)
		}
	}
	take := func(m int) {
		t.Helper()
		c := k.consumer.Load()
		for i := range uint32(m) {
			if a := ring[(c+i)%n]; a != seen {
				t.Fatalf("kernel read %d, want %d", a, seen)
			}
			seen++
		}
		k.consumer.Store(c + uint32(m))
	}

	post(5, 5)
	post(5, 3) // full
	post(1, 0)
	if f := q.free(n); f != 0 {
		t.Fatalf("free = %d, want 0", f)
	}
	take(6)
	post(7, 6) // wraps
	take(8)
	for range 100 { // indices wrap many times
		post(3, 3)
		take(3)
	}
	if f := q.free(n); f != n {
		t.Fatalf("free = %d on an empty ring, want %d", f, n)
	}
}

func TestTxQueue(t *testing.T) {
	const n = 4
	q, k := fakeRing[Desc](n, produces)
	ring := k.entries

	descs := []Desc{{Addr: 1, Len: 10}, {Addr: 2, Len: 20}, {Addr: 3, Len: 30}, {Addr: 4, Len: 40}, {Addr: 5, Len: 50}}
	if m := q.produce(descs); m != n {
		t.Fatalf("produce = %d, want %d", m, n)
	}
	if u := q.unconsumed(); u != n {
		t.Fatalf("unconsumed = %d, want %d", u, n)
	}
	if ring[0] != descs[0] || ring[3] != descs[3] {
		t.Fatalf("ring %v", ring)
	}
	k.consumer.Store(2)
	if u := q.unconsumed(); u != 2 {
		t.Fatalf("unconsumed = %d, want 2", u)
	}
	if m := q.produce(descs[4:]); m != 1 || ring[0] != descs[4] {
		t.Fatalf("produce = %d, ring %v", m, ring)
	}
}

func TestRxQueue(t *testing.T) {
	const n = 8
	q, k := fakeRing[Desc](n, consumes)
	ring := k.entries

	var written, read uint32
	write := func(m int) {
		p := k.producer.Load()
		for i := range uint32(m) {
			ring[(p+i)%n] = Desc{Addr: uint64(written), Len: written}
			written++
		}
		k.producer.Store(p + uint32(m))
	}
	recv := func(max, want int) {
		t.Helper()
		descs := make([]Desc, max)
		m := q.consume(descs)
		if m != want {
			t.Fatalf("consume(%d) = %d, want %d", max, m, want)
		}
		for _, d := range descs[:m] {
			if d.Addr != uint64(read) {
				t.Fatalf("got desc %d, want %d", d.Addr, read)
			}
			read++
		}
		if c := k.consumer.Load(); c != read {
			t.Fatalf("consumer %d, want %d", c, read)
		}
	}
	recv(4, 0)
	write(5)
	recv(3, 3)
	recv(8, 2)
	write(8) // full ring, wrapping
	recv(8, 8)
	for range 100 {
		write(7)
		recv(4, 4)
		recv(4, 3)
	}
}

func TestCompletionQueue(t *testing.T) {
	const n = 4
	q, k := fakeRing[uint64](n, consumes)
	ring := k.entries

	for round := range uint64(10) {
		p := k.producer.Load()
		for i := range uint32(3) {
			ring[(p+i)%n] = round*10 + uint64(i)
		}
		k.producer.Store(p + 3)
		addrs := make([]uint64, 8)
		if m := q.consume(addrs); m != 3 || addrs[0] != round*10 || addrs[2] != round*10+2 {
			t.Fatalf("round %d: consume = %d %v", round, m, addrs)
		}
	}
}

// benchRing moves 64 entries per iteration through a 1024-entry ring:
// user space posts them and the fake kernel takes them (end produces), or
// the fake kernel posts them and user space consumes them.
func benchRing[T uint64 | Desc](b *testing.B, end ringEnd) {
	const n = 1024
	q, k := fakeRing[T](n, end)
	batch := make([]T, 64)
	b.ReportAllocs()
	if end == produces {
		for b.Loop() {
			q.produce(batch)
			k.consumer.Add(64)
		}
		return
	}
	for b.Loop() {
		k.producer.Add(64)
		q.consume(batch)
	}
}

func BenchmarkFillQueue(b *testing.B)       { benchRing[uint64](b, produces) }
func BenchmarkRxQueue(b *testing.B)         { benchRing[Desc](b, consumes) }
func BenchmarkTxQueue(b *testing.B)         { benchRing[Desc](b, produces) }
func BenchmarkCompletionQueue(b *testing.B) { benchRing[uint64](b, consumes) }

func TestConfigValidate(t *testing.T) {
	good := DefaultUMEMConfig()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, mod := range []func(*UMEMConfig){
		func(c *UMEMConfig) { c.NumFrames = 0 },
		func(c *UMEMConfig) { c.FrameSize = 1024 },
		func(c *UMEMConfig) { c.FrameSize = 8192 },
		func(c *UMEMConfig) { c.Headroom = c.FrameSize - 256 },
		func(c *UMEMConfig) { c.Headroom = -1 },
		func(c *UMEMConfig) { c.FillSize = 0 },
		func(c *UMEMConfig) { c.CompletionSize = 3 },
	} {
		c := good
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	sgood := DefaultSocketConfig(1)
	if err := sgood.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, mod := range []func(*SocketConfig){
		func(c *SocketConfig) { c.Ifindex = 0 },
		func(c *SocketConfig) { c.QueueID = -1 },
		func(c *SocketConfig) { c.RxSize = 100 },
		func(c *SocketConfig) { c.TxSize = 0 },
		func(c *SocketConfig) { c.Mode = 7 },
	} {
		c := sgood
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
