package dataplane

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/pipe"
	"github.com/bcfab/bcfab/xdp"
)

// chain is a line of engines on one worker: a test end feeds frames into
// engine 0's port 0; each engine forwards port 0 to port 1, cabled to the
// next engine's port 0; the last engine's port 1 leads to a test end that
// counts what arrives.
type chain struct {
	w       *Worker
	engines []*Engine
	in, out *pipe.End
	inMem   []byte
	outMem  []byte
	free    []uint64
	run     chan error
	cancel  context.CancelFunc
}

func newChain(t *testing.T, n int, rate uint64) *chain {
	t.Helper()
	return newChainWith(t, n, rate, WorkerOptions{Name: "test"}, forward{})
}

// newChainWith is newChain with the worker's options and the engines'
// handler.
func newChainWith(t *testing.T, n int, rate uint64, opts WorkerOptions, h Handler) *chain {
	t.Helper()
	w, err := NewWorker(opts)
	if err != nil {
		t.Fatal(err)
	}
	c := &chain{w: w, inMem: make([]byte, 2*tRing*tFrame), outMem: make([]byte, 2*tRing*tFrame)}
	mems := make([][]byte, n)
	for i := range mems {
		mems[i] = make([]byte, (4*tRing+256)*tFrame)
	}
	// Cable i joins engine i-1's port 1 to engine i's port 0; cable 0
	// starts at the test's input, cable n ends at its output.
	ports := make([][]PortSpec, n)
	for i := range ports {
		ports[i] = make([]PortSpec, 2)
	}
	for i := 0; i <= n; i++ {
		left, right := c.inMem, c.outMem
		if i > 0 {
			left = mems[i-1]
		}
		if i < n {
			right = mems[i]
		}
		a, b := pipe.New(left, right, tRing)
		if i == 0 {
			c.in = a
		} else {
			ports[i-1][1] = PortSpec{Name: "p1", IO: a, RateBps: rate}
		}
		if i == n {
			c.out = b
		} else {
			ports[i][0] = PortSpec{Name: "p0", IO: b}
		}
	}
	for i := 0; i < n; i++ {
		e, err := NewEngine(Memory{Bytes: mems[i], FrameSize: tFrame, NumFrames: len(mems[i]) / tFrame, RingSize: tRing},
			ports[i], h, Options{BufferBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Add(e); err != nil {
			t.Fatal(err)
		}
		c.engines = append(c.engines, e)
	}
	for a := 0; a < tRing; a++ {
		c.free = append(c.free, uint64(a*tFrame))
	}
	var fill [tRing]uint64
	for a := range fill {
		fill[a] = uint64((tRing + a) * tFrame)
	}
	c.out.Fill(fill[:])
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.run = cancel, make(chan error, 1)
	go func() { c.run <- w.Run(ctx) }()
	for _, e := range c.engines {
		<-e.Ready()
	}
	t.Cleanup(func() {
		c.cancel()
		if err := <-c.run; err != nil {
			t.Error(err)
		}
		w.Close()
	})
	return c
}

func (c *chain) send(t *testing.T, frames int) {
	t.Helper()
	var addrs [tRing]uint64
	for sent := 0; sent < frames; {
		for n := c.in.Complete(addrs[:]); n > 0; n = c.in.Complete(addrs[:]) {
			c.free = append(c.free, addrs[:n]...)
		}
		if len(c.free) == 0 {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		a := c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
		c.in.Transmit([]xdp.Desc{{Addr: a, Len: 200}})
		_ = c.in.Kick()
		sent++
	}
}

// pass sends frames in bursts of 16, each once the one before has
// arrived (the chain's rings are small), and returns how many arrived.
func (c *chain) pass(t *testing.T, frames int) int {
	t.Helper()
	got := 0
	for left := frames; left > 0; {
		n := min(left, 16)
		c.send(t, n)
		r := c.recv(n, 5*time.Second)
		got += r
		if r < n {
			return got
		}
		left -= n
	}
	return got
}

// recv waits until want frames arrived at the end of the chain, or
// timeout, and returns how many did.
func (c *chain) recv(want int, timeout time.Duration) int {
	got := 0
	var d [16]xdp.Desc
	deadline := time.Now().Add(timeout)
	for got < want && time.Now().Before(deadline) {
		n := c.out.Receive(d[:])
		for _, x := range d[:n] {
			c.out.Fill([]uint64{x.Addr &^ (tFrame - 1)})
		}
		got += n
		if n == 0 {
			time.Sleep(50 * time.Microsecond)
		}
	}
	return got
}

// Frames cross a line of engines on one worker, shaped ports included,
// and nothing is lost.
func TestWorkerForwardsAcrossEngines(t *testing.T) {
	for _, rate := range []uint64{0, 100_000_000} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			c := newChain(t, 5, rate)
			if got := c.pass(t, 500); got != 500 {
				t.Fatalf("%d of 500 frames arrived", got)
			}
			for i, e := range c.engines {
				ps, _ := e.Snapshot()
				if ps[0].RxPackets != 500 || ps[1].TxPackets != 500 {
					t.Errorf("engine %d: rx %d tx %d", i, ps[0].RxPackets, ps[1].TxPackets)
				}
				if e.BusyNs() <= 0 {
					t.Errorf("engine %d: no busy time measured", i)
				}
			}
			st := c.w.Stats()
			if st.Engines != 5 || st.Steps == 0 || st.BusyNs <= 0 {
				t.Errorf("worker stats %+v", st)
			}
		})
	}
}

