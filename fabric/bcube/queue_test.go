package bcube

import "testing"

// order1 is the level order of a k=1 flow whose route goes through the
// relay named: correcting level `first` first.
func order1(t Topology, first int) *Order {
	o, _ := t.ParsePolicy([]string{"0,1", "1,0"}[first])
	return o.Fixed
}

// The papers' Fig. 6 on BCube(4,1) (DESIGN §4, worked example), every
// flow taking the route through the relay named.
func TestQueuesFig6(t *testing.T) {
	tp := MustNew(4, 1)
	// s1.3 joins h3, h7, h11, h15 (ports 0..3); egress port 3 toward h15.
	if tp.ServerAt(1, 3, 3) != 15 {
		t.Fatal("s1.3 port 3 is not h15")
	}
	for _, c := range []struct {
		name     string
		src, dst int
		first    int // level the source corrects first
		want     int
	}{
		{"h11->h15 (B)", 11, 15, 1, 3},
		{"h7->h15 (B)", 7, 15, 1, 3},
		{"h11->h12 relayed by h15, leaves s0.3 by port 0", 11, 12, 1, 0},
		{"h11->h13 relayed by h15, leaves s0.3 by port 1", 11, 13, 1, 1},
		{"h11->h14 relayed by h15, s0.3 port 2", 11, 14, 1, 2},
		{"h3->h14 relayed by h15, s0.3 port 2", 3, 14, 1, 2},
	} {
		o := order1(tp, c.first)
		if got := tp.SwitchQueue(1, 3, 3, c.dst, o); got != c.want {
			t.Errorf("s1.3 p3 %s: Q%d, want Q%d", c.name, got, c.want)
		}
	}
	if tp.SwitchHQ() != 4 || tp.SwitchQueues() != 5 || tp.SwitchQueueName(4) != "HQ" || tp.SwitchQueueName(3) != "B" || tp.SwitchQueueName(2) != "A2" {
		t.Error("switch HQ/B names")
	}
	// Server h15, port 0 toward s0.3.
	for _, c := range []struct {
		name    string
		dst     int
		relayed bool
		want    int
	}{
		{"own 4-hop h15->h0 (relay h12)", 0, false, 0},
		{"own 4-hop h15->h4 (relay h12)", 4, false, 0},
		{"own 4-hop h15->h1 (relay h13)", 1, false, 1},
		{"own 4-hop h15->h2 (relay h14)", 2, false, 2},
		{"own 2-hop h15->h12", 12, false, 3},
		{"own 2-hop h15->h13", 13, false, 4},
		{"own 2-hop h15->h14", 14, false, 5},
		{"relayed h3->h12", 12, true, 6},
		{"relayed h7->h13", 13, true, 6},
	} {
		if got := tp.ServerQueue(15, 0, c.dst, c.relayed); got != c.want {
			t.Errorf("h15 port 0 %s: Q%d, want Q%d", c.name, got, c.want)
		}
	}
	if tp.ServerHQ() != 7 || tp.ServerRQ() != 6 || tp.ServerQueues() != 8 {
		t.Error("server HQ/RQ")
	}
	for q, want := range []string{"a0", "a1", "a2", "b0", "b1", "b2", "RQ", "HQ"} {
		if got := tp.ServerQueueName(q); got != want {
			t.Errorf("server queue %d named %s, want %s", q, got, want)
		}
	}
}

