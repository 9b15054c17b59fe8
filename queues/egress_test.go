package queues

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func newEgress(tb testing.TB, cfg EgressConfig) *Egress {
	tb.Helper()
	e, err := NewEgress(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func TestEgressValidate(t *testing.T) {
	ok := EgressConfig{Queues: 4, HQ: 3, Capacity: 16}
	tests := []struct {
		name string
		edit func(c *EgressConfig)
		err  string // "" : valid
	}{
		{"valid", func(c *EgressConfig) {}, ""},
		{"valid without HQ", func(c *EgressConfig) { c.HQ = -1 }, ""},
		{"valid everything", func(c *EgressConfig) {
			c.Quantum = []int{1, 1500, 9000, 1}
			c.Groups = []uint64{0b0111, 0b1000, 0, 0b1111}
			c.ECN = ECNConfig{KminBytes: 100, KmaxBytes: 400, Pmax: 1}
			c.Names = []string{"a", "b", "", "hq"}
		}, ""},
		{"valid 64 queues", func(c *EgressConfig) { c.Queues, c.HQ, c.Groups = 64, 63, []uint64{^uint64(0)} }, ""},
		{"valid ECN off with pmax 0", func(c *EgressConfig) { c.ECN = ECNConfig{} }, ""},
		{"valid kmin == kmax", func(c *EgressConfig) { c.ECN = ECNConfig{KminBytes: 400, KmaxBytes: 400, Pmax: 0.5} }, ""},
		{"no queues", func(c *EgressConfig) { c.Queues, c.HQ = 0, -1 }, "queues"},
		{"negative queues", func(c *EgressConfig) { c.Queues, c.HQ = -1, -1 }, "queues"},
		{"65 queues", func(c *EgressConfig) { c.Queues = 65 }, "queues"},
		{"HQ too large", func(c *EgressConfig) { c.HQ = 4 }, "high-priority"},
		{"HQ below -1", func(c *EgressConfig) { c.HQ = -2 }, "high-priority"},
		{"capacity 0", func(c *EgressConfig) { c.Capacity = 0 }, "capacity"},
		{"capacity negative", func(c *EgressConfig) { c.Capacity = -8 }, "capacity"},
		{"capacity 12", func(c *EgressConfig) { c.Capacity = 12 }, "capacity"},
		{"capacity 2^32", func(c *EgressConfig) { c.Capacity = 1 << 32 }, "capacity"},
		{"too few quanta", func(c *EgressConfig) { c.Quantum = []int{1500, 1500, 1500} }, "quanta"},
		{"too many quanta", func(c *EgressConfig) { c.Quantum = []int{1, 1, 1, 1, 1} }, "quanta"},
		{"empty quanta", func(c *EgressConfig) { c.Quantum = []int{} }, "quanta"},
		{"zero quantum", func(c *EgressConfig) { c.Quantum = []int{1500, 0, 1500, 1500} }, "quantum"},
		{"negative quantum", func(c *EgressConfig) { c.Quantum = []int{1500, 1500, 1500, -1} }, "quantum"},
		{"five groups", func(c *EgressConfig) { c.Groups = []uint64{1, 2, 4, 8, 1} }, "groups"},
		{"group beyond queues", func(c *EgressConfig) { c.Groups = []uint64{0b1, 0b10000} }, "group 1"},
		{"group far beyond queues", func(c *EgressConfig) { c.Groups = []uint64{1 << 63} }, "group 0"},
		{"kmin above kmax", func(c *EgressConfig) { c.ECN = ECNConfig{KminBytes: 500, KmaxBytes: 400, Pmax: 0.2} }, "kmin"},
		{"kmin with marking off", func(c *EgressConfig) { c.ECN = ECNConfig{KminBytes: 500, Pmax: 0.2} }, "kmin"},
		{"negative kmin", func(c *EgressConfig) { c.ECN = ECNConfig{KminBytes: -1, KmaxBytes: 400, Pmax: 0.2} }, "negative"},
		{"negative kmax", func(c *EgressConfig) { c.ECN = ECNConfig{KminBytes: -5, KmaxBytes: -1, Pmax: 0.2} }, "negative"},
		{"pmax 0", func(c *EgressConfig) { c.ECN = ECNConfig{KminBytes: 100, KmaxBytes: 400} }, "pmax"},
		{"pmax negative", func(c *EgressConfig) { c.ECN = ECNConfig{KminBytes: 100, KmaxBytes: 400, Pmax: -0.1} }, "pmax"},
		{"pmax above 1", func(c *EgressConfig) { c.ECN = ECNConfig{KminBytes: 100, KmaxBytes: 400, Pmax: 1.01} }, "pmax"},
		{"pmax NaN", func(c *EgressConfig) { c.ECN = ECNConfig{KminBytes: 100, KmaxBytes: 400, Pmax: math.NaN()} }, "pmax"},
		{"names length", func(c *EgressConfig) { c.Names = []string{"a"} }, "names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			err := c.Validate()
			if tt.err == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if _, err := NewEgress(c); err != nil {
					t.Fatalf("NewEgress: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want one about %q", err, tt.err)
			}
			if _, err := NewEgress(c); err == nil {
				t.Fatal("NewEgress accepted it")
			}
		})
	}
}

func TestEgressAccessors(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Capacity: 4, Names: []string{"a", "", "hq"}})
	if e.Queues() != 3 || e.HQ() != 2 {
		t.Fatalf("queues %d hq %d", e.Queues(), e.HQ())
	}
	for q, want := range []string{"a", "q1", "hq"} {
		if got := e.Name(q); got != want {
			t.Errorf("name of %d = %q, want %q", q, got, want)
		}
	}
	if e.q[0].quantum != DefaultQuantum {
		t.Errorf("default quantum %d", e.q[0].quantum)
	}
	if _, ok := e.NextExpiry(); ok || e.Eligible(0) {
		t.Fatal("empty egress has an expiry or is eligible")
	}
	if _, q, ok := e.Dequeue(0); ok || q != -1 {
		t.Fatalf("empty egress dequeued from %d", q)
	}
}

