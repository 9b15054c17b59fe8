package patch

// A copier writes the copies a panel's cables make for captures off the
// worker's thread. Writing a copy is a packet-socket write on the
// cable's veth, and the kernel does the whole of that veth's transmit
// and of its peer's receive (the XDP program, the taps) inside the call:
// several microseconds a frame. The worker thread, which steps every node
// of the panel, paid them in its kicks, and a captured port lost link
// time to them. With a copier the kick only copies the frame into a slab:
//
//  1. a kick (the worker's thread, the only producer) copies each frame
//     into the slab and queues {writer, place, length};
//  2. the copier's goroutine, locked to a thread of its own at the lowest
//     priority, wakes every CopyPoll while some end is captured, writes
//     what is queued in order through its writers and frees the room;
//  3. a snapshot of a node's counters (Mark, on the worker's thread)
//     queues a marker, which the copier stamps with the time it reached
//     it (Stamp): every copy queued before the marker was written before
//     that time, and every copy queued after it later. A capture's tally
//     compares the counters with the frames whose timestamps fall on
//     either side of that time.
//
// Copies keep their order (one queue, one writer thread), and the worker
// never waits: a copy that finds the queue full is dropped and counted
// (Counters.MirrorDropped). The queue holds CopySlab bytes, which at
// 50 Mb/s each way is 330 ms of a captured cable's frames, over 300 of the
// copier's polls; the lab's runs measure the drops (none).

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// CopySlab is the bytes of frames a copier's queue holds.
	CopySlab = 4 << 20
	// copyEntries bounds the copies (and markers) queued at once.
	copyEntries = 1 << 15
	// CopyPoll is how often the copier looks for copies while a capture
	// runs: what a copy's timestamp lags the frame by, at most, when its
	// thread gets a CPU at once.
	CopyPoll = time.Millisecond
	// copyAlign rounds every copy's room in the slab.
	copyAlign = 64
	marks     = 64
)

// copyEntry is one queued copy, or a marker (w nil).
type copyEntry struct {
	w    FrameWriter
	from *End   // the end whose counters the write counts in
	pos  uint64 // where the copy starts in the slab, unwrapped
	end  uint64 // where its room ends, unwrapped
	n    uint32
	mark uint64
}

// Copier writes a panel's capture copies on a thread of its own (see the
// top of the file). One goroutine (the worker's) produces; the copier's
// goroutine consumes. Start and Close from any goroutine.
type Copier struct {
	slab []byte
	q    ring[copyEntry]
	// head is where the next copy goes in the slab (the producer's);
	// tail is what the copier has written and freed (the copier's).
	head uint64
	tail atomic.Uint64
	seq  uint64 // the last marker's number (the producer's)

	// active counts the captured ends; while it is 0 the copier sleeps
	// until woken, else it polls.
	active atomic.Int32
	parked atomic.Bool // the copier may block until woken
	wake   chan struct{}

	stamps [marks]struct {
		seq atomic.Uint64
		ns  atomic.Int64
	}

	once    sync.Once
	mu      sync.Mutex
	stop    chan struct{}
	done    chan struct{}
	started bool
	running atomic.Bool // the queue exists
}

// NewCopier returns a copier. Its queue and goroutine come with the
// first capture (Start): a worker whose ports are never captured spends
// neither memory nor wake-ups on it.
func NewCopier() *Copier {
	return &Copier{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// Start makes the queue and starts the copier's goroutine, once. The
// producer may queue once it returned.
func (c *Copier) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return
	}
	c.started = true
	c.slab, c.q = make([]byte, CopySlab), newRing[copyEntry](copyEntries)
	c.running.Store(true)
	go c.run()
}

// Close writes what is queued and stops the copier's goroutine.
func (c *Copier) Close() {
	c.mu.Lock()
	started := c.started
	c.started = true // no Start after Close
	c.mu.Unlock()
	c.once.Do(func() { close(c.stop) })
	if started {
		<-c.done
	}
}

// capture says that one more (on) or one fewer end is captured.
func (c *Copier) capture(on bool) {
	if on {
		c.active.Add(1)
		c.Start()
	} else {
		c.active.Add(-1)
	}
	c.poke()
}

