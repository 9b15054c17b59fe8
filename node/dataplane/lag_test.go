package dataplane

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/xdp"
)

// lagRig is an engine on a fake clock whose port 1 has PFC's eight
// queues (HQ 7) on a 10 Mb/s link, served as a punctual worker would:
// a pass at every deadline the engine names, and one after every event
// (a PFC frame arriving makes a pass).
type lagRig struct {
	*rig
	now int64
}

const (
	lagRate  = 10_000_000
	lagFrame = 1000
)

func newLagRig(t *testing.T) *lagRig { return newLagRigBuffer(t, 1<<20) }

func newLagRigBuffer(t *testing.T, buffer int) *lagRig {
	lr := &lagRig{}
	lr.rig = newRigPorts(t, PortSpec{RateBps: lagRate, Queues: queues.EgressConfig{Queues: 8, HQ: 7}},
		Options{BufferBytes: buffer}, func(e *Engine) { e.clock = func() int64 { return lr.now } })
	return lr
}

// put queues n frames in queue q of port 1 at the current time.
func (r *lagRig) put(t *testing.T, q, n int) {
	for range n {
		a, ok := r.e.Alloc()
		if !ok || !r.e.Send(1, q, &xdp.Desc{Addr: a, Len: lagFrame}, 0, 0) {
			t.Fatal("no room for a frame")
		}
	}
}

// run serves the engine at each deadline up to end, then sets the clock
// to end; it returns the frames port 1 sent.
func (r *lagRig) run(end int64) int {
	sent := 0
	for {
		r.e.pass()
		sent += r.recv()
		d := r.e.deadline(r.now)
		if d < 0 || d > end {
			break
		}
		r.now = max(d, r.now)
	}
	r.now = end
	return sent
}

func (r *lagRig) lag() queues.Lag { return r.e.ports[1].shaper.Lag() }

const ms = int64(time.Millisecond)

// Health must tell a paused queue from a late daemon: link time during
// which the only frames waiting are paused is idle, not lost, however the
// pause ends (PFC quanta 0, its quanta running out) and whatever the other
// queues of the port do meanwhile. A worker that serves a lifted queue
// late is still charged.
func TestLagPausedIsNotLost(t *testing.T) {
	pfcPause := signaling.PauseNs(signaling.MaxQuanta, lagRate) // 3.36 s at 10 Mb/s
	for _, tc := range []struct {
		name string
		// pause q3 at 2 ms (after its first frames went out, so the
		// shaper is still busy with one), act while paused, lift at
		// lift; serve from serve on.
		until       int64 // the pause's expiry
		resume      bool  // lifted by quanta 0 at lift
		lift, serve int64
		others      func(t *testing.T, r *lagRig) // while q3 is paused
		wantLost    [2]int64                      // ns, min..max
	}{
		{name: "quanta 0", until: 2*ms + pfcPause, resume: true, lift: 500 * ms, serve: 500 * ms},
		{name: "quanta expiry", until: 2*ms + 300*ms, lift: 302 * ms, serve: 302 * ms},
		{name: "quanta 0 while arrivals join the paused queue", until: 2*ms + pfcPause, resume: true, lift: 500 * ms, serve: 500 * ms,
			others: func(t *testing.T, r *lagRig) {
				r.run(100 * ms)
				r.put(t, 3, 2)
			}},
		{name: "another queue sends", until: 2*ms + pfcPause, resume: true, lift: 500 * ms, serve: 500 * ms,
			others: func(t *testing.T, r *lagRig) {
				r.put(t, 4, 6) // 5 ms of frames, sent at once
				r.run(100 * ms)
				r.put(t, 7, 1) // an ACK through the HQ
				r.run(200 * ms)
				r.put(t, 4, 3)
			}},
		{name: "another queue sends, expiry", until: 2*ms + 300*ms, lift: 302 * ms, serve: 302 * ms,
			others: func(t *testing.T, r *lagRig) {
				r.put(t, 4, 6)
				r.run(100 * ms)
				r.put(t, 7, 1)
			}},
		// The worker serves the lifted queue 50 ms late: about 50 ms
		// minus the catch-up bound (~10 ms at 10 Mb/s) is lost.
		{name: "late after quanta 0", until: 2*ms + pfcPause, resume: true, lift: 500 * ms, serve: 550 * ms,
			wantLost: [2]int64{35 * ms, 50 * ms}},
		{name: "late after expiry", until: 2*ms + 300*ms, lift: 302 * ms, serve: 352 * ms,
			wantLost: [2]int64{35 * ms, 50 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLagRig(t)
			eg := r.e.Egress(1)
			r.put(t, 3, 8)
			sent := r.run(2 * ms) // three frames leave, the third still on the link
			eg.Pause(3, r.now, tc.until)
			sent += r.run(r.now) // the pass that received the PFC frame
			if tc.others != nil {
				tc.others(t, r)
			}
			if tc.resume {
				sent += r.run(tc.lift)
				eg.Resume(3, r.now)
			}
			if tc.serve > tc.lift {
				// A late worker: nothing serves the port until serve.
				r.now = tc.serve
			}
			sent += r.run(tc.serve + 200*ms)
			if q := eg.Len(); q != 0 {
				t.Fatalf("%d frames still queued (%d sent)", q, sent)
			}
			lag := r.lag()
			if lag.LostNs < tc.wantLost[0] || lag.LostNs > tc.wantLost[1] {
				t.Errorf("lost %v of link time, want %v..%v (late frames %d, max %v)",
					time.Duration(lag.LostNs), time.Duration(tc.wantLost[0]), time.Duration(tc.wantLost[1]),
					lag.LateFrames, time.Duration(lag.MaxNs))
			}
			if tc.wantLost[1] == 0 && lag.LateFrames != 0 {
				t.Errorf("%d frames late (max %v) on a punctual worker", lag.LateFrames, time.Duration(lag.MaxNs))
			}
		})
	}
}