// A full ring refuses a packet and changes nothing; drops are counted by
// the caller and show in Stats.
func TestEgressAdmission(t *testing.T) {
	h := &recorder{}
	e := newEgress(t, EgressConfig{Queues: 2, HQ: -1, Capacity: 4, Groups: []uint64{0b11},
		ECN: ECNConfig{KminBytes: 1, KmaxBytes: 2, Pmax: 1}})
	e.SetHooks(h)
	for i := range 4 {
		if ok, _ := e.Enqueue(0, Packet{Addr: uint64(i), Len: 100}, 0); !ok {
			t.Fatalf("enqueue %d refused", i)
		}
	}
	before, events := e.Stats(0), len(h.events)
	ok, mark := e.Enqueue(0, Packet{Addr: 99, Len: 100}, 0)
	if ok || mark {
		t.Fatalf("full ring: ok %v mark %v", ok, mark)
	}
	if e.Len() != 4 || e.Bytes() != 400 || e.QueueLen(0) != 4 || e.QueueBytes(0) != 400 ||
		e.GroupBytes(0) != 400 || e.Stats(0) != before || len(h.events) != events {
		t.Fatalf("refused enqueue changed state: %+v", e.Stats(0))
	}
	e.CountDrop(0, 2)
	e.CountDrop(0, 2)
	e.CountDrop(0, MaxDropReasons-1)
	e.CountMark(1)
	s := e.Stats(0)
	if s.Drops[2] != 2 || s.Drops[MaxDropReasons-1] != 1 || s.EnqPackets != 4 || s.EnqBytes != 400 || s.MaxBytes != 400 {
		t.Fatalf("stats %+v", s)
	}
	if s1 := e.Stats(1); s1.Drops != [MaxDropReasons]uint64{} || s1.ECNMarks != 1 {
		t.Fatalf("queue 1 stats %+v", s1)
	}
	for i := range 4 {
		if p, _, _ := e.Dequeue(0); p.Addr != uint64(i) {
			t.Fatalf("dequeue %d: %d", i, p.Addr)
		}
	}
	if s := e.Stats(0); s.DeqPackets != 4 || s.DeqBytes != 400 || s.Packets != 0 || s.Bytes != 0 || s.MaxBytes != 400 {
		t.Fatalf("stats after draining %+v", s)
	}
}

