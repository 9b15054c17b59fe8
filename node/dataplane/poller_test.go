package dataplane

import (
	"slices"
	"testing"
	"time"
)

// countingPoller is a kernel poller that reports fixed tokens and counts
// how often it is asked.
type countingPoller struct {
	fds   map[int]int32
	ready []int32
	waits []time.Duration
}

func (k *countingPoller) Add(fd int, token int32) error { k.fds[fd] = token; return nil }
func (k *countingPoller) Remove(fd int) error           { delete(k.fds, fd); return nil }
func (k *countingPoller) Wake()                         {}
func (k *countingPoller) Close() error                  { return nil }
func (k *countingPoller) Wait(timeout time.Duration, ready []int32) ([]int32, error) {
	k.waits = append(k.waits, timeout)
	return append(ready, k.ready...), nil
}

// fdIO is a port with a file descriptor; peekIO one whose ring can be read
// in memory as well.
type fdIO struct {
	PortIO
	fd int
}

func (f *fdIO) FD() int { return f.fd }

type peekIO struct {
	fdIO
	pending bool
}

func (p *peekIO) RxPending() bool { return p.pending }

// A look that does not block reads the rings it can in memory and asks
// the kernel only when a port cannot be read so; a sleep always asks the
// kernel.
func TestPollerPeeksWithoutSyscalls(t *testing.T) {
	k := &countingPoller{fds: map[int]int32{}}
	p := &poller{k: k}
	a, b := &peekIO{fdIO: fdIO{fd: 3}}, &peekIO{fdIO: fdIO{fd: 4}}
	for i, io := range []PortIO{a, b} {
		if err := p.watch(io, int32(10+i), false); err != nil {
			t.Fatal(err)
		}
	}
	b.pending = true
	got, err := p.wait(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int32{11}) || len(k.waits) != 0 {
		t.Errorf("non-blocking look: ready %v, kernel asked %d times; want [11] and none", got, len(k.waits))
	}
	// A port that calls back is seen without the kernel too.
	p.mark(12)
	if got, _ = p.wait(0, nil); !slices.Equal(got, []int32{11, 12}) || len(k.waits) != 0 {
		t.Errorf("with a notification: ready %v, kernel asked %d times", got, len(k.waits))
	}
	// A sleep asks the kernel, and not the rings.
	k.ready = []int32{10}
	if got, _ = p.wait(time.Millisecond, nil); !slices.Equal(got, []int32{10}) || len(k.waits) != 1 || k.waits[0] != time.Millisecond {
		t.Errorf("sleep: ready %v, kernel asked %v", got, k.waits)
	}
	// A file-descriptor port whose ring cannot be read: non-blocking
	// looks ask the kernel again, until it is gone.
	c := &fdIO{fd: 5}
	if err := p.watch(c, 13, false); err != nil {
		t.Fatal(err)
	}
	k.ready, k.waits = []int32{13}, nil
	if got, _ = p.wait(0, nil); !slices.Equal(got, []int32{11, 13}) || len(k.waits) != 1 || k.waits[0] != 0 {
		t.Errorf("with an unpeekable port: ready %v, kernel asked %v", got, k.waits)
	}
	for _, io := range []PortIO{c, b} {
		if err := p.unwatch(io); err != nil {
			t.Fatal(err)
		}
	}
	k.ready, k.waits = nil, nil
	a.pending = true
	if got, _ = p.wait(0, nil); !slices.Equal(got, []int32{10}) || len(k.waits) != 0 {
		t.Errorf("after unwatch: ready %v, kernel asked %v", got, k.waits)
	}
	if len(k.fds) != 1 {
		t.Errorf("kernel still watches %v", k.fds)
	}
}