// Control frames have a reserve data cannot take: with the shared buffer
// full of data (data refused as buffer_full), or the frame pool down to
// its reserve (Alloc refuses data frames), a node still queues its
// flow-control signals and ACKs in the HQ.
func TestControlReserve(t *testing.T) {
	for _, tc := range []struct {
		name   string
		buffer int // 1/16 of it reserved
		pairs  int // signals and ACKs that must fit then
		full   string
	}{
		{"buffer", 64 * lagFrame, 20, "buffer_full"},
		{"frames", 1 << 20, 8, "frames"}, // 256 frames queue, 16 reserved
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLagRigBuffer(t, tc.buffer)
			e := r.e
			full := ""
			for range 2000 {
				a, ok := e.Alloc()
				if !ok {
					full = "frames"
					break
				}
				if !e.Send(1, 3, &xdp.Desc{Addr: a, Len: lagFrame}, 0, 0) {
					full = "buffer_full"
					break
				}
			}
			ps, _ := e.Snapshot()
			if full != tc.full {
				t.Fatalf("data stopped by %q, want %q (queued %d bytes, drops %v)", full, tc.full, ps[1].QueueBytes, ps[1].Drops)
			}
			sig := make([]byte, signaling.PFCLen)
			for i := range tc.pairs {
				if !e.Emit(1, sig) {
					t.Fatalf("signal %d refused with the buffer full of data", i)
				}
				a, ok := e.AllocControl()
				if !ok || !e.Send(1, 7, &xdp.Desc{Addr: a, Len: 64}, 0, 0) {
					t.Fatalf("ACK %d refused with the buffer full of data", i)
				}
			}
			if a, ok := e.Alloc(); ok && e.Send(1, 3, &xdp.Desc{Addr: a, Len: 100}, 0, 0) {
				t.Fatal("data admitted into the control reserve")
			}
			ps, _ = e.Snapshot()
			if d := ps[1].Queues[7].Drops; d["buffer_full"] != 0 || d["no_frames"] != 0 {
				t.Fatalf("control drops %v", d)
			}
		})
	}
}

// A frame a pause held starts on its link no earlier than the pause
// ended, also when the worker serves the lift late: catching up on the
// time it was late, the port may not go back before the lift. Each
// frame's wait is counted in the port's Waits, from its arrival to its
// first bit.
func TestLiftedFramesStartAfterTheLift(t *testing.T) {
	for _, tc := range []struct {
		name   string
		resume bool // lifted by quanta 0 at lift, else its quanta run out
	}{{"expiry", false}, {"resume", true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLagRig(t)
			eg := r.e.Egress(1)
			r.put(t, 3, 8) // at 0
			sent := r.run(2 * ms)
			const lift = 302 * ms
			until := lift
			if tc.resume {
				until = 2*ms + signaling.PauseNs(signaling.MaxQuanta, lagRate)
			}
			eg.Pause(3, r.now, until)
			sent += r.run(r.now)
			if tc.resume {
				sent += r.run(lift)
				eg.Resume(3, lift)
			} else {
				sent += r.run(lift - 100*ms)
			}
			if sent != 3 {
				t.Fatalf("%d frames left before the pause, want 3", sent)
			}
			// Served 2 ms after the lift, within the catch-up bound
			// (9.9 ms at 10 Mb/s).
			r.now = lift + 2*ms
			r.e.pass()
			sh := queues.NewShaper(lagRate, 0, 0)
			tx := sh.TxTime(lagFrame)
			n := r.recv()
			if most := int((2*ms+int64(shaperBurst))/int64(tx)) + 1; n > most {
				t.Errorf("%d frames sent at once 2 ms after the lift, want at most %d: the port caught up on time the pause held", n, most)
			}
			sent += n + r.run(lift+200*ms)
			if sent != 8 || eg.Len() != 0 {
				t.Fatalf("%d frames sent, %d queued", sent, eg.Len())
			}
			w := r.e.Waits(nil)[1]
			// Three left at once, one after another; five at the lift
			// and after, one after another.
			least := 3*int64(tx) + 5*lift + 10*int64(tx)
			if w.N() != 8 || w.SumNs < least || w.SumNs > least+8*int64(shaperBurst) {
				t.Errorf("waits: %d frames, %v in all, want 8 and %v..%v", w.N(), time.Duration(w.SumNs),
					time.Duration(least), time.Duration(least+8*int64(shaperBurst)))
			}
			if q := w.Quantile(0.5); q < float64(lift)*(1-1.0/16) {
				t.Errorf("median wait %v, want about %v", time.Duration(q), time.Duration(lift))
			}
		})
	}
}