// Hand-worked cases on BCube(8,1) (64 servers; h<i> has digits
// a0 = i mod 8, a1 = i div 8).
func TestQueuesBCube8(t *testing.T) {
	tp := MustNew(8, 1)
	// Switch s0.5 joins h40..h47 (a1 = 5); its port 2 is h42 (a0 = 2).
	// h40 -> h42: destination: B = 7.
	// h40 -> h10 (a0=2, a1=1) correcting level 0 first: s0.5 port 2 -> h42,
	// which relays through level 1 and leaves s1.2 by port dst.a1 = 1;
	// A queue Compress(1, h42.a1 = 5) = 1.
	// h40 -> h58 (a0=2, a1=7): leaves s1.2 by port 7: Compress(7, 5) = 6.
	// h40 -> h2 (a0=2, a1=0): port 0: Compress(0, 5) = 0.
	// h40 -> h50 (a0=2, a1=6): port 6: Compress(6, 5) = 5.
	for _, c := range []struct{ dst, want int }{{42, 7}, {10, 1}, {58, 6}, {2, 0}, {50, 5}} {
		if got := tp.SwitchQueue(0, 5, 2, c.dst, order1(tp, 0)); got != c.want {
			t.Errorf("s0.5 p2 -> h%d: Q%d, want Q%d", c.dst, got, c.want)
		}
	}
	// Level-1 switch s1.3 joins servers with a0 = 3: h3, h11, ..., h59; its
	// port 6 is h51 (a1 = 6). h19 -> h48 (a0=0, a1=6) correcting level 1
	// first: relayed by h51 through level 0, leaving s0.6 by port 0:
	// Compress(0, h51.a0 = 3) = 0. h19 -> h55 (a0=7): Compress(7, 3) = 6.
	// h19 -> h52 (a0=4): Compress(4, 3) = 3. h19 -> h51: B = 7.
	for _, c := range []struct{ dst, want int }{{48, 0}, {55, 6}, {52, 3}, {51, 7}} {
		if got := tp.SwitchQueue(1, 3, 6, c.dst, order1(tp, 1)); got != c.want {
			t.Errorf("s1.3 p6 -> h%d: Q%d, want Q%d", c.dst, got, c.want)
		}
	}
	// Server h27 (a0=3, a1=3), port 1 (toward s1.3). 16 queues: a0..a6,
	// b0..b6, RQ 14, HQ 15.
	// Own 2-hop to h59 (a1=7): b Compress(7,3)=6 -> 7+6 = 13.
	// Own 2-hop to h3 (a1=0): 7+0 = 7. Own 4-hop to h60 (a1=7): a6 = 6.
	// Own 4-hop to h33 (a1=4): Compress(4,3) = 3. Relayed: 14.
	for _, c := range []struct {
		dst     int
		relayed bool
		want    int
	}{{59, false, 13}, {3, false, 7}, {60, false, 6}, {33, false, 3}, {33, true, 14}} {
		if got := tp.ServerQueue(27, 1, c.dst, c.relayed); got != c.want {
			t.Errorf("h27 port 1 -> h%d relayed=%v: Q%d, want Q%d", c.dst, c.relayed, got, c.want)
		}
	}
	if tp.SwitchAQueues() != 0x7f {
		t.Errorf("A mask %#x", tp.SwitchAQueues())
	}
}

// Over every flow of BCube(4,1) and BCube(3,2), every queue index lies in
// range and a frame never lands in the HQ by classification.
func TestQueuesInRange(t *testing.T) {
	for _, tp := range []Topology{MustNew(4, 1), MustNew(3, 2), MustNew(2, 1)} {
		for pp := 0; pp <= tp.K(); pp++ {
			o := tp.ParallelPath(pp)
			for src := 0; src < tp.Servers(); src++ {
				for dst := 0; dst < tp.Servers(); dst++ {
					cur := src
					for hop := 0; cur != dst; hop++ {
						l := tp.NextLevel(cur, dst, &o)
						if q := tp.ServerQueue(cur, l, dst, hop > 0); q < 0 || q >= tp.ServerHQ() {
							t.Fatalf("%v server queue %d", tp, q)
						}
						w, _ := tp.SwitchOf(cur, l)
						p := tp.Digit(dst, l)
						if q := tp.SwitchQueue(l, w, p, dst, &o); q < 0 || q >= tp.SwitchHQ() {
							t.Fatalf("%v switch queue %d", tp, q)
						}
						cur = tp.ServerAt(l, w, p)
					}
				}
			}
		}
	}
}