// A busy worker's looks read the rings at most every PeekEvery; the
// notifying ports' list at every look.
func TestPollerLooksAtRingsEveryPeekEvery(t *testing.T) {
	k := &countingPoller{fds: map[int]int32{}}
	p := &poller{k: k}
	a := &peekIO{fdIO: fdIO{fd: 3}, pending: true}
	if err := p.watch(a, 10, false); err != nil {
		t.Fatal(err)
	}
	every := int64(PeekEvery)
	now := 10 * every
	if got, _ := p.look(now, nil); !slices.Equal(got, []int32{10}) {
		t.Errorf("first look: %v", got)
	}
	p.mark(11)
	if got, _ := p.look(now+every-1, nil); !slices.Equal(got, []int32{11}) {
		t.Errorf("look within PeekEvery: %v, want only the notification", got)
	}
	if got, _ := p.look(now+every, nil); !slices.Equal(got, []int32{10}) {
		t.Errorf("look after PeekEvery: %v, want the ring's port", got)
	}
	if len(k.waits) != 0 {
		t.Errorf("looks asked the kernel: %v", k.waits)
	}
	// A port the worker cannot read in memory: every look asks the kernel.
	if err := p.watch(&fdIO{fd: 4}, 12, false); err != nil {
		t.Fatal(err)
	}
	p.look(now+every+1, nil)
	p.look(now+every+2, nil)
	if len(k.waits) != 2 {
		t.Errorf("with an unpeekable port, two looks asked the kernel %d times", len(k.waits))
	}
}

// A worker that has not slept for DisarmAfter takes the ports whose rings
// it reads in memory out of the kernel poller, still finds their frames,
// and puts them back before it sleeps; a port it cannot read so stays in.
func TestPollerDisarmsWhileBusy(t *testing.T) {
	k := &countingPoller{fds: map[int]int32{}}
	p := &poller{k: k}
	a, c := &peekIO{fdIO: fdIO{fd: 3}}, &fdIO{fd: 5}
	if err := p.watch(a, 10, false); err != nil {
		t.Fatal(err)
	}
	if err := p.watch(c, 12, false); err != nil {
		t.Fatal(err)
	}
	watched := func(fds ...int) bool {
		if len(k.fds) != len(fds) {
			return false
		}
		for _, fd := range fds {
			if _, ok := k.fds[fd]; !ok {
				return false
			}
		}
		return true
	}
	busy := int64(DisarmAfter)
	start := 7 * busy
	for now := start; now < start+busy; now += int64(PeekEvery) {
		if _, err := p.look(now, nil); err != nil {
			t.Fatal(err)
		}
	}
	if !watched(3, 5) || p.disarms != 0 {
		t.Fatalf("busy for less than DisarmAfter: kernel watches %v, %d disarms", k.fds, p.disarms)
	}
	if _, err := p.look(start+busy, nil); err != nil {
		t.Fatal(err)
	}
	if !watched(5) || p.disarms != 1 {
		t.Fatalf("busy for DisarmAfter: kernel watches %v, %d disarms; want only the unpeekable port, 1", k.fds, p.disarms)
	}
	a.pending = true
	if got, _ := p.look(start+busy+int64(PeekEvery), nil); !slices.Contains(got, 10) {
		t.Errorf("disarmed: look %v misses the ring's frames", got)
	}
	// A port added while disarmed joins at the next arming.
	b := &peekIO{fdIO: fdIO{fd: 4}}
	if err := p.watch(b, 11, false); err != nil {
		t.Fatal(err)
	}
	if !watched(5) {
		t.Errorf("a port watched while disarmed went into the kernel poller: %v", k.fds)
	}
	if _, err := p.wait(time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	if !watched(3, 4, 5) {
		t.Fatalf("a sleep did not arm every port: kernel watches %v", k.fds)
	}
	// After a sleep the busy time counts afresh.
	later := start + 10*busy
	p.look(later, nil)
	p.look(later+busy-1, nil)
	if !watched(3, 4, 5) {
		t.Errorf("disarmed before DisarmAfter of work since the sleep: %v", k.fds)
	}
	p.look(later+busy, nil)
	if !watched(5) || p.disarms != 2 {
		t.Errorf("second busy stretch: kernel watches %v, %d disarms", k.fds, p.disarms)
	}
	// Unwatching a disarmed port is fine, and it stays out.
	if err := p.unwatch(a); err != nil {
		t.Fatal(err)
	}
	if _, err := p.wait(-1, nil); err != nil {
		t.Fatal(err)
	}
	if !watched(4, 5) {
		t.Errorf("after unwatch and a sleep: kernel watches %v", k.fds)
	}
}