// Group sums equal the sums of their member queues after any sequence of
// enqueues, dequeues and pauses.
func TestEgressGroupSums(t *testing.T) {
	groups := []uint64{0b0000_0111, 0b1100_0000, 0b1010_1010, 0}
	e := newEgress(t, EgressConfig{Queues: 8, HQ: 5, Capacity: 16, Groups: groups})
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 100_000 {
		now := int64(i)
		switch op := r.IntN(10); {
		case op < 5:
			e.Enqueue(r.IntN(8), Packet{Len: mixedSize(r)}, now)
		case op < 9:
			e.Dequeue(now)
		default:
			e.Pause(r.IntN(8), now, now+int64(r.IntN(50)))
		}
		n, b := 0, 0
		for q := range 8 {
			n += e.QueueLen(q)
			b += e.QueueBytes(q)
		}
		if n != e.Len() || b != e.Bytes() {
			t.Fatalf("step %d: len %d bytes %d, queues hold %d, %d", i, e.Len(), e.Bytes(), n, b)
		}
		for g, m := range groups {
			sum := 0
			for q := range 8 {
				if m&(1<<q) != 0 {
					sum += e.QueueBytes(q)
				}
			}
			if got := e.GroupBytes(g); got != sum {
				t.Fatalf("step %d: group %d holds %d, its queues %d", i, g, got, sum)
			}
		}
	}
	if e.GroupBytes(3) != 0 {
		t.Fatal("empty group holds bytes")
	}
}

type countHooks struct{ enq, deq int }

func (h *countHooks) Enqueued(int, Packet) { h.enq++ }
func (h *countHooks) Dequeued(int, Packet) { h.deq++ }

// flipMarker is countHooks deciding the marks: the opposite of RED's.
type flipMarker struct{ countHooks }

func (*flipMarker) Mark(_, _ int, red bool) bool { return !red }

func TestEgressAllocs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		hooks Hooks
		ecn   ECNConfig
		pause bool
	}{
		{"no hooks", nil, ECNConfig{}, false},
		{"hooks", &countHooks{}, ECNConfig{}, false},
		{"hooks, ECN, pauses", &countHooks{}, ECNConfig{KminBytes: 1000, KmaxBytes: 100_000, Pmax: 0.2}, true},
		{"marker, ECN", &flipMarker{}, ECNConfig{KminBytes: 1000, KmaxBytes: 20_000, Pmax: 0.2}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEgress(t, EgressConfig{Queues: 8, HQ: 7, Capacity: 64, ECN: tt.ecn, Groups: []uint64{0x3f}})
			e.SetHooks(tt.hooks)
			for q := range 8 {
				for range 16 {
					e.Enqueue(q, Packet{Len: 700}, 0)
				}
			}
			var now int64
			allocs := testing.AllocsPerRun(10_000, func() {
				now++
				_, q, _ := e.Dequeue(now)
				if q == 7 || q < 0 {
					// Not back into the HQ, which would be all that is
					// served (and never marks).
					q = int(now % 7)
				}
				e.Enqueue(q, Packet{Len: uint32(64 + now%1400)}, now)
				if tt.pause {
					e.Pause(int(now%7), now, now+3)
					e.Resume(int((now+3)%7), now)
				}
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per packet", allocs)
			}
			// The ECN histogram was counted on the way.
			h, _ := e.ECNHist()
			var decided uint64
			for _, n := range h.Decided {
				decided += n
			}
			if tt.ecn.On() != (decided > 10_000) {
				t.Errorf("ECN %v: %d decisions counted", tt.ecn.On(), decided)
			}
		})
	}
}

// benchEgress measures one Enqueue and one Dequeue of 8 backlogged queues.
func benchEgress(b *testing.B, cfg EgressConfig, h Hooks) {
	e := newEgress(b, cfg)
	e.SetHooks(h)
	var sizes [64]uint32
	r := rand.New(rand.NewPCG(1, 1))
	for i := range sizes {
		sizes[i] = mixedSize(r)
	}
	for q := range cfg.Queues {
		for i := range 16 {
			if q != cfg.HQ {
				e.Enqueue(q, Packet{Len: sizes[(q*16+i)%64]}, 0)
			}
		}
	}
	var now int64
	b.ReportAllocs()
	for b.Loop() {
		now++
		_, q, _ := e.Dequeue(now)
		e.Enqueue(q, Packet{Len: sizes[now&63]}, now)
	}
}

func BenchmarkEgressEnqueueDequeue(b *testing.B) {
	benchEgress(b, EgressConfig{Queues: 8, HQ: -1, Capacity: 64}, nil)
}

func BenchmarkEgressEnqueueDequeueECN(b *testing.B) {
	ecn := ECNConfig{KminBytes: 1000, KmaxBytes: 100_000, Pmax: 0.2}
	benchEgress(b, EgressConfig{Queues: 8, HQ: -1, Capacity: 64, ECN: ecn}, nil)
}

func BenchmarkEgressEnqueueDequeueHooks(b *testing.B) {
	benchEgress(b, EgressConfig{Queues: 8, HQ: 7, Capacity: 64, Groups: []uint64{0x3f, 0x40}}, &countHooks{})
}
