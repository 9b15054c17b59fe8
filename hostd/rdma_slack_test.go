package hostd

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/internal/testkit/pipe"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/xdp"
)

// arrivals records when each frame reached its engine, on the sim's clock.
type arrivals struct {
	sim *dataplane.Sim
	at  []int64
}

func (a *arrivals) Handle(in int, d *xdp.Desc, v *dataplane.Verdict) {
	a.at = append(a.at, a.sim.Now())
	v.Port = -1
}

// A paced flow's packets keep the link's schedule when the worker serves
// the NIC late: each waited only for its pacer, so it goes on the link
// as of its slot (Engine.SendAt), and the flow loses no link time to the
// worker's slack. The NIC's port 0 runs at 100 Mb/s into a recorder, on
// a sim that serves every deadline 60% of a packet time late.
func TestRDMAPacedKeepsScheduleWhenLate(t *testing.T) {
	const rate = 100e6
	tp := bcube.MustNew(2, 1)
	p := TransportParams(scale.Model{Target: scale.Native(rate), D: 1}, rate)
	p.DCQCN.Enabled = false
	sim := dataplane.NewSim()
	mem := make([]byte, hFrames*hFrame)
	farMem := make([]byte, 4*hRing*hFrame)
	fc := noFC(tp, 0)
	var specs []dataplane.PortSpec
	var far *pipe.End
	for l := 0; l <= tp.Levels(); l++ {
		near, f := pipe.New(mem, farMem, hRing)
		s := dataplane.PortSpec{Name: "p", IO: near}
		if l < tp.Levels() {
			s.Queues, s.RateBps = fc.Egress(), rate
		}
		if l == 0 {
			far = f
		}
		specs = append(specs, s)
	}
	h := NewHost(tp, 0, bcube.Policy{}, fc)
	if err := h.SetTransport(p); err != nil {
		t.Fatal(err)
	}
	e, err := dataplane.NewEngine(dataplane.Memory{Bytes: mem, FrameSize: hFrame, NumFrames: hFrames, RingSize: hRing},
		specs, h, dataplane.Options{BufferBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	h.Bind(e)
	rec := &arrivals{sim: sim}
	r, err := dataplane.NewEngine(dataplane.Memory{Bytes: farMem, FrameSize: hFrame, NumFrames: 4 * hRing, RingSize: hRing},
		[]dataplane.PortSpec{{Name: "in", IO: far}}, rec, dataplane.Options{BufferBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*dataplane.Engine{e, r} {
		if err := sim.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	const packets = 20
	mtu := api.DefaultRDMAMTU
	wire := mtu + p.WireOverhead
	ser := int64(wire) * 8 * int64(time.Second) / rate
	for _, tc := range []struct {
		slack time.Duration
	}{{0}, {time.Duration(ser * 6 / 10)}} {
		sim.SetSlack(tc.slack)
		rec.at = rec.at[:0]
		if _, err := h.StartRDMA(api.RDMARequest{Dst: 1, Bytes: int64(packets * mtu), Order: "0,1"}); err != nil {
			t.Fatal(err)
		}
		sim.RunFor(time.Duration(3 * packets * ser))
		if len(rec.at) != packets {
			t.Fatalf("slack %v: %d frames arrived, want %d", tc.slack, len(rec.at), packets)
		}
		if got, want := rec.at[packets-1]-rec.at[0], int64(packets-1)*ser; got != want {
			t.Errorf("slack %v: the last frame arrived %v after the first, want %v (%d packet times back to back)",
				tc.slack, time.Duration(got), time.Duration(want), packets-1)
		}
	}
}
