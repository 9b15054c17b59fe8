package lab

import (
	"context"
	"testing"
	"time"

	"github.com/bcfab/bcfab/lab/workload"
)

// The baselines end to end: on BCube(4,1) at 20 Mb/s a brief incast runs
// under --cc hpcc and --cc dctcp; the run is valid and every flow
// completes. Under hpcc the egresses stamp INT records (switches and
// servers count them), under dctcp they mark and no CNP is sent.
func TestWorkloadCC(t *testing.T) {
	for _, cc := range []string{"hpcc", "dctcp"} {
		t.Run(cc, func(t *testing.T) {
			s := realSpec(t, 4, 1)
			s.RateBps, s.CC = 20e6, cc
			if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
				t.Fatal(err)
			}
			cfg := workload.Config{Duration: 2 * time.Second, Seed: 1,
				Incast: &workload.Incast{Senders: 4, Size: 64 << 10, Period: time.Second}}
			rep, err := RunWorkload(t.Context(), s.RunRoot, s.Name, WorkloadOptions{Config: cfg, CC: cc, Interval: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			sm := rep.Summary
			t.Logf("%s: %d flows, %d completed; %d ECN marks, %d CNPs; health %v %v", cc, len(rep.Records), sm.Completed,
				rep.Fabric.ECNMarks, rep.Fabric.CNPs, rep.Health.Valid, rep.Health.Problems)
			if len(rep.Records) != 8 || sm.Completed != 8 || sm.Failed+sm.Incomplete != 0 || rep.StartErrors+rep.Aborted != 0 {
				t.Errorf("%d records, %d completed, %d failed, %d incomplete", len(rep.Records), sm.Completed, sm.Failed, sm.Incomplete)
			}
			if !rep.Health.Valid {
				t.Errorf("emulation health invalid: %v", rep.Health.Problems)
			}
			st, err := LoadState(s.RunRoot, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			var stamped, servers uint64
			for _, n := range st.Nodes {
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				ns, err := FetchStats(ctx, n.Control)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range ns.Ports {
					stamped += p.INTStamped
					if ns.Kind == "hostd" {
						servers += p.INTStamped
					}
				}
			}
			t.Logf("%s: %d INT records stamped, %d by servers", cc, stamped, servers)
			switch cc {
			case "hpcc":
				if stamped == 0 || servers == 0 || stamped == servers {
					t.Errorf("INT records: %d stamped, %d by servers", stamped, servers)
				}
			case "dctcp":
				if stamped != 0 || rep.Fabric.CNPs != 0 || rep.Fabric.ECNMarks == 0 {
					t.Errorf("%d INT records, %d CNPs, %d marks", stamped, rep.Fabric.CNPs, rep.Fabric.ECNMarks)
				}
			}
		})
	}
}
