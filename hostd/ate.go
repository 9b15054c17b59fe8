package hostd

// Asymmetric Traffic Engineering (ATE), the PortFC paper's Algorithm 5,
// for Rail-only fabrics: BCube(n,k) whose level-0 links (the
// high-bandwidth domain, HBD: NVLink/NVSwitch-like) are faster than the
// links of the other levels (the network domain: rails).
//
// A source NIC keeps, per first-hop domain, the bytes its RDMA flows
// have in flight: T_H for the flows whose first hop is its level-0 port,
// T_N for the others. In flight means sent and not yet acknowledged:
// every new (not retransmitted) payload byte a flow sends adds to its
// domain's count, every byte acknowledged cumulatively takes it off, and
// a flow that ends takes off what it still counted. A new flow that can
// start in either domain (its destination differs from the source in
// digit 0 and in another digit) goes to the HBD unless T_H >= p·B_H,
// else to the network domain; the choice fixes the flow's level order
// for its life (a parallel path that starts in that domain, carried by
// the flow's UDP source port: see bcube.Policy.ATE). As ACKs come back
// T_H falls below p·B_H again and new flows go back to the HBD.
//
// B_H is the source's HBD capacity in bytes: what its level-0 link
// carries in one round trip of the longest path, the same window IRN's
// in-flight cap is (four one-hop BDPs of the scale model), at the level-0
// rate (config.Node.ATECap). p defaults to the paper's 0.9
// (config.DefaultATEP).

import (
	"errors"
	"fmt"
	"math"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
)

// ATE is one source's first-hop domain choice. It is not safe for
// concurrent use: hostd runs it on the engine goroutine. Nothing it does
// allocates.
type ATE struct {
	p     float64
	capH  int64    // B_H
	limit int64    // ceil(p·B_H): T_H at or above it means the HBD is full
	in    [2]int64 // T_H, T_N
	last  int8     // the previous choice: -1 none, 0 HBD, 1 network
	c     api.ATEStats
}

// NewATE returns the choice of a source whose HBD capacity is capH bytes
// (B_H), with threshold fraction p in (0, 1].
func NewATE(p float64, capH int64) (*ATE, error) {
	if math.IsNaN(p) || p <= 0 || p > 1 {
		return nil, fmt.Errorf("ate: p %g: want a fraction in (0, 1]", p)
	}
	if capH <= 0 {
		return nil, errors.New("ate: the HBD capacity B_H must be positive")
	}
	limit := int64(math.Ceil(p * float64(capH)))
	return &ATE{p: p, capH: capH, limit: limit, last: -1}, nil
}

// HBD reports whether a new flow that may start in either domain goes to
// the high-bandwidth domain: T_H < p·B_H.
func (a *ATE) HBD() bool { return a.in[0] < a.limit }

// Chose counts the start of a flow ATE placed (hbd: its first hop is in
// the HBD), and whether the choice differs from the previous one.
func (a *ATE) Chose(hbd bool) {
	d := int8(1)
	if hbd {
		d = 0
		a.c.HBD++
	} else {
		a.c.Network++
	}
	if a.last >= 0 && a.last != d {
		a.c.Switches++
	}
	a.last = d
}

// NoChoice counts the start of a flow whose destination left ATE no
// choice (it differs from the source in digit 0 only, or not in digit 0),
// or whose request fixed its order (ordered).
func (a *ATE) NoChoice(ordered bool) {
	if ordered {
		a.c.Ordered++
	} else {
		a.c.Fixed++
	}
}

// Add changes the in-flight bytes of a domain (hbd: T_H, else T_N) by
// delta.
func (a *ATE) Add(hbd bool, delta int64) {
	if hbd {
		a.in[0] += delta
	} else {
		a.in[1] += delta
	}
}

// InFlight is T_H and T_N.
func (a *ATE) InFlight() (hbd, network int64) { return a.in[0], a.in[1] }

// Stats are the choice's parameters, counters and in-flight bytes now.
func (a *ATE) Stats() api.ATEStats {
	s := a.c
	s.P, s.CapHBDBytes, s.LimitBytes = a.p, a.capH, a.limit
	s.InFlightHBD, s.InFlightNetwork = a.in[0], a.in[1]
	return s
}

// ateOrder is the level order ATE gives flow id from this server to dst
// in the domain it chose (hbd: level 0): a parallel path that starts at
// level 0, or at a level above 0 in which dst differs (the id spreads
// flows over them when there are several). ok is false when dst leaves
// no choice: it differs from this server in digit 0 only, or not in
// digit 0.
func (h *Host) ateOrder(dst, id int, hbd bool) (o bcube.Order, ok bool) {
	t := h.t
	others := 0
	for l := 1; l < t.Levels(); l++ {
		if t.Digit(h.self, l) != t.Digit(dst, l) {
			others++
		}
	}
	if others == 0 || t.Digit(h.self, 0) == t.Digit(dst, 0) {
		return o, false
	}
	if hbd {
		return t.ParallelPath(0), true
	}
	pick := id % others
	for l := 1; l < t.Levels(); l++ {
		if t.Digit(h.self, l) != t.Digit(dst, l) {
			if pick == 0 {
				return t.ParallelPath(l), true
			}
			pick--
		}
	}
	return o, false // not reached
}
