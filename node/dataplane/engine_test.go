package dataplane

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/pipe"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/xdp"
)

// forward sends everything from port 0 to port 1 and drops what port 1
// receives as unsupported.
type forward struct{}

// pass is one pass of the engine at the time its clock says.
func (e *Engine) pass() int {
	moved, _ := e.passAt(e.Now(), false)
	return moved
}

func (forward) Handle(in int, d *xdp.Desc, v *Verdict) {
	if in == 0 {
		v.Port = 1
		return
	}
	v.Port, v.Drop = -1, DropUnsupported
}

const (
	tFrame = 2048
	tRing  = 64
)

// rig is an engine with two ports whose far ends the test drives.
type rig struct {
	e      *Engine
	far    [2]*pipe.End
	farMem [2][]byte
	free   []uint64
	desc   [1]xdp.Desc
	addrs  [tRing]uint64
}

func newRig(t testing.TB, rate uint64, buffer int) *rig {
	return newRigOpts(t, rate, Options{BufferBytes: buffer})
}

func newRigOpts(t testing.TB, rate uint64, o Options) *rig {
	return newRigPorts(t, PortSpec{RateBps: rate}, o, nil)
}

// newRigPorts builds the rig with ports like port (its name and IO are
// the rig's); prepare, if not nil, sees the engine before it begins.
func newRigPorts(t testing.TB, port PortSpec, o Options, prepare func(*Engine)) *rig {
	return newRigWith(t, port, o, forward{}, prepare)
}

// newRigWith is newRigPorts with handler h.
func newRigWith(t testing.TB, port PortSpec, o Options, h Handler, prepare func(*Engine)) *rig {
	r := &rig{}
	mem := make([]byte, (4*tRing+256)*tFrame)
	var specs []PortSpec
	for i := range r.far {
		r.farMem[i] = make([]byte, 2*tRing*tFrame)
		near, far := pipe.New(mem, r.farMem[i], tRing)
		r.far[i] = far
		spec := port
		spec.Name, spec.IO = "p", near
		specs = append(specs, spec)
	}
	for a := 0; a < tRing; a++ {
		r.free = append(r.free, uint64(a*tFrame))
	}
	// Port 1's far end receives into its own frames.
	var fill [tRing]uint64
	for a := range fill {
		fill[a] = uint64((tRing + a) * tFrame)
	}
	r.far[1].Fill(fill[:])
	e, err := NewEngine(Memory{Bytes: mem, FrameSize: tFrame, NumFrames: len(mem) / tFrame, RingSize: tRing}, specs, h, o)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	if prepare != nil {
		prepare(e)
	}
	e.begin()
	return r
}

// send puts one frame of n bytes on the wire into port 0.
func (r *rig) send(n int) { r.sendBytes(nil, n) }

// sendBytes puts one frame of n bytes that start with b on the wire into
// port 0.
func (r *rig) sendBytes(b []byte, n int) {
	for c := r.far[0].Complete(r.addrs[:]); c > 0; c = r.far[0].Complete(r.addrs[:]) {
		r.free = append(r.free, r.addrs[:c]...)
	}
	a := r.free[len(r.free)-1]
	r.free = r.free[:len(r.free)-1]
	copy(r.farMem[0][a:a+uint64(n)], b)
	r.desc[0] = xdp.Desc{Addr: a, Len: uint32(n)}
	r.far[0].Transmit(r.desc[:])
	_ = r.far[0].Kick()
}

// recv takes what arrived at port 1's far end and returns its frames.
func (r *rig) recv() int {
	n := 0
	for {
		if r.far[1].Receive(r.desc[:]) == 0 {
			return n
		}
		r.addrs[0] = r.desc[0].Addr &^ (tFrame - 1)
		r.far[1].Fill(r.addrs[:1])
		n++
	}
}

