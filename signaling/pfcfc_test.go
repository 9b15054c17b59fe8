package signaling

import (
	"bytes"
	"testing"

	"github.com/bcfab/bcfab/queues"
)

// pfcEnv is a node of three ports with eight priority queues each (HQ 6).
func pfcEnv(t *testing.T) *fakeEnv {
	f := &fakeEnv{}
	for range 3 {
		eg, err := queues.NewEgress(queues.EgressConfig{Queues: 8, HQ: 6, Capacity: 1024})
		if err != nil {
			t.Fatal(err)
		}
		f.eg = append(f.eg, eg)
	}
	return f
}

func pfcFrames(t *testing.T, env *fakeEnv) []struct {
	port int
	f    PFCFrame
} {
	t.Helper()
	var out []struct {
		port int
		f    PFCFrame
	}
	for _, s := range env.sent {
		f, err := ParsePFC(s.frame)
		if err != nil {
			t.Fatalf("emitted frame is no PFC frame: %v", err)
		}
		if len(s.frame) != PFCLen || !bytes.Equal(s.frame[:6], PFCDst) {
			t.Fatalf("frame of %d bytes to %x", len(s.frame), s.frame[:6])
		}
		out = append(out, struct {
			port int
			f    PFCFrame
		}{s.port, f})
	}
	env.sent = nil
	return out
}

var pfcPorts = []PFCPort{
	{MAC: macA, RateBps: 100_000_000},
	{MAC: macB, RateBps: 100_000_000},
}

func TestIngressMeta(t *testing.T) {
	for _, c := range []struct {
		in  int
		pcp uint8
	}{{0, 0}, {0, 3}, {1, 4}, {7, 7}, {254, 5}} {
		in, pcp, ok := MetaIngress(IngressMeta(c.in, c.pcp))
		if !ok || in != c.in || pcp != c.pcp {
			t.Errorf("IngressMeta(%d, %d) decodes to %d, %d, %v", c.in, c.pcp, in, pcp, ok)
		}
	}
	if _, _, ok := MetaIngress(0); ok {
		t.Error("meta 0 (a node's own frame) decodes as charged")
	}
}

// X_off at Xoff bytes charged to one (ingress, priority) — wherever they
// are queued — X_on at Xon, nothing between, nothing for other priorities
// or for the node's own frames, and the frames go out of the ingress port.
func TestPFCThresholds(t *testing.T) {
	env := pfcEnv(t)
	f := NewPFC(env, pfcPorts, PFCThresholds{Xoff: 5000, Xon: 3000, Lossless: 1 << 3})
	for p := range env.eg {
		env.eg[p].SetHooks(f.Hooks())
	}
	pk := func(in int, pcp uint8) queues.Packet {
		return queues.Packet{Len: 1000, Meta: IngressMeta(in, pcp)}
	}
	// Frames from port 0 at priority 3, spread over the egresses of
	// ports 1 and 2 (2 is the application port: no PFC of its own).
	for i := range 4 {
		env.eg[1+i%2].Enqueue(3, pk(0, 3), 0)
		env.eg[1].Enqueue(3, queues.Packet{Len: 1000}, 0) // own traffic
		env.eg[1].Enqueue(2, pk(0, 2), 0)                 // lossy priority
	}
	if len(env.sent) != 0 || f.Charged(0, 3) != 4000 || f.Charged(0, 2) != 0 {
		t.Fatalf("below X_off: %d frames, %d/%d bytes charged", len(env.sent), f.Charged(0, 3), f.Charged(0, 2))
	}
	env.now = 10
	env.eg[2].Enqueue(3, pk(0, 3), 10)
	fr := pfcFrames(t, env)
	if len(fr) != 1 || fr[0].port != 0 || fr[0].f.Enable() != 1<<3 || fr[0].f.Quanta(3) != MaxQuanta ||
		!bytes.Equal(fr[0].f.Src(), macA) || !f.Asserted(0, 3) {
		t.Fatalf("at X_off: %+v", fr)
	}
	// Above X_off and back down to just above X_on: nothing.
	env.eg[1].Enqueue(3, pk(0, 3), 10)
	for f.Charged(0, 3) > 4000 {
		if _, _, ok := env.eg[1].Dequeue(20); !ok {
			t.Fatal("ran dry")
		}
	}
	if len(env.sent) != 0 {
		t.Fatalf("between thresholds: %d frames", len(env.sent))
	}
	// Discarding counts as leaving, too: down to X_on resumes.
	if _, ok := env.eg[2].Discard(3); !ok {
		t.Fatal("nothing to discard")
	}
	fr = pfcFrames(t, env)
	if f.Charged(0, 3) != 3000 || len(fr) != 1 || fr[0].port != 0 || fr[0].f.Quanta(3) != 0 || f.Asserted(0, 3) {
		t.Fatalf("at X_on (%d charged): %+v", f.Charged(0, 3), fr)
	}
	if f.C[0].TxXoff[3] != 1 || f.C[0].TxXon[3] != 1 {
		t.Errorf("counters %+v", f.C[0])
	}
	if m := f.C[0].Map(f.Lossless()); m["tx_xoff_P3"] != 1 || m["tx_xon_P3"] != 1 || len(m) != 7 {
		t.Errorf("map %v", m)
	}
}

