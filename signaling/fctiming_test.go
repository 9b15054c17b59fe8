package signaling

import (
	"math"
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/queues"
)

// hqEnv is fakeEnv whose Emit also queues the frame in the port's HQ, as
// a node's datapath does, each frame at an address of its own; lose
// makes it refuse them (no frame to spare).
type hqEnv struct {
	*fakeEnv
	addr uint64
	lose bool
}

// sigAddr is where hqEnv's frames live: far from the data frames the
// tests queue (address 0).
const sigAddr = 1 << 40

func (e *hqEnv) Emit(p int, b []byte) bool {
	if e.lose {
		return false
	}
	e.fakeEnv.Emit(p, b)
	e.addr += 4096
	eg := e.eg[p]
	ok, _ := eg.Enqueue(eg.HQ(), queues.Packet{Addr: sigAddr + e.addr, Len: uint32(len(b))}, e.now)
	return ok
}

// leave dequeues everything port p's egress may send at now (the HQ
// first), as its transmit step would.
func (e *hqEnv) leave(p int, now int64) {
	e.now = now
	for {
		if _, _, ok := e.eg[p].Dequeue(now); !ok {
			return
		}
	}
}

// leaveHQ dequeues only the HQ's frames of port p at now.
func (e *hqEnv) leaveHQ(t *testing.T, p int, now int64) {
	t.Helper()
	e.now = now
	eg := e.eg[p]
	for eg.QueueLen(eg.HQ()) > 0 {
		if _, q, ok := eg.Dequeue(now); !ok || q != eg.HQ() {
			t.Fatalf("port %d: dequeued queue %d, want its HQ", p, q)
		}
	}
}

// wantTiming checks c against want, field by field but for the
// histogram's buckets, which it checks as the buckets of lats.
func wantTiming(t *testing.T, what string, c ClassTiming, want ClassTiming, lats ...int64) {
	t.Helper()
	var h LatHist
	for _, l := range lats {
		h.add(l)
	}
	h.Untimed = want.Lat.Untimed
	want.Lat = h
	c.ep = episode{} // a pause in force: the methods' own state
	if c != want {
		t.Errorf("%s:\n got %+v\nwant %+v", what, c, want)
	}
}

// trips is a LatHist of the round trips ns.
func trips(ns ...int64) LatHist {
	var h LatHist
	for _, n := range ns {
		h.add(n)
	}
	return h
}

