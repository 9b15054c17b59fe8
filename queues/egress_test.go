package queues

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
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

// size draws frame sizes for a queue of a DRR test.
type size func(r *rand.Rand) uint32

func mixedSize(r *rand.Rand) uint32 { return uint32(64 + r.IntN(1518-64+1)) }

func fixedSize(n uint32) size { return func(*rand.Rand) uint32 { return n } }

// Backlogged queues get byte shares of the link within 1% of their
// quanta's shares, whatever their frame sizes.
func TestEgressDRRShares(t *testing.T) {
	mixed := size(mixedSize)
	tests := []struct {
		name   string
		quanta []int // nil: DefaultQuantum
		sizes  []size
		hq     int
	}{
		{"quanta 1500/3000/4500, mixed sizes", []int{1500, 3000, 4500}, []size{mixed, mixed, mixed}, -1},
		{"equal quanta, 64 vs 1518 vs mixed", nil, []size{fixedSize(64), fixedSize(1518), mixed}, -1},
		{"equal quanta, 64 vs 1518", []int{1500, 1500}, []size{fixedSize(64), fixedSize(1518)}, -1},
		{"quanta below the frame size", []int{100, 300, 50}, []size{mixed, fixedSize(1518), fixedSize(64)}, -1},
		{"jumbo frames, default quanta", nil, []size{fixedSize(9000), mixed, fixedSize(64)}, -1},
		{"8 queues and an idle HQ", []int{1518, 1518, 3036, 3036, 1000, 500, 6000, 1}, []size{mixed, fixedSize(64), mixed, fixedSize(1518), mixed, mixed, fixedSize(200), mixed}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.sizes)
			e := newEgress(t, EgressConfig{Queues: n, HQ: tt.hq, Quantum: tt.quanta, Capacity: 64})
			r := rand.New(rand.NewPCG(1, 2))
			for q := range n {
				if q == tt.hq {
					continue
				}
				for e.QueueLen(q) < 64 {
					e.Enqueue(q, Packet{Len: tt.sizes[q](r)}, 0)
				}
			}
			sent := make([]float64, n)
			var total float64
			for i := range 200_000 {
				p, q, ok := e.Dequeue(int64(i))
				if !ok {
					t.Fatal("backlogged egress not eligible")
				}
				sent[q] += float64(p.Len)
				total += float64(p.Len)
				if ok, _ := e.Enqueue(q, Packet{Len: tt.sizes[q](r)}, int64(i)); !ok {
					t.Fatal("refill refused")
				}
			}
			var sum float64
			quantum := func(q int) float64 {
				if tt.quanta == nil {
					return DefaultQuantum
				}
				return float64(tt.quanta[q])
			}
			for q := range n {
				if q != tt.hq {
					sum += quantum(q)
				}
			}
			for q := range n {
				if q == tt.hq {
					if sent[q] != 0 {
						t.Errorf("idle HQ sent %v bytes", sent[q])
					}
					continue
				}
				want := quantum(q) / sum
				got := sent[q] / total
				if math.Abs(got-want)/want > 0.01 {
					t.Errorf("queue %d: share %.4f, want %.4f", q, got, want)
				}
			}
		})
	}
}

// The order of classic DRR, worked by hand.
func TestEgressDRROrder(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 2, HQ: -1, Quantum: []int{500, 500}, Capacity: 8})
	for i := range 4 {
		e.Enqueue(0, Packet{Addr: uint64(i), Len: 300}, 0)
		e.Enqueue(1, Packet{Addr: uint64(10 + i), Len: 200}, 0)
	}
	// q0 500: 300 (200 left) | q1 500: 200, 200 (100 left) |
	// q0 700: 300, 300 (100 left) | q1 600: 200, 200, empty: deficit lost |
	// q0 600: 300, empty.
	want := []uint64{0, 10, 11, 1, 2, 12, 13, 3}
	for i, w := range want {
		p, _, ok := e.Dequeue(0)
		if !ok || p.Addr != w {
			t.Fatalf("dequeue %d: %d %v, want %d", i, p.Addr, ok, w)
		}
		if i == 6 && e.q[1].deficit != 0 {
			t.Fatalf("emptied queue kept deficit %d", e.q[1].deficit)
		}
	}
	if e.q[0].deficit != 0 || e.Len() != 0 {
		t.Fatalf("deficit %d len %d after draining", e.q[0].deficit, e.Len())
	}
}

// refDRR is deficit round robin written plainly: queues visited in index
// order, one quantum per visit, no shortcuts.
type refDRR struct {
	pk               [][]Packet
	quantum, deficit []int
	cur, last        int
}

func (r *refDRR) dequeue() (Packet, int, bool) {
	n := len(r.pk)
	backlog := false
	for q := range n {
		backlog = backlog || len(r.pk[q]) > 0
	}
	if !backlog {
		return Packet{}, -1, false
	}
	for {
		if c := r.cur; c >= 0 {
			if p := r.pk[c][0]; int(p.Len) <= r.deficit[c] {
				r.deficit[c] -= int(p.Len)
				r.pk[c] = r.pk[c][1:]
				if len(r.pk[c]) == 0 {
					r.deficit[c] = 0
					r.cur, r.last = -1, c
				}
				return p, c, true
			}
			r.cur, r.last = -1, c
		}
		for i := 1; i <= n; i++ {
			if c := (r.last + i) % n; len(r.pk[c]) > 0 {
				r.cur = c
				r.deficit[c] += r.quantum[c]
				break
			}
		}
	}
}

