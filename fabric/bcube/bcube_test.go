package bcube

import (
	"errors"
	"math/bits"
	"testing"
)

func TestNewRejects(t *testing.T) {
	for _, c := range []struct{ n, k int }{{1, 1}, {0, 1}, {4, 0}, {2, 8}, {256, 1}, {300, 1}, {17, 3}} {
		if _, err := New(c.n, c.k); !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%d,%d) = %v, want ErrInvalid", c.n, c.k, err)
		}
	}
}

func TestCounts(t *testing.T) {
	for _, c := range []struct{ n, k, servers, switches int }{
		{2, 1, 4, 4}, {4, 1, 16, 8}, {8, 1, 64, 16}, {3, 2, 27, 27},
	} {
		tp := MustNew(c.n, c.k)
		if tp.Servers() != c.servers || tp.Switches() != c.switches {
			t.Errorf("%v: %d servers %d switches, want %d %d", tp, tp.Servers(), tp.Switches(), c.servers, c.switches)
		}
	}
}

// The DESIGN's example: for k = 1, s0.w joins the servers with a_1 = w and
// s1.w those with a_0 = w; the papers' Fig. 6 puts h3, h7, h11, h15 on s1.3.
func TestSwitchIdentity(t *testing.T) {
	tp := MustNew(4, 1)
	for i := 0; i < tp.Servers(); i++ {
		w0, p0 := tp.SwitchOf(i, 0)
		w1, p1 := tp.SwitchOf(i, 1)
		if w0 != tp.Digit(i, 1) || p0 != tp.Digit(i, 0) {
			t.Errorf("h%d level 0: s0.%d port %d", i, w0, p0)
		}
		if w1 != tp.Digit(i, 0) || p1 != tp.Digit(i, 1) {
			t.Errorf("h%d level 1: s1.%d port %d", i, w1, p1)
		}
	}
	for p, want := range []int{3, 7, 11, 15} {
		if got := tp.ServerAt(1, 3, p); got != want {
			t.Errorf("s1.3 port %d = h%d, want h%d", p, got, want)
		}
	}
}

func TestServerAtInvertsSwitchOf(t *testing.T) {
	for _, tp := range []Topology{MustNew(2, 1), MustNew(4, 1), MustNew(3, 2), MustNew(8, 1), MustNew(2, 3)} {
		seen := map[[3]int]bool{}
		for i := 0; i < tp.Servers(); i++ {
			for l := 0; l < tp.Levels(); l++ {
				w, p := tp.SwitchOf(i, l)
				if w < 0 || w >= tp.SwitchesPerLevel() {
					t.Fatalf("%v h%d level %d: switch %d out of range", tp, i, l, w)
				}
				if got := tp.ServerAt(l, w, p); got != i {
					t.Fatalf("%v: ServerAt(%d,%d,%d) = %d, want %d", tp, l, w, p, got, i)
				}
				key := [3]int{l, w, p}
				if seen[key] {
					t.Fatalf("%v: two servers on s%d.%d port %d", tp, l, w, p)
				}
				seen[key] = true
			}
		}
		if len(seen) != tp.Links() {
			t.Fatalf("%v: %d links, want %d", tp, len(seen), tp.Links())
		}
	}
}

func TestServerIndex(t *testing.T) {
	tp := MustNew(4, 1)
	for i := 0; i < tp.Servers(); i++ {
		if got := tp.ServerIndex(ServerIP(i).As4()); got != i {
			t.Errorf("ServerIndex(%v) = %d", ServerIP(i), got)
		}
	}
	for _, ip := range [][4]byte{{198, 18, 0, 16}, {198, 17, 255, 255}, {10, 0, 0, 1}, {198, 19, 0, 0}} {
		if got := tp.ServerIndex(ip); got != -1 {
			t.Errorf("ServerIndex(%v) = %d, want -1", ip, got)
		}
	}
	if ServerIP(15).String() != "198.18.0.15" || ServerIP(256).String() != "198.18.1.0" {
		t.Errorf("ServerIP: %v %v", ServerIP(15), ServerIP(256))
	}
}

func TestMACsUnique(t *testing.T) {
	tp := MustNew(8, 1)
	seen := map[string]string{}
	add := func(mac, who string) {
		if mac[0]&0x02 == 0 || mac[0]&0x01 != 0 {
			t.Fatalf("%s: %x is not locally administered unicast", who, mac)
		}
		if prev, ok := seen[mac]; ok {
			t.Fatalf("%s and %s share %x", prev, who, mac)
		}
		seen[mac] = who
	}
	for i := 0; i < tp.Servers(); i++ {
		for j := 0; j < tp.Levels(); j++ {
			add(string(HostPortMAC(i, j)), HostName(i)+HostPort(j))
		}
		add(string(AppMAC(i)), HostName(i)+AppIf)
		add(string(AppNICMAC(i)), HostName(i)+AppPeerIf)
	}
	for l := 0; l < tp.Levels(); l++ {
		for w := 0; w < tp.SwitchesPerLevel(); w++ {
			for p := 0; p < tp.N(); p++ {
				add(string(SwitchPortMAC(l, w, p)), SwitchName(l, w)+SwitchPort(p))
			}
		}
	}
}

