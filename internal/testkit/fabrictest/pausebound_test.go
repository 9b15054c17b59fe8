package fabrictest

import (
	"fmt"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/transport"
)

// The conformance study's pause bounds (study/experiment's pauseRows)
// on virtual time, where no node is ever late: the N-to-1 incasts of 1
// MiB RDMA flows of its incast cases (h_n... to h0) at the papers'
// thresholds and link delay (D = 1,000), under PFC and PortFC. Every
// paused class's counter peaks within X_off plus, from each port its
// pause stops, a one-hop BDP and two frames for each hop the pause takes
// (PortFC's B at a switch two: its relays pass it on), and every pause
// ends its round trip (to the last byte its senders sent) within as
// many one-hop RTTs, two frames and the pause frame each, and a frame
// for each relay on the way back, which forwards a frame once it has
// all of it. The lab's misses of these bounds (docs/VALIDATION.md) are
// its own lateness.
func TestPauseBoundsOnVirtualTime(t *testing.T) {
	for _, c := range []struct {
		n, senders int
		portfc     bool
	}{{4, 8, false}, {8, 32, false}, {4, 8, true}, {8, 32, true}} {
		name := fmt.Sprintf("PFC/BCube(%d,1)/%d-to-1", c.n, c.senders)
		if c.portfc {
			name = fmt.Sprintf("PortFC/BCube(%d,1)/%d-to-1", c.n, c.senders)
		}
		t.Run(name, func(t *testing.T) {
			validRun(t, func(t testing.TB) { pauseBounds(t, c.n, c.senders, c.portfc) })
		})
	}
}

func pauseBounds(t testing.TB, n, senders int, portfc bool) {
	const d = 1000
	const rate = 100_000_000
	m := scale.Model{Target: scale.Papers(), D: d}
	th, fcm := m.Thresholds(rate), m.FlowControl()
	fc := PFC(signaling.PFCThresholds{Xoff: th.Xoff, Xon: th.Xon, Lossless: 1 << signaling.PCPData}, rate, false)
	if portfc {
		fc = PortFC(signaling.Thresholds{XoffA: th.Xoff, XonA: th.Xon, XoffB: th.Xoff, XonB: th.Xon,
			Refresh: int64(fcm.Refresh), Hold: int64(fcm.Hold)}, false)
	}
	// 32 senders' first packets reach a switch at once: frames for them
	// beyond the rings (a lab's switch has 1,024 a port).
	f, err := New(bcube.MustNew(n, 1), Options{RateBps: rate, Delay: m.LinkDelay(), Buffer: int(m.Target.BufferBytes), SwitchFrames: 4096, FC: fc})
	if err != nil {
		t.Fatal(err)
	}
	watch(t, f)
	p := hostd.TransportParams(m, rate)
	for _, h := range f.HostLogic {
		if err := h.SetTransport(p); err != nil {
			t.Fatal(err)
		}
	}
	var ids [][2]int
	for s := n; s < n+senders; s++ {
		fs, err := f.HostLogic[s].StartRDMA(api.RDMARequest{Dst: 0, Bytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, [2]int{s, fs[0].ID})
	}
	losslessDone(t, f, ids, 100*time.Second)
	drained(t, f, 10*time.Second)
	if n, where := fabricDrops(f); n != 0 {
		t.Fatalf("%d drops: %v", n, where)
	}
	frame := api.DefaultRDMAMTU + transport.DefaultWireOverhead
	bdp := th.BDP
	ser := func(b int) time.Duration { return time.Duration(float64(b) * 8 / rate * 1e9) }
	oneTrip := m.Time(m.Target.OneHopRTT()) + ser(2*frame+60+queues.WireOverhead)
	paused := 0
	for i, e := range append(append([]*dataplane.Engine{}, f.Hosts...), f.Sws...) {
		sw := i >= len(f.Hosts)
		ps, _ := e.Snapshot()
		for _, pt := range ps {
			if pt.FCTiming == nil {
				continue
			}
			for _, cl := range pt.FCTiming.Classes {
				if cl.Pauses == 0 {
					continue
				}
				paused++
				stops, hops := 1, 1 // ports the pause stops, hops to stop them
				switch {
				case sw && (cl.Class == "A" || cl.Class == "B"):
					stops = n - 1
				case cl.Class == "RQ":
					stops = f.T.Levels() - 1
				}
				if sw && cl.Class == "B" {
					hops = 2
				}
				where := fmt.Sprintf("node %d %s %s (%d pauses)", i, pt.Name, cl.Class, cl.Pauses)
				if allow := cl.XoffBytes + stops*hops*(bdp+2*frame); cl.PeakBytes > allow {
					t.Errorf("%s: the counter peaked at %d B, past X_off + %d x %d x (BDP + 2 frames) = %d", where, cl.PeakBytes, stops, hops, allow)
				}
				trip, allow := time.Duration(cl.TripNs.Max), time.Duration(hops)*oneTrip+time.Duration(hops-1)*ser(frame)
				if trip > allow {
					t.Errorf("%s: a round trip of %v, past %d x (the one-hop RTT + 2 frames + the pause frame) + %d frame (%v)", where, trip, hops, hops-1, allow)
				}
				if hops > 1 {
					t.Logf("%s: the greatest round trip %v, two hops' allowance %v", where, trip, allow)
				}
			}
		}
	}
	if paused == 0 {
		t.Fatal("nothing paused: the incast tested no bound")
	}
	t.Logf("%d paused port classes within their bounds", paused)
}