// The egress sends exactly what plain DRR sends, in the same order, for
// quanta far below and far above the frame sizes.
func TestEgressDRRReference(t *testing.T) {
	for _, tt := range []struct {
		name   string
		quanta []int
	}{
		{"tiny quanta", []int{1, 2, 3, 5, 7}},
		{"small quanta", []int{64, 100, 300, 17, 1000}},
		{"default quanta", []int{1518, 1518, 1518, 1518, 1518}},
		{"large quanta", []int{10_000, 1, 3000, 64, 50_000}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.quanta)
			e := newEgress(t, EgressConfig{Queues: n, HQ: -1, Quantum: tt.quanta, Capacity: 32})
			ref := &refDRR{pk: make([][]Packet, n), quantum: tt.quanta, deficit: make([]int, n), cur: -1, last: n - 1}
			r := rand.New(rand.NewPCG(13, uint64(n)))
			for i := range 50_000 {
				if r.IntN(2) == 0 {
					q := r.IntN(n)
					p := Packet{Addr: uint64(i), Len: uint32(r.IntN(2000))}
					if ok, _ := e.Enqueue(q, p, 0); ok {
						ref.pk[q] = append(ref.pk[q], p)
					}
					continue
				}
				p, q, ok := e.Dequeue(0)
				wp, wq, wok := ref.dequeue()
				if p != wp || q != wq || ok != wok {
					t.Fatalf("step %d: dequeued %+v from %d (%v), want %+v from %d (%v)", i, p, q, ok, wp, wq, wok)
				}
			}
		})
	}
}

// With data queues backlogged, every HQ packet leaves before any other.
func TestEgressHQFirst(t *testing.T) {
	for _, hq := range []int{0, 3, 7} {
		t.Run(fmt.Sprintf("HQ %d", hq), func(t *testing.T) {
			e := newEgress(t, EgressConfig{Queues: 8, HQ: hq, Capacity: 64})
			r := rand.New(rand.NewPCG(3, uint64(hq)))
			for q := range 8 {
				for q != hq && e.QueueLen(q) < 32 {
					e.Enqueue(q, Packet{Len: mixedSize(r)}, 0)
				}
			}
			e.Pause(hq, 0, 0) // ignored
			if e.Paused(hq) {
				t.Fatal("HQ paused")
			}
			var next, want uint64 // HQ sequence numbers enqueued, dequeued
			for i := range 50_000 {
				now := int64(i)
				if r.IntN(5) == 0 {
					for range 1 + r.IntN(3) {
						if ok, mark := e.Enqueue(hq, Packet{Addr: next, Len: 64}, now); ok {
							next++
						} else if mark {
							t.Fatal("refused packet marked")
						}
					}
				}
				if r.IntN(7) == 0 {
					e.Pause((hq+1+r.IntN(7))%8, now, now+int64(r.IntN(20)))
				}
				hqBacklog := e.QueueLen(hq) > 0
				p, q, ok := e.Dequeue(now)
				switch {
				case !ok:
					continue
				case hqBacklog && q != hq:
					t.Fatalf("step %d: queue %d served with %d HQ packets waiting", i, q, e.QueueLen(hq))
				case q == hq:
					if p.Addr != want {
						t.Fatalf("HQ packet %d out of order, want %d", p.Addr, want)
					}
					want++
				default:
					e.Enqueue(q, Packet{Len: mixedSize(r)}, now)
				}
			}
			if want == 0 || want+uint64(e.QueueLen(hq)) != next {
				t.Fatalf("HQ: %d enqueued, %d dequeued, %d queued", next, want, e.QueueLen(hq))
			}
		})
	}
}

