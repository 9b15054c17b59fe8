package lab

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/node/scheme"
)

// Fair queueing end to end: on BCube(4,1) at 20 Mb/s a brief incast runs
// under ideal-fq without congestion control and under sfq with HPCC
// (HPCC+SFQ); the run is valid, every flow completes and nothing is
// dropped, and under ideal-fq the nodes gave flows queues of their own
// and none had to share.
func TestWorkloadFQ(t *testing.T) {
	for _, c := range []struct{ fc, cc string }{{scheme.NameIdealFQ, "none"}, {scheme.NameSFQ, "hpcc"}} {
		t.Run(c.fc, func(t *testing.T) {
			testtool.RetryLate(t, 0, func(t *testing.T) string { return workloadFQ(t, c.fc, c.cc) })
		})
	}
}

// workloadFQ is one attempt of TestWorkloadFQ under fc and cc: why its
// run was INVALID only because the machine was late, or "" after every
// check.
func workloadFQ(t *testing.T, fc, cc string) (late string) {
	s, cfg := upBaselineLab(t, "fq", fc, cc)
	rep, err := RunWorkload(t.Context(), s.RunRoot, s.Name, WorkloadOptions{Config: cfg, CC: cc, Interval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sm := rep.Summary
	t.Logf("%s: %d flows, %d completed; %d drops; health %v %v", fc, len(rep.Records), sm.Completed,
		rep.Fabric.Drops, rep.Health.Valid, rep.Health.Problems)
	if why := checkBaselineRun(t, rep); why != "" {
		return why
	}
	if rep.Fabric.Drops != 0 {
		t.Errorf("%d drops under %s", rep.Fabric.Drops, fc)
	}
	st, err := LoadState(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	fq := map[string]uint64{}
	for _, n := range st.Nodes {
		for _, p := range mustStats(t, s, n.Name).Ports {
			for _, k := range []string{"fq_flows", "fq_shared", "fq_table_full"} {
				fq[k] += p.Signals[k]
			}
		}
	}
	t.Logf("%s: %v", fc, fq)
	if fc == scheme.NameIdealFQ && (fq["fq_flows"] == 0 || fq["fq_shared"]+fq["fq_table_full"] != 0 || rep.Fabric.FQShared != 0) {
		t.Errorf("ideal-fq's queues: %v", fq)
	}
	return ""
}
