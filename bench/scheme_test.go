package bench

import (
	"testing"

	"github.com/bcfab/bcfab/lab"
)

func TestSetScheme(t *testing.T) {
	for _, c := range []struct {
		in     string
		fc     string
		queues int
		hash   bool
		err    bool
	}{
		{"portfc", "portfc", 0, false, false},
		{"bfc", "bfc", 0, false, false},
		{"bfc:2", "bfc", 2, false, false},
		{"bfchash", "bfc", 0, true, false},
		{"bfchash:8", "bfc", 8, true, false},
		{"pfc:4", "", 0, false, true},
		{"bfc:x", "", 0, false, true},
	} {
		s := lab.Spec{BFCQueues: 5, BFCHash: true}
		err := SetScheme(&s, c.in)
		if (err != nil) != c.err {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if !c.err && (s.FC != c.fc || s.BFCQueues != c.queues || s.BFCHash != c.hash) {
			t.Errorf("%s: fc %s, queues %d, hash %v; want %s, %d, %v", c.in, s.FC, s.BFCQueues, s.BFCHash, c.fc, c.queues, c.hash)
		}
	}
}