// A port that catches up on time its worker lost serves its queues as it
// would have on time: when its link got free, only the frames that had
// arrived by then compete, and a frame that came later starts no earlier
// than it arrived (the link was idle until then in the model). Here
// queue 3's first frame starts at 0, queue 4's frame arrives at 2 ms and
// queue 3's third at 2.5 ms, and the worker comes back at 5 ms: queue
// 3's second goes next, at 0.82 ms, though the DRR's turn is queue 4's,
// whose frame was not there yet; then queue 4's at 2 ms, after the link
// idled, and queue 3's third behind it. No frame starts before it
// arrived. (Without the arrival order, queue 4's frame went second and
// started before it arrived.)
func TestCatchingUpServesFramesInArrivalOrder(t *testing.T) {
	r := newLagRig(t)
	put := func(q, n int) {
		t.Helper()
		a, ok := r.e.Alloc()
		if !ok || !r.e.Send(1, q, &xdp.Desc{Addr: a, Len: uint32(n)}, 0, 0) {
			t.Fatal("no room for a frame")
		}
	}
	sh := queues.NewShaper(lagRate, 0, 0)
	tx := int64(sh.TxTime(lagFrame))
	put(3, lagFrame)
	put(3, lagFrame)
	r.e.pass() // the first frame starts at 0
	r.now = 2 * ms
	put(4, lagFrame-1)
	r.now = 2*ms + ms/2
	put(3, lagFrame-2)
	r.now = 5 * ms
	var got []uint32
	for range 100 {
		r.e.pass()
		for r.far[1].Receive(r.desc[:]) == 1 {
			got = append(got, r.desc[0].Len)
			r.addrs[0] = r.desc[0].Addr &^ (tFrame - 1)
			r.far[1].Fill(r.addrs[:1])
		}
		d := r.e.deadline(r.now)
		if d < 0 {
			break
		}
		r.now = max(d, r.now)
	}
	if want := []uint32{lagFrame, lagFrame, lagFrame - 1, lagFrame - 2}; len(got) != 4 || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("the link sent frames of %v bytes, want %v", got, want)
	}
	w := r.e.Waits(nil)[1]
	// Queue 3's second frame waited for the first; queue 4's not at
	// all; queue 3's third until queue 4's ended (2 ms + its own
	// serialisation, a byte shorter).
	third := 2*ms + tx - int64(8*time.Second/lagRate) - (2*ms + ms/2)
	if least := tx + third; w.Early != 0 || w.N() != 4 || w.SumNs < least || w.SumNs > least+4*int64(shaperBurst) {
		t.Errorf("waits: %d frames, %d early, %v in all; want 4, 0 and %v", w.N(), w.Early, time.Duration(w.SumNs), time.Duration(least))
	}
}

// A frame that reaches a busy port ahead of the worker's clock (its
// source timed it so, Engine.SendAt, or the emulator delivered it ahead
// of its time) starts at its time in the link's schedule, as on an idle
// port, not when the frames ahead of it end.
func TestBusyPortStartsAFrameNoEarlierThanItsTime(t *testing.T) {
	r := newLagRig(t)
	r.put(t, 3, 2)
	r.e.pass() // the first starts at 0; the second waits for it
	a, ok := r.e.Alloc()
	if !ok || !r.e.SendAt(1, 4, &xdp.Desc{Addr: a, Len: lagFrame}, 0, 0, 3*ms) {
		t.Fatal("no room for a frame")
	}
	if sent := r.recv() + r.run(100*ms); sent != 3 {
		t.Fatalf("%d frames sent, want 3", sent)
	}
	sh := queues.NewShaper(lagRate, 0, 0)
	tx := int64(sh.TxTime(lagFrame))
	w := r.e.Waits(nil)[1]
	if w.Early != 0 || w.N() != 3 || w.SumNs < tx || w.SumNs > tx+3*int64(shaperBurst) {
		t.Errorf("waits: %d frames, %d early, %v in all; want 3, 0 and %v (the second frame's)", w.N(), w.Early, time.Duration(w.SumNs), time.Duration(tx))
	}
}