func TestEgressPause(t *testing.T) {
	// backlog fills queues qs of e with 100-byte packets.
	backlog := func(e *Egress, qs ...int) {
		for _, q := range qs {
			for e.QueueLen(q) < 8 {
				e.Enqueue(q, Packet{Len: 100}, 0)
			}
		}
	}
	// serve dequeues from t0 to t1 (exclusive), refilling, and counts the
	// packets of each queue.
	serve := func(t *testing.T, e *Egress, t0, t1 int64) []int {
		t.Helper()
		n := make([]int, e.Queues())
		for now := t0; now < t1; now++ {
			_, q, ok := e.Dequeue(now)
			if !ok {
				continue
			}
			n[q]++
			e.Enqueue(q, Packet{Len: 100}, now)
		}
		return n
	}
	cfg := EgressConfig{Queues: 4, HQ: 3, Capacity: 8}
	tests := []struct {
		name string
		run  func(t *testing.T, e *Egress)
	}{
		{"until Resume, others served", func(t *testing.T, e *Egress) {
			backlog(e, 0, 1, 2)
			e.Pause(1, 0, 0)
			if !e.Paused(1) {
				t.Fatal("not paused")
			}
			if _, ok := e.NextExpiry(); ok {
				t.Fatal("pause without expiry has one")
			}
			n := serve(t, e, 0, 1000)
			if n[1] != 0 || n[0] < 400 || n[2] < 400 {
				t.Fatalf("served %v while queue 1 paused", n)
			}
			if s := e.Stats(1); !s.Paused || s.PausedNs != 999 {
				t.Fatalf("paused %v for %d ns, want 999", s.Paused, s.PausedNs)
			}
			e.Resume(1, 2000)
			if e.Paused(1) || e.Stats(1).PausedNs != 2000 {
				t.Fatalf("after resume: paused %v, %d ns", e.Paused(1), e.Stats(1).PausedNs)
			}
			n = serve(t, e, 2000, 2300)
			if n[1] < 90 {
				t.Fatalf("served %v after resume", n)
			}
			e.Resume(1, 3000) // not paused: nothing
			if e.Stats(1).PausedNs != 2000 {
				t.Fatal("resume of a running queue counted time")
			}
		}},
		{"expiry of an empty queue, read by PausedAt", func(t *testing.T, e *Egress) {
			e.Pause(2, 100, 500)
			if !e.PausedAt(2, 499) {
				t.Fatal("not paused at 499")
			}
			// Nothing dequeues an empty queue: Paused keeps the lapsed
			// pause until a call that takes the time lifts it.
			if !e.Paused(2) {
				t.Fatal("Paused lifted a pause without a clock")
			}
			if e.PausedAt(2, 500) || e.Paused(2) {
				t.Fatal("paused at its expiry")
			}
			if s := e.Stats(2); s.PausedNs != 400 {
				t.Fatalf("paused %d ns, want 400", s.PausedNs)
			}
		}},
		{"expiry, alone", func(t *testing.T, e *Egress) {
			backlog(e, 0)
			e.Pause(0, 100, 500)
			if at, ok := e.NextExpiry(); !ok || at != 500 {
				t.Fatalf("next expiry %d %v", at, ok)
			}
			if e.Eligible(499) {
				t.Fatal("eligible at 499")
			}
			if _, _, ok := e.Dequeue(499); ok {
				t.Fatal("dequeued at 499")
			}
			if !e.Eligible(500) {
				t.Fatal("not eligible at 500")
			}
			if _, q, ok := e.Dequeue(500); !ok || q != 0 {
				t.Fatalf("dequeue at 500: %d %v", q, ok)
			}
			if e.Paused(0) || e.Stats(0).PausedNs != 400 {
				t.Fatalf("paused %v for %d ns, want 400", e.Paused(0), e.Stats(0).PausedNs)
			}
			if _, ok := e.NextExpiry(); ok {
				t.Fatal("expiry left after lifting")
			}
		}},
		{"expiry, others served", func(t *testing.T, e *Egress) {
			backlog(e, 0, 1, 2)
			e.Pause(1, 0, 500)
			n := serve(t, e, 0, 500)
			if n[1] != 0 || n[0] < 200 || n[2] < 200 {
				t.Fatalf("served %v before expiry", n)
			}
			n = serve(t, e, 500, 600)
			if n[1] < 30 {
				t.Fatalf("served %v after expiry", n)
			}
			if e.Stats(1).PausedNs != 500 {
				t.Fatalf("paused %d ns", e.Stats(1).PausedNs)
			}
		}},
		{"late dequeue counts until the expiry", func(t *testing.T, e *Egress) {
			backlog(e, 0)
			e.Pause(0, 0, 500)
			if _, q, ok := e.Dequeue(800); !ok || q != 0 {
				t.Fatal("not served after expiry")
			}
			if e.Stats(0).PausedNs != 500 {
				t.Fatalf("paused %d ns", e.Stats(0).PausedNs)
			}
		}},
		{"re-pause extends and shortens", func(t *testing.T, e *Egress) {
			backlog(e, 0)
			e.Pause(0, 0, 500)
			e.Pause(0, 100, 1000)
			if at, _ := e.NextExpiry(); at != 1000 {
				t.Fatalf("extended expiry %d", at)
			}
			if _, _, ok := e.Dequeue(600); ok {
				t.Fatal("served before the extended expiry")
			}
			e.Pause(0, 700, 800)
			if _, _, ok := e.Dequeue(799); ok {
				t.Fatal("served before the shortened expiry")
			}
			if _, _, ok := e.Dequeue(800); !ok {
				t.Fatal("not served at the shortened expiry")
			}
			if e.Stats(0).PausedNs != 800 {
				t.Fatalf("paused %d ns", e.Stats(0).PausedNs)
			}
		}},
		{"re-pause without expiry clears it", func(t *testing.T, e *Egress) {
			backlog(e, 0)
			e.Pause(0, 0, 500)
			e.Pause(0, 10, 0)
			if _, ok := e.NextExpiry(); ok {
				t.Fatal("expiry kept")
			}
			if _, _, ok := e.Dequeue(10_000); ok {
				t.Fatal("served")
			}
			e.Resume(0, 20_000)
			if _, _, ok := e.Dequeue(20_000); !ok || e.Stats(0).PausedNs != 20_000 {
				t.Fatalf("after resume: %d ns", e.Stats(0).PausedNs)
			}
		}},
		{"expiry in the past resumes", func(t *testing.T, e *Egress) {
			backlog(e, 0)
			e.Pause(0, 100, 100)
			if e.Paused(0) {
				t.Fatal("paused by an expired pause")
			}
			e.Pause(0, 200, 0)
			e.Pause(0, 300, 250)
			if e.Paused(0) || e.Stats(0).PausedNs != 100 {
				t.Fatalf("paused %v for %d ns", e.Paused(0), e.Stats(0).PausedNs)
			}
		}},
		{"earliest expiry", func(t *testing.T, e *Egress) {
			backlog(e, 0, 1, 2)
			e.Pause(0, 0, 900)
			e.Pause(1, 0, 300)
			e.Pause(2, 0, 600)
			for _, want := range []int64{300, 600, 900} {
				at, ok := e.NextExpiry()
				if !ok || at != want {
					t.Fatalf("next expiry %d %v, want %d", at, ok, want)
				}
				e.Eligible(at)
			}
			if _, ok := e.NextExpiry(); ok {
				t.Fatal("expiry left")
			}
			e.Pause(0, 1000, 2000)
			e.Pause(1, 1000, 1500)
			e.Resume(1, 1100)
			if at, _ := e.NextExpiry(); at != 2000 {
				t.Fatalf("next expiry %d after resume", at)
			}
		}},
		{"HQ cannot be paused", func(t *testing.T, e *Egress) {
			e.Enqueue(3, Packet{Len: 64}, 0)
			e.Pause(3, 0, 1000)
			if e.Paused(3) {
				t.Fatal("HQ paused")
			}
			if _, ok := e.NextExpiry(); ok {
				t.Fatal("HQ pause has an expiry")
			}
			if _, q, ok := e.Dequeue(1); !ok || q != 3 {
				t.Fatal("HQ not served")
			}
		}},
		{"paused mid-visit loses its deficit", func(t *testing.T, e *Egress) {
			backlog(e, 0, 1)
			if _, q, _ := e.Dequeue(0); q != 0 {
				t.Fatalf("first visit to %d", q)
			}
			e.Pause(0, 1, 0)
			if e.q[0].deficit != 0 {
				t.Fatalf("deficit %d kept", e.q[0].deficit)
			}
			if _, q, _ := e.Dequeue(2); q != 1 {
				t.Fatalf("served %d", q)
			}
			e.Resume(0, 3)
			// Queue 1 finishes its visit (1518 bytes: 15 packets of 100).
			for i := range 14 {
				if _, q, _ := e.Dequeue(4); q != 1 {
					t.Fatalf("packet %d of the visit from %d", i, q)
				}
				e.Enqueue(1, Packet{Len: 100}, 4)
			}
			if _, q, _ := e.Dequeue(5); q != 0 {
				t.Fatalf("after queue 1's visit: %d", q)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newEgress(t, cfg)) })
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

func TestEgressECN(t *testing.T) {
	const (
		kmin = 10_000
		kmax = 50_000
		pmax = 0.2
		size = 1000
	)
	ecn := ECNConfig{KminBytes: kmin, KmaxBytes: kmax, Pmax: pmax}
	// fraction enqueues packets into queue q holding qbytes and reports
	// the fraction marked.
	fraction := func(e *Egress, q, qbytes, trials int) float64 {
		for e.QueueBytes(q) < qbytes {
			e.Enqueue(q, Packet{Len: size}, 0)
		}
		marks := 0
		for range trials {
			ok, mark := e.Enqueue(q, Packet{Len: size}, 0)
			if !ok {
				panic("ring full")
			}
			if mark {
				marks++
			}
			e.Dequeue(0)
		}
		return float64(marks) / float64(trials)
	}
	for _, tt := range []struct {
		qbytes int
		want   float64
	}{
		{0, 0}, {5000, 0}, {9000, 0}, {kmin, 0},
		{20_000, 0.05}, {30_000, 0.1}, {40_000, 0.15}, {49_000, 0.195},
		{kmax, 1}, {60_000, 1}, {200_000, 1},
	} {
		t.Run(fmt.Sprintf("%06d bytes", tt.qbytes), func(t *testing.T) {
			e := newEgress(t, EgressConfig{Queues: 1, HQ: -1, Capacity: 256, ECN: ecn, Seed: 42})
			got := fraction(e, 0, tt.qbytes, 200_000)
			switch tt.want {
			case 0, 1:
				if got != tt.want {
					t.Fatalf("marked %.5f, want %v", got, tt.want)
				}
			default:
				if math.Abs(got-tt.want)/tt.want > 0.03 {
					t.Fatalf("marked %.5f, want %.5f", got, tt.want)
				}
			}
		})
	}
	t.Run("never the HQ", func(t *testing.T) {
		e := newEgress(t, EgressConfig{Queues: 2, HQ: 1, Capacity: 256, ECN: ecn})
		if got := fraction(e, 1, 100_000, 1000); got != 0 {
			t.Fatalf("HQ marked %.3f", got)
		}
	})
	t.Run("marking off", func(t *testing.T) {
		e := newEgress(t, EgressConfig{Queues: 1, HQ: -1, Capacity: 256})
		if got := fraction(e, 0, 100_000, 1000); got != 0 {
			t.Fatalf("marked %.3f", got)
		}
	})
	t.Run("kmin == kmax is a step", func(t *testing.T) {
		step := ECNConfig{KminBytes: 20_000, KmaxBytes: 20_000, Pmax: 0.5}
		e := newEgress(t, EgressConfig{Queues: 1, HQ: -1, Capacity: 256, ECN: step})
		if got := fraction(e, 0, 19_000, 1000); got != 0 {
			t.Fatalf("below: marked %.3f", got)
		}
		if got := fraction(e, 0, 20_000, 1000); got != 1 {
			t.Fatalf("at: marked %.3f", got)
		}
	})
	t.Run("deterministic for a seed", func(t *testing.T) {
		marks := func(seed uint64) []bool {
			e := newEgress(t, EgressConfig{Queues: 1, HQ: -1, Capacity: 256, ECN: ecn, Seed: seed})
			for e.QueueBytes(0) < 30_000 {
				e.Enqueue(0, Packet{Len: size}, 0)
			}
			m := make([]bool, 10_000)
			for i := range m {
				_, m[i] = e.Enqueue(0, Packet{Len: size}, 0)
				e.Dequeue(0)
			}
			return m
		}
		same := func(a, b []bool) bool {
			for i := range a {
				if a[i] != b[i] {
					return false
				}
			}
			return true
		}
		if !same(marks(7), marks(7)) || !same(marks(0), marks(0)) {
			t.Fatal("same seed, different marks")
		}
		if same(marks(7), marks(8)) || same(marks(0), marks(7)) {
			t.Fatal("different seeds, same marks")
		}
	})
}

type event struct {
	deq    bool
	q      int
	p      Packet
	qbytes int // QueueBytes(q) when the hook ran
}

type recorder struct {
	e      *Egress
	events []event
}

func (r *recorder) Enqueued(q int, p Packet) { r.add(false, q, p) }
func (r *recorder) Dequeued(q int, p Packet) { r.add(true, q, p) }
func (r *recorder) add(deq bool, q int, p Packet) {
	b := 0
	if r.e != nil {
		b = r.e.QueueBytes(q)
	}
	r.events = append(r.events, event{deq, q, p, b})
}

// Hooks run once per packet, in order, with the packet's queue, after the
// queue has changed.
func TestEgressHooks(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 4, HQ: 3, Capacity: 4})
	h := &recorder{e: e}
	e.SetHooks(h)
	r := rand.New(rand.NewPCG(9, 9))
	var want []event
	for i := range 2000 {
		if r.IntN(2) == 0 {
			q := r.IntN(4)
			p := Packet{Addr: uint64(i), Len: mixedSize(r), Meta: uint64(q)}
			if ok, _ := e.Enqueue(q, p, int64(i)); ok {
				want = append(want, event{false, q, p, e.QueueBytes(q)})
			}
		} else if p, q, ok := e.Dequeue(int64(i)); ok {
			want = append(want, event{true, q, p, e.QueueBytes(q)})
			if p.Meta != uint64(q) {
				t.Fatalf("packet of queue %d dequeued from %d", p.Meta, q)
			}
		}
	}
	if len(h.events) != len(want) {
		t.Fatalf("%d hook calls for %d packets moved", len(h.events), len(want))
	}
	for i := range want {
		if h.events[i] != want[i] {
			t.Fatalf("call %d: %+v, want %+v", i, h.events[i], want[i])
		}
	}
	e.SetHooks(nil)
	e.Enqueue(0, Packet{Len: 1}, 0)
	e.Dequeue(0)
	if len(h.events) != len(want) {
		t.Fatal("hooks called after SetHooks(nil)")
	}
}

