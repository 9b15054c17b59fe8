package lab

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/queues"
)

// The switches' waits between two answers: the switches' ports' counts
// after less before, merged; servers and restarted switches left out; a
// count that went down an error.
func TestSwitchWaitsUnit(t *testing.T) {
	waits := func(node string, started int64, vals ...[]int64) *api.Waits {
		w := &api.Waits{Node: node, StartedUnixNs: started}
		for i, vs := range vals {
			var h queues.DelayHist
			for _, v := range vs {
				h.Add(v)
			}
			w.Ports = append(w.Ports, api.NewPortWaits(string(rune('a'+i)), &h))
		}
		return w
	}
	us := int64(time.Microsecond)
	before := map[string]*api.Waits{
		"s0.0": waits("s0.0", 1, []int64{5 * us}, nil),
		"s0.1": waits("s0.1", 1, nil, nil),
		"s1.0": waits("s1.0", 1, []int64{1}),
		"h0":   waits("h0", 1, nil),
	}
	after := map[string]*api.Waits{
		"s0.0": waits("s0.0", 1, []int64{5 * us, 10 * us, 10 * us}, []int64{10 * us, 10 * us}),
		"s0.1": waits("s0.1", 1, []int64{1000 * us}, nil),
		"s1.0": waits("s1.0", 2, []int64{1 << 30}), // restarted
		"h0":   waits("h0", 1, []int64{1 << 30, 1 << 30}),
	}
	sw := map[string]bool{"s0.0": true, "s0.1": true, "s1.0": true}
	q, err := switchWaits(before, after, sw)
	if err != nil {
		t.Fatal(err)
	}
	if q.Frames != 5 || q.Mean != 208*time.Microsecond || len(q.Restarted) != 1 || q.Restarted[0] != "s1.0" {
		t.Errorf("%+v: want 5 frames, mean 208µs, s1.0 restarted", q)
	}
	if q.P50 < 9*time.Microsecond || q.P50 > 11*time.Microsecond || q.MaxBound < time.Millisecond || q.MaxBound > 1063*time.Microsecond {
		t.Errorf("p50 %v, at most %v: want about 10µs and 1ms", q.P50, q.MaxBound)
	}
	if q, err := switchWaits(before, before, map[string]bool{"h0": false}); q != nil || err != nil {
		t.Errorf("no switch: %+v, %v", q, err)
	}
	if _, err := switchWaits(after, before, sw); err == nil {
		t.Error("counts that went down: no error")
	}
}