// PFC: the X_off leaves when its port's egress dequeues it, and its
// latency counts from the charge that crossed X_off; the peak, the
// charge at pause and resume and the refreshes are kept per (ingress,
// priority), and an X_off the node could not emit is untimed. A pause's
// round trip runs from the decision to the last charge before its
// resume (the 1500 bytes 50 ns after the first X_off: its overshoot);
// the second pause, after which nothing came, has none.
func TestPFCTiming(t *testing.T) {
	env := &hqEnv{fakeEnv: pfcEnv(t)}
	f := NewPFC(env, pfcPorts, PFCThresholds{Xoff: 5000, Xon: 3000, Lossless: 1<<3 | 1<<4})
	for _, eg := range env.eg {
		eg.SetHooks(f.Hooks())
	}
	pk := func(n int) queues.Packet { return queues.Packet{Len: uint32(n), Meta: IngressMeta(0, 3)} }
	at := func(now int64, n int) {
		env.now = now
		if ok, _ := env.eg[1].Enqueue(3, pk(n), now); !ok {
			t.Fatal("queue full")
		}
	}
	for i := range 4 {
		at(int64(50*i), 1000)
	}
	at(250, 1000) // 5000: X_off, emitted into port 0's HQ
	at(300, 1500) // 6500: the peak
	if !f.Asserted(0, 3) || env.eg[0].QueueLen(6) != 1 {
		t.Fatalf("X_off not queued in port 0's HQ")
	}
	env.leaveHQ(t, 0, 1250) // 1000 ns after the crossing
	// Down to X_on: 5500, 4500, 3500, 2500.
	env.now = 2000
	for range 4 {
		env.eg[1].Dequeue(2000)
	}
	if f.Asserted(0, 3) {
		t.Fatal("not resumed at 2500 bytes")
	}
	env.leaveHQ(t, 0, 2100) // the X_on: not timed
	// Again, crossing by a larger frame: 2500 + 1500 = 4000, then 6000
	// at 10 000 ns.
	at(9000, 1500)
	if f.Asserted(0, 3) {
		t.Fatal("paused below X_off")
	}
	at(10_000, 2000)
	env.leaveHQ(t, 0, 13_000) // 3000 ns
	// Refreshed at its due time: counted, not timed.
	env.now = f.NextTick()
	f.Tick(env.now)
	env.leaveHQ(t, 0, env.now+5)
	// Down to 5000, 3500 and 2000 (X_on), then 0; out of frames, the
	// next X_off is lost, and untimed.
	for env.eg[1].QueueLen(3) > 0 {
		env.eg[1].Dequeue(env.now)
	}
	env.leaveHQ(t, 0, env.now)
	env.lose = true
	at(env.now, 6000)
	env.lose = false
	wantTiming(t, "P3", f.T[0][3], ClassTiming{Class: "P3", Xoff: 5000, Xon: 3000, Peak: 6500,
		Pauses: 3, Refreshes: 1, Resumes: 2, AtPauseMin: 5000, AtPauseMax: 6000, AtResumeMin: 2000, AtResumeMax: 2500,
		Lat: LatHist{Untimed: 1}, Trip: trips(50), Overshoot: 1500}, 1000, 3000)
	// The third pause is still in force: its episode is open.
	if ep := f.T[0][3].ep; !ep.on || ep.grew || ep.at != 6000 {
		t.Errorf("the pause in force: %+v", ep)
	}
	if b := LatBucket(1000); f.T[0][3].Lat.Buckets[b] != 1 || b != 10 {
		t.Errorf("1000 ns in bucket %d ([512, 1024) is 10): %v", b, f.T[0][3].Lat.Buckets)
	}
	var tm FCTiming
	f.Timing(0, &tm)
	if tm.N != 2 || tm.C[0] != f.T[0][3] || tm.C[1].Class != "P4" || tm.C[1].Pauses != 0 {
		t.Errorf("port 0's timing: %d classes %+v", tm.N, tm.C[:tm.N])
	}
	f.Timing(2, &tm) // the application port
	if tm.N != 0 {
		t.Errorf("application port: %d classes", tm.N)
	}
	if f.C[0].Lost != 1 || f.C[0].TxXoff[3] != 3 {
		t.Errorf("counters %+v", f.C[0])
	}
}

// PortFC switch s1.3 of BCube(4,1), port 3's B class: a pause is three
// frames (ports 0, 1, 2), each timed until its own port's egress
// dequeues it; the B queue's peak and its length at the pause and the
// resume are port 3's, and class A saw nothing; the frame after X_off
// is the pause's round trip (50 ns) and overshoot (1000 bytes).
func TestSwitchPortFCTiming(t *testing.T) {
	tp := bcube.MustNew(4, 1)
	env := &hqEnv{fakeEnv: switchEnv(t, tp)}
	s := NewSwitchPortFC(tp, 1, 3, env, th)
	for p := range tp.N() {
		env.eg[p].SetHooks(s.Hooks(p))
	}
	eg := env.eg[3]
	for i := range 10 {
		env.now = int64(50 * i)
		eg.Enqueue(tp.SwitchB(), queues.Packet{Len: 1000}, env.now) // 9000 = X̂_off at 400 ns
	}
	env.leave(0, 500)  // 100 ns
	env.leave(1, 1400) // 1000
	env.leave(2, 2400) // 2000
	env.now = s.NextTick()
	s.Tick(env.now) // the state, refreshed: untimed
	for p := range 3 {
		env.leave(p, env.now)
	}
	for eg.QueueBytes(tp.SwitchB()) > th.XonB {
		eg.Dequeue(env.now)
	}
	wantTiming(t, "B", s.T[3][1], ClassTiming{Class: "B", Xoff: th.XoffB, Xon: th.XonB, Peak: 10_000,
		Pauses: 1, Refreshes: 1, Resumes: 1, AtPauseMin: 9000, AtPauseMax: 9000, AtResumeMin: 3000, AtResumeMax: 3000,
		Trip: trips(50), Overshoot: 1000}, 100, 1000, 2000)
	wantTiming(t, "A", s.T[3][0], ClassTiming{Class: "A", Xoff: th.XoffA, Xon: th.XonA})
	var tm FCTiming
	s.Timing(3, &tm)
	if tm.N != 2 || tm.C[0] != s.T[3][0] || tm.C[1] != s.T[3][1] {
		t.Errorf("port 3's timing: %+v", tm.C[:tm.N])
	}
	s.Timing(0, &tm)
	if tm.N != 2 || tm.C[1].Pauses != 0 || tm.C[1].Lat.Count != 0 {
		t.Errorf("port 0 carried port 3's pauses, which are not its own: %+v", tm.C[:tm.N])
	}
}

