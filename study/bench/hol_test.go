//go:build linux

package bench

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testns"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/scheme"
)

// The head-of-line blocking experiment, small, on real labs (the papers'
// Fig. 4): under PortFC the congestion at s0.0's port toward h0 pauses
// only h1's queue toward h0, and the victim keeps its throughput; under
// PFC it pauses the whole priority of h1's link, the victim's frames
// included. Neither drops anything; each run is valid.
func TestHoLLab(t *testing.T) {
	testns.RequireRoot(t)
	if testing.Short() {
		t.Skip("short: skipping the HoL experiment")
	}
	testtool.RetryLate(t, 0, func(t *testing.T) string { return holLab(t) })
}

// holLab is one attempt of TestHoLLab: why its runs were late, or "".
func holLab(t *testing.T) (late string) {
	spec := lab.Spec{RateBps: 20e6, BinDir: labBins(t), RunRoot: t.TempDir(), Name: "hl" + time.Now().Format("150405")}
	o := HoLOptions{Lab: spec, FC: []string{scheme.NamePortFC, scheme.NamePFC}, Phase: 2 * time.Second, FCTFlows: 2, FCTBytes: 64 << 10}
	res, err := HoL(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(o.FC) {
		t.Fatalf("%d results for %v", len(res), o.FC)
	}
	by := map[string]HoLResult{}
	for _, r := range res {
		t.Logf("%s: victim %.1f -> %.1f Mb/s (ratio %.2f), paused %.0f ms, group FCT ratio %.2f, congested flow %.1f Mb/s, drops %d, missing %d; %s",
			r.FC, r.VictimAloneBps/1e6, r.VictimBps/1e6, r.Ratio, r.VictimPausedMs, r.FCTRatio, r.CongestedBps/1e6, r.Drops, r.Missing, r.Health.Short())
		if why := validRun(t, r.FC, r.Health, r.Drops, r.Missing); why != "" {
			late = why
			continue
		}
		if r.Drops != 0 || r.Missing != 0 {
			t.Errorf("%s: %d drops, %d frames missing under a lossless scheme", r.FC, r.Drops, r.Missing)
		}
		if r.VictimAloneBps <= 0 || r.VictimBps <= 0 || r.CongestedBps <= 0 {
			t.Errorf("%s: a flow did not move", r.FC)
		}
		by[r.FC] = r
	}
	if late != "" {
		return late
	}
	// The congested phase lasts o.Phase. Under PortFC the victim's own
	// queue may see a pause of its own port's X_off now and then (a few
	// frames at these rates, met by a burst of the emulator), but never
	// for the congestion toward h0: a tenth of the phase bounds that.
	// Under PFC the congestion holds the victim for most of it.
	tenth := float64(o.Phase.Milliseconds()) / 10
	if p := by["portfc"].VictimPausedMs; p >= tenth {
		t.Errorf("portfc: the victim's queue was paused %.0f ms of the %v phase: congestion spread past the congested flow's queue", p, o.Phase)
	}
	if p := by["pfc"].VictimPausedMs; p < tenth {
		t.Errorf("pfc: the victim's queue was paused %.0f ms of the %v phase: the incast did not congest s0.0, the test proves nothing", p, o.Phase)
	}
	// Under PortFC the congested flow yields h1's link to the victim,
	// which keeps at least its uncongested share (DRR): 0.9 allows the
	// throughput windows' sampling.
	if r := by["portfc"].Ratio; r < 0.9 {
		t.Errorf("portfc: the victim kept %.2f of its throughput in congestion: it was blocked", r)
	}
	if pf, pp := by["portfc"].Ratio, by["pfc"].Ratio; pf <= pp {
		t.Errorf("the victim kept %.2f of its throughput under PortFC, %.2f under PFC: PortFC should block it less", pf, pp)
	}
	return ""
}

// validRun is why a lossless scheme's run was invalid because the
// emulation fell behind, or "" for a valid one; it fails t at once for
// any other invalid run (a daemon died) and for a drop or a missing frame
// that no XSK ring's overflow explains: a late machine makes a run
// invalid, never lossy.
func validRun(t *testing.T, fc string, h lab.Health, drops, missing uint64) string {
	t.Helper()
	why, late := h.Late()
	switch {
	case h.Valid:
		return ""
	case !late:
		t.Fatalf("%s: the run is not valid, so it measured nothing: %v", fc, h.Problems)
	case h.RingDrops == 0 && (drops != 0 || missing != 0):
		t.Errorf("%s: %d drops, %d frames missing under a lossless scheme, in a run the machine was late for but whose rings dropped nothing", fc, drops, missing)
	}
	t.Logf("%s: INVALID, the emulation was late: %s", fc, why)
	return fc + ": " + why
}

// The fairness experiment, small: two TCP flows in two queues of s0.0's
// egress toward h0 share it about evenly (DRR of equal quanta), and ping
// rides the strict-priority HQ past the data queues: under load it waits
// less than the deeper data queue holds. The run is valid.
func TestFairnessLab(t *testing.T) {
	testns.RequireRoot(t)
	if testing.Short() {
		t.Skip("short: skipping the fairness experiment")
	}
	testtool.Require(t, "iperf3", "run the experiment's TCP flows")
	testtool.RetryLate(t, 0, func(t *testing.T) string { return fairnessLab(t) })
}

// fairnessLab is one attempt of TestFairnessLab: why its run was late, or
// "".
func fairnessLab(t *testing.T) string {
	spec := lab.Spec{RateBps: 20e6, BinDir: labBins(t), RunRoot: t.TempDir(), Name: "fa" + time.Now().Format("150405")}
	r, err := Fairness(t.Context(), FairnessOptions{Lab: spec, Duration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("B %.1f Mb/s, A0 %.1f Mb/s (share of B %.2f); ping idle %.2f ms, loaded %.2f (max %.2f); data queue delay %.2f ms; HQ %d frames; drops %d; %s",
		r.FlowB/1e6, r.FlowA/1e6, r.ShareB, r.PingIdleMs, r.PingLoadMs, r.PingLoadMax, r.DataDelayMs, r.HQPackets, r.FabricDrops, r.Health.Short())
	if why, late := r.Health.Late(); late {
		return why
	}
	if !r.Health.Valid {
		t.Fatalf("the run is not valid, so it measured nothing: %v", r.Health.Problems)
	}
	if r.FlowA <= 0 || r.FlowB <= 0 {
		t.Fatalf("a flow did not move: B %.0f, A0 %.0f b/s", r.FlowB, r.FlowA)
	}
	if r.ShareB < 0.3 || r.ShareB > 0.7 {
		t.Errorf("queue B took %.2f of the port: DRR of equal quanta gives each queue half", r.ShareB)
	}
	if r.HQPackets == 0 {
		t.Error("no frame went through the HQ: ping did not ride it")
	}
	if r.DataDelayMs > 2*r.PingIdleMs && r.PingLoadMs >= r.DataDelayMs {
		t.Errorf("ping waited %.2f ms under load, the data queue held %.2f ms: it queued behind data", r.PingLoadMs, r.DataDelayMs)
	}
	return ""
}
