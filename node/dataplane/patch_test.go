package dataplane

import (
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/pipe"
	"github.com/bcfab/bcfab/node/patch"
	"github.com/bcfab/bcfab/xdp"
)

// arrival is a frame as the receiving engine's handler saw it.
type arrival struct {
	at   int64
	in   int
	len  uint32
	hash uint64
}

// recorder consumes every frame and records it.
type recorder struct {
	mem  []byte
	now  *int64
	seen []arrival
}

func (r *recorder) Handle(in int, d *xdp.Desc, v *Verdict) {
	h := fnv.New64a()
	h.Write(r.mem[d.Addr : d.Addr+uint64(d.Len)])
	r.seen = append(r.seen, arrival{at: *r.now, in: in, len: d.Len, hash: h.Sum64()})
	v.Port = -1
}

// linkRig is two engines on one fake clock: the test feeds engine A's
// port 0, A forwards to its port 1, which a cable joins to engine B's
// port 0, shaped and delayed; B records what arrives.
type linkRig struct {
	now    int64
	a, b   *Engine
	in     *pipe.End
	inMem  []byte
	free   []uint64
	desc   [1]xdp.Desc
	rec    *recorder
	drops  func() uint64 // what the cable dropped at B
	stallB [2]int64      // B is not served in [from, to)
}

const (
	linkRate  = 10_000_000
	linkDelay = 500 * time.Microsecond
)

// newLinkRig cables A to B with a pipe (a veth as copy-mode AF_XDP
// sees it) or a patch cable.
func newLinkRig(t *testing.T, patched bool) *linkRig { return newLinkRigOn(t, patched, nil, false) }