// A PortFC server's guarded relay queue (h5's eth1): its pause is three
// relayed frames out of eth0, whose egress is not guarded yet has the
// hooks that time them.
func TestRelayGuardTiming(t *testing.T) {
	tp := bcube.MustNew(4, 1)
	env := &hqEnv{fakeEnv: hostEnv(t, tp)}
	h := NewHostPortFC(tp, 5, env, th)
	h.GuardRelay(1)
	for l := range tp.Levels() {
		hk := h.RelayHooks(l)
		if hk == nil {
			t.Fatalf("port %d has no hooks", l)
		}
		env.eg[l].SetHooks(hk)
	}
	rq := tp.ServerRQ()
	for i := range 9 {
		env.now = int64(10 * i)
		env.eg[1].Enqueue(rq, queues.Packet{Len: 1000}, env.now)
		env.eg[0].Enqueue(rq, queues.Packet{Len: 1000}, env.now) // eth0's relay queue: not guarded
	}
	if len(env.sent) != 3 {
		t.Fatalf("%d frames at X̂_off, want 3", len(env.sent))
	}
	env.leaveHQ(t, 0, 580) // 500 ns after the crossing at 80
	for env.eg[1].QueueBytes(rq) > th.XonB {
		env.eg[1].Dequeue(600)
	}
	wantTiming(t, "RQ", h.RT[1], ClassTiming{Class: "RQ", Xoff: th.XoffB, Xon: th.XonB, Peak: 9000,
		Pauses: 1, Resumes: 1, AtPauseMin: 9000, AtPauseMax: 9000, AtResumeMin: 3000, AtResumeMax: 3000}, 500, 500, 500)
	var tm FCTiming
	h.Timing(0, &tm)
	if tm.N != 0 {
		t.Errorf("eth0, not guarded: %+v", tm.C[:tm.N])
	}
	h.Timing(1, &tm)
	if tm.N != 1 || tm.C[0] != h.RT[1] {
		t.Errorf("eth1: %+v", tm.C[:tm.N])
	}
}

