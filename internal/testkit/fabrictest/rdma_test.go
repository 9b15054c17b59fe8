package fabrictest

import (
	"github.com/bcfab/bcfab/model/scale"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/wire/transport"
)

const rdmaRate = 100e6

// rdmaFabric is BCube(2,1) at 100 Mb/s whose NICs run the transport with
// the lab's default parameters, losing each frame on a cable with
// probability loss (data and control alike).
func rdmaFabric(t testing.TB, loss float64) *Fabric {
	return rdmaFabricOpts(t, bcube.MustNew(2, 1), loss, Options{})
}

// rdmaFabricOpts is rdmaFabric on tp with the flow control of o.
func rdmaFabricOpts(t testing.TB, tp bcube.Topology, loss float64, o Options) *Fabric {
	t.Helper()
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	o.RateBps = rdmaRate
	if loss > 0 {
		o.Lose = func(b []byte) bool {
			mu.Lock()
			defer mu.Unlock()
			return rng.Float64() < loss
		}
	}
	f, err := New(tp, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	watch(t, f)
	for _, h := range f.HostLogic {
		if err := h.SetTransport(hostd.TransportParams(scale.Model{Target: scale.Native(rdmaRate), D: 1}, rdmaRate)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// runRDMA starts req at src and runs the fabric until its flows end.
func runRDMA(t testing.TB, f *Fabric, src int, req api.RDMARequest, limit time.Duration) []api.RDMAFlow {
	t.Helper()
	fs, err := f.HostLogic[src].StartRDMA(req)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, fl := range fs {
		ids = append(ids, fl.ID)
	}
	var rep api.RDMAReport
	if !f.Poll(10*time.Millisecond, limit, func() bool {
		rep = f.HostLogic[src].RDMA(ids)
		running := false
		for _, fl := range rep.Flows {
			running = running || fl.State == api.RDMARunning
		}
		return !running
	}) {
		f.HostLogic[src].AbortRDMA(ids)
		t.Fatalf("flows still running after %v: %+v", limit, rep.Flows)
	}
	return rep.Flows
}

// losslessDone runs f until none of flows (each a server and the id of
// its flow) is running, or for at most limit, and returns their reports
// in order; it fails t unless every one completed without a
// retransmission.
func losslessDone(t testing.TB, f *Fabric, flows [][2]int, limit time.Duration) []api.RDMAFlow {
	t.Helper()
	report := func(i int) api.RDMAFlow { return f.HostLogic[flows[i][0]].RDMA([]int{flows[i][1]}).Flows[0] }
	f.Poll(100*time.Millisecond, limit, func() bool {
		for i := range flows {
			if report(i).State == api.RDMARunning {
				return false
			}
		}
		return true
	})
	out := make([]api.RDMAFlow, len(flows))
	for i := range flows {
		r := report(i)
		if r.State != api.RDMADone || r.RetxPackets != 0 {
			t.Fatalf("h%d's flow %d after %v: %s %s, %d retransmitted", flows[i][0], flows[i][1], limit, r.State, r.Failure, r.RetxPackets)
		}
		out[i] = r
	}
	return out
}

// A lossless flow over four hops (h0 -> h3 through a relay) completes at
// nearly the link rate with nothing retransmitted; the receiver took
// every packet once, in order.
func TestRDMALossless(t *testing.T) { validRun(t, rdmaLossless) }

func rdmaLossless(t testing.TB) {
	f := rdmaFabric(t, 0)
	const size = 2 << 20
	fs := runRDMA(t, f, 0, api.RDMARequest{Dst: 3, Bytes: size}, 10*time.Second)
	fl := fs[0]
	if fl.State != api.RDMADone || fl.AckedBytes != size || fl.RetxPackets != 0 || fl.NAKs != 0 || fl.Timeouts != 0 {
		t.Fatalf("flow: %+v", fl)
	}
	wire := float64(size+fl.Packets*transport.DefaultWireOverhead) * 8 / (float64(fl.FCTNs) / 1e9)
	t.Logf("%d bytes in %v: %.1f Mb/s of payload, %.1f%% of the link on the wire", size, time.Duration(fl.FCTNs),
		float64(size)*8/(float64(fl.FCTNs)/1e9)/1e6, 100*wire/rdmaRate)
	if wire < 0.8*rdmaRate {
		t.Errorf("wire rate %.1f Mb/s, want at least 80%% of %v Mb/s", wire/1e6, rdmaRate/1e6)
	}
	rep := f.HostLogic[3].RDMA(nil)
	if len(rep.Receivers) != 1 {
		t.Fatalf("h3 has %d receivers", len(rep.Receivers))
	}
	r := rep.Receivers[0]
	if !r.Done || r.Gap || r.Src != 0 || r.QP != fl.QP || r.Stats["bytes"] != size || r.Stats["duplicates"] != 0 || r.Stats["gaps"] != 0 {
		t.Errorf("receiver: %+v", r)
	}
	if rep.Counters != (api.RDMACounters{}) {
		t.Errorf("h3 counters: %+v", rep.Counters)
	}
}

// 1% loss on every cable: Go-Back-N and IRN complete every flow, IRN
// retransmitting fewer bytes; a lossless flow fails on the first gap.
func TestRDMALoss(t *testing.T) { validRun(t, rdmaLoss) }

func rdmaLoss(t testing.TB) {
	f := rdmaFabric(t, 0.01)
	const size = 1 << 20
	retx := map[string]uint64{}
	for _, mode := range []string{"gbn", "irn"} {
		fs := runRDMA(t, f, 0, api.RDMARequest{Dst: 3, Bytes: size, Mode: mode, Flows: 2}, 30*time.Second)
		for _, fl := range fs {
			if fl.State != api.RDMADone || fl.AckedBytes != size {
				t.Errorf("%s: flow %d: %+v", mode, fl.ID, fl)
			}
			retx[mode] += fl.RetxBytes
			t.Logf("%s flow %d: FCT %v, retransmitted %d packets (%d bytes), %d timeouts, %d NAKs", mode, fl.ID,
				time.Duration(fl.FCTNs), fl.RetxPackets, fl.RetxBytes, fl.Timeouts, fl.NAKs)
		}
	}
	if retx["irn"] >= retx["gbn"] {
		t.Errorf("IRN retransmitted %d bytes, Go-Back-N %d: want fewer", retx["irn"], retx["gbn"])
	}
	fs := runRDMA(t, f, 0, api.RDMARequest{Dst: 3, Bytes: 4 << 20, Mode: "lossless"}, 30*time.Second)
	if fs[0].State != api.RDMAFailed || fs[0].Failure == "" || fs[0].RetxPackets != 0 {
		t.Errorf("lossless under loss: %+v", fs[0])
	}
	t.Logf("lossless: %s", fs[0].Failure)
}

// Timed flows end after their duration; several flows share the path.
func TestRDMADuration(t *testing.T) { validRun(t, rdmaDuration) }

func rdmaDuration(t testing.TB) {
	f := rdmaFabric(t, 0)
	start := f.Now()
	fs := runRDMA(t, f, 1, api.RDMARequest{Dst: 2, Duration: int64(300 * time.Millisecond), Flows: 3, Order: "1,0"}, 10*time.Second)
	if el := f.Now() - start; el < 300*time.Millisecond {
		t.Errorf("flows ended after %v", el)
	}
	var total int64
	for _, fl := range fs {
		if fl.State != api.RDMADone || fl.Size == 0 || fl.AckedBytes != fl.Size || fl.Order != "1,0" {
			t.Errorf("flow %d: %+v", fl.ID, fl)
		}
		total += fl.AckedBytes
	}
	bps := float64(total) * 8 / 0.3
	t.Logf("3 flows: %d bytes, %.1f Mb/s", total, bps/1e6)
	if bps < 0.5*rdmaRate {
		t.Errorf("%.1f Mb/s together", bps/1e6)
	}
}

// Bad requests are refused with a reason and start nothing.
func TestRDMABadRequests(t *testing.T) {
	f := rdmaFabric(t, 0)
	h := f.HostLogic[0]
	for _, req := range []api.RDMARequest{
		{Dst: 0, Bytes: 1000},
		{Dst: 9, Bytes: 1000},
		{Dst: 1},
		{Dst: 1, Bytes: 1000, Duration: 1000},
		{Dst: 1, Bytes: 1000, Mode: "tcp"},
		{Dst: 1, Bytes: 1000, MTU: 100},
		{Dst: 1, Bytes: 1000, MTU: 1500},
		{Dst: 1, Bytes: 1000, Flows: 1000},
		{Dst: 1, Bytes: 1000, Order: "2,0"},
	} {
		if _, err := h.StartRDMA(req); err == nil {
			t.Errorf("%+v: no error", req)
		} else {
			t.Logf("%+v: %v", req, err)
		}
	}
	if n := len(h.RDMA(nil).Flows); n != 0 {
		t.Errorf("%d flows started", n)
	}
}

// A 3-to-1 incast of lossless RDMA flows (h1, h2, h3 -> h0 of BCube(4,1),
// all through s0.0) completes without a gap under every flow-control
// scheme (paused senders wait, they do not drop), and fails without flow
// control, where the switch port toward h0 drops.
func TestRDMAIncastFlowControl(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
		ok   bool
	}{
		{"portfc", Options{FC: PortFC(fcTh, false)}, true},
		{"pfc", Options{FC: PFC(pfcTh, 0, false)}, true},
		{"bfc", Options{FC: BFC(bfcCfg)}, true},
		{"none", Options{Buffer: 64 << 10}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			validRun(t, func(t testing.TB) {
				f := rdmaFabricOpts(t, bcube.MustNew(4, 1), 0, c.o)
				var ids [4][]int
				for src := 1; src <= 3; src++ {
					fs, err := f.HostLogic[src].StartRDMA(api.RDMARequest{Dst: 0, Bytes: 1 << 20, DCQCN: new(bool)})
					if err != nil {
						t.Fatal(err)
					}
					ids[src] = append(ids[src], fs[0].ID)
				}
				end := f.Now() + 15*time.Second
				failed := 0
				for src := 1; src <= 3; src++ {
					var fl api.RDMAFlow
					if !f.Poll(10*time.Millisecond, max(0, end-f.Now()), func() bool {
						fl = f.HostLogic[src].RDMA(ids[src]).Flows[0]
						return fl.State != api.RDMARunning
					}) {
						t.Fatalf("h%d: still running: %+v", src, fl)
					}
					t.Logf("h%d: %s, FCT %v %s", src, fl.State, time.Duration(fl.FCTNs), fl.Failure)
					if fl.State != api.RDMADone {
						failed++
					}
				}
				var dropped uint64
				for _, e := range append(f.Hosts, f.Sws...) {
					ps, _ := e.Snapshot()
					dropped += drops(ps)
				}
				switch {
				case c.ok && (failed != 0 || dropped != 0):
					t.Errorf("%d flows failed, %d frames dropped", failed, dropped)
				case !c.ok && (failed == 0 || dropped == 0):
					t.Errorf("without flow control: %d flows failed, %d frames dropped", failed, dropped)
				}
			})
		})
	}
}
