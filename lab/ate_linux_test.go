package lab

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
)

// ATE on a Rail-only BCube(4,1): level-0 links (the HBD) at 16 Mb/s,
// level-1 links (rails) at 10 Mb/s, the paper's 160:100. h0 sends flows
// to h15 (which differs in both digits): the first goes to the HBD; once
// its bytes in flight pass p·B_H (B_H 1 KB here, so one packet in flight
// fills it) new flows go to the rails; when everything is acknowledged
// a new flow goes to the HBD again. Every flow completes, by the route
// its source port names at every relay, and nothing is dropped. Then a
// MoE workload whose combine waits for its dispatch completes, and no
// combine flow starts before every dispatch flow of its event has ended.
func TestATERailOnly(t *testing.T) {
	s := realSpec(t, 4, 1)
	s.FC, s.RateBps, s.LevelOrder, s.ATECapBytes = scheme.NamePortFC, 10e6, "ate", 1024
	tp := bcube.MustNew(4, 1)
	for h := range tp.Servers() {
		s.Links = append(s.Links, LinkSpec{Endpoints: []string{fmt.Sprintf("h%d:eth0", h)}, RateBps: 16e6})
	}
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	st, err := LoadState(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	h0, _ := st.Node("h0")
	start := func() api.RDMAFlow {
		t.Helper()
		fs, err := startRDMA(t.Context(), h0.Control, []api.RDMARequest{{Dst: 15, Bytes: 32 << 10}})
		if err != nil {
			t.Fatal(err)
		}
		return fs[0]
	}
	ate := func() *api.ATEStats {
		t.Helper()
		st, err := Stats(s.RunRoot, s.Name, "h0")
		if err != nil {
			t.Fatal(err)
		}
		if st.Host == nil || st.Host.ATE == nil {
			t.Fatalf("h0's stats have no ATE section: %+v", st.Host)
		}
		return st.Host.ATE
	}
	var ids []int
	first := start()
	ids = append(ids, first.ID)
	if first.Port != 0 || first.Order != "0,1" {
		t.Fatalf("first flow: port %d, order %s; want the HBD", first.Port, first.Order)
	}
	rail := false
	for range 50 {
		time.Sleep(5 * time.Millisecond)
		f := start()
		ids = append(ids, f.ID)
		if f.Port == 1 {
			if f.Order != "1,0" {
				t.Fatalf("flow on the rail: order %s", f.Order)
			}
			rail = true
			break
		}
	}
	if !rail {
		t.Fatalf("no flow went to the rails: %+v", ate())
	}
	waitFlows(t, h0.Control, ids)
	a := ate()
	if a.InFlightHBD != 0 || a.InFlightNetwork != 0 {
		t.Fatalf("in flight after every flow ended: %+v", a)
	}
	if f := start(); f.Port != 0 {
		t.Fatalf("with nothing in flight, a flow left by port %d", f.Port)
	} else {
		waitFlows(t, h0.Control, []int{f.ID})
	}
	a = ate()
	if a.HBD < 2 || a.Network < 1 || a.Switches < 2 || a.CapHBDBytes != 1024 || a.P != 0.9 {
		t.Fatalf("ATE counters: %+v", a)
	}
	t.Logf("h0 ATE: %+v", a)

	cfg := workload.Config{Duration: 2 * time.Second, Seed: 3,
		Pattern: &workload.Pattern{Kind: workload.KindMoE, Period: time.Second, Size: 16 << 10, Few: 4, TopK: 2, Skew: 1, Wait: true}}
	rep, err := RunWorkload(t.Context(), s.RunRoot, s.Name, WorkloadOptions{Config: cfg, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sm := rep.Summary; sm.Completed != len(rep.Records) || len(rep.Records) != 2*2*12*2 || rep.Fabric.Drops != 0 {
		t.Fatalf("moe: %d of %d flows completed, %d drops", sm.Completed, len(rep.Records), rep.Fabric.Drops)
	}
	_, sched, err := WorkloadSchedule(s.RunRoot, s.Name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	end := map[int]time.Duration{} // by group: when its last dispatch flow ended, at the earliest
	for i, r := range rep.Records {
		if f := sched[i]; f.Phase == 0 {
			end[f.Group] = max(end[f.Group], r.Start+r.FCT)
		}
	}
	for i, r := range rep.Records {
		// Each record says the level order its NIC gave the flow.
		if r.Order != "0,1" && r.Order != "1,0" {
			t.Errorf("flow %d (%d to %d): order %q in its record", r.ID, r.Src, r.Dst, r.Order)
		}
		if f := sched[i]; f.Phase == 1 && (f.After != f.Group || r.Start < end[f.Group]) {
			t.Errorf("combine flow %d (group %d, after %d) started at %v, its dispatch ended at %v", f.ID, f.Group, f.After, r.Start, end[f.Group])
		}
	}
}

// waitFlows waits for the flows ids of the NIC at sock to complete.
func waitFlows(t *testing.T, sock string, ids []int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		rep, err := rdmaFlows(sock, ids)
		if err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, f := range rep.Flows {
			switch f.State {
			case api.RDMARunning:
				running++
			case api.RDMADone:
			default:
				t.Fatalf("flow %d: %s %s", f.ID, f.State, f.Failure)
			}
		}
		if running == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("flows %v still run", ids)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