// An idle worker sleeps: no rounds while nothing arrives and nothing is
// due.
func TestWorkerIdleSleeps(t *testing.T) {
	c := newChain(t, 3, 100_000_000)
	if got := c.pass(t, 10); got != 10 {
		t.Fatalf("%d of 10 frames arrived", got)
	}
	time.Sleep(50 * time.Millisecond) // past the poll budget
	before := c.w.Stats()
	time.Sleep(200 * time.Millisecond)
	after := c.w.Stats()
	if after.Rounds != before.Rounds {
		t.Errorf("idle worker ran %d rounds in 200ms", after.Rounds-before.Rounds)
	}
}

// Engines join and leave a running worker; the others go on, and one
// that left keeps its counters and answers calls directly.
func TestWorkerAddRemoveWhileRunning(t *testing.T) {
	c := newChain(t, 3, 0)
	if got := c.pass(t, 100); got != 100 {
		t.Fatalf("%d of 100 frames arrived", got)
	}
	mid := c.engines[1]
	if err := c.w.Remove(mid); err != nil {
		t.Fatal(err)
	}
	if err := c.w.Remove(mid); err == nil {
		t.Error("removing an engine twice succeeded")
	}
	c.send(t, 50) // they wait in the removed engine's receive ring
	if got := c.recv(50, 200*time.Millisecond); got != 0 {
		t.Fatalf("%d frames crossed a removed engine", got)
	}
	ps, _ := mid.Snapshot()
	if ps[0].RxPackets != 100 {
		t.Errorf("removed engine: rx %d, want its 100", ps[0].RxPackets)
	}
	var called bool
	mid.Call(func() { called = true })
	if !called {
		t.Error("call on a removed engine did not run")
	}
	if st := c.w.Stats(); st.Engines != 2 {
		t.Errorf("%d engines after removal", st.Engines)
	}
	// Back on the worker, it forwards what waited in its ring.
	if err := c.w.Add(mid); err != nil {
		t.Fatal(err)
	}
	if got := c.recv(50, 5*time.Second); got != 50 {
		t.Fatalf("%d of 50 frames after the engine came back", got)
	}
}

// Calls and snapshots from many goroutines go through the worker, one at
// a time, while it forwards.
func TestWorkerConcurrentCalls(t *testing.T) {
	c := newChain(t, 2, 0)
	var wg sync.WaitGroup
	counter := 0
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := 0; i < 100; i++ {
				c.engines[g%2].Call(func() { counter++ })
				if ps, _ := c.engines[g%2].Snapshot(); ps == nil {
					t.Error("snapshot timed out")
				}
			}
		})
	}
	if got := c.pass(t, 200); got != 200 {
		t.Fatalf("%d of 200 frames", got)
	}
	wg.Wait()
	if counter != 800 {
		t.Errorf("%d calls ran, want 800", counter)
	}
}

