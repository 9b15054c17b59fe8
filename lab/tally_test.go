package lab

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// fakeEnds serves the stats of a cable's two ends: counters that the
// test moves and the instant they were counted.
type fakeEnds struct {
	at                 int64
	copiedLag          int64 // set: the ports' own instants, this much after the nodes'
	captured           atomic.Bool
	sent, peer, recv   uint64
	patched            bool
	startedA, startedB int64
}

func (f *fakeEnds) stats(node string) (*api.Stats, error) {
	own := func(at int64) int64 {
		if f.copiedLag == 0 {
			return 0
		}
		return at + f.copiedLag
	}
	if node == "s0.0" {
		return &api.Stats{Node: node, StartedUnixNs: f.startedA, CountedUnixNs: f.at, Ports: []api.PortStats{
			{Name: "p1", TxPackets: f.sent, RxPackets: f.recv, Captured: f.captured.Load(), Patched: f.patched, CountedUnixNs: own(f.at)}}}, nil
	}
	return &api.Stats{Node: node, StartedUnixNs: f.startedB, CountedUnixNs: f.at + 10, Ports: []api.PortStats{
		{Name: "eth0", TxPackets: f.peer, Patched: f.patched, CountedUnixNs: own(f.at + 10)}}}, nil
}

// A patched port's copies are divided by the instant its copier gives
// (the port's CountedUnixNs), not the node's.
func TestTallyTakesThePortsInstant(t *testing.T) {
	const swMAC, hMAC = "02:20:00:00:00:01", "02:10:00:00:01:00"
	f := &fakeEnds{at: 1000, copiedLag: 300, patched: true, sent: 50, peer: 70, recv: 68}
	f.captured.Store(true)
	ta := &Tally{node: "s0.0", port: "p1", peer: "h1", peerPort: "eth0", self: "s0.0.p1", other: "h1.eth0",
		names: map[string]string{swMAC: "s0.0.p1", hMAC: "h1.eth0"}, stats: f.stats, captureTimeout: time.Second}
	if err := ta.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The copier's windows: s0.0 p1's (1300, 2300], h1 eth0's (1310, 2310].
	for _, ts := range []int64{1200, 1300, 1301, 2000, 2300, 2301} {
		ta.Frame(time.Unix(0, ts), frameFrom(swMAC))
	}
	for _, ts := range []int64{1310, 1311, 2310, 2311} {
		ta.Frame(time.Unix(0, ts), frameFrom(hMAC))
	}
	f.at, f.sent, f.peer, f.recv = 2000, 53, 72, 69
	if err := ta.Stop(); err != nil {
		t.Fatal(err)
	}
	r, err := ta.Result()
	if err != nil {
		t.Fatal(err)
	}
	if !r.Exact() || r.SentCaptured != 3 || r.ReceivedCaptured != 2 || r.From != time.Unix(0, 1300) {
		t.Errorf("%+v", r)
	}
}

func frameFrom(mac string) []byte {
	b := make([]byte, 60)
	m, _ := net.ParseMAC(mac)
	copy(b[6:12], m)
	return b
}

func TestTallyCountsTheWindow(t *testing.T) {
	const swMAC, hMAC, strayMAC = "02:20:00:00:00:01", "02:10:00:00:01:00", "02:99:00:00:00:00"
	for _, patched := range []bool{true, false} {
		f := &fakeEnds{at: 1000, patched: patched, sent: 50, peer: 70, recv: 68}
		ta := &Tally{node: "s0.0", port: "p1", peer: "h1", peerPort: "eth0", self: "s0.0.p1", other: "h1.eth0",
			names: map[string]string{swMAC: "s0.0.p1", hMAC: "h1.eth0"}, stats: f.stats, captureTimeout: time.Second}
		// Not captured yet: Start waits.
		go func() { time.Sleep(100 * time.Millisecond); f.captured.Store(true) }()
		if err := ta.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Frames before, inside and after the windows (s0.0's is
		// (1000, 2000], h1's (1010, 2010]).
		for _, ts := range []int64{999, 1000, 1001, 1500, 2000, 2001} {
			ta.Frame(time.Unix(0, ts), frameFrom(swMAC))
		}
		for _, ts := range []int64{1005, 1010, 1011, 2010, 2011} {
			ta.Frame(time.Unix(0, ts), frameFrom(hMAC))
		}
		ta.Frame(time.Unix(0, 1500), frameFrom(strayMAC))
		ta.Frame(time.Unix(0, 1500), []byte{1, 2, 3}) // runt: not a frame of either end
		f.at, f.sent, f.peer, f.recv = 2000, 53, 72, 69
		if err := ta.Stop(); err != nil {
			t.Fatal(err)
		}
		r, err := ta.Result()
		if err != nil {
			t.Fatal(err)
		}
		if r.Sent != 3 || r.SentCaptured != 3 || r.PeerSent != 2 || r.ReceivedCaptured != 2 || r.Received != 1 || r.Others != 1 {
			t.Errorf("patched %v: %+v", patched, r)
		}
		if r.Exact() {
			t.Errorf("patched %v: a stray frame, yet exact", patched)
		}
		r.Others = 0
		if !r.Exact() {
			t.Errorf("patched %v: not exact: %+v", patched, r)
		}
		r.SentCaptured--
		if r.Exact() || !strings.Contains(r.String(), "MISSING 1") {
			t.Errorf("patched %v: a missing frame: exact %v\n%s", patched, r.Exact(), r)
		}
		if !patched && !strings.Contains(r.String(), "not captured: the cable is a veth") {
			t.Errorf("veth tally does not say the received side is not captured:\n%s", r)
		}
	}
}

func TestTallyRefusesBadWindows(t *testing.T) {
	f := &fakeEnds{at: 1000}
	f.captured.Store(true)
	newTally := func() *Tally {
		return &Tally{node: "s0.0", port: "p1", peer: "h1", peerPort: "eth0", self: "s0.0.p1", other: "h1.eth0",
			names: map[string]string{}, stats: f.stats, captureTimeout: 100 * time.Millisecond}
	}
	// A daemon started again between the snapshots.
	ta := newTally()
	if err := ta.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.startedB = 5
	_ = ta.Stop()
	if _, err := ta.Result(); err == nil || !strings.Contains(err.Error(), "started again") {
		t.Errorf("restart: %v", err)
	}
	// Never reported captured.
	f.captured.Store(false)
	f.startedB = 0
	ta = newTally()
	if err := ta.Start(context.Background()); err == nil {
		t.Error("Start did not give up on a port never captured")
	}
	if _, err := ta.Result(); err == nil {
		t.Error("a tally that never started has a result")
	}
	// Stopped before it started.
	f.captured.Store(true)
	ta = newTally()
	_ = ta.Stop()
	if err := ta.Start(context.Background()); err == nil {
		t.Error("a tally started after its stop")
	}
	// An old daemon that does not say when it counted.
	f.at = 0
	ta = newTally()
	if err := ta.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "does not say when") {
		t.Errorf("old daemon: %v", err)
	}
}

func TestCaptureResultParse(t *testing.T) {
	var r CaptureResult
	r.parse("tcpdump: listening on p1, link-type EN10MB (Ethernet), snapshot length 262144 bytes\n38350 packets captured\n38371 packets received by filter\n21 packets dropped by kernel")
	if r != (CaptureResult{Captured: 38350, Received: 38371, DroppedByKernel: 21, Known: true}) {
		t.Errorf("parsed %+v", r)
	}
	r = CaptureResult{}
	r.parse("tcpdump: listening on p1\n")
	if r.Known {
		t.Errorf("a killed tcpdump's counts are known: %+v", r)
	}
}
