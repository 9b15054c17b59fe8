package scheme

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
)

// Egress layouts: which queues a fabric port has and how frames are
// classified into them (config.Node.Queueing). Each scheme has its own;
// none lets the config choose between PortFC's and the priorities'.
const (
	// QueueingPortFC is the PortFC allocation of DESIGN §4: a switch port
	// has A queues, a B queue and an HQ; a server port a, b, RQ and HQ.
	QueueingPortFC = "portfc"
	// QueueingPriority has one queue per 802.1Q priority (PFC); priority
	// 6 (control) is the strict HQ.
	QueueingPriority = "priority"
	// QueueingBFC has a chosen number of queues (DefaultBFCQueues), the
	// last the strict HQ, the others served by DRR and assigned to flows
	// dynamically (BFC).
	QueueingBFC = "bfc"
)

// How a server's egress serves its relay queue under PortFC's layout
// (config.Node.RelayQueue).
const (
	// RelayStrict serves the relay queue right after the HQ, before the
	// a and b queues.
	RelayStrict = "strict"
	// RelayDRR serves the relay queue in the deficit round robin of the a
	// and b queues, a quantum per round like each of them.
	RelayDRR = "drr"
)

// PriorityHQ is the strict queue of the priority layout.
const PriorityHQ = 6

// Group indices of a switch egress in the PortFC layout.
const (
	GroupA = 0 // the A queues, whose sum PortFC compares with X_off
	GroupB = 1
)

// allocation is PortFC's allocation of a node's queues (DESIGN §4): at a
// switch, the A queues by the port the frame will leave the next switch
// by, the B queue for the port's own server, the HQ; at a server, its
// own frames' a and b queues by destination, the relay queue (RQ) for
// the frames it relays, the HQ.
type allocation struct {
	t      bcube.Topology
	node   bcube.Node
	policy bcube.Policy
	hq     int
}

func newAllocation(p Place) allocation {
	a := allocation{t: p.T, node: p.Node, policy: p.Policy, hq: p.T.ServerHQ()}
	if p.Node.Switch {
		a.hq = p.T.SwitchHQ()
	}
	return a
}

// queue is f's queue.
func (a *allocation) queue(f *Frame) int {
	switch {
	case signaling.IsControl(f.PCP):
		return a.hq
	case !a.node.Switch:
		return a.t.ServerQueue(a.node.Index, f.Out, f.Dst, f.In >= 0)
	}
	tu := f.tuple()
	o := a.t.FlowOrder(&a.policy, &tu)
	return a.t.SwitchQueue(a.node.Level, a.node.Index, f.Out, f.Dst, &o)
}

// flowQueue is the queue of a server's own flow to dst at port l.
func (a *allocation) flowQueue(l, dst int) int { return a.t.ServerQueue(a.node.Index, l, dst, false) }

// egress is the layout of the node's fabric ports. A server's relay
// queue goes right after the HQ (strict), unless relayDRR: relayed
// frames arrive at most at link rate and must leave as fast, or a relay
// server would be a congestion point PortFC does not see.
func (a *allocation) egress(relayDRR bool) queues.EgressConfig {
	t := a.t
	if a.node.Switch {
		c := queues.EgressConfig{Queues: t.SwitchQueues(), HQ: t.SwitchHQ(),
			Groups: []uint64{t.SwitchAQueues(), 1 << uint(t.SwitchB())}}
		for q := 0; q < c.Queues; q++ {
			c.Names = append(c.Names, t.SwitchQueueName(q))
		}
		return c
	}
	c := queues.EgressConfig{Queues: t.ServerQueues(), HQ: t.ServerHQ(), Strict: []int{t.ServerRQ()}}
	if relayDRR {
		c.Strict = nil
	}
	for q := 0; q < c.Queues; q++ {
		c.Names = append(c.Names, t.ServerQueueName(q))
	}
	return c
}

// priorityEgress is the priority layout: queue i for priority i.
func priorityEgress() queues.EgressConfig {
	c := queues.EgressConfig{Queues: 8, HQ: PriorityHQ}
	for q := 0; q < 8; q++ {
		c.Names = append(c.Names, "P"+strconv.Itoa(q))
	}
	return c
}

// bfcEgress is the BFC layout of n queues, the HQ (the last) included.
func bfcEgress(n int) (queues.EgressConfig, error) {
	if n < 2 || n > signaling.MaxBFCQueues {
		return queues.EgressConfig{}, fmt.Errorf("queueing bfc: %d queues: want 2..%d (the HQ included)", n, signaling.MaxBFCQueues)
	}
	c := queues.EgressConfig{Queues: n, HQ: n - 1}
	for q := 0; q < n-1; q++ {
		c.Names = append(c.Names, "Q"+strconv.Itoa(q))
	}
	c.Names = append(c.Names, "HQ")
	return c, nil
}

// relayDRR reads c's relay queue: strict (or unset) or drr, which only a
// layout with a relay queue (hasRelay) has.
func relayDRR(c *config.Node, hasRelay bool) (bool, error) {
	switch c.RelayQueue {
	case "", RelayStrict:
		return false, nil
	case RelayDRR:
		if !hasRelay {
			return false, fmt.Errorf("relay_queue %s: only queueing %s has a relay queue", c.RelayQueue, QueueingPortFC)
		}
		return true, nil
	}
	return false, fmt.Errorf("relay_queue %q: want %s or %s", c.RelayQueue, RelayStrict, RelayDRR)
}

// checkWeights checks that c's DRR weights (config.Node.DRRWeights) fit
// the layout of s's fabric ports (queues.EgressConfig.Weighted): no more
// than their data queues, none but 1 on a strict queue. Its error says
// which queues the weights name at such a port, in order.
func checkWeights(c *config.Node, s Scheme, p Place) error {
	if len(c.DRRWeights) == 0 {
		return nil
	}
	qc := s.Egress()
	if _, err := qc.Weighted(c.DRRWeights); err != nil {
		kind := "server"
		if p.Node.Switch {
			kind = "switch"
		}
		return fmt.Errorf("drr_weights %s: %w; under fc %s a %s port's data queues are %s (the HQ takes no weight)",
			config.FormatDRRWeights(c.DRRWeights), err, s.Name(), kind, dataQueueNames(qc))
	}
	return nil
}

// dataQueueNames names c's data queues in order: every name up to eight,
// else the first and the last.
func dataQueueNames(c queues.EgressConfig) string {
	var names []string
	for _, q := range c.DataQueues() {
		names = append(names, c.QueueName(q))
	}
	if len(names) > 8 {
		return fmt.Sprintf("%s..%s (%d)", names[0], names[len(names)-1], len(names))
	}
	return strings.Join(names, ", ")
}
