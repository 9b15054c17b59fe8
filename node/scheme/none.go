package scheme

import (
	"fmt"

	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
)

// None is no flow control: nothing is paused, and a frame that finds the
// buffer full is dropped. Its queues are PortFC's allocation, or with
// queueing priority one per 802.1Q priority.
type None struct {
	quiet
	alloc    allocation
	priority bool
	relayDRR bool
}

// NewNone returns no flow control at place p, with the priority layout
// if priority, else PortFC's (a server's relay queue in the round robin
// with relayDRR).
func NewNone(p Place, priority, relayDRR bool) *None {
	return &None{alloc: newAllocation(p), priority: priority, relayDRR: relayDRR}
}

func newNone(c *config.Node, p Place) (Scheme, error) {
	switch c.Queueing {
	case "", QueueingPortFC, QueueingPriority:
	default:
		return nil, fmt.Errorf("fc none: queueing %q: want %s or %s", c.Queueing, QueueingPortFC, QueueingPriority)
	}
	// A graph fabric has no BCube digits for PortFC's allocation: its
	// nodes queue by priority.
	if c.Fabric != nil && c.Queueing == QueueingPortFC {
		return nil, fmt.Errorf("fc none: queueing %s follows BCube's digits; on %s want %s", QueueingPortFC, c.Fabric.Topology, QueueingPriority)
	}
	priority := c.Queueing == QueueingPriority || c.Fabric != nil
	drr, err := relayDRR(c, !priority)
	if err != nil {
		return nil, err
	}
	return NewNone(p, priority, drr), nil
}

func describeNone(*config.Node, PerLevel) string {
	return "none: no pauses; a frame that finds the buffer full is dropped (a lossless flow then fails)"
}

func (*None) Name() string { return NameNone }

func (n *None) Egress() queues.EgressConfig {
	if n.priority {
		return priorityEgress()
	}
	return n.alloc.egress(n.relayDRR)
}

func (*None) Bind(Datapath, []Port) {}

func (n *None) Classify(f *Frame) (int, uint64) {
	if n.priority {
		return int(f.PCP), f.ingress()
	}
	return n.alloc.queue(f), f.ingress()
}

func (n *None) ControlQueue(int) int {
	if n.priority {
		return signaling.PCPControl
	}
	return n.alloc.hq
}

func (n *None) FlowQueue(p, dst int) int {
	if n.priority {
		return signaling.PCPData
	}
	return n.alloc.flowQueue(p, dst)
}