// poke wakes the copier if it may be asleep.
func (c *Copier) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// put queues a copy of b to be written through w, counted at from; false
// if the queue is full (the producer's).
func (c *Copier) put(w FrameWriter, from *End, b []byte) bool {
	n := uint64(len(b))
	pos := c.head
	if off := pos % CopySlab; off+n > CopySlab {
		pos += CopySlab - off // no room before the slab's end: start over at its beginning
	}
	end := (pos + n + copyAlign - 1) &^ (copyAlign - 1)
	if end-c.tail.Load() > CopySlab || c.q.free() == 0 {
		return false
	}
	off := pos % CopySlab
	copy(c.slab[off:off+n], b)
	c.q.entries[c.q.prod.Load()&c.q.mask] = copyEntry{w: w, from: from, pos: pos, end: end, n: uint32(n)}
	c.q.prod.Add(1)
	c.head = end
	if c.parked.Load() || c.q.used() > len(c.q.entries)/2 || end-c.tail.Load() > CopySlab/2 {
		c.poke()
	}
	return true
}

// Mark queues a marker and returns its number, or 0 when no copy is
// queued and no end captured (no copy written before or after it needs
// telling apart) or the queue is full. Call it on the producer's
// goroutine, as the producer's counters are read.
func (c *Copier) Mark() uint64 {
	if !c.running.Load() || c.active.Load() == 0 && c.q.used() == 0 || c.q.free() == 0 {
		return 0
	}
	c.seq++
	c.q.entries[c.q.prod.Load()&c.q.mask] = copyEntry{end: c.head, mark: c.seq}
	c.q.prod.Add(1)
	if c.parked.Load() {
		c.poke()
	}
	return c.seq
}

// Stamp waits up to timeout for the copier to reach marker seq and
// returns the time (Unix ns) it did: copies queued before the marker
// were written before it, those queued after it later. No marker (0, or
// a nil copier) has no time.
func (c *Copier) Stamp(seq uint64, timeout time.Duration) (int64, bool) {
	if c == nil || seq == 0 {
		return 0, false
	}
	s := &c.stamps[seq%marks]
	deadline := time.Now().Add(timeout)
	for {
		switch got := s.seq.Load(); {
		case got == seq:
			ns := s.ns.Load()
			if s.seq.Load() == seq {
				return ns, true
			}
			return 0, false
		case got > seq:
			return 0, false // overwritten by later markers
		}
		if time.Now().After(deadline) {
			return 0, false
		}
		time.Sleep(CopyPoll / 4)
	}
}

// Flush waits up to timeout until every copy queued so far is written:
// before an end's writer closes.
func (c *Copier) Flush(timeout time.Duration) bool {
	if !c.running.Load() {
		return true
	}
	target := c.q.prod.Load()
	deadline := time.Now().Add(timeout)
	for int32(c.q.cons.Load()-target) < 0 {
		if time.Now().After(deadline) {
			return false
		}
		c.poke()
		time.Sleep(CopyPoll / 4)
	}
	return true
}

// run is the copier's goroutine.
func (c *Copier) run() {
	defer close(c.done)
	// The thread is the copier's alone and runs at the lowest priority,
	// so that a worker thread waking up on its CPU takes it at once. It
	// ends with the goroutine (the goroutine never unlocks it).
	runtime.LockOSThread()
	lowerPriority()
	t := time.NewTimer(CopyPoll)
	defer t.Stop()
	for {
		c.drain()
		if c.active.Load() == 0 {
			// Sleep until woken; the producer pokes a parked copier
			// whenever it queues, so check once more after parking.
			c.parked.Store(true)
			if c.q.used() == 0 {
				select {
				case <-c.wake:
				case <-c.stop:
					c.drain()
					return
				}
			}
			c.parked.Store(false)
			continue
		}
		t.Reset(CopyPoll)
		select {
		case <-c.wake:
		case <-t.C:
		case <-c.stop:
			c.drain()
			return
		}
	}
}

// drain writes what is queued, in order, and stamps the markers.
func (c *Copier) drain() {
	for {
		cons, prod := c.q.cons.Load(), c.q.prod.Load()
		if cons == prod {
			return
		}
		for ; cons != prod; cons++ {
			e := &c.q.entries[cons&c.q.mask]
			if e.w == nil {
				s := &c.stamps[e.mark%marks]
				s.ns.Store(time.Now().UnixNano())
				s.seq.Store(e.mark)
			} else {
				off := e.pos % CopySlab
				e.from.count(e.w.WriteFrame(c.slab[off : off+uint64(e.n)]))
			}
			e.w, e.from = nil, nil
			c.tail.Store(e.end)
			c.q.cons.Store(cons + 1)
		}
	}
}
