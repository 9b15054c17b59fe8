package dataplane

import (
	"os"
	"testing"
	"time"

	"github.com/bcfab/bcfab/xdp"
	"golang.org/x/sys/unix"
)

// slowForward forwards as forward does, after spinning for d per frame:
// a worker with frames waiting is busy for as long as they last.
type slowForward struct{ d time.Duration }

func (s slowForward) Handle(in int, d *xdp.Desc, v *Verdict) {
	for end := time.Now().Add(s.d); time.Now().Before(end); {
	}
	forward{}.Handle(in, d, v)
}

func threadPolicy(t *testing.T, tid int) uint32 {
	t.Helper()
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		t.Fatalf("sched_getattr of thread %d: %v", tid, err)
	}
	return attr.Policy
}

// A worker keeps time as a real-time thread; busy past YieldAfter
// without sleeping it becomes an ordinary thread until it next sleeps,
// and when Run returns its thread is an ordinary thread again.
func TestWorkerRealtime(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a real-time thread needs CAP_SYS_NICE: run as root")
	}
	// 64 frames of 200 us each: 12.8 ms without a sleep.
	c := newChainWith(t, 1, 0, WorkerOptions{Name: "rt"}, slowForward{200 * time.Microsecond})
	st := c.w.Stats()
	if st.Priority != DefaultPriority || st.PriorityError != "" {
		t.Fatalf("priority %d (%q), want %d", st.Priority, st.PriorityError, DefaultPriority)
	}
	if p := threadPolicy(t, st.Tid); p != unix.SCHED_FIFO {
		t.Fatalf("idle worker's thread: policy %d, want SCHED_FIFO", p)
	}
	// All at once, so that the worker finds them in one wake-up.
	var batch [tRing]xdp.Desc
	for i := range batch {
		batch[i] = xdp.Desc{Addr: c.free[i], Len: 200}
	}
	c.free = c.free[:0]
	if n := c.in.Transmit(batch[:]); n != tRing {
		t.Fatalf("%d of %d frames went into the ring", n, tRing)
	}
	_ = c.in.Kick()
	if got := c.recv(tRing, 5*time.Second); got != tRing {
		t.Fatalf("%d of %d frames arrived", got, tRing)
	}
	time.Sleep(10 * time.Millisecond) // past the poll budget: it sleeps
	st = c.w.Stats()
	if st.Yields == 0 {
		t.Errorf("busy for %v without a sleep, the worker never yielded its priority", 64*200*time.Microsecond)
	}
	if p := threadPolicy(t, st.Tid); p != unix.SCHED_FIFO {
		t.Errorf("worker's thread after its busy stretch, asleep: policy %d, want SCHED_FIFO again", p)
	}
	c.cancel()
	if err := <-c.run; err != nil {
		t.Fatal(err)
	}
	c.run <- nil // for the cleanup
	if p := threadPolicy(t, st.Tid); p != unix.SCHED_NORMAL {
		t.Errorf("thread after Run returned: policy %d, want SCHED_NORMAL", p)
	}
}

// A worker asked for an ordinary thread keeps time as one; a priority
// out of range is refused.
func TestWorkerOrdinaryThread(t *testing.T) {
	c := newChainWith(t, 1, 0, WorkerOptions{Name: "plain", Priority: -1}, forward{})
	st := c.w.Stats()
	if st.Priority != 0 || st.PriorityError != "" {
		t.Errorf("priority %d (%q), want 0", st.Priority, st.PriorityError)
	}
	if p := threadPolicy(t, st.Tid); p != unix.SCHED_NORMAL {
		t.Errorf("policy %d, want SCHED_NORMAL", p)
	}
	if _, err := NewWorker(WorkerOptions{Priority: 100}); err == nil {
		t.Error("priority 100 accepted")
	}
}
