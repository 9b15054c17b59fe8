package queues

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

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

// Weights name the data queues in order, the HQ skipped; queues past the
// list keep one full frame; what cannot be weighed is refused.
func TestEgressWeighted(t *testing.T) {
	const d = DefaultQuantum
	tests := []struct {
		name    string
		cfg     EgressConfig
		weights []int
		want    []int  // the quanta
		err     string // the error, in part
	}{
		{"none", EgressConfig{Queues: 3, HQ: 2}, nil, nil, ""},
		{"1:3, the HQ last", EgressConfig{Queues: 3, HQ: 2}, []int{1, 3}, []int{d, 3 * d, d}, ""},
		{"the HQ in the middle", EgressConfig{Queues: 8, HQ: 6}, []int{1, 1, 1, 1, 1, 1, 2}, []int{d, d, d, d, d, d, d, 2 * d}, ""},
		{"the HQ first", EgressConfig{Queues: 3, HQ: 0}, []int{4, 2}, []int{d, 4 * d, 2 * d}, ""},
		{"no HQ", EgressConfig{Queues: 2, HQ: -1}, []int{5, 1}, []int{5 * d, d}, ""},
		{"fewer weights than queues", EgressConfig{Queues: 5, HQ: 4}, []int{2}, []int{2 * d, d, d, d, d}, ""},
		{"a strict queue at 1", EgressConfig{Queues: 4, HQ: 3, Strict: []int{2}}, []int{2, 3, 1}, []int{2 * d, 3 * d, d, d}, ""},
		{"the largest weight", EgressConfig{Queues: 2, HQ: 1}, []int{MaxWeight}, []int{MaxWeight * d, d}, ""},
		{"more weights than queues", EgressConfig{Queues: 3, HQ: 2}, []int{1, 1, 1}, nil, "3 weights for 2 data queues"},
		{"zero", EgressConfig{Queues: 3, HQ: 2}, []int{1, 0}, nil, "weight 0 of queue q1: want 1..1000"},
		{"negative", EgressConfig{Queues: 3, HQ: 2, Names: []string{"A0", "B", "HQ"}}, []int{-2}, nil, "weight -2 of queue A0"},
		{"too large", EgressConfig{Queues: 3, HQ: 2}, []int{MaxWeight + 1}, nil, "weight 1001"},
		{"a strict queue weighed", EgressConfig{Queues: 4, HQ: 3, Strict: []int{2}, Names: []string{"a0", "b0", "RQ", "HQ"}}, []int{1, 1, 2}, nil, "weight 2 of queue RQ: a strict queue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Capacity = 8
			c, err := tt.cfg.Weighted(tt.weights)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				if c.Quantum != nil {
					t.Fatalf("quanta %v set with the error", c.Quantum)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Quantum, tt.want) {
				t.Fatalf("quanta %v, want %v", c.Quantum, tt.want)
			}
			e := newEgress(t, c)
			for q := range c.Queues {
				want := d
				if tt.want != nil {
					want = tt.want[q]
				}
				if q == c.HQ || slices.Contains(c.Strict, q) {
					want = 0
				}
				if got := e.Quantum(q); got != want {
					t.Errorf("queue %d: Quantum %d, want %d", q, got, want)
				}
			}
		})
	}
}

