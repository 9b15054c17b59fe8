package lab

// Faults during traffic on real labs: a cable cut and mended while a
// workload runs.

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
)

// A cable (h1 eth0 - s0.0 p1) cut for half a second in the middle of a
// lossless workload, then mended. The run still ends by itself (no flow
// holds it past its drain time without being reported), every flow is
// accounted for (completed, failed by its gap, or stopped at the end of
// the drain time and counted as aborted), the cut's frames are counted as
// injected and none as a drop, the flows that did not complete are the
// ones the cut could reach, and the lab comes down clean.
func TestWorkloadLinkDownLab(t *testing.T) {
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		s := realSpec(t, 2, 1)
		s.FC, s.RateBps = scheme.NamePortFC, 10e6
		if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
			t.Fatal(err)
		}
		storage, err := workload.BuiltinCDF("storage")
		if err != nil {
			t.Fatal(err)
		}
		cfg := workload.Config{Load: 0.5, CDF: storage, Duration: 3 * time.Second, Seed: 11}
		_, sched, err := WorkloadSchedule(s.RunRoot, s.Name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		// The flows the cut leaves stuck end only at the drain's end: the
		// model's least drain (2 ms of the target, 20 s of this lab) is
		// cut to what the slowest flow of the schedule needs.
		st, err := LoadState(s.RunRoot, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		ideal := WorkloadIdeal(st.Spec, mustTopology(t, s), api.DefaultRDMAMTU)
		drain := cfg.Duration
		for _, f := range sched {
			drain = max(drain, drainFactor*ideal(f.Src, f.Dst, f.Size))
		}
		started := make(chan struct{})
		type result struct {
			rep *WorkloadReport
			err error
		}
		done := make(chan result, 1)
		go func() {
			once := false
			rep, err := RunWorkload(t.Context(), s.RunRoot, s.Name, WorkloadOptions{Config: cfg, Interval: 200 * time.Millisecond, Drain: drain,
				Progress: func(p WorkloadProgress) {
					if !once && p.Started >= len(sched)/3 {
						once = true
						close(started)
					}
				}})
			done <- result{rep, err}
		}()
		select {
		case <-started:
		case r := <-done:
			t.Fatalf("the workload ended before a third of its flows started: %v", r.err)
		}
		down, up := true, false
		if _, err := SetLink(s.RunRoot, s.Name, "h1", "eth0", LinkConfig{Down: &down}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		if _, err := SetLink(s.RunRoot, s.Name, "h1", "eth0", LinkConfig{Down: &up}); err != nil {
			t.Fatal(err)
		}
		var r result
		select {
		case r = <-done:
		case <-time.After(cfg.Duration + drain + 10*time.Second):
			t.Fatalf("the workload did not end within its duration %v and drain %v", cfg.Duration, drain)
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
		rep := r.rep
		sm := rep.Summary
		t.Logf("%d flows: %d completed, %d failed, %d incomplete (%d aborted); %d injected drops, %d drops; elapsed %v; %s",
			len(rep.Records), sm.Completed, sm.Failed, sm.Incomplete, rep.Aborted, rep.Fabric.Injected, rep.Fabric.Drops, rep.Elapsed, rep.Health.Short())
		if why, late := rep.Health.Late(); late {
			// A run the machine was late for proves nothing either way; the
			// lossless promise still holds where no ring overflowed.
			if rep.Health.RingDrops == 0 && rep.Fabric.Drops != 0 {
				t.Errorf("the emulator lost %d frames under PortFC in a late run whose rings dropped nothing", rep.Fabric.Drops)
			}
			return why
		}
		if len(rep.Records) != len(sched) || sm.Completed+sm.Failed+sm.Incomplete != len(sched) {
			t.Errorf("%d records, %d+%d+%d accounted for, of %d flows", len(rep.Records), sm.Completed, sm.Failed, sm.Incomplete, len(sched))
		}
		if sm.Incomplete != rep.Aborted {
			t.Errorf("%d flows incomplete, %d aborted: a flow neither ended nor was stopped", sm.Incomplete, rep.Aborted)
		}
		if rep.Fabric.Injected == 0 {
			t.Error("the cut dropped nothing: the test proves nothing")
		}
		if rep.Fabric.Drops != 0 {
			t.Errorf("the emulator lost %d frames under PortFC", rep.Fabric.Drops)
		}
		// Only a flow whose path crosses the cable can miss a frame: under
		// the lab's hash policy every 4-hop flow may, a 2-hop flow only from
		// or to h1 over level 0 (h0 <-> h1).
		tp := mustTopology(t, s)
		for _, rec := range rep.Records {
			if rec.Completed && !rec.Failed {
				continue
			}
			twoHop := tp.Digit(rec.Src, 1) == tp.Digit(rec.Dst, 1) || tp.Digit(rec.Src, 0) == tp.Digit(rec.Dst, 0)
			levelZeroWithH1 := (rec.Src == 1 || rec.Dst == 1) && tp.Digit(rec.Src, 1) == tp.Digit(rec.Dst, 1)
			if twoHop && !levelZeroWithH1 {
				t.Errorf("flow %d (h%d -> h%d) did not complete, yet its path avoids the cut cable: %+v", rec.ID, rec.Src, rec.Dst, rec)
			}
		}
		if sm.Completed == 0 {
			t.Error("no flow completed around the cut")
		}
		// The mended cable carries a flow again, whole.
		if _, err := StartFlow(s.RunRoot, s.Name, "h1", api.GenRequest{Dst: 0, Duration: int64(300 * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "h1 -> h0 over the mended cable", func() bool {
			src, err1 := Flows(s.RunRoot, s.Name, "h1")
			dst, err2 := Flows(s.RunRoot, s.Name, "h0")
			return err1 == nil && err2 == nil && len(src.Flows) == 1 && src.Flows[0].Done && len(dst.Sink) == 1 &&
				dst.Sink[0].Packets+dst.Sink[0].Gaps == src.Flows[0].Packets
		})
		if sink, _ := Flows(s.RunRoot, s.Name, "h0"); sink.Sink[0].Gaps != 0 || sink.Sink[0].Packets == 0 {
			t.Errorf("over the mended cable: %+v", sink.Sink[0])
		}
		return ""
	})
}

// mustTopology is the BCube of s.
func mustTopology(t *testing.T, s Spec) bcube.Topology {
	t.Helper()
	tp, err := bcube.New(s.N, s.K)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}
