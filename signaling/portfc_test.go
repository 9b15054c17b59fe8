package signaling

import (
	"bytes"
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/queues"
)

// fakeEnv is a node's datapath for the state machines: real egresses,
// emitted frames recorded instead of sent.
type fakeEnv struct {
	eg    []*queues.Egress
	now   int64
	sent  []sent
	quiet bool // count emitted frames only (allocation tests)
	n     int
}

type sent struct {
	port  int
	frame []byte
}

func (f *fakeEnv) Egress(p int) *queues.Egress { return f.eg[p] }
func (f *fakeEnv) Now() int64                  { return f.now }
func (f *fakeEnv) Emit(p int, b []byte) bool {
	if f.quiet {
		f.n++
		return true
	}
	f.sent = append(f.sent, sent{p, append([]byte(nil), b...)})
	return true
}

func (f *fakeEnv) take(t *testing.T) []Signal {
	t.Helper()
	var out []Signal
	for _, s := range f.sent {
		sig, err := ParseSignal(s.frame)
		if err != nil {
			t.Fatalf("emitted frame does not parse: %v", err)
		}
		out = append(out, sig)
	}
	f.sent = nil
	return out
}

func switchEnv(t *testing.T, tp bcube.Topology) *fakeEnv {
	f := &fakeEnv{}
	for p := 0; p < tp.N(); p++ {
		c := queues.EgressConfig{Queues: tp.SwitchQueues(), HQ: tp.SwitchHQ(), Capacity: 1024,
			Groups: []uint64{tp.SwitchAQueues(), 1 << uint(tp.SwitchB())}}
		eg, err := queues.NewEgress(c)
		if err != nil {
			t.Fatal(err)
		}
		f.eg = append(f.eg, eg)
	}
	return f
}

func hostEnv(t *testing.T, tp bcube.Topology) *fakeEnv {
	f := &fakeEnv{}
	for l := 0; l < tp.Levels(); l++ {
		eg, err := queues.NewEgress(queues.EgressConfig{Queues: tp.ServerQueues(), HQ: tp.ServerHQ(), Capacity: 1024})
		if err != nil {
			t.Fatal(err)
		}
		f.eg = append(f.eg, eg)
	}
	return f
}

var th = Thresholds{XoffA: 6000, XonA: 4000, XoffB: 9000, XonB: 3000, Refresh: 1_000_000}

// Algorithms 1 and 2 on switch s1.3 of BCube(4,1), port 3 (toward h15):
// one Pause per class when its occupancy reaches X_off, to the servers of
// every other port, and one Resume at X_on.
func TestSwitchSignals(t *testing.T) {
	tp := bcube.MustNew(4, 1)
	env := switchEnv(t, tp)
	s := NewSwitchPortFC(tp, 1, 3, env, th)
	eg := env.Egress(3)
	eg.SetHooks(s.Hooks(3))
	pk := queues.Packet{Len: 1000}
	// A class: spread over A0..A2; the sum counts.
	for i := 0; i < 5; i++ {
		eg.Enqueue(i%3, pk, 0)
	}
	if got := env.take(t); len(got) != 0 || s.Signalled(3, ClassA) {
		t.Fatalf("signals below X_off: %v", got)
	}
	eg.Enqueue(0, pk, 0) // 6000 = X_off
	got := env.take(t)
	if len(got) != 3 {
		t.Fatalf("%d pause frames, want 3 (ports 0, 1, 2)", len(got))
	}
	for q, sig := range got {
		if sig.Type() != TypePause || sig.Class() != ClassA || sig.Port() != 3 || sig.OriginLevel() != 1 || sig.OriginIndex() != 3 ||
			sig.Relayed() || !bytes.Equal(sig.Dst(), bcube.HostPortMAC(tp.ServerAt(1, 3, q), 1)) || !bytes.Equal(sig.Src(), bcube.SwitchPortMAC(1, 3, q)) {
			t.Fatalf("frame to port %d: %s", q, Describe(sig))
		}
	}
	eg.Enqueue(1, pk, 0)
	if len(env.take(t)) != 0 {
		t.Fatal("signalled twice")
	}
	// Dequeue to X_on: one Resume each.
	for eg.GroupBytes(0) > th.XonA {
		if len(env.sent) != 0 {
			t.Fatalf("resumed above X_on, at %d", eg.GroupBytes(0))
		}
		eg.Dequeue(0)
	}
	if got := env.take(t); len(got) != 3 || got[0].Type() != TypeResume || got[0].Class() != ClassA || s.Signalled(3, ClassA) {
		t.Fatalf("resume: %d frames", len(got))
	}
	// B class on its own thresholds.
	for i := 0; i < 9; i++ {
		eg.Enqueue(tp.SwitchB(), pk, 0)
	}
	if got := env.take(t); len(got) != 3 || got[0].Class() != ClassB || got[0].Type() != TypePause {
		t.Fatalf("B pause: %d frames", len(got))
	}
	// The HQ never counts.
	for i := 0; i < 20; i++ {
		eg.Enqueue(tp.SwitchHQ(), pk, 0)
	}
	if len(env.take(t)) != 0 {
		t.Fatal("HQ occupancy signalled")
	}
}