// A worker's step of an engine with frames to forward allocates nothing.
func TestWorkerStepAllocs(t *testing.T) {
	w, err := NewWorker(WorkerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r := newRig(t, 0, 1<<20)
	r.e.w = w
	delivered := 0
	allocs := testing.AllocsPerRun(1000, func() {
		r.send(200)
		r.e.readable(0)
		r.e.step(r.e.Now())
		r.e.deadline(r.e.Now())
		delivered += r.recv()
	})
	if delivered != 1001 {
		t.Errorf("%d of 1001 frames forwarded", delivered)
	}
	if allocs != 0 {
		t.Errorf("%v allocations per forwarded frame", allocs)
	}
}

// Taking a snapshot on the worker's thread allocates nothing once its
// buffer exists: every node of the worker waits while it is taken.
func TestTakeSnapshotAllocs(t *testing.T) {
	r := newRig(t, 0, 1<<20)
	r.send(200)
	r.e.pass()
	r.e.takeSnapshot(false)
	for _, sample := range []bool{false, true} {
		if allocs := testing.AllocsPerRun(100, func() { r.e.takeSnapshot(sample) }); allocs != 0 {
			t.Errorf("%v allocations per snapshot (sample %v)", allocs, sample)
		}
	}
	r.e.takeSnapshot(false)
	ps, _ := r.e.buildStats(false)
	if ps[0].RxPackets != 1 || ps[1].TxPackets != 1 {
		t.Errorf("stats %+v", ps)
	}
}

// A worker's stats keep their JSON keys, in order, each with its value.
func TestWorkerStatsJSON(t *testing.T) {
	var st WorkerStats
	st.Name, st.Tid, st.Engines = "w0", 1, 2
	st.Rounds, st.Steps, st.Polls, st.Sleeps, st.BusyNs = 3, 4, 5, 6, 7
	st.MaxStepNs, st.MaxRoundNs, st.ControlNs, st.MaxControlNs = 8, 9, 10, 11
	st.LateWakes, st.MaxWakeLateNs, st.Replays, st.MaxReplayNs, st.Disarms = 12, 13, 17, 18, 14
	st.Priority, st.Yields, st.Skips, st.SkippedNs = 15, 16, 19, 20
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"w0","tid":1,"engines":2,` +
		`"rounds":3,"steps":4,"polls":5,"sleeps":6,"busy_ns":7,` +
		`"max_step_ns":8,"max_round_ns":9,"control_ns":10,"max_control_ns":11,` +
		`"late_wakes":12,"max_wake_late_ns":13,"replays":17,"max_replay_ns":18,"skips":19,"skipped_ns":20,"disarms":14,` +
		`"priority":15,"yields":16}`
	if string(b) != want {
		t.Errorf("WorkerStats JSON\n got %s\nwant %s", b, want)
	}
}

// tickLog is a Timer due once, at due, that logs its tick in a log shared
// with others.
type tickLog struct {
	name string
	due  int64 // -1: not due
	log  *[]string
}

func (k *tickLog) NextTick() int64 { return k.due }

func (k *tickLog) Tick(now int64) {
	*k.log = append(*k.log, fmt.Sprintf("%s at %+d", k.name, now-k.due))
	k.due = -1
}

// A worker that serves several deadlines with one late wake-up steps its
// engines in the order of their deadlines, each as of its own: the
// second engine's timer, due 50 µs before the first's, ticks first, and
// each ticks at its time in the model, not when the worker woke (its
// slack, 300 µs, after the first).
func TestWorkerReplaysInOrder(t *testing.T) {
	const slack = 300 * time.Microsecond
	for attempt := 1; ; attempt++ {
		w, err := NewWorker(WorkerOptions{Name: "replay", Slack: slack, PollBudget: -1})
		if err != nil {
			t.Fatal(err)
		}
		var log []string
		var ks []*tickLog
		var engines []*Engine
		for _, name := range []string{"first", "second"} {
			e := newTimedEngine(t)
			k := &tickLog{name: name, due: -1, log: &log}
			e.AddTimer(k)
			if err := w.Add(e); err != nil {
				t.Fatal(err)
			}
			ks, engines = append(ks, k), append(engines, e)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		base := w.Now() + int64(20*time.Millisecond)
		engines[0].Call(func() { ks[0].due = base + int64(100*time.Microsecond) })
		engines[1].Call(func() { ks[1].due = base + int64(50*time.Microsecond) })
		time.Sleep(50 * time.Millisecond)
		var got []string
		engines[0].Call(func() { got = append(got, log...) })
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		w.Close()
		st := w.Stats()
		want := []string{"second at +0", "first at +0"}
		if fmt.Sprint(got) == fmt.Sprint(want) && st.Replays > 0 {
			return
		}
		// The replay goes back twice the slack: a wake-up later than the
		// rest of that is the machine's lateness, not the order's.
		reach := time.Duration(w.reach)
		if late := time.Duration(st.MaxWakeLateNs); late > reach-slack-50*time.Microsecond {
			if attempt < 3 {
				continue
			}
			t.Fatalf("the worker woke up to %v late in 3 attempts (a replay goes back %v): the machine was late", late, reach)
		}
		t.Fatalf("ticks %v (%d replays), want %v", got, st.Replays, want)
	}
}

// A worker kept from its deadline for longer than its replay reaches
// counts what it skipped: the time from the deadline to its reach ago
// when it got to it. A control call that holds the worker's thread for
// 20 ms over a deadline 2 ms away makes it skip at least 20 - 2 ms less
// the reach, however the machine runs, and never more than the test's
// own time.
func TestWorkerCountsSkipped(t *testing.T) {
	const slack = 300 * time.Microsecond
	w, err := NewWorker(WorkerOptions{Name: "skip", Slack: slack, PollBudget: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var log []string
	e := newTimedEngine(t)
	k := &tickLog{name: "timer", due: -1, log: &log}
	e.AddTimer(k)
	if err := w.Add(e); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- w.Run(ctx) }()
	const away, held = 2 * time.Millisecond, 20 * time.Millisecond
	e.Call(func() { k.due = w.Now() + int64(away) })
	e.Call(func() { time.Sleep(held) })
	time.Sleep(5 * time.Millisecond)
	var got []string
	e.Call(func() { got = append(got, log...) })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	st := w.Stats()
	if len(got) != 1 {
		t.Fatalf("ticks %v, want one", got)
	}
	least := held - away - time.Duration(w.reach)
	if skipped := time.Duration(st.SkippedNs); st.Skips == 0 || skipped < least || skipped > elapsed {
		t.Fatalf("skipped %v in %d rounds (tick %v), want %v..%v in at least one", skipped, st.Skips, got, least, elapsed)
	}
}