// Dynamic thresholds: X_off is alpha times the pool less every byte the
// node holds (any port, any priority, its own frames too), so a pair
// pauses sooner the fuller the node; X_on is (Xoff - Xon) below the
// X_off of the moment; a port's own alpha counts; a zero pool is static.
func TestPFCDynamicThreshold(t *testing.T) {
	pk := func(in int) queues.Packet { return queues.Packet{Len: 1000, Meta: IngressMeta(in, 3)} }
	// fill charges frames from port in until a pause goes out, after
	// own bytes of the node's own traffic, and says how many it took.
	fill := func(th PFCThresholds, in, own int) (*PFC, *fakeEnv, int) {
		t.Helper()
		env := pfcEnv(t)
		f := NewPFC(env, pfcPorts, th)
		for p := range env.eg {
			env.eg[p].SetHooks(f.Hooks())
		}
		for range own / 1000 {
			env.eg[1].Enqueue(3, queues.Packet{Len: 1000}, 0)
		}
		for k := 1; k <= 100; k++ {
			env.eg[2].Enqueue(3, pk(in), 0)
			if len(pfcFrames(t, env)) > 0 {
				return f, env, k
			}
		}
		t.Fatalf("%+v: no pause after 100 frames", th)
		return nil, nil, 0
	}
	dyn := PFCThresholds{Xoff: 9000, Xon: 7000, Lossless: 1 << 3, Alpha: 0.25, Pool: 40_000}
	for _, c := range []struct {
		name    string
		th      PFCThresholds
		in, own int
		want    int // frames charged at the pause
	}{
		// 1000k >= 0.25 x (40,000 - 1000k): k = 8, below the static 9.
		{"empty node", dyn, 0, 0, 8},
		// 1000k >= 0.25 x (24,000 - 1000k): k = 5.
		{"16 KB held", dyn, 0, 16_000, 5},
		{"static without a pool", PFCThresholds{Xoff: 9000, Xon: 7000, Lossless: 1 << 3, Alpha: 0.25}, 0, 16_000, 9},
		// Port 1's alpha 0.5: 1000k >= 0.5 x (40,000 - 1000k): k = 14.
		{"a port's own alpha", PFCThresholds{Xoff: 9000, Xon: 7000, Lossless: 1 << 3, Alpha: 0.25, Pool: 40_000,
			PerPort: []PFCLimits{{}, {Xoff: 9000, Xon: 7000, Alpha: 0.5}}}, 1, 0, 14},
	} {
		f, _, k := fill(c.th, c.in, c.own)
		if k != c.want || !f.Asserted(c.in, 3) {
			t.Errorf("%s: paused at %d frames, want %d", c.name, k, c.want)
		}
	}
	f, env, _ := fill(dyn, 0, 16_000)
	if tm := f.T[0][3]; tm.Xoff != 10_000 || tm.Xon != 8000 {
		t.Errorf("timing's thresholds %d/%d, want the empty node's 10000/8000", tm.Xoff, tm.Xon)
	}
	// Paused at 5,000 bytes with 21,000 held. Taking port 0's frames
	// out, X_on = 0.25 x (19,000 + 1000j) - 2000 meets 5000 - 1000j at
	// j = 2: the resume comes at 3,000 bytes, not the static 7,000's j=0.
	for j := 1; j <= 2; j++ {
		if _, ok := env.eg[2].Discard(3); !ok {
			t.Fatal("nothing to discard")
		}
		fr := pfcFrames(t, env)
		if resumed := len(fr) == 1 && fr[0].f.Quanta(3) == 0; resumed != (j == 2) {
			t.Fatalf("after %d frames out (%d charged, %d held): frames %+v", j, f.Charged(0, 3), f.Used(), fr)
		}
	}
	if f.Charged(0, 3) != 3000 || f.Asserted(0, 3) || f.Used() != 19_000 {
		t.Errorf("after the resume: %d charged, %d held, asserted %v", f.Charged(0, 3), f.Used(), f.Asserted(0, 3))
	}
}

