package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/dataplane"
)

// Late tells a run the machine was late for (lost link time, ring drops,
// the links' RTT off the model's), which a rerun may make valid, from one
// with a problem no rerun excuses; the problems are Since's own, so a
// change of their wording that Late no longer knows fails here.
func TestHealthLate(t *testing.T) {
	base := func() *HealthSample {
		s := sample(0, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0"}), node("s0.0", 11, 0, PortSample{Name: "p0"}))
		s.Procs = append(s.Procs, ProcSample{Name: "w0", Pid: 20})
		return s
	}
	rtt := func(ns int64, n uint64) *api.RTT {
		return &api.RTT{Count: n, SumNs: uint64(ns) * n, MinNs: ns, MaxNs: ns, Buckets: []api.RTTBucket{{Index: api.RTTBucketOf(ns), Count: n}}}
	}
	for _, c := range []struct {
		name  string
		after *HealthSample
		late  bool
		why   string
	}{
		{"valid", sample(time.Second, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0"}), node("s0.0", 11, 0, PortSample{Name: "p0"})), false, ""},
		{"lost link time", sample(time.Second, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0", LostNs: 20_000_000}), node("s0.0", 11, 0, PortSample{Name: "p0"})),
			true, "h0/eth0 lost 20ms of the lab's link time, 2.00% of the run (limit 1.00%): its daemon was not scheduled in time"},
		{"ring drops and lost link time", sample(time.Second, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0", LostNs: 20_000_000}), node("s0.0", 11, 0, PortSample{Name: "p0", RingDrops: 7})),
			true, "XSK rings dropped 7 frames"},
		{"links' RTT", func() *HealthSample {
			s := sample(time.Second, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0", RTT: rtt(5_000_000, 50)}), node("s0.0", 11, 0, PortSample{Name: "p0"}))
			s.ModelRTT, s.Judge = time.Millisecond, true
			return s
		}(), true, "did not realise the target's delay"},
		{"links' RTT at p99", func() *HealthSample {
			// The median on the model's, the slowest 10% five times it.
			r := &api.RTT{Count: 100, SumNs: 90*1_000_000 + 10*5_000_000, MinNs: 1_000_000, MaxNs: 5_000_000,
				Buckets: []api.RTTBucket{{Index: api.RTTBucketOf(1_000_000), Count: 90}, {Index: api.RTTBucketOf(5_000_000), Count: 10}}}
			s := sample(time.Second, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0", RTT: r}), node("s0.0", 11, 0, PortSample{Name: "p0"}))
			s.ModelRTT, s.Judge = time.Millisecond, true
			return s
		}(), true, "of lab time at p99 (p50 "},
		{"lost link time, a worker saturated", func() *HealthSample {
			s := sample(time.Second, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0", LostNs: 20_000_000}), node("s0.0", 11, 0, PortSample{Name: "p0"}))
			s.Procs = append(s.Procs, ProcSample{Name: "w0", Pid: 20, Yields: 9})
			return s
		}(), true, "its daemon was not scheduled in time; saturated workers (busy for 5 ms without a sleep, while every node they run waited): w0 9 times"},
		{"a worker's skipped time", func() *HealthSample {
			s := sample(time.Second, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0"}), node("s0.0", 11, 0, PortSample{Name: "p0"}))
			s.Procs = append(s.Procs, ProcSample{Name: "w0", Pid: 20, Skipped: 300 * time.Millisecond})
			return s
		}(), true, "worker w0 skipped 300ms of the model's time, 30% of the run (limit 20%): the worker was later than its replay reaches"},
		{"restarted", sample(time.Second, 0, 0, node("h0", 12, 0, PortSample{Name: "eth0"}), node("s0.0", 11, 0, PortSample{Name: "p0"})), false, ""},
		{"late and dead", sample(time.Second, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0", LostNs: 20_000_000}), NodeSample{Node: "s0.0", Pid: 11, Err: "daemon not running"}), false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := base()
			if c.after.ModelRTT > 0 {
				before.ModelRTT, before.Judge = c.after.ModelRTT, true
			}
			h := c.after.Since(before, 0, HealthLimits{})
			why, late := h.Late()
			if late != c.late || !strings.Contains(why, c.why) {
				t.Errorf("valid %v, problems %q: Late() = %q, %v; want late %v saying %q", h.Valid, h.Problems, why, late, c.late, c.why)
			}
			if c.name != "valid" && h.Valid {
				t.Errorf("valid, want problems")
			}
			// A command's output says the same in its health line, when
			// that line names every problem (Short names the first).
			out := "lab gen: done\n" + h.Short() + "\n"
			owhy, olate := LateOutput(out)
			if want := late && len(h.Problems) == 1; olate != want || (want && owhy != why) {
				t.Errorf("LateOutput(%q) = %q, %v; want %v, %q", out, owhy, olate, want, why)
			}
		})
	}
}

// The wake-up probe that waits for a calm machine before a late attempt
// runs again measures what a worker would see: at a worker's priority.
func TestProbePriorityIsWorkers(t *testing.T) {
	if testtool.ProbePriority != dataplane.DefaultPriority {
		t.Errorf("the probe runs at priority %d, a worker at %d", testtool.ProbePriority, dataplane.DefaultPriority)
	}
}

// A workload whose flows started late is invalid, for lateness; within
// the limit, or with none, it is not.
func TestHealthStartLag(t *testing.T) {
	b := sample(0, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0"}))
	a := sample(time.Second, 0, 0, node("h0", 10, 0, PortSample{Name: "eth0"}))
	for _, c := range []struct {
		limit, p99 time.Duration
		valid      bool
	}{
		{0, 4 * time.Microsecond, true},
		{0, 6 * time.Microsecond, false},
		{10 * time.Microsecond, 6 * time.Microsecond, true},
		{-1, time.Second, true},
	} {
		h := a.Since(b, 0, HealthLimits{MaxStartLag: c.limit})
		h.JudgeStartLag(c.p99)
		why, late := h.Late()
		if h.Valid != c.valid || late == c.valid || (!c.valid && !strings.Contains(why, "did not start them on time")) {
			t.Errorf("limit %v, p99 %v: valid %v, Late() = %q, %v", c.limit, c.p99, h.Valid, why, late)
		}
	}
}
