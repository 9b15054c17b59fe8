package dataplane

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
)

const wdDetect = 8 * time.Millisecond

// wdRig is a rig on a fake clock, so that a test of the watchdog's times
// does not turn on how promptly the machine runs it.
type wdRig struct {
	*rig
	now int64
}

func newWatchdogRig(t *testing.T, wd config.Watchdog) *wdRig {
	r := &wdRig{}
	r.rig = newRigPorts(t, PortSpec{}, Options{BufferBytes: 1 << 20, Watchdog: wd}, func(e *Engine) {
		e.clock = func() int64 { return r.now }
	})
	return r
}

// run drives the rig's engine as Run does, watchdog included, for d of
// its clock, in passes 1 ms apart.
func (r *wdRig) run(d time.Duration) {
	for end := r.now + int64(d); r.now < end; r.now += int64(time.Millisecond) {
		moved := r.e.pass()
		r.recv()
		r.e.watchdog(moved > 0, r.e.Now())
	}
}

func (r *wdRig) queue0() api.QueueStats {
	ps, _ := r.e.Snapshot()
	return ps[1].Queues[0]
}

// A queue paused with frames and sending nothing is reported once the
// detection time has passed, and the report ends when it sends again.
func TestWatchdogReports(t *testing.T) {
	r := newWatchdogRig(t, config.Watchdog{Detect: wdDetect})
	eg := r.e.Egress(1)
	eg.Pause(0, r.e.Now(), 0)
	r.run(wdDetect / 2) // paused but empty: nothing to report
	if q := r.queue0(); q.Stalled || q.Stalls != 0 {
		t.Fatalf("empty paused queue reported: %+v", q)
	}
	for range 5 {
		r.send(1000)
	}
	r.run(3 * wdDetect)
	q := r.queue0()
	if !q.Stalled || q.Stalls != 1 || q.StalledForNs < int64(wdDetect) || q.Packets != 5 {
		t.Fatalf("after 3 detection times: %+v", q)
	}
	eg.Resume(0, r.e.Now())
	r.run(wdDetect)
	q = r.queue0()
	if q.Stalled || q.Stalls != 1 || q.StalledNs < int64(wdDetect) || q.Packets != 0 {
		t.Fatalf("after resuming: %+v", q)
	}
	// Nothing is paused and nothing moves: the watchdog disarms, so an
	// idle daemon does not wake for it.
	r.run(wdDetect)
	if r.e.wd.next >= 0 {
		t.Error("watchdog still armed on an idle engine")
	}
}

// Forward: a stalled queue ignores pauses for the restoration time, then
// obeys them again.
func TestWatchdogForward(t *testing.T) {
	wd := config.Watchdog{Detect: wdDetect, Restore: 4 * wdDetect, Action: config.WatchdogForward}
	r := newWatchdogRig(t, wd)
	eg := r.e.Egress(1)
	eg.Pause(0, r.e.Now(), 0)
	for range 5 {
		r.send(1000)
	}
	r.run(2 * wdDetect)
	q := r.queue0()
	if q.Stalls != 1 || q.Packets != 0 || !q.Recovering || q.DeqPackets != 5 {
		t.Fatalf("forward did not release the queue: %+v", q)
	}
	eg.Pause(0, r.e.Now(), 0) // a pause during the restoration time is ignored
	r.send(1000)
	r.run(time.Millisecond)
	if q := r.queue0(); q.Packets != 0 || q.IgnoredPauses != 1 {
		t.Fatalf("pause obeyed while overridden: %+v", q)
	}
	r.run(5 * wdDetect)
	if q := r.queue0(); q.Recovering {
		t.Fatalf("still recovering after the restoration time: %+v", q)
	}
	eg.Pause(0, r.e.Now(), 0)
	r.send(1000)
	r.run(time.Millisecond)
	if q := r.queue0(); q.Packets != 1 || !q.Paused {
		t.Fatalf("pause not obeyed after the restoration time: %+v", q)
	}
}

// Drop: a stalled queue's frames and those arriving for it during the
// restoration time are dropped and counted; no frame leaks.
func TestWatchdogDrop(t *testing.T) {
	wd := config.Watchdog{Detect: wdDetect, Restore: 4 * wdDetect, Action: config.WatchdogDrop}
	r := newWatchdogRig(t, wd)
	eg := r.e.Egress(1)
	eg.Pause(0, r.e.Now(), 0)
	for range 5 {
		r.send(1000)
	}
	r.run(2 * wdDetect)
	r.send(1000)
	r.run(time.Millisecond)
	q := r.queue0()
	if q.Stalls != 1 || q.Packets != 0 || q.DeqPackets != 0 || q.Drops["watchdog"] != 6 {
		t.Fatalf("drop action: %+v", q)
	}
	ps, fs := r.e.Snapshot()
	if ps[1].Drops["watchdog"] != 6 || fs.Free != fs.Total-2*tRing {
		t.Fatalf("port drops %v, frames %+v", ps[1].Drops, fs)
	}
	r.run(5 * wdDetect)
	eg.Resume(0, r.e.Now())
	r.send(1000)
	r.run(time.Millisecond)
	if q := r.queue0(); q.DeqPackets != 1 || q.Drops["watchdog"] != 6 {
		t.Fatalf("after the restoration time: %+v", q)
	}
}

func TestWatchdogConfigValidate(t *testing.T) {
	for _, c := range []config.Watchdog{
		{Detect: time.Millisecond},
		{Detect: -time.Second},
		{Detect: time.Second, Action: "reboot"},
		{Detect: time.Second, Action: config.WatchdogDrop},
	} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	for _, c := range []config.Watchdog{{}, {Detect: 200 * time.Millisecond}, {Detect: time.Second, Action: config.WatchdogForward, Restore: time.Second}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
