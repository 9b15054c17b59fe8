package fabrictest

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/wire/transport"
)

// A flow alone completes in the store-and-forward ideal whether its nodes
// are served on time or late: with every deadline served 40% of a packet
// time late (a worker's slack), 1.13 packet times (the lab's slack at
// D = 1,000 and 5,000) or 3, the late worker steps its engines in the
// order of the model's time, each as of when it got its work (serve), so
// a receiver's ACK timer goes off after the data that reached it first;
// the NIC's paced packets keep their link's schedule (Engine.SendAt),
// each relay starts a frame from its time in the model (the cables carry
// it), and the NIC records the end at the last ACK's arrival. Over 2 and
// 4 links, flows of 1 to 256 packets.
func TestFlowAloneExactWhenLate(t *testing.T) {
	f := rdmaFabric(t, 0)
	w := workload.Wire{Rate: rdmaRate, Payload: api.DefaultRDMAMTU, Overhead: transport.DefaultWireOverhead,
		Ack: transport.DefaultWireOverhead + roce.AETHLen}
	pkt := time.Duration(float64(api.DefaultRDMAMTU+transport.DefaultWireOverhead) * 8 / rdmaRate * float64(time.Second))
	for _, slack := range []time.Duration{0, pkt * 4 / 10, pkt * 113 / 100, pkt * 3} {
		f.Sim.SetSlack(slack)
		for _, mode := range []string{"lossless", "irn"} {
			for _, dst := range []int{1, 3} {
				for _, size := range []int64{1 << 10, 2 << 10, 3 << 10, 10 << 10, 100 << 10, 256 << 10} {
					fs := runRDMA(t, f, 0, api.RDMARequest{Dst: dst, Bytes: size, Order: "0,1", Mode: mode}, 10*time.Second)
					ideal := workload.Ideal(size, f.T.Hops(0, dst), w)
					if got := time.Duration(fs[0].FCTNs); got != ideal {
						t.Errorf("%s, slack %v, %d hops, %d B: FCT %v, the ideal %v (%+.3f%%)", mode, slack, f.T.Hops(0, dst), size, got, ideal,
							100*(float64(got)/float64(ideal)-1))
					}
					f.RunFor(10 * time.Millisecond)
				}
			}
		}
	}
}

// A flow its window holds to a few packets, sent as its ACKs come back,
// completes in the same time whether its nodes are served on time or
// late (up to 3 packet times): a packet an ACK let go leaves as of the
// ACK's arrival in the model. IRN with a window of 3 packets, over 2 and
// 4 links.
func TestAckClockedFlowSameWhenLate(t *testing.T) {
	f := rdmaFabric(t, 0)
	p := hostd.TransportParams(scale.Model{Target: scale.Native(rdmaRate), D: 1}, rdmaRate)
	p.BDPBytes = 3 * int64(api.DefaultRDMAMTU)
	for _, h := range f.HostLogic {
		if err := h.SetTransport(p); err != nil {
			t.Fatal(err)
		}
	}
	pkt := time.Duration(float64(api.DefaultRDMAMTU+transport.DefaultWireOverhead) * 8 / rdmaRate * float64(time.Second))
	fct := map[[2]int64]time.Duration{}
	for _, slack := range []time.Duration{0, pkt * 4 / 10, pkt * 113 / 100, pkt * 3} {
		f.Sim.SetSlack(slack)
		for _, dst := range []int{1, 3} {
			for _, size := range []int64{10 << 10, 100 << 10} {
				fs := runRDMA(t, f, 0, api.RDMARequest{Dst: dst, Bytes: size, Order: "0,1", Mode: "irn"}, 10*time.Second)
				got, k := time.Duration(fs[0].FCTNs), [2]int64{int64(dst), size}
				ideal := workload.Ideal(size, f.T.Hops(0, dst), workload.Wire{Rate: rdmaRate, Payload: api.DefaultRDMAMTU,
					Overhead: transport.DefaultWireOverhead, Ack: transport.DefaultWireOverhead + roce.AETHLen})
				if slack == 0 {
					fct[k] = got
					if got <= ideal*101/100 {
						t.Errorf("%d hops, %d B: FCT %v, not held by its window (the ideal %v)", f.T.Hops(0, dst), size, got, ideal)
					}
				} else if got != fct[k] {
					t.Errorf("slack %v, %d hops, %d B: FCT %v, on time %v", slack, f.T.Hops(0, dst), size, got, fct[k])
				}
				f.RunFor(10 * time.Millisecond)
			}
		}
	}
}