// Following NextLevel hop by hop reaches the destination in exactly Hops
// NIC traversals, on every policy, and parallel paths of a pair that
// differs in every digit share no link.
func TestRouting(t *testing.T) {
	for _, tp := range []Topology{MustNew(2, 1), MustNew(4, 1), MustNew(3, 2)} {
		for src := 0; src < tp.Servers(); src++ {
			for dst := 0; dst < tp.Servers(); dst++ {
				used := map[[3]int]bool{}
				for pp := 0; pp <= tp.K(); pp++ {
					o := tp.ParallelPath(pp)
					cur, hops := src, 0
					for {
						l := tp.NextLevel(cur, dst, &o)
						if l < 0 {
							break
						}
						w, _ := tp.SwitchOf(cur, l)
						next := tp.ServerAt(l, w, tp.Digit(dst, l))
						link := [3]int{l, w, tp.Digit(dst, l)}
						if tp.Hops(src, dst) == 2*tp.Levels() && used[link] {
							t.Fatalf("%v %d->%d: parallel paths share s%d.%d port %d", tp, src, dst, l, w, link[2])
						}
						used[link] = true
						cur, hops = next, hops+2
						if hops > 2*tp.Levels() {
							t.Fatalf("%v %d->%d: loop", tp, src, dst)
						}
					}
					if cur != dst || hops != tp.Hops(src, dst) {
						t.Fatalf("%v %d->%d path %d: ended at %d after %d hops", tp, src, dst, pp, cur, hops)
					}
				}
			}
		}
	}
}

func TestHops4(t *testing.T) {
	tp := MustNew(4, 1)
	if tp.Hops(0, 15) != 4 || tp.Hops(0, 3) != 2 || tp.Hops(0, 4) != 2 || tp.Hops(5, 5) != 0 {
		t.Fatal("hops")
	}
}

func TestParsePolicy(t *testing.T) {
	tp := MustNew(4, 2)
	for in, want := range map[string]string{"ascending": "0,1,2", "descending": "2,1,0", "1,2,0": "1,2,0"} {
		p, err := tp.ParsePolicy(in)
		if err != nil || p.Fixed == nil || p.Fixed.String() != want {
			t.Errorf("ParsePolicy(%q) = %v %v, want %s", in, p.Fixed, err, want)
		}
	}
	for _, bad := range []string{"0,1", "0,0,1", "0,1,3", "x", "0,1,2,3"} {
		if _, err := tp.ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q) accepted", bad)
		}
	}
	for in, want := range map[string]string{"": "hash", "hash": "hash", "ate": "ate", "ascending": "0,1,2", "2,0,1": "2,0,1"} {
		p, err := tp.ParsePolicy(in)
		if err != nil || p.String() != want || p.ATE != (in == "ate") {
			t.Errorf("ParsePolicy(%q) = %v (ate %v) %v, want %s", in, p, p.ATE, err, want)
		}
	}
	// Under ATE every node routes by the flow hash, as under hash.
	ate, _ := tp.ParsePolicy("ate")
	hp, _ := tp.ParsePolicy("hash")
	for sp := uint16(0); sp < 30; sp++ {
		f := FiveTuple{Src: [4]byte{1, 2, 3, 4}, SPort: sp}
		if tp.FlowOrder(&ate, &f) != tp.FlowOrder(&hp, &f) {
			t.Fatalf("ate and hash route port %d differently", sp)
		}
	}
	p, _ := tp.ParsePolicy("hash")
	seen := map[string]bool{}
	for h := uint32(0); h < 30; h++ {
		seen[tp.OrderFor(&p, FlowHash(&FiveTuple{Src: [4]byte{1, 2, 3, 4}, SPort: uint16(h)})).String()] = true
	}
	if len(seen) != 3 {
		t.Errorf("hash policy used %d of 3 parallel paths", len(seen))
	}
}