// An X_off is repeated every half pause time while it is in force, one
// frame per port for all its due priorities; after the X_on, the X_on
// ResumeRepeats times, Repeat apart, then nothing.
func TestPFCRefresh(t *testing.T) {
	env := pfcEnv(t)
	f := NewPFC(env, pfcPorts, PFCThresholds{Xoff: 2000, Xon: 1000, Lossless: 1<<3 | 1<<4})
	env.eg[2].SetHooks(f.Hooks())
	if f.NextTick() != -1 {
		t.Fatal("timer armed with nothing asserted")
	}
	env.eg[2].Enqueue(3, queues.Packet{Len: 2000, Meta: IngressMeta(1, 3)}, 0)
	env.eg[2].Enqueue(4, queues.Packet{Len: 2000, Meta: IngressMeta(1, 4)}, 0)
	pfcFrames(t, env)
	half := PauseNs(MaxQuanta, 100_000_000) / 2
	if got := f.NextTick(); got != half {
		t.Fatalf("next refresh at %d, want %d (half of 0xFFFF quanta at 100 Mb/s)", got, half)
	}
	env.now = half - 1
	f.Tick(env.now)
	if len(env.sent) != 0 {
		t.Fatal("refreshed early")
	}
	env.now = half
	f.Tick(env.now)
	fr := pfcFrames(t, env)
	if len(fr) != 1 || fr[0].port != 1 || fr[0].f.Enable() != 1<<3|1<<4 || fr[0].f.Quanta(3) != MaxQuanta || fr[0].f.Quanta(4) != MaxQuanta {
		t.Fatalf("refresh: %+v", fr)
	}
	if f.NextTick() != 2*half || f.C[1].TxRefresh[3] != 1 || f.C[1].TxRefresh[4] != 1 {
		t.Errorf("next %d, counters %+v", f.NextTick(), f.C[1])
	}
	env.eg[2].Discard(3)
	env.eg[2].Discard(4)
	if fr := pfcFrames(t, env); len(fr) != 2 || fr[0].f.Quanta(3) != 0 || fr[1].f.Quanta(4) != 0 {
		t.Fatalf("X_ons: %+v", fr)
	}
	for i := range ResumeRepeats {
		if f.NextTick() != env.now+DefaultPFCRepeat {
			t.Fatalf("repeat %d at %d, want %d", i, f.NextTick(), env.now+DefaultPFCRepeat)
		}
		env.now = f.NextTick()
		f.Tick(env.now)
		fr := pfcFrames(t, env)
		if len(fr) != 1 || fr[0].port != 1 || fr[0].f.Enable() != 1<<3|1<<4 || fr[0].f.Quanta(3) != 0 || fr[0].f.Quanta(4) != 0 {
			t.Fatalf("X_on repeat %d: %+v", i, fr)
		}
	}
	if f.NextTick() != -1 {
		t.Error("timer still armed after the X_ons' repeats")
	}
}

