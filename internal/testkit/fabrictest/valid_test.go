package fabrictest

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// judged is the testing.TB of a scenario validRun judges: the test's
// own, which also learns the fabric whose health judges the run.
type judged struct {
	*testing.T
	fabric *Fabric
}

// watch names the fabric whose health judges the run.
func watch(t testing.TB, f *Fabric) {
	if j, ok := t.(*judged); ok {
		j.fabric = f
	}
}

// validRun runs body, a scenario whose results depend on every node
// keeping up with its links, once, and then judges its run's health: the
// fabric body passed to watch must have lost no frame in a cable's
// receive ring and no port more than its share of link time
// (Fabric.Health). On virtual time no node is ever late, so every run is
// valid unless the nodes themselves fail to keep up: there is no retry
// (on real time, as the fabrics ran until they moved to virtual time, an
// invalid run measured the machine and was run again, and three failed
// the test: docs/TESTING.md), and an unhealthy run fails the test beside
// whatever its checks said, which count in every run.
func validRun(t *testing.T, body func(t testing.TB)) {
	t.Helper()
	j := &judged{T: t}
	body(j)
	if j.fabric == nil {
		t.Fatal("fabrictest: the scenario watched no fabric")
	}
	h := j.fabric.Health()
	if !h.Valid() {
		t.Fatalf("the run was unhealthy on virtual time, where no node can be late: %s", h)
	}
	t.Logf("run valid: %s", h)
}

// drained runs the fabric until no queue of any node holds a frame and
// its sinks stop growing, or fails t after limit.
func drained(t testing.TB, f *Fabric, limit time.Duration) {
	t.Helper()
	var last uint64
	quiet := 0
	if !f.Poll(20*time.Millisecond, limit, func() bool {
		held := false
		eachQueue(f, func(_, _ string, q api.QueueStats) { held = held || q.Packets > 0 })
		var got uint64
		for _, h := range f.HostLogic {
			for _, s := range h.Flows().Sink {
				got += s.Packets
			}
		}
		if held || got != last {
			quiet = 0
		} else {
			quiet++
		}
		last = got
		return quiet >= 2
	}) {
		t.Fatalf("the fabric did not drain in %v; queues holding frames: %v", limit, heldQueues(f))
	}
}

// A run is valid only with no receive-ring drop and no lost link time.
func TestHealthValid(t *testing.T) {
	for _, c := range []struct {
		h  Health
		ok bool
	}{
		{Health{Wall: time.Second}, true},
		{Health{Wall: time.Second, RingDrops: 1}, false},
		{Health{Wall: time.Second, Lost: time.Nanosecond, WorstPort: "0/eth0"}, false},
	} {
		if c.h.Valid() != c.ok {
			t.Errorf("%s: valid %v, want %v", c.h, c.h.Valid(), c.ok)
		}
	}
}
