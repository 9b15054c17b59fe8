package dataplane

import (
	"slices"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/pipe"
)

// A sim serves engines as the hand-driven loop of a punctual worker does
// (linkRig.run): the same frames reach B at the same times, over a pipe
// and over a patch cable, and over a port that does not notify arrivals
// (its engine steps at every instant).
func TestSimDeliversAsPunctualWorker(t *testing.T) {
	for _, c := range []struct{ patched, silent bool }{{false, false}, {true, false}, {false, true}} {
		patched := c.patched
		for seed := uint64(1); seed <= 3; seed++ {
			want := newLinkRig(t, patched).run(t, seed)
			sim := NewSim()
			r := newLinkRigOn(t, patched, sim, c.silent)
			rng, bursts := linkSchedule(seed)
			for _, b := range bursts {
				sim.At(b.at, func() { r.inject(t, rng, b.sizes) })
			}
			end := bursts[len(bursts)-1].at + int64(time.Second)
			sim.RunUntil(end)
			got := r.rec.seen
			if len(want) == 0 {
				t.Fatal("nothing arrived")
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%+v, seed %d: the sim delivered %d frames, the loop %d; first difference at %d", c, seed, len(got), len(want), firstDiff(got, want))
			}
			if sim.Now() != end {
				t.Errorf("RunUntil(%d) left the clock at %d", end, sim.Now())
			}
			t.Logf("%+v, seed %d: %d frames alike, %d steps", c, seed, len(got), sim.Steps())
		}
	}
}

// A patched cable holds its frames at the receiving end (HeldIO), where a
// veth's sender holds them in its delay line: the same frames arrive at
// the same times (TestSimDeliversAsPunctualWorker), and each costs the
// engines one step fewer, the sender's kick at the end of the hold. (The
// veth's receiver steps as of the kick that reached it; the held
// receiver as of the frame's due time, a step that takes it in and
// forwards it.)
func TestHeldCableSavesAStepAFrame(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		var steps [2]uint64
		var frames int
		for i, patched := range []bool{false, true} {
			sim := NewSim()
			r := newLinkRigOn(t, patched, sim, false)
			rng, bursts := linkSchedule(seed)
			for _, b := range bursts {
				sim.At(b.at, func() { r.inject(t, rng, b.sizes) })
			}
			sim.RunUntil(bursts[len(bursts)-1].at + int64(time.Second))
			steps[i], frames = sim.Steps(), len(r.rec.seen)
		}
		// A step of the veth's sender may kick more than one frame.
		if saved := int(steps[0]) - int(steps[1]); saved < frames*9/10 {
			t.Errorf("seed %d: %d frames took %d steps over a veth, %d held at the receiver: want at least %d fewer", seed, frames, steps[0], steps[1], frames*9/10)
		} else {
			t.Logf("seed %d: %d frames, %d steps over a veth, %d held at the receiver", seed, frames, steps[0], steps[1])
		}
	}
}

// Events run in time order, those of one time in the order they were
// scheduled, events an event schedules for now included; RunUntil runs
// those due at its end and stops there, and RunUntilDone at the instant
// done holds.
func TestSimEvents(t *testing.T) {
	sim := NewSim()
	var got []string
	at := func(ts int64, name string) {
		sim.At(ts, func() {
			if sim.Now() != ts {
				t.Errorf("%s ran at %d, scheduled at %d", name, sim.Now(), ts)
			}
			got = append(got, name)
		})
	}
	at(30, "c")
	at(10, "a1")
	at(20, "b")
	at(10, "a2")
	sim.At(20, func() { at(20, "b-then") })
	at(40, "d")
	sim.RunUntil(30)
	if want := []string{"a1", "a2", "b", "b-then", "c"}; !slices.Equal(got, want) {
		t.Fatalf("ran %v, want %v", got, want)
	}
	if sim.Now() != 30 {
		t.Fatalf("RunUntil(30) stopped at %d", sim.Now())
	}
	sim.RunFor(5)
	if len(got) != 5 || sim.Now() != 35 {
		t.Fatalf("RunFor(5): ran %v, clock %d", got, sim.Now())
	}
	if !sim.RunUntilDone(100, func() bool { return len(got) == 6 }) || sim.Now() != 40 {
		t.Fatalf("RunUntilDone: %v at %d", got, sim.Now())
	}
	if sim.RunUntilDone(100, func() bool { return false }) || sim.Now() != 100 {
		t.Fatalf("RunUntilDone without done: clock %d", sim.Now())
	}
	// An event scheduled in the past runs at the next instant, first.
	at(100, "then")
	sim.At(50, func() {
		if sim.Now() != 100 {
			t.Errorf("past event ran at %d", sim.Now())
		}
		got = append(got, "past")
	})
	sim.RunUntil(100)
	if want := []string{"past", "then"}; !slices.Equal(got[6:], want) {
		t.Fatalf("ran %v, want %v last", got, want)
	}
}

