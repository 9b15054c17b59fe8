package dataplane

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/pipe"
	"github.com/bcfab/bcfab/node/patch"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/xdp"
)

// chainRig is three engines on one fake clock: the test feeds A's port
// 0, A forwards to B over a shaped, delayed link, B forwards to C over
// another, and C records what arrives. The two links are patch cables
// (timed) or pipes (a veth as copy-mode AF_XDP sees it: untimed).
type chainRig struct {
	now     int64
	e       [3]*Engine
	in      *pipe.End
	inMem   []byte
	rec     *recorder
	stallB  [2]int64 // B is not served in [from, to)
	patched bool
}

// early shortens A's hold on its link by that much, as steering does
// when the emulator's latency on the hop is less than the hold leaves
// for it: A delivers every frame to B that early.
func newChainRig(t *testing.T, patched bool, early time.Duration) *chainRig {
	r := &chainRig{inMem: make([]byte, 2*tRing*tFrame), patched: patched}
	var mem [3][]byte
	for i := range mem {
		mem[i] = make([]byte, (4*tRing+256)*tFrame)
	}
	in, near := pipe.New(r.inMem, mem[0], tRing)
	r.in = in
	cable := func(x, y []byte) (PortIO, PortIO) {
		if patched {
			a, b, err := patch.Pair(x, y, tFrame, tRing)
			if err != nil {
				t.Fatal(err)
			}
			return a, b
		}
		a, b := pipe.New(x, y, tRing)
		return a, b
	}
	abA, abB := cable(mem[0], mem[1])
	bcB, bcC := cable(mem[1], mem[2])
	_, cOut := pipe.New(make([]byte, tFrame), mem[2], tRing)
	r.rec = &recorder{mem: mem[2], now: &r.now}
	ports := [3][]PortSpec{
		{{Name: "in", IO: near}, {Name: "link", IO: abA, RateBps: linkRate, Delay: linkDelay - early, MaxDelay: linkDelay}},
		// A receiving end knows its cable's model delay (how early a
		// frame's time may be), as a lab's ports of one cable do.
		{{Name: "from-a", IO: abB, MaxDelay: linkDelay}, {Name: "to-c", IO: bcB, RateBps: linkRate, Delay: linkDelay}},
		{{Name: "from-b", IO: bcC, MaxDelay: linkDelay}, {Name: "out", IO: cOut}},
	}
	hs := [3]Handler{forward{}, forward{}, r.rec}
	for i := range r.e {
		e, err := NewEngine(Memory{Bytes: mem[i], FrameSize: tFrame, NumFrames: len(mem[i]) / tFrame, RingSize: tRing},
			ports[i], hs[i], Options{BufferBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		e.clock = func() int64 { return r.now }
		e.begin()
		r.e[i] = e
	}
	return r
}

// send puts one frame of n bytes on A's input at the rig's time.
func (r *chainRig) send(n int) {
	d := []xdp.Desc{{Addr: 0, Len: uint32(n)}}
	r.in.Transmit(d)
	_ = r.in.Kick()
}

// run serves the engines at every deadline, B only outside its stall,
// until nothing is left to do.
func (r *chainRig) run() {
	for {
		stalled := r.now >= r.stallB[0] && r.now < r.stallB[1]
		r.e[0].pass()
		if !stalled {
			r.e[1].pass()
		}
		r.e[2].pass()
		t0 := int64(-1)
		consider := func(x int64) {
			if x >= 0 && (t0 < 0 || x < t0) {
				t0 = x
			}
		}
		for i, e := range r.e {
			if i != 1 || !stalled {
				consider(e.deadline(r.now))
			}
		}
		if stalled {
			consider(r.stallB[1]) // B's deadlines wait for its return
		}
		if t0 < 0 {
			return
		}
		r.now = max(t0, r.now+1)
	}
}

// A frame the emulator delivered late to a relay over a cable in memory
// leaves the relay as if it had arrived on time: the lateness is made up
// at the next hop instead of adding up along the path (up to the
// shaper's catch-up bound: queues.TestShaperRestartAt). One it delivered
// early leaves as if on time too, scheduled in the relay's link at its
// time.
// Over a veth (no model time carried) the lateness and the earliness
// stay.
func TestLateArrivalMadeUpAtNextHop(t *testing.T) {
	const size = 1000
	ser := int64((size + 24) * 8 * int64(time.Second) / linkRate) // 819.2 µs
	hop := ser + linkDelay.Nanoseconds()
	for _, tc := range []struct {
		name    string
		patched bool
		late    int64 // B first served this long after the frame reached it
		early   time.Duration
		want    int64 // the frame's arrival at C
	}{
		{"punctual, patched", true, 0, 0, 2 * hop},
		{"punctual, veth", false, 0, 0, 2 * hop},
		{"late relay, patched", true, 700 * int64(time.Microsecond), 0, 2 * hop},
		{"late relay, veth", false, 700 * int64(time.Microsecond), 0, 2*hop + 700*int64(time.Microsecond)},
		// Later than the next hop's whole time: the frame leaves B's
		// delay line as soon as B gets to it.
		{"later than the next hop, patched", true, 2 * hop, 0, 3 * hop},
		// Early by less than the shaper's burst, and by more.
		{"early, patched", true, 0, 50 * time.Microsecond, 2 * hop},
		{"early, veth", false, 0, 50 * time.Microsecond, 2*hop - 50*int64(time.Microsecond)},
		// Held in B's queue until the burst reaches its time.
		{"early beyond the burst, patched", true, 0, 300 * time.Microsecond, 2 * hop},
		{"early beyond the burst, veth", false, 0, 300 * time.Microsecond, 2*hop - 300*int64(time.Microsecond)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newChainRig(t, tc.patched, tc.early)
			if tc.late > 0 {
				r.stallB = [2]int64{1, hop + tc.late}
			}
			r.send(size)
			r.run()
			if len(r.rec.seen) != 1 {
				t.Fatalf("C received %d frames, want 1", len(r.rec.seen))
			}
			if got := r.rec.seen[0].at; got != tc.want {
				t.Errorf("the frame reached C at %v, want %v (B late by %v)", time.Duration(got), time.Duration(tc.want), time.Duration(tc.late))
			}
		})
	}
}

func TestArrivedAt(t *testing.T) {
	const link = int64(500 * time.Microsecond)
	now := int64(5_000_000_000) // past 2^32 ns: the stamp wraps
	for _, tc := range []struct {
		name  string
		stamp uint32
		want  int64
	}{
		{"none", 0, 0},
		{"on time", uint32(now), now},
		{"late", uint32(now - 700_000), now - 700_000},
		{"early, within the link's delay", uint32(now + link), now + link},
		{"too early", uint32(now + link + 1), 0},
		{"beyond 2^31 ns", uint32(now - 1<<31 - 1), 0},
	} {
		if got := arrivedAt(tc.stamp, now, link); got != tc.want {
			t.Errorf("%s: arrivedAt = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A probe measures the emulator's lateness on each hop, so a probe the
// worker got to late is answered from when it got to it: the echo's own
// way back is not shortened by the probe's lateness (which would count
// it twice in the round trip).
func TestProbeEchoKeepsWorkerTime(t *testing.T) {
	memA := make([]byte, 4*tRing*tFrame)
	memB := make([]byte, (4*tRing+256)*tFrame)
	aEnd, bEnd, err := patch.Pair(memA, memB, tFrame, tRing)
	if err != nil {
		t.Fatal(err)
	}
	var fill []uint64
	for i := range tRing {
		fill = append(fill, uint64((tRing+i)*tFrame))
	}
	aEnd.Fill(fill)
	var now int64
	b, err := NewEngine(Memory{Bytes: memB, FrameSize: tFrame, NumFrames: len(memB) / tFrame, RingSize: tRing},
		[]PortSpec{{Name: "link", IO: bEnd, RateBps: linkRate, Delay: linkDelay, MAC: macFar, PeerMAC: macNear}},
		&recorder{mem: memB, now: &now}, Options{BufferBytes: 1 << 20, ProbeEvery: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b.clock = func() int64 { return now }
	b.begin()
	// A probe that arrived in the model at 1 ms reaches B's worker at
	// 9 ms, 8 ms late: more than the echo's serialisation and delay.
	now = 9 * int64(time.Millisecond)
	arrived := int64(time.Millisecond)
	n := signaling.PutProbe(memA, macFar, macNear, signaling.TypeProbe, 1, 0)
	signaling.SetProbeSent(memA, b.monoBase+arrived-linkDelay.Nanoseconds())
	aEnd.Transmit([]xdp.Desc{{Addr: 0, Len: uint32(n), Options: uint32(arrived)}})
	_ = aEnd.Kick()
	back := int64(-1)
	for range 1000 {
		b.pass()
		if due, ok := aEnd.Head(); ok {
			// The cable holds the echo at A until then (HeldIO).
			back = heldDue(due, now)
			break
		}
		d := b.deadline(now)
		if d < 0 {
			break
		}
		now = max(d, now+1)
	}
	ser := int64((signaling.FrameLen + 24) * 8 * int64(time.Second) / linkRate)
	if want := 9*int64(time.Millisecond) + ser + linkDelay.Nanoseconds(); back != want {
		t.Fatalf("the echo reached A at %v, want %v: its serialisation and delay after B got to the probe", time.Duration(back), time.Duration(want))
	}
}

// lateSource sends one frame of n bytes in the first pass at or after
// from, by SendAt with at, on port 1 (chainRig's link).
type lateSource struct {
	e        *Engine
	from, at int64
	n        int
	sent     bool
}

func (s *lateSource) Produce(now int64) int {
	if s.sent || now < s.from {
		return 0
	}
	addr, ok := s.e.Alloc()
	if !ok {
		return 0
	}
	s.sent = true
	d := xdp.Desc{Addr: addr, Len: uint32(s.n)}
	clear(s.e.Frame(&d))
	if !s.e.SendAt(1, 0, &d, 0, 0, s.at) {
		return 0
	}
	return 1
}

// A frame a node's source made late, whose time in the model it knows (a
// paced flow's slot), leaves as if made on time (Engine.SendAt): the
// worker's lateness in making it costs the link nothing, up to the
// shaper's catch-up bound, and never before its queue's pause ended. A
// time ahead of now (an ACK that arrived early let it go) is kept too:
// the frame starts then in the link's schedule.
func TestSendAtStartsFromItsTime(t *testing.T) {
	const size = 1000
	ser := int64((size + 24) * 8 * int64(time.Second) / linkRate)
	hop := ser + linkDelay.Nanoseconds()
	const base = int64(time.Second)
	late := 700 * int64(time.Microsecond)
	for _, tc := range []struct {
		name  string
		at    int64 // SendAt's time, relative to base (-1: 0, Send)
		liftd int64 // the link's queue was paused until then, relative to base (0: never)
		want  int64 // the frame's arrival at C, relative to base
	}{
		{"made late, its time known", 0, 0, 2 * hop},
		{"made late, no time", -1, 0, late + 2*hop},
		{"a time ahead of now", late + 100, 0, late + 100 + 2*hop},
		{"a pause lifted after its time", 0, 300 * int64(time.Microsecond), 300*int64(time.Microsecond) + 2*hop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newChainRig(t, true, 0)
			at := int64(0)
			if tc.at >= 0 {
				at = base + tc.at
			}
			r.e[0].SetSource(&lateSource{e: r.e[0], from: base + late, at: at, n: size})
			if tc.liftd > 0 {
				eg := r.e[0].Egress(1)
				eg.Pause(0, base-1, base+tc.liftd)
				if !eg.PausedAt(0, base) || eg.PausedAt(0, base+late) || eg.LastLift() != base+tc.liftd {
					t.Fatalf("queue 0 not paused until base+%v: last lift %d", time.Duration(tc.liftd), eg.LastLift()-base)
				}
			}
			r.now = base + late
			r.run()
			if len(r.rec.seen) != 1 {
				t.Fatalf("C received %d frames, want 1", len(r.rec.seen))
			}
			if got := r.rec.seen[0].at - base; got != tc.want {
				t.Errorf("the frame reached C at base+%v, want base+%v", time.Duration(got), time.Duration(tc.want))
			}
		})
	}
}
