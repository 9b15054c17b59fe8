package hostd

import (
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// A request with a time creates its flows scheduled, sends nothing
// before it, and its flows start at it on the engine's timer, then run
// to the end as any other.
func TestRDMAScheduled(t *testing.T) {
	pr := newPair(t, fastParams())
	const ahead = 3 * time.Millisecond
	at := time.Now().Add(ahead).UnixNano()
	fs, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 20_000, AtUnixNs: at})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].State != api.RDMAScheduled || fs[0].ID != 1 || fs[0].FirstNs != 0 || fs[0].EndNs != 0 {
		t.Fatalf("scheduled flow: %+v", fs[0])
	}
	// Unix time and the engine's convert by an offset read from two
	// clocks, off by as much as the thread was preempted between the
	// reads: a loaded machine moves it by tens of microseconds.
	const convTol = int64(time.Millisecond)
	if d := fs[0].StartNs - at; d < -int64(time.Microsecond) || d > convTol {
		t.Fatalf("due at %d, asked for %d", fs[0].StartNs, at)
	}
	// The engine wakes for it: its next tick is the flow's time, the
	// engine time the host converted the request's to.
	if len(pr.a.h.r.due) != 1 {
		t.Fatalf("%d requests scheduled, want 1", len(pr.a.h.r.due))
	}
	due := pr.a.h.r.due[0].at
	if d := due - (at - pr.a.h.unixOffset()); d < -convTol || d > convTol {
		t.Fatalf("due at %d of the engine, the request's time is %d", due, at-pr.a.h.unixOffset())
	}
	if next := pr.a.h.r.NextTick(); next < due-int64(time.Microsecond) || next > due+int64(time.Microsecond) {
		t.Fatalf("next tick %d, flow due %d", next, due)
	}
	// The engine runs on the machine's clock, so a step of this loop
	// may run late and past the flow's time: a frame counts as early
	// only if the clock, read after its step, is still before the time;
	// the longest round of the loop bounds how late the start may be.
	var longest int64
	last := pr.a.e.Now()
	step := func() {
		pr.step()
		now := pr.a.e.Now()
		longest, last = max(longest, now-last), now
	}
	for pr.a.e.Now() < due-2*stepTime {
		step()
		if pr.data != 0 && pr.a.e.Now() < due {
			t.Fatalf("%d data frames before the flow's time", pr.data)
		}
	}
	if f := pr.a.h.RDMA([]int{1}).Flows[0]; pr.a.e.Now() < due && f.State != api.RDMAScheduled {
		t.Fatalf("before its time: %+v", f)
	}
	for pr.a.e.Now() < due+2*stepTime {
		step()
	}
	f := runFlow(t, pr, 1)
	if f.State != api.RDMADone || f.AckedBytes != 20_000 {
		t.Fatalf("flow: %+v", f)
	}
	// It started on its time, late by a step of this test's loop (and
	// the clocks' conversion).
	if late := f.StartNs - at; late < -int64(time.Microsecond) || late > 3*stepTime+longest+convTol/10 {
		t.Errorf("started %v after its time", time.Duration(late))
	}
	if f.FirstNs < f.StartNs {
		t.Errorf("first packet at %d, before its start %d", f.FirstNs, f.StartNs)
	}
	if pr.a.h.r.scheduled != 0 || len(pr.a.h.r.due) != 0 {
		t.Errorf("%d flows, %d requests still scheduled", pr.a.h.r.scheduled, len(pr.a.h.r.due))
	}
}

// A request on the monotonic clock (AtMonoNs) is due at exactly that
// time of the engine, which reports its start and end on the same clock:
// there is no conversion through the wall clock to jitter or step.
func TestRDMAScheduledMono(t *testing.T) {
	pr := newPair(t, fastParams())
	at := api.MonotonicNs() + int64(3*time.Millisecond)
	fs, err := pr.a.h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: 20_000, AtMonoNs: at})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].State != api.RDMAScheduled || fs[0].StartMonoNs != at {
		t.Fatalf("scheduled flow: start %d on the monotonic clock, asked for %d: %+v", fs[0].StartMonoNs, at, fs[0])
	}
	if len(pr.a.h.r.due) != 1 || pr.a.h.r.due[0].at != at-pr.a.e.Monotonic(0) {
		t.Fatalf("due %+v, want at %d of the engine", pr.a.h.r.due, at-pr.a.e.Monotonic(0))
	}
	var longest int64
	last := pr.a.e.Now()
	due := pr.a.h.r.due[0].at
	for pr.a.e.Now() < due+2*stepTime {
		pr.step()
		now := pr.a.e.Now()
		longest, last = max(longest, now-last), now
	}
	f := runFlow(t, pr, 1)
	if f.State != api.RDMADone {
		t.Fatalf("flow: %+v", f)
	}
	if late := f.StartMonoNs - at; late < 0 || late > 3*stepTime+longest {
		t.Errorf("started %v after its time", time.Duration(late))
	}
	// Its FCT runs from its first packet, at or after its start.
	if f.EndMonoNs-f.StartMonoNs < f.FCTNs || f.FCTNs <= 0 {
		t.Errorf("on the monotonic clock from %d to %d, FCT %d", f.StartMonoNs, f.EndMonoNs, f.FCTNs)
	}
}