func TestEngineForwardsAndCounts(t *testing.T) {
	r := newRig(t, 0, 1<<20)
	for i := 0; i < 1000; i++ {
		r.send(100 + i%1400)
		r.e.pass()
		if got := r.recv(); got != 1 {
			t.Fatalf("frame %d: %d delivered", i, got)
		}
	}
	ps, fs := r.e.Snapshot()
	if ps[0].RxPackets != 1000 || ps[1].TxPackets != 1000 || ps[1].TxBytes != ps[0].RxBytes {
		t.Fatalf("counters %+v", ps)
	}
	if fs.Free != fs.Total-2*tRing {
		t.Fatalf("frames leaked: %+v", fs)
	}
}

// A source's drops on purpose (CountInjected) are its port's InjectedTx:
// injected drops, not the emulator's, and nothing sent.
func TestEngineCountInjected(t *testing.T) {
	r := newRig(t, 0, 1<<20)
	r.e.CountInjected(1)
	r.e.CountInjected(1)
	ps, _ := r.e.Snapshot()
	if p := ps[1]; p.InjectedTx != 2 || p.InjectedDrops() != 2 || p.TotalDrops() != 0 || p.TxPackets != 0 || ps[0].InjectedTx != 0 {
		t.Fatalf("port 1: injected %d (%d), drops %d, sent %d; port 0 injected %d", p.InjectedTx, p.InjectedDrops(), p.TotalDrops(), p.TxPackets, ps[0].InjectedTx)
	}
}

// fates settles a frame by its length: forward it to port 1, consume
// it, or drop it on receive for one of the receive reasons.
type fates struct{}

func (fates) Handle(in int, d *xdp.Desc, v *Verdict) {
	switch d.Len % 6 {
	case 0:
		v.Port = 1
	case 1:
		v.Port = -1
	default:
		v.Port, v.Drop = -1, []DropReason{DropMalformed, DropUnsupported, DropNoRoute, DropHairpin}[d.Len%6-2]
	}
}

// Every frame received is accounted for: forwarded, consumed, or dropped
// on receive under one of api.RxDropReasons — probes too, which the
// engine takes before the handler.
func TestEngineReceiveAccounting(t *testing.T) {
	r := newRigWith(t, PortSpec{}, Options{BufferBytes: 1 << 20}, fates{}, nil)
	for i := range 600 {
		r.sendBytes(nil, 100+i)
		r.e.pass()
		r.recv()
	}
	probe := make([]byte, signaling.FrameLen)
	signaling.PutProbe(probe, make([]byte, 6), make([]byte, 6), signaling.TypeProbe, 1, 0)
	r.sendBytes(probe, len(probe)) // a port that does not probe: unsupported
	probe[14] = 9                  // a bad version: malformed
	r.sendBytes(probe, len(probe))
	r.e.pass()
	r.recv()
	ps, _ := r.e.Snapshot()
	p := ps[0]
	if p.RxPackets != 602 || p.RxForwarded != 100 || p.RxConsumed != 100 || p.RxDrops() != 402 ||
		p.RxPackets != p.RxForwarded+p.RxConsumed+p.RxDrops() {
		t.Errorf("rx %d = forwarded %d + consumed %d + dropped %d (%v)?", p.RxPackets, p.RxForwarded, p.RxConsumed, p.RxDrops(), p.Drops)
	}
	for _, reason := range api.RxDropReasons {
		if p.Drops[reason] < 100 {
			t.Errorf("%s: %d, want 100 or more", reason, p.Drops[reason])
		}
	}
	if ps[1].TxPackets != 100 {
		t.Errorf("%d forwarded frames sent, want 100", ps[1].TxPackets)
	}
}