// Two always-backlogged queues of weights 1 and 3 (quanta 1518 and
// 3 x 1518) beside an idle HQ send their bytes 1:3, within 1%, in full
// frames and in frames of any size.
func TestEgressDRRWeights(t *testing.T) {
	for _, tt := range []struct {
		name string
		size size
	}{
		{"full frames", fixedSize(1518)},
		{"mixed sizes", mixedSize},
		{"small frames", fixedSize(64)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := EgressConfig{Queues: 3, HQ: 2, Capacity: 64}.Weighted([]int{1, 3})
			if err != nil {
				t.Fatal(err)
			}
			if want := []int{1518, 3 * 1518, 1518}; !slices.Equal(c.Quantum, want) {
				t.Fatalf("quanta %v, want %v", c.Quantum, want)
			}
			e := newEgress(t, c)
			r := rand.New(rand.NewPCG(5, 6))
			for q := range 2 {
				for e.QueueLen(q) < 64 {
					e.Enqueue(q, Packet{Len: tt.size(r)}, 0)
				}
			}
			var sent [3]float64
			for i := range 100_000 {
				p, q, ok := e.Dequeue(int64(i))
				if !ok || q == 2 {
					t.Fatalf("dequeue %d: queue %d, %v", i, q, ok)
				}
				sent[q] += float64(p.Len)
				if ok, _ := e.Enqueue(q, Packet{Len: tt.size(r)}, int64(i)); !ok {
					t.Fatal("refill refused")
				}
			}
			if got := sent[1] / sent[0]; math.Abs(got-3)/3 > 0.01 {
				t.Fatalf("bytes %.0f : %.0f, ratio %.4f, want 3 within 1%%", sent[0], sent[1], got)
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

// Ideal-FQ's layout (63 data queues and the HQ, default quanta), every
// queue a backlogged flow of its own frame size from 64 to 1518 bytes:
// at every point of a known sequence of dequeues, any two flows have
// been served within three full frames of each other, and a flow that
// joins late is served from then on at the others' pace.
func TestEgressDRRFairPerFlow(t *testing.T) {
	const n = MaxQueues - 1
	e := newEgress(t, EgressConfig{Queues: MaxQueues, HQ: MaxQueues - 1, Capacity: 16})
	sizes := make([]uint32, n)
	for q := range n {
		sizes[q] = uint32(64 + q*(1518-64)/(n-1))
	}
	late := n - 1 // joins after the others have sent 50 rounds
	fill := func(q int) {
		for e.QueueLen(q) < 8 {
			if ok, _ := e.Enqueue(q, Packet{Len: sizes[q]}, 0); !ok {
				t.Fatal("refused")
			}
		}
	}
	for q := range n - 1 {
		fill(q)
	}
	served := make([]int, n)
	const slack = 3 * DefaultQuantum
	check := func(step int, from int) {
		lo, hi := math.MaxInt, 0
		for q := range n {
			if q == late && from < 0 {
				continue
			}
			v := served[q]
			if q == late {
				v += from
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		if hi-lo > slack {
			t.Fatalf("step %d: flows served from %d to %d bytes, more than %d apart", step, lo, hi, slack)
		}
	}
	from := -1
	for step := range 40_000 {
		if step == 50*n {
			// The late flow starts level with the least served.
			from = math.MaxInt
			for q := range n - 1 {
				from = min(from, served[q])
			}
			fill(late)
		}
		p, q, ok := e.Dequeue(0)
		if !ok || q == MaxQueues-1 {
			t.Fatalf("step %d: queue %d, %v", step, q, ok)
		}
		served[q] += int(p.Len)
		if q != late || from >= 0 {
			fill(q)
		}
		check(step, from)
	}
}

// A port catching up (DequeueBy) serves what had arrived by the time its
// link got free, as it would have then: a frame that came later waits
// for its turn behind one that was waiting, whatever the DRR's rotation
// says, the HQ's included; when nothing had arrived, the first to
// arrive goes; a frame of unknown arrival (At 0) counts as waiting. With
// every head arrived, DequeueBy is Dequeue.
func TestEgressDequeueByArrival(t *testing.T) {
	e := newEgress(t, EgressConfig{Queues: 3, HQ: 2, Quantum: []int{1000, 1000, 1000}, Capacity: 16})
	e.Enqueue(0, Packet{Addr: 1, Len: 100, At: 500}, 0)
	e.Enqueue(1, Packet{Addr: 2, Len: 100, At: 200}, 0)
	e.Enqueue(2, Packet{Addr: 3, Len: 60, At: 400}, 0) // the HQ
	e.Enqueue(0, Packet{Addr: 4, Len: 100, At: 0}, 0)
	for i, c := range []struct {
		by   int64
		want uint64
	}{
		{by: 300, want: 2}, // q0's head and the HQ's came later
		{by: 300, want: 3}, // nothing had arrived by 300: the HQ's came first (400)
		{by: 600, want: 1},
		{by: 600, want: 4}, // unknown arrival: waiting
	} {
		p, _, ok := e.DequeueBy(1000, c.by)
		if !ok || p.Addr != c.want {
			t.Fatalf("dequeue %d by %d: %d %v, want %d", i, c.by, p.Addr, ok, c.want)
		}
	}
	if _, _, ok := e.DequeueBy(1000, 0); ok || e.Len() != 0 {
		t.Fatalf("dequeued from an empty egress (len %d)", e.Len())
	}

	// Every head arrived: the same order as Dequeue (TestEgressDRROrder).
	e = newEgress(t, EgressConfig{Queues: 2, HQ: -1, Quantum: []int{500, 500}, Capacity: 8})
	for i := range 4 {
		e.Enqueue(0, Packet{Addr: uint64(i), Len: 300, At: 10}, 0)
		e.Enqueue(1, Packet{Addr: uint64(10 + i), Len: 200, At: 10}, 0)
	}
	for i, w := range []uint64{0, 10, 11, 1, 2, 12, 13, 3} {
		if p, _, ok := e.DequeueBy(0, 10); !ok || p.Addr != w {
			t.Fatalf("dequeue %d: %d %v, want %d", i, p.Addr, ok, w)
		}
	}
}