// While signalled, the state is repeated every Refresh; after the
// Resume, the Resume is repeated ResumeRepeats times, Refresh apart; with
// nothing signalled or owed the switch asks for no timer at all.
func TestSwitchRefresh(t *testing.T) {
	tp := bcube.MustNew(4, 1)
	env := switchEnv(t, tp)
	s := NewSwitchPortFC(tp, 0, 0, env, th)
	eg := env.Egress(1)
	eg.SetHooks(s.Hooks(1))
	if s.NextTick() != -1 {
		t.Fatal("timer without state")
	}
	for i := 0; i < 9; i++ {
		eg.Enqueue(tp.SwitchB(), queues.Packet{Len: 1000}, 0)
	}
	env.take(t)
	if s.NextTick() != th.Refresh {
		t.Fatalf("next tick %d", s.NextTick())
	}
	env.now = th.Refresh - 1
	s.Tick(env.now)
	if len(env.take(t)) != 0 {
		t.Fatal("refreshed early")
	}
	env.now = th.Refresh
	s.Tick(env.now)
	got := env.take(t)
	if len(got) != 3 || got[0].Type() != TypeState || got[0].Class() != ClassB || got[0].Port() != 1 {
		t.Fatalf("refresh: %d frames", len(got))
	}
	for eg.QueueBytes(tp.SwitchB()) > th.XonB {
		eg.Dequeue(env.now)
	}
	if got := env.take(t); len(got) != 3 || got[0].Type() != TypeResume {
		t.Fatalf("resume: %d frames", len(got))
	}
	for i := range ResumeRepeats {
		if s.NextTick() != env.now+th.Refresh {
			t.Fatalf("repeat %d: next tick %d, want %d", i, s.NextTick(), env.now+th.Refresh)
		}
		env.now += th.Refresh
		s.Tick(env.now)
		got := env.take(t)
		if len(got) != 3 || got[0].Type() != TypeResume || got[0].Class() != ClassB || got[0].Port() != 1 {
			t.Fatalf("repeat %d: %d frames", i, len(got))
		}
	}
	if s.NextTick() != -1 {
		t.Fatal("timer after the Resume's repeats")
	}
}

