package clocktest

import "testing"

func TestUnlabelledUnit(t *testing.T) {
	for _, c := range []struct {
		text string
		n    int
	}{
		{"ran 2.001ms in the target (10.006s of lab time)", 0},
		{"ran 10.006s, goodput 33.38 Mbit/s", 2},
		{"received 19.7 Mbit/s; one-way delay 7.429ms", 2},
		{"flows started late by 266ns in the target on average, 427ns at p99", 1},
		{"---- FCT in the target ----\nall 46 118µs 14.2µs\n\nqueues: 4.2s into the run", 1},
		{"[  1]   0.00-1.00   sec  2.15 MBytes  18.0 Mbits/sec", 2},
		{"for 1m30s of lab time = 18ms in the target", 0},
		{"cost: 6.522s of wall time per ms in the target (21.43s of wall time for 3.286ms in the target)", 0},
		{"took 21.43s", 1},
		{"MTU 1024, BCube(4,1), 46 flows, 99.2% of the link", 0},
	} {
		if got := Unlabelled(c.text); len(got) != c.n {
			t.Errorf("%q: unlabelled %q, want %d", c.text, got, c.n)
		}
	}
}