// flowControl pauses a queue when it holds more than xoff bytes and
// resumes it at xon or less, from the hooks, as PortFC does on a switch.
type flowControl struct {
	e         *Egress
	now       *int64
	xoff, xon int
}

func (f *flowControl) Enqueued(q int, p Packet) {
	if f.e.QueueBytes(q) > f.xoff {
		f.e.Pause(q, *f.now, 0)
	}
}

func (f *flowControl) Dequeued(q int, p Packet) {
	if f.e.QueueBytes(q) <= f.xon {
		f.e.Resume(q, *f.now)
	}
	// A dequeue may also pause the queue it came from.
	if p.Meta == 1 {
		f.e.Pause(q, *f.now, *f.now+5)
	}
}

// Hooks that pause and resume queues never get a paused queue served.
func TestEgressHooksPause(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 4, HQ: -1, Capacity: 64, Quantum: []int{3000, 500, 1500, 64}})
	var now int64
	e.SetHooks(&flowControl{e: e, now: &now, xoff: 20_000, xon: 10_000})
	r := rand.New(rand.NewPCG(21, 22))
	for i := range 100_000 {
		now = int64(i)
		if r.IntN(3) != 0 {
			e.Enqueue(r.IntN(4), Packet{Len: mixedSize(r), Meta: uint64(r.IntN(20))}, now)
			continue
		}
		e.setNow(now) // lift the pauses Dequeue would lift
		paused := make([]bool, 4)
		for q := range paused {
			paused[q] = e.Paused(q)
		}
		if _, q, ok := e.Dequeue(now); ok && paused[q] {
			t.Fatalf("step %d: paused queue %d served", i, q)
		}
	}
	for q := range 4 {
		if s := e.Stats(q); s.PausedNs == 0 || s.DeqPackets == 0 {
			t.Errorf("queue %d: paused %d ns, sent %d packets: the test did not exercise it", q, s.PausedNs, s.DeqPackets)
		}
	}
}