// Algorithm 3 on h15 of BCube(4,1): {A, p} pauses an a queue; {B, p} a b
// queue and is relayed, marked, to the other level's switch. A pause lapses
// after Hold unless repeated; a Resume lifts it.
func TestHostSignals(t *testing.T) {
	tp := bcube.MustNew(4, 1)
	env := hostEnv(t, tp)
	h := NewHostPortFC(tp, 15, env, th)
	var b [FrameLen]byte
	frame := func(class, typ uint8, p int) Signal {
		PutPortFC(b[:], bcube.HostPortMAC(15, 1), bcube.SwitchPortMAC(1, 3, 3), typ, 0, 1, class, uint8(p), 1, 3)
		sig, err := ParseSignal(b[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	// From s1.3 (level 1) about its port 0 (h3): h15's digit 1 is 3, so a0.
	h.OnSignal(1, frame(ClassA, TypePause, 0))
	if !env.Egress(1).Paused(0) || len(env.take(t)) != 0 {
		t.Fatal("A pause: a0 not paused, or relayed")
	}
	// B about port 2 (h11): b queue 3 + Compress(2, 3) = 5; relayed on port 0.
	h.OnSignal(1, frame(ClassB, TypePause, 2))
	if !env.Egress(1).Paused(5) {
		t.Fatal("B pause: b2 not paused")
	}
	got := env.take(t)
	if len(got) != 1 || env.sent != nil {
		t.Fatalf("relay: %d frames", len(got))
	}
	r := got[0]
	w, p := tp.SwitchOf(15, 0)
	if !r.Relayed() || r.Class() != ClassB || r.Port() != 2 || r.OriginLevel() != 1 || r.OriginIndex() != 3 ||
		!bytes.Equal(r.Dst(), bcube.SwitchPortMAC(0, w, p)) || !bytes.Equal(r.Src(), bcube.HostPortMAC(15, 0)) {
		t.Fatalf("relayed frame: %s", Describe(r))
	}
	// RQ and HQ are never paused.
	if env.Egress(1).Paused(tp.ServerRQ()) || env.Egress(1).Paused(tp.ServerHQ()) {
		t.Fatal("RQ or HQ paused")
	}
	// A lost Resume: the pause lapses at Hold.
	env.now = th.HoldNs() - 1
	env.Egress(1).Enqueue(0, queues.Packet{Len: 100}, env.now)
	if env.Egress(1).Eligible(env.now) {
		t.Fatal("a0 eligible before its pause lapsed")
	}
	if !env.Egress(1).Eligible(th.HoldNs()) {
		t.Fatal("a0 still paused after Hold")
	}
	// A Resume lifts at once.
	h.OnSignal(1, frame(ClassB, TypeResume, 2))
	if env.Egress(1).Paused(5) {
		t.Fatal("b2 still paused after Resume")
	}
	if got := env.take(t); len(got) != 1 || got[0].Type() != TypeResume || !got[0].Relayed() {
		t.Fatal("resume not relayed")
	}
	// Nonsense is ignored and counted: a signal about the host itself.
	h.OnSignal(1, frame(ClassA, TypePause, 3))
	if h.C[1].Ignored != 1 {
		t.Fatalf("ignored %d", h.C[1].Ignored)
	}
}

// Algorithm 4 on s0.3 of BCube(4,1): a relayed {B, p=2} from h15 (origin
// s1.3) pauses the A queue of port 3 (toward h15) that holds what h15 will
// relay to s1.3's port 2: Compress(2, h15.digit[1] = 3) = 2. The switch
// relays nothing further.
func TestSwitchRelayedB(t *testing.T) {
	tp := bcube.MustNew(4, 1)
	env := switchEnv(t, tp)
	s := NewSwitchPortFC(tp, 0, 3, env, th)
	var b [FrameLen]byte
	w, p := tp.SwitchOf(15, 0)
	if w != 3 || p != 3 {
		t.Fatalf("h15 level 0 is s0.%d port %d", w, p)
	}
	PutPortFC(b[:], bcube.SwitchPortMAC(0, 3, 3), bcube.HostPortMAC(15, 0), TypePause, FlagRelayed, 1, ClassB, 2, 1, 3)
	sig, _ := ParseSignal(b[:])
	s.OnSignal(3, sig)
	for q := 0; q < tp.SwitchQueues(); q++ {
		if want := q == 2; env.Egress(3).Paused(q) != want {
			t.Fatalf("queue %d paused=%v", q, !want)
		}
	}
	if len(env.take(t)) != 0 {
		t.Fatal("switch relayed a relayed signal")
	}
	// An unrelayed B (only switches send those) is ignored.
	PutPortFC(b[:], bcube.SwitchPortMAC(0, 3, 3), bcube.HostPortMAC(15, 0), TypePause, 0, 2, ClassB, 1, 1, 3)
	sig, _ = ParseSignal(b[:])
	s.OnSignal(3, sig)
	if env.Egress(3).Paused(0) || s.C[3].Ignored != 1 {
		t.Fatal("unrelayed B acted on")
	}
}
