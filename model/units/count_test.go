package units

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Count(0, "frame", "frames"), "0 frames"},
		{Count(1, "worker process", "worker processes"), "1 worker process"},
		{Count(int64(2), "flow", "flows"), "2 flows"},
		{Count(uint64(1), "packet", "packets"), "1 packet"},
		{Count(uint64(18446744073709551615), "packet", "packets"), "18446744073709551615 packets"},
		{Count(-1, "s", "s"), "-1 s"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