// A port that cannot drain (a slow link) fills its buffer, but for the
// control reserve (1/16: 625 bytes); what does not fit is dropped and
// counted as buffer_full, never silently.
func TestEngineAdmission(t *testing.T) {
	r := newRig(t, 1000, 10*1000) // 1 kb/s: nothing leaves during the test
	for i := 0; i < 40; i++ {
		r.send(1000)
		r.e.pass()
	}
	r.recv()
	ps, _ := r.e.Snapshot()
	sent := ps[1].TxPackets
	queued := ps[1].QueuePackets
	dropped := ps[1].Drops["buffer_full"]
	// The first frame left the queue and is on the wire: its
	// serialisation takes 8 s, and it reaches the peer after its last bit.
	if queued != 9 || sent != 0 || sent+queued+dropped != 39 || dropped == 0 {
		t.Fatalf("sent %d queued %d dropped %d of 40 (one on the wire)", sent, queued, dropped)
	}
}

// A source may fill half of the node's data buffer: AdmitsOwn refuses
// its frame before Send would, and leaves the rest to forwarded frames.
func TestEngineAdmitsOwn(t *testing.T) {
	r := newRig(t, 1000, 10*1000) // 1 kb/s: nothing leaves during the test
	if !r.e.AdmitsOwn(1, 0, 1000) {
		t.Fatal("an empty node refuses a frame")
	}
	full := false
	for i := 0; i < 40; i++ {
		r.send(1000)
		r.e.pass()
		if !r.e.AdmitsOwn(1, 0, 1000) && !full {
			full = true
			if r.e.buffered+1000 <= r.e.dataBytes/2 {
				t.Fatalf("refused with %d of %d bytes buffered", r.e.buffered, r.e.dataBytes)
			}
			ps, _ := r.e.Snapshot()
			if ps[1].Drops["buffer_full"] != 0 {
				t.Fatal("forwarded frames were refused before the source was")
			}
		}
	}
	r.recv()
	if !full {
		t.Fatal("the source was never refused")
	}
}

// The per-frame path — receive, handle, admit, shape, transmit, reclaim,
// refill, publish — allocates nothing.
func TestEngineZeroAllocs(t *testing.T) {
	r := newRig(t, 0, 1<<20)
	for i := 0; i < 100; i++ { // warm the pipe's slices up
		r.send(1500)
		r.e.pass()
		r.recv()
	}
	allocs := testing.AllocsPerRun(1000, func() {
		r.send(1500)
		r.e.pass()
		r.recv()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per frame", allocs)
	}
}

func BenchmarkEnginePass(b *testing.B) {
	r := newRig(b, 0, 1<<20)
	b.ReportAllocs()
	for b.Loop() {
		r.send(64)
		r.e.pass()
		r.recv()
	}
}

// A pause is idle link time, not link time the daemon lost: frames held
// by a pause and sent as soon as it is lifted count no lost time, while
// frames the engine serves long after the lift do.
func TestEngineShaperLagIgnoresPauses(t *testing.T) {
	r := newRig(t, 100_000_000, 1<<20)
	eg := r.e.Egress(1)
	lost := func() time.Duration {
		ps, _ := r.e.Snapshot()
		return time.Duration(ps[1].LostLinkNs)
	}
	for _, served := range []struct {
		late     time.Duration // from the lift to the pass that sends
		min, max time.Duration // lost link time it adds
	}{
		{0, 0, 100 * time.Millisecond},
		{50 * time.Millisecond, 40 * time.Millisecond, time.Hour},
	} {
		before := lost()
		eg.Pause(0, r.e.Now(), 0)
		for range 3 {
			r.send(1000)
		}
		r.e.pass()
		r.recv()
		time.Sleep(200 * time.Millisecond) // paused with frames: idle, not late
		eg.Resume(0, r.e.Now())
		time.Sleep(served.late)
		got := 0
		for end := time.Now().Add(time.Second); got < 3 && time.Now().Before(end); {
			r.e.pass()
			got += r.recv()
		}
		if got != 3 {
			t.Fatalf("%d of 3 frames sent after the resume", got)
		}
		if d := lost() - before; d < served.min || d > served.max {
			t.Errorf("served %v after the lift: lost %v of link time, want %v..%v", served.late, d, served.min, served.max)
		}
	}
}