// model is a plain reference of an egress's visible behaviour.
type model struct {
	hq, capacity int
	now          int64
	pk           [][]Packet
	paused       []bool
	until, since []int64
	pausedNs     []int64
	enq, deq     int
}

func (m *model) setNow(now int64) {
	m.now = now
	for q := range m.pk {
		if m.paused[q] && m.until[q] != 0 && m.until[q] <= now {
			m.pausedNs[q] += m.until[q] - m.since[q]
			m.paused[q] = false
		}
	}
}

func (m *model) resume(q int) {
	if m.paused[q] {
		m.pausedNs[q] += m.now - m.since[q]
		m.paused[q] = false
	}
}

// runOps drives an egress and the model with ops and fails t on any
// difference: a paused queue served, HQ not first, a packet out of order,
// lost or invented, or counters that disagree.
func runOps(t *testing.T, cfg EgressConfig, ops []byte) {
	e := newEgress(t, cfg)
	m := &model{hq: cfg.HQ, capacity: cfg.Capacity}
	n := cfg.Queues
	m.pk = make([][]Packet, n)
	m.paused = make([]bool, n)
	m.until = make([]int64, n)
	m.since = make([]int64, n)
	m.pausedNs = make([]int64, n)
	var now int64
	var seq uint64
	next := func() int {
		if len(ops) == 0 {
			return 0
		}
		b := ops[0]
		ops = ops[1:]
		return int(b)
	}
	for step := 0; len(ops) > 0; step++ {
		switch op := next() % 8; op {
		case 0, 1: // enqueue
			q := next() % n
			p := Packet{Addr: seq, Len: uint32(next() * 7), Meta: uint64(q)}
			seq++
			ok, mark := e.Enqueue(q, p, now)
			if want := len(m.pk[q]) < m.capacity; ok != want {
				t.Fatalf("step %d: enqueue into %d (len %d): ok %v", step, q, len(m.pk[q]), ok)
			}
			if mark && (q == m.hq || !cfg.ECN.On()) {
				t.Fatalf("step %d: mark on queue %d", step, q)
			}
			if ok {
				m.pk[q] = append(m.pk[q], p)
				m.enq++
			}
		case 2, 3: // dequeue
			m.setNow(now)
			p, q, ok := e.Dequeue(now)
			eligible := false
			for i := range n {
				eligible = eligible || len(m.pk[i]) > 0 && !m.paused[i]
			}
			switch {
			case ok != eligible:
				t.Fatalf("step %d: dequeue ok %v, eligible %v", step, ok, eligible)
			case !ok:
			case m.paused[q]:
				t.Fatalf("step %d: paused queue %d served at %d (until %d)", step, q, now, m.until[q])
			case m.hq >= 0 && len(m.pk[m.hq]) > 0 && q != m.hq:
				t.Fatalf("step %d: queue %d served before the HQ", step, q)
			case len(m.pk[q]) == 0 || p != m.pk[q][0]:
				t.Fatalf("step %d: queue %d gave %+v, model %v", step, q, p, m.pk[q])
			default:
				m.pk[q] = m.pk[q][1:]
				m.deq++
			}
		case 4: // pause
			q := next() % n
			var until int64
			if d := next(); d%4 != 0 {
				until = now + int64(d-128)*10
			}
			m.setNow(now)
			e.Pause(q, now, until)
			switch {
			case q == m.hq:
			case until != 0 && until <= now:
				m.resume(q)
			default:
				if !m.paused[q] {
					m.paused[q], m.since[q] = true, now
				}
				m.until[q] = until
			}
		case 5: // resume
			q := next() % n
			m.setNow(now)
			e.Resume(q, now)
			m.resume(q)
		case 6: // time passes
			now += int64(next() * 10)
		case 7:
			m.setNow(now)
			eligible := false
			for i := range n {
				eligible = eligible || len(m.pk[i]) > 0 && !m.paused[i]
			}
			if got := e.Eligible(now); got != eligible {
				t.Fatalf("step %d: eligible %v, want %v", step, got, eligible)
			}
		}
		// Conservation and state, after every step.
		packets, bytes := 0, 0
		var expiry int64 = math.MaxInt64
		for q := range n {
			qb := 0
			for _, p := range m.pk[q] {
				qb += int(p.Len)
			}
			packets += len(m.pk[q])
			bytes += qb
			s := e.Stats(q)
			pausedNs := m.pausedNs[q]
			if m.paused[q] {
				pausedNs += m.now - m.since[q]
				if m.until[q] != 0 && m.until[q] < expiry {
					expiry = m.until[q]
				}
			}
			if e.QueueLen(q) != len(m.pk[q]) || e.QueueBytes(q) != qb || s.Packets != len(m.pk[q]) || s.Bytes != qb ||
				s.Paused != m.paused[q] || e.Paused(q) != m.paused[q] || s.PausedNs != pausedNs {
				t.Fatalf("step %d: queue %d: %d packets %d bytes, paused %v for %d ns; model %d %d %v %d",
					step, q, e.QueueLen(q), e.QueueBytes(q), s.Paused, s.PausedNs, len(m.pk[q]), qb, m.paused[q], pausedNs)
			}
		}
		if e.Len() != packets || e.Bytes() != bytes || m.enq-m.deq != packets {
			t.Fatalf("step %d: len %d bytes %d, model %d %d (%d in, %d out)", step, e.Len(), e.Bytes(), packets, bytes, m.enq, m.deq)
		}
		at, ok := e.NextExpiry()
		if ok != (expiry != math.MaxInt64) || ok && at != expiry {
			t.Fatalf("step %d: next expiry %d %v, model %d", step, at, ok, expiry)
		}
	}
	var in, out uint64
	for q := range n {
		s := e.Stats(q)
		in += s.EnqPackets
		out += s.DeqPackets
	}
	if in != uint64(m.enq) || out != uint64(m.deq) {
		t.Fatalf("stats count %d in, %d out; model %d, %d", in, out, m.enq, m.deq)
	}
}