// newLinkRigOn is newLinkRig with the engines on sim, if not nil, in
// place of the rig's own clock; silent hides whether frames arrived at
// B's link port (it does not notify).
func newLinkRigOn(t *testing.T, patched bool, sim *Sim, silent bool) *linkRig {
	r := &linkRig{inMem: make([]byte, 2*tRing*tFrame)}
	memA := make([]byte, (4*tRing+256)*tFrame)
	memB := make([]byte, (4*tRing+256)*tFrame)
	in, near := pipe.New(r.inMem, memA, tRing)
	r.in = in
	var aOut, bIn PortIO
	if patched {
		x, y, err := patch.Pair(memA, memB, tFrame, tRing)
		if err != nil {
			t.Fatal(err)
		}
		aOut, bIn = x, y
		r.drops = func() uint64 { c := y.Counters(); return c.RxDropped + c.RxRingFull }
	} else {
		x, y := pipe.New(memA, memB, tRing)
		aOut, bIn = x, y
		r.drops = y.Drops
	}
	if silent {
		bIn = struct{ PortIO }{bIn}
	}
	// B's port 1 leads nowhere: a pipe whose far end nobody drives.
	_, bOut := pipe.New(make([]byte, tFrame), memB, tRing)
	clock := func() int64 { return r.now }
	var err error
	r.a, err = NewEngine(Memory{Bytes: memA, FrameSize: tFrame, NumFrames: len(memA) / tFrame, RingSize: tRing},
		[]PortSpec{{Name: "in", IO: near}, {Name: "link", IO: aOut, RateBps: linkRate, Delay: linkDelay}}, forward{}, Options{BufferBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	r.rec = &recorder{mem: memB, now: &r.now}
	r.b, err = NewEngine(Memory{Bytes: memB, FrameSize: tFrame, NumFrames: len(memB) / tFrame, RingSize: tRing},
		[]PortSpec{{Name: "link", IO: bIn}, {Name: "out", IO: bOut}}, r.rec, Options{BufferBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if sim != nil {
		r.rec.now = &sim.now
		if err := sim.Add(r.a); err != nil {
			t.Fatal(err)
		}
		if err := sim.Add(r.b); err != nil {
			t.Fatal(err)
		}
	} else {
		r.a.clock, r.b.clock = clock, clock
		r.a.begin()
		r.b.begin()
	}
	for a := range tRing {
		r.free = append(r.free, uint64(a*tFrame))
	}
	return r
}

// inject puts frames on A's input: each of the given sizes, its bytes
// drawn from seed.
func (r *linkRig) inject(t *testing.T, rng *rand.Rand, sizes []int) {
	var addrs [tRing]uint64
	for n := r.in.Complete(addrs[:]); n > 0; n = r.in.Complete(addrs[:]) {
		r.free = append(r.free, addrs[:n]...)
	}
	for _, n := range sizes {
		if len(r.free) == 0 {
			t.Fatal("the test's input ran out of frames")
		}
		a := r.free[len(r.free)-1]
		r.free = r.free[:len(r.free)-1]
		for i := range n {
			r.inMem[a+uint64(i)] = byte(rng.Uint32())
		}
		r.desc[0] = xdp.Desc{Addr: a, Len: uint32(n)}
		r.in.Transmit(r.desc[:])
	}
	_ = r.in.Kick()
}

// burst is frames the test feeds A at once.
type burst struct {
	at    int64
	sizes []int
}

// linkSchedule is run's seeded schedule; rng then draws the frames' bytes.
func linkSchedule(seed uint64) (*rand.Rand, []burst) {
	rng := rand.New(rand.NewPCG(seed, 1))
	var bursts []burst
	at := int64(0)
	for range 40 {
		at += int64(rng.IntN(int(3 * time.Millisecond)))
		var sizes []int
		for range 1 + rng.IntN(12) {
			sizes = append(sizes, 60+rng.IntN(1455))
		}
		bursts = append(bursts, burst{at, sizes})
	}
	return rng, bursts
}

// run feeds bursts of frames (a seeded schedule) and serves both engines
// at every deadline, as a punctual worker would, until the cable is idle.
func (r *linkRig) run(t *testing.T, seed uint64) []arrival {
	rng, bursts := linkSchedule(seed)
	next := 0
	for {
		if next < len(bursts) && bursts[next].at <= r.now {
			r.inject(t, rng, bursts[next].sizes)
			next++
		}
		r.a.pass()
		if r.now < r.stallB[0] || r.now >= r.stallB[1] {
			r.b.pass()
		}
		// The next event: a burst, or a deadline of either engine; B,
		// which has no deadline of its own, is served after A's.
		t0 := int64(-1)
		consider := func(x int64) {
			if x >= 0 && (t0 < 0 || x < t0) {
				t0 = x
			}
		}
		if next < len(bursts) {
			consider(bursts[next].at)
		}
		consider(r.a.deadline(r.now))
		if r.now < r.stallB[1] && r.now >= r.stallB[0] {
			consider(r.stallB[1]) // B's deadlines wait for its return
		} else {
			consider(r.b.deadline(r.now))
		}
		if t0 < 0 {
			return r.rec.seen
		}
		r.now = max(t0, r.now+1)
	}
}

// A patched link delivers the same frames at the same times as a veth
// (a pipe that behaves as copy-mode AF_XDP on a veth): the shaping and
// the hold are the sender's, whichever end serves the hold. When the
// receiver is late, its ring's capacity drops frames on either link; the
// patched ring holds the frames on their way too (HeldIO), so it may
// drop up to as many as the link holds at once where the veth's
// delivered them, and nothing else differs: every frame sent is either
// delivered or counted, and what arrived before the ring filled arrived
// alike.
func TestPatchDeliversAsVeth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stall [2]int64
	}{
		{name: "punctual"},
		// B is away for 100 ms: its 64-entry ring overflows.
		{name: "receiver late", stall: [2]int64{20 * ms, 120 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				veth, patched := newLinkRig(t, false), newLinkRig(t, true)
				veth.stallB, patched.stallB = tc.stall, tc.stall
				want, got := veth.run(t, seed), patched.run(t, seed)
				if len(want) == 0 {
					t.Fatal("nothing arrived")
				}
				if tc.stall[1] > 0 {
					// On the link at once: its delay over the shortest
					// frame's serialisation, and the one being sent.
					const inFlight = 1 + int(linkDelay*linkRate/(84*8*time.Second))
					vd, pd := int(veth.drops()), int(patched.drops())
					switch {
					case vd == 0:
						t.Fatalf("seed %d: the late receiver's ring dropped nothing", seed)
					case len(got)+pd != len(want)+vd:
						t.Fatalf("seed %d: patched %d delivered + %d dropped, veth %d + %d", seed, len(got), pd, len(want), vd)
					case pd < vd || pd > vd+inFlight:
						t.Fatalf("seed %d: patched dropped %d, veth %d: want up to %d more", seed, pd, vd, inFlight)
					}
					before := slices.IndexFunc(want, func(a arrival) bool { return a.at >= tc.stall[0] })
					if !slices.Equal(got[:before], want[:before]) {
						t.Fatalf("seed %d: before the stall the links delivered differently; first difference at %d", seed, firstDiff(got, want))
					}
					t.Logf("seed %d: %d and %d frames arrived, %d and %d dropped at the receiving ring (patched, veth)", seed, len(got), len(want), pd, vd)
					continue
				}
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d: patched link delivered %d frames, veth %d; first difference at %d", seed, len(got), len(want), firstDiff(got, want))
				}
				t.Logf("seed %d: %d frames arrived alike, %d dropped at the receiving ring", seed, len(got), veth.drops())
				if veth.drops() != patched.drops() || (tc.stall[1] > 0 && veth.drops() == 0) {
					t.Fatalf("seed %d: drops %d patched, %d veth", seed, patched.drops(), veth.drops())
				}
			}
		})
	}
}

func firstDiff(a, b []arrival) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A patched link's pass allocates nothing: two engines forwarding across
// a patch cable.
func TestPatchPassZeroAllocs(t *testing.T) {
	r := newLinkRig(t, true)
	r.b.h = forward{} // consume without recording
	rng := rand.New(rand.NewPCG(1, 1))
	sizes := []int{1000, 1000, 1000, 1000}
	r.inject(t, rng, sizes)
	r.a.pass()
	r.b.pass()
	allocs := testing.AllocsPerRun(200, func() {
		r.inject(t, rng, sizes)
		r.now += int64(5 * time.Millisecond)
		r.a.pass()
		r.b.pass()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per pass, want 0", allocs)
	}
}
