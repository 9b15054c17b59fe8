package dataplane

import "testing"

// serve skips the time between the earliest work and its reach ago when
// it is later than that, each stretch of the model's time once, however
// many serves find work from it.
func TestServeSkipped(t *testing.T) {
	const reach = 200
	var o order
	slots := make([]*slot, 3)
	for i := range slots {
		slots[i] = &slot{deadline: -1}
		o.set(o.free(), slots[i])
	}
	due := func(i int, t int64) { slots[i].deadline = t; o.update(i) }
	// step clears a slot's deadline, or sets the next one next[s].
	next := map[*slot]int64{}
	var at []int64
	step := func(s *slot, v int64) {
		at = append(at, v)
		s.deadline = -1
		if d, ok := next[s]; ok {
			s.deadline = d
			delete(next, s)
		}
	}
	serve := func(now int64, limit int) int64 {
		at = at[:0]
		return o.serve(now, reach, limit, step, func(int64) {})
	}
	// Within its reach a worker skips nothing: it steps each engine as
	// of its deadline.
	due(0, 1000)
	due(1, 1100)
	if got := serve(1150, 10); got != 0 || len(at) != 2 || at[0] != 1000 || at[1] != 1100 {
		t.Fatalf("within the reach: skipped %d, stepped as of %v; want 0, [1000 1100]", got, at)
	}
	// 800 late: the work from 1200 to 1800 (now - reach) happens as of
	// 1800.
	due(0, 1200)
	due(1, 1300)
	if got := serve(2000, 10); got != 600 || at[0] != 1800 || at[1] != 1800 {
		t.Fatalf("800 late: skipped %d, stepped as of %v; want 600, [1800 1800]", got, at)
	}
	// A serve cut short by its limit leaves work older than its floor:
	// the next serve skips only what came after the floor.
	due(0, 2100)
	due(1, 2100)
	due(2, 2100)
	if got := serve(3000, 1); got != 700 {
		t.Fatalf("cut short: skipped %d, want 700 (2100 to 2800)", got)
	}
	if got := serve(3100, 10); got != 100 || len(at) != 2 {
		t.Fatalf("the rest of a cut serve: skipped %d in %d steps, want 100 (2800 to 2900) in 2", got, len(at))
	}
	// Work its steps scheduled within the reach is not skipped, nor is
	// an idle worker's time.
	next[slots[0]] = 3000
	due(0, 2950)
	if got := serve(3140, 10); got != 0 || len(at) != 2 {
		t.Fatalf("within the reach again: skipped %d in %d steps, want 0 in 2", got, len(at))
	}
	if got := serve(9000, 10); got != 0 || len(at) != 0 {
		t.Fatalf("idle: skipped %d in %d steps, want 0 in 0", got, len(at))
	}
	due(2, 9000)
	if got := serve(9500, 10); got != 300 {
		t.Fatalf("after an idle stretch: skipped %d, want 300 (9000 to 9300)", got)
	}
}

// BenchmarkOrderServe is serve's cost a step, scheduling included, for
// a worker of BCube(4,1)'s 24 engines: each step gives its engine a new
// deadline a little later, so that the least key moves among the slots
// as it does under traffic.
func BenchmarkOrderServe(b *testing.B) {
	var o order
	const engines = 24
	for i := range engines {
		o.set(o.free(), &slot{deadline: int64(1000 + 37*i)})
	}
	x := uint64(88172645463325252)
	step := func(s *slot, at int64) {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		s.deadline = at + int64(x%2000)
	}
	now := int64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		now += 100
		o.serve(now, 1<<40, 1, step, func(int64) {})
	}
}
