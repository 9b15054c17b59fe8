package lab

import (
	"context"
	"testing"
	"time"
)

// The fcplus-loop scenario on real labs, one command's worth: under
// plain KSP with PFC the four flows deadlock and the watchdog names the
// ring's cycle; under DF-KSP with one and with two lossless priorities
// (the ToRs raising the priority at the down-up turn) the same flows
// keep moving, losslessly.
func TestFCLoop(t *testing.T) {
	s := graphSpec(t, FabricSpec{})
	s.Fabric = nil
	s.Target, _ = ResolveTarget("native", s.RateBps)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := RunFCLoop(ctx, s, []string{RoutingKSP, RoutingDFKSP1, RoutingDFKSP2}, 4*time.Second, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("%s: flows %+v, %d stalled, cycle %s, drops %d", r.Routing, r.Flows, len(r.Stalled), CycleText(r.Cycle), r.Drops)
		if r.Drops != 0 {
			t.Errorf("%s: %d frames dropped under PFC", r.Routing, r.Drops)
		}
		if r.Routing == RoutingKSP {
			if len(r.Cycle) != 4 || r.Cycle[0].Node != "tor2" {
				t.Errorf("ksp: cycle %s, want the ring of 4 from tor2", CycleText(r.Cycle))
			}
			for _, f := range r.Flows {
				if f.Bps > 1e6 {
					t.Errorf("ksp: %s->%s moved %.1f Mb/s in a deadlock", f.Src, f.Dst, f.Bps/1e6)
				}
			}
			continue
		}
		if r.Deadlocked() || len(r.Stalled) > 0 {
			t.Errorf("%s: %d stalled, cycle %s", r.Routing, len(r.Stalled), CycleText(r.Cycle))
		}
		for _, f := range r.Flows {
			if f.Bps < 20e6 {
				t.Errorf("%s: %s->%s moved %.1f Mb/s", r.Routing, f.Src, f.Dst, f.Bps/1e6)
			}
		}
	}
}