func TestParseNode(t *testing.T) {
	tp := MustNew(4, 1)
	for in, want := range map[string]Node{"h0": {Index: 0}, "h15": {Index: 15}, "s1.3": {Switch: true, Level: 1, Index: 3}} {
		got, err := tp.ParseNode(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("ParseNode(%q) = %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"h16", "s2.0", "s0.4", "h-1", "x", "h01", "s0.1x"} {
		if _, err := tp.ParseNode(bad); err == nil {
			t.Errorf("ParseNode(%q) accepted", bad)
		}
	}
}

func TestNextLevelAllocs(t *testing.T) {
	tp := MustNew(4, 1)
	var p Policy
	f := FiveTuple{Src: [4]byte{198, 18, 0, 0}, Dst: [4]byte{198, 18, 0, 15}, Proto: 6, SPort: 1, DPort: 2}
	n := testing.AllocsPerRun(100, func() {
		o := tp.OrderFor(&p, FlowHash(&f))
		_ = tp.NextLevel(0, 15, &o)
	})
	if n != 0 {
		t.Fatalf("%v allocs per route", n)
	}
}

func TestStar(t *testing.T) {
	s, err := Star(300)
	if err != nil {
		t.Fatal(err)
	}
	if s.Servers() != 300 || s.Levels() != 1 || s.K() != 0 {
		t.Fatalf("Star(300): %d servers, %d levels", s.Servers(), s.Levels())
	}
	pol, err := s.ParsePolicy("hash")
	if err != nil {
		t.Fatal(err)
	}
	for dst := 1; dst < 300; dst += 37 {
		tu := FiveTuple{Src: ServerIP(0).As4(), Dst: ServerIP(dst).As4(), Proto: 17, SPort: uint16(dst), DPort: 4791}
		o := s.FlowOrder(&pol, &tu)
		if l := s.NextLevel(0, dst, &o); l != 0 {
			t.Errorf("h0 to h%d: level %d, want 0 (the one port)", dst, l)
		}
	}
	if got := s.ServerIndex(ServerIP(299).As4()); got != 299 {
		t.Errorf("ServerIndex(h299) = %d", got)
	}
	if got := s.ServerIndex(ServerIP(300).As4()); got != -1 {
		t.Errorf("ServerIndex past the last server = %d, want -1", got)
	}
	for _, n := range []int{0, 1, MaxServers + 1} {
		if _, err := Star(n); err == nil {
			t.Errorf("Star(%d): no error", n)
		}
	}
}

// Digits, switches and servers computed by multiplication agree with
// plain division for every server of every BCube up to the largest
// tables, and for every index a reciprocal must cover.
func TestDigitsByMultiplication(t *testing.T) {
	for n := 2; n <= 255; n++ {
		for k := 1; k+1 <= MaxLevels; k++ {
			tp, err := New(n, k)
			if err != nil {
				break // more than MaxServers
			}
			for i := 0; i < tp.Servers(); i++ {
				for j := 0; j <= k; j++ {
					pj := tp.pow[j]
					if got, want := tp.Digit(i, j), (i/pj)%n; got != want {
						t.Fatalf("BCube(%d,%d): Digit(%d, %d) = %d, want %d", n, k, i, j, got, want)
					}
					w, p := tp.SwitchOf(i, j)
					if ww := i%pj + i/(pj*n)*pj; w != ww || p != (i/pj)%n {
						t.Fatalf("BCube(%d,%d): SwitchOf(%d, %d) = %d, %d", n, k, i, j, w, p)
					}
					if s := tp.ServerAt(j, w, p); s != i {
						t.Fatalf("BCube(%d,%d): ServerAt(%d, %d, %d) = %d, want %d", n, k, j, w, p, s, i)
					}
				}
			}
		}
	}
	// The reciprocal is exact for every 32-bit index, at the divisors'
	// worst cases.
	for _, d := range []int{2, 3, 7, 255, 255 * 255, 1 << 16, 65521} {
		r := reciprocal(d)
		for _, i := range []uint64{0, 1, uint64(d) - 1, uint64(d), uint64(d) + 1, 1<<32 - 1, 1<<32 - uint64(d), 123456789} {
			if q, _ := bits.Mul64(r, i); q != i/uint64(d) {
				t.Fatalf("%d / %d: %d by multiplication", i, d, q)
			}
		}
	}
}

// ParallelPath without division names the levels the rotation formula
// does, for path indices in and out of range.
func TestParallelPathRotation(t *testing.T) {
	for k := 1; k+1 <= MaxLevels; k++ {
		tp := Topology{n: 2, k: k}
		for i := -3 * (k + 1); i <= 3*(k+1); i++ {
			o := tp.ParallelPath(i)
			if int(o.len) != k+1 {
				t.Fatalf("k=%d i=%d: %d levels", k, i, o.len)
			}
			for x := 0; x <= k; x++ {
				if want := ((i-x)%(k+1) + k + 1) % (k + 1); int(o.lv[x]) != want {
					t.Fatalf("k=%d i=%d: level %d is %d, want %d", k, i, x, o.lv[x], want)
				}
			}
		}
	}
}