// configFrom makes a small egress configuration out of three bytes.
func configFrom(a, b, c byte) EgressConfig {
	n := 1 + int(a)%9
	cfg := EgressConfig{Queues: n, HQ: int(b)%(n+1) - 1, Capacity: 1 << (c % 4), Seed: uint64(c)}
	if b&0x80 != 0 {
		cfg.Quantum = make([]int, n)
		for i := range cfg.Quantum {
			cfg.Quantum[i] = 1 + (int(a)*31+i*97)%2000
		}
	}
	if c&0x10 != 0 {
		cfg.ECN = ECNConfig{KminBytes: 100, KmaxBytes: 2000, Pmax: 0.5}
	}
	cfg.Groups = []uint64{uint64(a) * 0x9E37 & allQueues(n)}
	return cfg
}

func TestEgressRandomOps(t *testing.T) {
	for seed := range uint64(64) {
		r := rand.New(rand.NewPCG(seed, 77))
		ops := make([]byte, 20_000)
		for i := range ops {
			ops[i] = byte(r.Uint32())
		}
		cfg := configFrom(ops[0], ops[1], ops[2])
		t.Run(strconv.Itoa(int(seed)), func(t *testing.T) { runOps(t, cfg, ops[3:]) })
	}
}

func FuzzEgress(f *testing.F) {
	f.Add(byte(3), byte(3), byte(2), []byte{0, 0, 10, 0, 1, 20, 4, 1, 200, 2, 0, 0, 7, 6, 50, 2, 5, 1, 3})
	f.Add(byte(8), byte(0x88), byte(0x13), []byte{1, 7, 255, 0, 2, 1, 4, 2, 3, 6, 255, 3, 2, 7, 4, 0, 0, 2})
	f.Fuzz(func(t *testing.T, a, b, c byte, ops []byte) {
		runOps(t, configFrom(a, b, c), ops)
	})
}

