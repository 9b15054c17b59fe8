package patch

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bcfab/bcfab/xdp"
)

// lockedWrites records frames written on the copier's thread.
type lockedWrites struct {
	mu     sync.Mutex
	frames [][]byte
	at     []int64
}

func (w *lockedWrites) WriteFrame(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.frames = append(w.frames, append([]byte(nil), b...))
	w.at = append(w.at, time.Now().UnixNano())
	return nil
}

func (w *lockedWrites) snapshot() ([][]byte, []int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]byte(nil), w.frames...), append([]int64(nil), w.at...)
}

// panelRig is rig over a panel's cable: copies go through its copier.
func panelRig(t testing.TB) (*rig, *Panel) {
	p := NewPanel()
	r := &rig{amem: make([]byte, 2*tRing*tChunk), bmem: make([]byte, 2*tRing*tChunk)}
	var err error
	if r.a, err = p.Plug("c", r.amem, tChunk, tRing); err != nil {
		t.Fatal(err)
	}
	if r.b, err = p.Plug("c", r.bmem, tChunk, tRing); err != nil {
		t.Fatal(err)
	}
	r.a.SetNotify(func() {})
	r.b.SetNotify(func() { r.notified++ })
	t.Cleanup(func() {
		r.a.Unplug()
		r.b.Unplug()
		p.Close()
	})
	return r, p
}

// On a panel's cable the copies are written off the kick, every one, in
// order, intact; a marker is stamped after the copies queued before it
// were written and before those queued after it.
func TestCopierWritesInOrder(t *testing.T) {
	r, p := panelRig(t)
	w := &lockedWrites{}
	r.a.SetMirror(w)
	r.a.SetTapped(true)
	const rounds = 50
	var marks []uint64
	for i := range rounds {
		r.fill(4)
		r.send(t, byte(4*i), 4)
		for range 4 {
			var d [4]xdp.Desc
			if n := r.b.Receive(d[:]); n == 0 {
				break
			}
		}
		if i == rounds/2 {
			marks = append(marks, p.Copier().Mark())
		}
	}
	if !p.Copier().Flush(time.Second) {
		t.Fatal("copies not written within a second")
	}
	frames, at := w.snapshot()
	if len(frames) != 4*rounds {
		t.Fatalf("%d copies, want %d", len(frames), 4*rounds)
	}
	for i, f := range frames {
		if len(f) != 60+i%4 || !bytes.Equal(f, bytes.Repeat([]byte{byte(i)}, len(f))) {
			t.Fatalf("copy %d out of order or damaged: %d bytes, first %d", i, len(f), f[0])
		}
	}
	ns, ok := p.Copier().Stamp(marks[0], time.Second)
	if !ok {
		t.Fatal("marker not stamped")
	}
	before := 4 * (rounds/2 + 1)
	if at[before-1] > ns || at[before] < ns {
		t.Errorf("marker stamped at %d, copies %d and %d written at %d and %d", ns, before-1, before, at[before-1], at[before])
	}
	if c := r.a.Counters(); c.Mirrored != 4*rounds || c.MirrorDropped != 0 || c.MirrorErrors != 0 {
		t.Errorf("counters %+v", c)
	}
}

// No capture, no marker; a capture that ends leaves the copier asleep.
func TestCopierMarksOnlyWhileCaptured(t *testing.T) {
	r, p := panelRig(t)
	if m := p.Copier().Mark(); m != 0 {
		t.Fatalf("marker %d without a capture", m)
	}
	r.b.SetTapped(true)
	m := p.Copier().Mark()
	if _, ok := p.Copier().Stamp(m, time.Second); m == 0 || !ok {
		t.Fatalf("marker %d while captured not stamped", m)
	}
	r.b.SetTapped(false)
	if !p.Copier().Flush(time.Second) {
		t.Fatal("not flushed")
	}
	if m := p.Copier().Mark(); m != 0 {
		t.Fatalf("marker %d after the capture", m)
	}
}

// blockedWriter holds the copier until released.
type blockedWriter struct{ release chan struct{} }

func (w blockedWriter) WriteFrame([]byte) error { <-w.release; return nil }

// A copy that finds the queue full is dropped and counted; the kick
// never waits.
func TestCopierCountsDropsWhenFull(t *testing.T) {
	r, p := panelRig(t)
	w := blockedWriter{release: make(chan struct{})}
	r.a.SetMirror(w)
	r.a.SetTapped(true)
	frames := 0
	for frames < copyEntries+100 {
		r.fill(tRing)
		r.send(t, 0, tRing)
		var d [tRing]xdp.Desc
		r.b.Receive(d[:])
		frames += tRing
	}
	c := r.a.Counters()
	if c.MirrorDropped == 0 {
		t.Fatalf("no drops with a stuck copier: %+v", c)
	}
	close(w.release)
	if !p.Copier().Flush(5 * time.Second) {
		t.Fatal("not flushed")
	}
	c = r.a.Counters()
	if c.Mirrored+c.MirrorDropped != uint64(frames) {
		t.Errorf("written %d + dropped %d != %d sent", c.Mirrored, c.MirrorDropped, frames)
	}
}

// Queuing a capture's copies allocates nothing.
func TestCopierZeroAllocs(t *testing.T) {
	r, p := panelRig(t)
	w := &countWrites{}
	r.a.SetMirror(w)
	r.b.SetMirror(w)
	r.a.SetTapped(true)
	r.b.SetTapped(true)
	bt := r.newBatch(8)
	// (The copier's thread writes meanwhile: it must not allocate either,
	// as AllocsPerRun counts every goroutine's allocations.)
	allocs := testing.AllocsPerRun(200, func() {
		r.cross(bt)
		p.Copier().Mark()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per batch, want 0", allocs)
	}
	if !p.Copier().Flush(time.Second) || w.n.Load() == 0 {
		t.Errorf("%d copies written", w.n.Load())
	}
}

type countWrites struct{ n atomic.Uint64 }

func (w *countWrites) WriteFrame([]byte) error { w.n.Add(1); return nil }

// BenchmarkPatchFrameCaptured is BenchmarkPatchFrame with both ends
// captured: the kick also queues a copy of each frame for the copier,
// what a capture costs the worker's thread.
func BenchmarkPatchFrameCaptured(b *testing.B) {
	r, _ := panelRig(b)
	w := &countWrites{}
	r.a.SetMirror(w)
	r.a.SetTapped(true)
	r.b.SetTapped(true)
	const n = 8
	bt := r.newBatch(n)
	b.ReportAllocs()
	b.SetBytes(1000)
	b.ResetTimer() // not the copier's queue, made at the first capture
	for i := 0; i < b.N; i += n {
		r.cross(bt)
	}
	b.StopTimer()
	if c := r.a.Counters(); c.MirrorDropped > 0 {
		b.Logf("%d of %d copies dropped: the copier fell behind a kick loop with nothing else to do", c.MirrorDropped, c.Mirrored+c.MirrorDropped)
	}
}