// An engine that ran on its own clock is refused; one on a sim takes the
// sim's, and its control calls run directly, between runs.
func TestSimAdd(t *testing.T) {
	r := newLinkRig(t, false)
	if err := NewSim().Add(r.a); err == nil {
		t.Fatal("a begun engine was added")
	}
	sim := NewSim()
	r = newLinkRigOn(t, false, sim, false)
	select {
	case <-r.a.Ready():
	default:
		t.Fatal("an added engine is not ready")
	}
	sim.RunFor(time.Millisecond)
	if n := r.a.Now(); n != int64(time.Millisecond) {
		t.Fatalf("engine clock %d, sim's %d", n, sim.Now())
	}
	called := false
	r.a.Call(func() { called = true })
	if ps, _ := r.a.Snapshot(); !called || len(ps) != 2 {
		t.Fatalf("call ran %v, snapshot of %d ports", called, len(ps))
	}
}

// ticker is a Timer due at each of its times in turn; it counts the
// times it was asked when it is next due.
type ticker struct {
	due   []int64
	ticks []int64
	asked int
}

func (k *ticker) NextTick() int64 {
	k.asked++
	if len(k.due) == 0 {
		return -1
	}
	return k.due[0]
}

func (k *ticker) Tick(now int64) {
	for len(k.due) > 0 && k.due[0] <= now {
		k.due = k.due[1:]
		k.ticks = append(k.ticks, now)
	}
}

// A timer ticks at its times, and an engine asks it when it is next due
// once a step (deadline reads it, the next step uses what it read):
// hostd's timers look through every flow to answer. A control call run
// outside a step may change a timer, and the next step asks again.
func TestTimerAskedOnceAStep(t *testing.T) {
	sim := NewSim()
	e := newTimedEngine(t)
	k := &ticker{due: []int64{100, 200, 300}}
	e.AddTimer(k)
	if err := sim.Add(e); err != nil {
		t.Fatal(err)
	}
	sim.RunUntil(250)
	if want := []int64{100, 200}; !slices.Equal(k.ticks, want) {
		t.Fatalf("ticked at %v, want %v", k.ticks, want)
	}
	// The first step asks too: nothing was read before it.
	if steps := sim.Steps(); uint64(k.asked) != steps+1 {
		t.Errorf("asked %d times in %d steps, want once a step and once more", k.asked, steps)
	}
	// Due earlier, by a call outside a step: the next step asks.
	e.Call(func() { k.due = []int64{260, 300} })
	sim.RunUntil(400)
	if want := []int64{100, 200, 260, 300}; !slices.Equal(k.ticks, want) {
		t.Fatalf("ticked at %v, want %v", k.ticks, want)
	}
}

// newTimedEngine is an engine with one port that nothing drives: a host
// for timers.
func newTimedEngine(t *testing.T) *Engine {
	t.Helper()
	mem := make([]byte, (4*tRing+256)*tFrame)
	_, near := pipe.New(make([]byte, 2*tRing*tFrame), mem, tRing)
	e, err := NewEngine(Memory{Bytes: mem, FrameSize: tFrame, NumFrames: len(mem) / tFrame, RingSize: tRing},
		[]PortSpec{{Name: "in", IO: near}}, forward{}, Options{BufferBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return e
}