// A backlogged egress behind a shaper sends at the link rate, within 2%,
// over one second of virtual time, and DRR keeps its shares.
func TestEgressShaped(t *testing.T) {
	const rate = 1e9
	e := newEgress(t, EgressConfig{Queues: 4, HQ: 3, Quantum: []int{1500, 3000, 4500, 1500}, Capacity: 64})
	s := NewShaper(rate, 50*time.Microsecond, 50*time.Microsecond)
	r := rand.New(rand.NewPCG(11, 12))
	for q := range 3 {
		for e.QueueLen(q) < 64 {
			e.Enqueue(q, Packet{Len: mixedSize(r)}, 0)
		}
	}
	var wire float64
	sent := make([]float64, 4)
	for now := int64(0); now < 1e9; now += 10_000 {
		for s.Ready(now) {
			p, q, ok := e.Dequeue(now)
			if !ok {
				t.Fatal("backlogged egress not eligible")
			}
			s.Send(now, int(p.Len))
			wire += float64(p.Len + WireOverhead)
			sent[q] += float64(p.Len)
			e.Enqueue(q, Packet{Len: mixedSize(r)}, now)
		}
	}
	if got := wire * 8; math.Abs(got-rate)/rate > 0.02 {
		t.Fatalf("%.0f bit/s", got)
	}
	total := sent[0] + sent[1] + sent[2]
	for q, want := range []float64{1. / 6, 2. / 6, 3. / 6} {
		if got := sent[q] / total; math.Abs(got-want)/want > 0.01 {
			t.Errorf("queue %d: share %.4f, want %.4f", q, got, want)
		}
	}
}

type countHooks struct{ enq, deq int }

func (h *countHooks) Enqueued(int, Packet) { h.enq++ }
func (h *countHooks) Dequeued(int, Packet) { h.deq++ }

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
				e.Enqueue(q, Packet{Len: uint32(64 + now%1400)}, now)
				if tt.pause {
					e.Pause(int(now%7), now, now+3)
					e.Resume(int((now+3)%7), now)
				}
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per packet", allocs)
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

// Discard takes frames out of every sum and through the Dequeued hook
// without counting them as sent.
func TestEgressDiscard(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Capacity: 8, Groups: []uint64{0b011}})
	h := &recorder{e: e}
	e.SetHooks(h)
	for i := range 3 {
		e.Enqueue(1, Packet{Addr: uint64(i), Len: 100}, 0)
	}
	e.Pause(1, 0, 0)
	p, ok := e.Discard(1)
	if !ok || p.Addr != 0 {
		t.Fatalf("Discard: %+v %v, want the head", p, ok)
	}
	if e.QueueBytes(1) != 200 || e.Bytes() != 200 || e.Len() != 2 || e.GroupBytes(0) != 200 {
		t.Errorf("after discard: queue %d, egress %d/%d, group %d", e.QueueBytes(1), e.Bytes(), e.Len(), e.GroupBytes(0))
	}
	if last := h.events[len(h.events)-1]; !last.deq || last.p.Addr != 0 {
		t.Errorf("hook saw %+v, want the discarded packet's dequeue", last)
	}
	e.Discard(1)
	e.Discard(1)
	if _, ok := e.Discard(1); ok || e.Len() != 0 {
		t.Error("Discard of an empty queue reported a packet")
	}
	if s := e.Stats(1); s.DeqPackets != 0 || s.EnqPackets != 3 {
		t.Errorf("stats %+v: a discard is not a dequeue", s)
	}
	e.Resume(1, 1)
	if _, _, ok := e.Dequeue(2); ok {
		t.Error("discarded packets dequeued")
	}
}