// A received frame pauses each enabled priority for quanta x 512 bit
// times at the port's rate (at least the hold), resumes at quanta 0, and
// never pauses a control priority.
func TestPFCReceive(t *testing.T) {
	env := pfcEnv(t)
	f := NewPFC(env, pfcPorts, PFCThresholds{Xoff: 2000, Xon: 1000, Lossless: 1 << 3, Hold: 1_000_000})
	eg := env.eg[1]
	for q := range 8 {
		eg.Enqueue(q, queues.Packet{Len: 100}, 0)
	}
	b := make([]byte, PFCLen)
	q := [8]uint16{3: 1000, 4: MaxQuanta, 6: MaxQuanta, 7: 5}
	PutPFC(b, macB, 1<<3|1<<4|1<<6|1<<7, &q)
	fr, _ := ParsePFC(b)
	env.now = 1000
	f.OnPFC(1, fr)
	if !eg.Paused(3) || !eg.Paused(4) || eg.Paused(6) || eg.Paused(7) || eg.Paused(0) {
		t.Fatal("wrong queues paused")
	}
	// 1000 quanta at 100 Mb/s: 5.12 ms.
	if exp, _ := eg.NextExpiry(); exp != 1000+5_120_000 {
		t.Errorf("expiry %d, want %d", exp, 1000+5_120_000)
	}
	if f.C[1].RxXoff[3] != 1 || f.C[1].RxXoff[4] != 1 || f.C[1].Ignored != 2 {
		t.Errorf("counters %+v", f.C[1])
	}
	q = [8]uint16{}
	PutPFC(b, macB, 1<<4, &q)
	f.OnPFC(1, fr)
	if eg.Paused(4) || !eg.Paused(3) || f.C[1].RxXon[4] != 1 {
		t.Error("quanta 0 did not resume priority 4 alone")
	}
	if env.eg[0].Paused(3) {
		t.Error("another port's queue paused")
	}
	f.OnPFC(2, fr) // the application port runs no PFC
	if env.eg[2].Paused(4) {
		t.Error("application port paused")
	}
}

func TestPFCStateZeroAllocs(t *testing.T) {
	for _, th := range []PFCThresholds{
		{Xoff: 2000, Xon: 1000, Lossless: 1 << 3},
		{Xoff: 2000, Xon: 1000, Lossless: 1 << 3, Alpha: 0.5, Pool: 5000}, // X_off 2,500 with 0 held
	} {
		env := pfcEnv(t)
		env.sent = make([]sent, 0, 1)
		f := NewPFC(&countEnv{env}, pfcPorts, th)
		eg := env.eg[1]
		eg.SetHooks(f.Hooks())
		pk := queues.Packet{Len: 1500, Meta: IngressMeta(0, 3)}
		n := testing.AllocsPerRun(1000, func() {
			eg.Enqueue(3, pk, 0)
			eg.Enqueue(3, pk, 0) // X_off
			eg.Dequeue(0)
			eg.Dequeue(0) // X_on
		})
		if n != 0 || f.C[0].TxXoff[3] == 0 || f.C[0].TxXon[3] == 0 {
			t.Errorf("pool %d: %v allocations per X_off/X_on cycle, want 0 (%d X_offs, %d X_ons)", th.Pool, n, f.C[0].TxXoff[3], f.C[0].TxXon[3])
		}
	}
}

// countEnv emits nowhere.
type countEnv struct{ *fakeEnv }

func (c *countEnv) Emit(int, []byte) bool { return true }