// A batch is checked whole: one wrong request and nothing is created;
// otherwise its flows take consecutive ids in the order of the requests,
// those due later scheduled, in order of their time whatever the order of
// the requests. An aborted scheduled flow never starts.
func TestRDMABatch(t *testing.T) {
	pr := newPair(t, fastParams())
	now := time.Now()
	// Tens of milliseconds ahead: the checks below run before the first
	// is due even on a loaded machine (2 ms was not, under a lab's run).
	later, sooner := now.Add(40*time.Millisecond).UnixNano(), now.Add(20*time.Millisecond).UnixNano()
	bad := []api.RDMARequest{
		{Dst: 1, Bytes: 10_000, AtUnixNs: later},
		{Dst: 0, Bytes: 10_000}, // itself
		{Dst: 1, Bytes: 10_000},
	}
	if _, err := pr.a.h.StartRDMABatch(bad); err == nil || !strings.Contains(err.Error(), "request 2 of 3") {
		t.Fatalf("a batch with a wrong request: %v", err)
	}
	for _, c := range []struct {
		reqs []api.RDMARequest
		err  string
	}{
		{nil, "0 requests"},
		{[]api.RDMARequest{{Dst: 1, Bytes: 1, AtUnixNs: now.Add(api.MaxRDMAAhead + time.Minute).UnixNano()}}, "at most"},
		{[]api.RDMARequest{{Dst: 1, Bytes: 1, AtUnixNs: -1}}, "at_unix_ns"},
		{[]api.RDMARequest{{Dst: 1, Bytes: 1, AtMonoNs: -1}}, "at_mono_ns"},
		{[]api.RDMARequest{{Dst: 1, Bytes: 1, AtMonoNs: api.MonotonicNs() + int64(api.MaxRDMAAhead+time.Minute)}}, "at_mono_ns"},
		{[]api.RDMARequest{{Dst: 1, Bytes: 1, AtUnixNs: later, AtMonoNs: api.MonotonicNs()}}, "at most one"},
	} {
		if _, err := pr.a.h.StartRDMABatch(c.reqs); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", c.reqs, err, c.err)
		}
	}
	if rep := pr.a.h.RDMA(nil); len(rep.Flows) != 0 || pr.a.h.r.scheduled != 0 {
		t.Fatalf("wrong batches left %d flows, %d scheduled", len(rep.Flows), pr.a.h.r.scheduled)
	}
	fs, err := pr.a.h.StartRDMABatch([]api.RDMARequest{
		{Dst: 1, Bytes: 10_000, AtUnixNs: later},
		{Dst: 1, Bytes: 10_000, AtUnixNs: sooner, Flows: 2},
		{Dst: 1, Bytes: 10_000, AtUnixNs: time.Now().Add(-time.Millisecond).UnixNano()}, // past: now
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{api.RDMAScheduled, api.RDMAScheduled, api.RDMAScheduled, api.RDMARunning}
	for i, f := range fs {
		if f.ID != i+1 || f.State != want[i] {
			t.Fatalf("flow %d: id %d %s, want id %d %s", i, f.ID, f.State, i+1, want[i])
		}
	}
	if len(pr.a.h.r.due) != 2 || pr.a.h.r.due[0].flows[0].ID != 2 || pr.a.h.r.scheduled != 3 {
		t.Fatalf("due: %d requests, first of flow %d; %d scheduled", len(pr.a.h.r.due), pr.a.h.r.due[0].flows[0].ID, pr.a.h.r.scheduled)
	}
	if n := pr.a.h.AbortRDMA([]int{3}); n != 1 {
		t.Fatalf("aborted %d scheduled flows, want 1", n)
	}
	if pr.a.h.r.scheduled != 2 {
		t.Fatalf("%d scheduled after an abort, want 2", pr.a.h.r.scheduled)
	}
	for pr.a.e.Now() < later-pr.a.h.unixOffset()+2*stepTime {
		pr.step()
	}
	for _, id := range []int{1, 2, 4} {
		if f := runFlow(t, pr, id); f.State != api.RDMADone {
			t.Errorf("flow %d: %+v", id, f)
		}
	}
	if f := pr.a.h.RDMA([]int{3}).Flows[0]; f.State != api.RDMAAborted || f.Packets != 0 || f.FirstNs != 0 || f.StartNs != 0 {
		t.Errorf("aborted before its time: %+v", f)
	}
	if pr.a.h.r.scheduled != 0 || len(pr.a.h.r.due) != 0 {
		t.Errorf("%d flows, %d requests still scheduled", pr.a.h.r.scheduled, len(pr.a.h.r.due))
	}
}