// An overridden queue ignores pauses (and counts them) until the
// override ends.
func TestEgressOverride(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Capacity: 8})
	e.Enqueue(0, Packet{Len: 100}, 0)
	e.Enqueue(0, Packet{Len: 100}, 0)
	e.Pause(0, 0, 1000)
	if e.Eligible(1) {
		t.Fatal("paused queue eligible")
	}
	e.Override(0, 10, true)
	if e.Paused(0) || !e.Overridden(0) || !e.Eligible(10) {
		t.Fatal("override did not resume the queue")
	}
	e.Pause(0, 20, 0)
	e.Pause(0, 21, 5000)
	if e.Paused(0) {
		t.Fatal("overridden queue paused")
	}
	if s := e.Stats(0); s.IgnoredPauses != 2 || !s.Overridden || s.PausedNs != 10 {
		t.Errorf("stats %+v: want 2 ignored pauses, overridden, 10 ns paused", s)
	}
	if _, q, ok := e.Dequeue(30); !ok || q != 0 {
		t.Fatal("overridden queue not served")
	}
	e.Override(0, 40, false)
	e.Pause(0, 50, 0)
	if !e.Paused(0) || e.Overridden(0) {
		t.Fatal("queue ignores pauses after the override ended")
	}
	if _, _, ok := e.Dequeue(60); ok {
		t.Fatal("paused queue served")
	}
}

// markerHooks marks what queue 1 would not, and never queue 0, and
// records what it was asked.
type markerHooks struct {
	asked []int // qbytes per call
	reds  []bool
}

func (*markerHooks) Enqueued(int, Packet) {}
func (*markerHooks) Dequeued(int, Packet) {}
func (m *markerHooks) Mark(q, qbytes int, red bool) bool {
	m.asked = append(m.asked, qbytes)
	m.reds = append(m.reds, red)
	return q == 1 && !red
}

// Hooks that implement Marker decide the marks: asked with the queue's
// length before the packet and RED's decision, never for the HQ, and not
// at all with marking off.
func TestEgressMarker(t *testing.T) {
	ecn := ECNConfig{KminBytes: 1000, KmaxBytes: 1000, Pmax: 1} // a step at 1000 B
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Capacity: 256, ECN: ecn})
	m := &markerHooks{}
	e.SetHooks(m)
	var got []bool
	for _, q := range []int{0, 0, 1, 1, 2} {
		_, mark := e.Enqueue(q, Packet{Len: 1000}, 0)
		got = append(got, mark)
	}
	if want := []bool{false, false, true, false, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("marks %v, want %v", got, want)
	}
	if want := []int{0, 1000, 0, 1000}; !reflect.DeepEqual(m.asked, want) {
		t.Errorf("asked with %v bytes, want %v (the HQ never)", m.asked, want)
	}
	if want := []bool{false, true, false, true}; !reflect.DeepEqual(m.reds, want) {
		t.Errorf("RED said %v, want %v", m.reds, want)
	}
	off := newEgress(t, EgressConfig{Queues: 2, HQ: 1, Capacity: 256})
	m2 := &markerHooks{}
	off.SetHooks(m2)
	if _, mark := off.Enqueue(1, Packet{Len: 1000}, 0); mark || len(m2.asked) != 0 {
		t.Errorf("marking off: mark %v, asked %d times", mark, len(m2.asked))
	}
	e.SetHooks(nil)
	if _, mark := e.Enqueue(1, Packet{Len: 1000}, 0); !mark {
		t.Error("hooks removed: RED's mark not kept")
	}
}

// A queue shut by its gate is not dequeued, apart from its pauses: a
// Resume does not open the gate, nor an opened gate lift a pause; it counts no pause time. Head
// shows the next packet of a queue without taking it.
func TestEgressGate(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Capacity: 16})
	for i := range 2 {
		e.Enqueue(0, Packet{Addr: uint64(10 + i), Len: 100}, 0)
		e.Enqueue(1, Packet{Addr: uint64(20 + i), Len: 100}, 0)
	}
	if p, ok := e.Head(1); !ok || p.Addr != 20 {
		t.Fatalf("head of queue 1: %+v %v", p, ok)
	}
	if _, ok := e.Head(2); ok {
		t.Fatal("head of the empty HQ")
	}
	e.Gate(1, true)
	e.Gate(2, true) // the HQ: ignored
	if !e.Gated(1) || e.Gated(2) || e.Paused(1) {
		t.Fatalf("gated %v %v, paused %v", e.Gated(1), e.Gated(2), e.Paused(1))
	}
	e.Resume(1, 0)
	var got []uint64
	for {
		p, _, ok := e.Dequeue(0)
		if !ok {
			break
		}
		got = append(got, p.Addr)
	}
	if !reflect.DeepEqual(got, []uint64{10, 11}) {
		t.Fatalf("while queue 1 is shut: sent %v", got)
	}
	if e.Eligible(0) {
		t.Fatal("eligible with only a shut queue")
	}
	e.Pause(1, 0, 0)
	e.Gate(1, false)
	if e.Eligible(0) {
		t.Fatal("an opened gate lifted the pause")
	}
	e.Resume(1, 5)
	if p, q, ok := e.Dequeue(5); !ok || q != 1 || p.Addr != 20 {
		t.Fatalf("after the gate and the pause: %+v %d %v", p, q, ok)
	}
	if s := e.Stats(1); s.PausedNs != 5 {
		t.Errorf("paused %d ns, want only the pause's 5", s.PausedNs)
	}
}