// The departures table holds maxDepartures frames in flight; one more is
// untimed, and the others are timed as they leave, in any order.
func TestDeparturesFull(t *testing.T) {
	env := &hqEnv{fakeEnv: pfcEnv(t)}
	var d departures
	for _, eg := range env.eg {
		eg.SetHooks(depHooks{&d, env})
	}
	var h LatHist
	for i := range maxDepartures + 1 {
		d.emit(env, i%2, make([]byte, 60), int64(i), &h)
	}
	if h.Untimed != 1 || d.n != maxDepartures {
		t.Fatalf("untimed %d, pending %d", h.Untimed, d.n)
	}
	env.leave(1, 1000)
	env.leave(0, 2000)
	// Port 1 had the odd i (latency 1000 - i), port 0 the even.
	var sum int64
	for i := range int64(maxDepartures) {
		if i%2 == 1 {
			sum += 1000 - i
		} else {
			sum += 2000 - i
		}
	}
	if h.Count != maxDepartures || h.SumNs != sum || h.MaxNs != 2000 || d.n != 0 {
		t.Errorf("count %d sum %d (want %d) max %d, pending %d", h.Count, h.SumNs, sum, h.MaxNs, d.n)
	}
	// Without hooks on the egress the frame goes to, nothing is timed.
	env.eg[2].SetHooks(nil)
	d.emit(env, 2, make([]byte, 60), 0, &h)
	if h.Untimed != 2 || d.n != 0 {
		t.Errorf("unhooked egress: untimed %d, pending %d", h.Untimed, d.n)
	}
}

type depHooks struct {
	d   *departures
	env Env
}

func (k depHooks) Enqueued(_ int, p queues.Packet) { k.d.enqueued(p) }
func (k depHooks) Dequeued(_ int, p queues.Packet) { k.d.dequeued(p, k.env) }

// LatBucket: 0 ns alone in bucket 0, then powers of two up to the
// largest int64.
func TestLatBucket(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want int
	}{{-5, 0}, {0, 0}, {1, 1}, {2, 2}, {3, 2}, {4, 3}, {1023, 10}, {1024, 11}, {1 << 38, 39}, {1<<62 + 7, 63}, {math.MaxInt64, LatBuckets - 1}} {
		if got := LatBucket(c.ns); got != c.want {
			t.Errorf("LatBucket(%d) = %d, want %d", c.ns, got, c.want)
		}
	}
}

// Timing a pause and its departure allocates nothing: PFC's and a PortFC
// switch's X_off/X_on cycle, each pause frame queued and dequeued.
func TestPauseTimingZeroAllocs(t *testing.T) {
	t.Run("pfc", func(t *testing.T) {
		env := &hqEnv{fakeEnv: pfcEnv(t)}
		env.quiet = true
		f := NewPFC(env, pfcPorts, PFCThresholds{Xoff: 2000, Xon: 1000, Lossless: 1 << 3})
		for _, eg := range env.eg {
			eg.SetHooks(f.Hooks())
		}
		pk := queues.Packet{Len: 1500, Meta: IngressMeta(0, 3)}
		n := testing.AllocsPerRun(1000, func() {
			env.eg[1].Enqueue(3, pk, 0)
			env.eg[1].Enqueue(3, pk, 0) // X_off
			env.eg[1].Enqueue(3, pk, 5) // the pause's round trip: the clock read
			env.leave(0, 10)
			env.leave(1, 10) // X_on
			env.leave(0, 10)
		})
		if n != 0 || f.T[0][3].Lat.Count < 1000 || f.T[0][3].Lat.Untimed != 0 || f.T[0][3].Trip.Count < 1000 {
			t.Errorf("%v allocations per cycle, want 0; %+v", n, f.T[0][3].Lat)
		}
	})
	t.Run("portfc", func(t *testing.T) {
		tp := bcube.MustNew(4, 1)
		env := &hqEnv{fakeEnv: switchEnv(t, tp)}
		env.quiet = true
		s := NewSwitchPortFC(tp, 1, 3, env, th)
		for p := range tp.N() {
			env.eg[p].SetHooks(s.Hooks(p))
		}
		pk := queues.Packet{Len: 1000}
		n := testing.AllocsPerRun(200, func() {
			for range 9 {
				env.eg[3].Enqueue(tp.SwitchB(), pk, 0)
			}
			for p := range tp.N() {
				env.leave(p, 10)
			}
			for p := range tp.N() - 1 {
				env.leave(p, 10)
			}
		})
		if n != 0 || s.T[3][1].Lat.Count < 3*200 || s.T[3][1].Lat.Untimed != 0 {
			t.Errorf("%v allocations per cycle, want 0; %+v", n, s.T[3][1].Lat)
		}
	})
}
