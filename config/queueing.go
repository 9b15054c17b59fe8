package config

import (
	"fmt"
	"strconv"

	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
)

// Queueing modes: which queues every fabric egress has and how frames are
// classified into them.
const (
	// QueueingPortFC is the PortFC allocation of DESIGN §4: a switch port
	// has A queues, a B queue and an HQ; a server port a, b, RQ and HQ.
	QueueingPortFC = "portfc"
	// QueueingPriority has one queue per 802.1Q priority (PFC); priority 6
	// (control) is the strict HQ.
	QueueingPriority = "priority"
	// QueueingBFC has a chosen number of queues (DefaultBFCQueues), the
	// last the strict HQ, the others served by DRR and assigned to flows
	// dynamically (BFC).
	QueueingBFC = "bfc"
)

// How a server's egress serves its relay queue under queueing portfc
// (Node.RelayQueue).
const (
	// RelayStrict serves the relay queue right after the HQ, before the
	// a and b queues.
	RelayStrict = "strict"
	// RelayDRR serves the relay queue in the deficit round robin of the a
	// and b queues, a quantum per round like each of them.
	RelayDRR = "drr"
)

// How BFC gives flows queues (Node.BFCAssign).
const (
	// BFCAssignDynamic is BFC's own assignment: a flow keeps its queue
	// while it has packets in the node or was seen within the sticky
	// time, and otherwise takes an empty queue.
	BFCAssignDynamic = "dynamic"
	// BFCAssignHash fixes a flow's queue by its hash (stochastic fair
	// queueing): flows whose hashes collide share a queue for good.
	BFCAssignHash = "hash"
)

// DefaultBFCQueues is BFC's physical queues per port, the HQ included.
const DefaultBFCQueues = 32

// PriorityHQ is the strict queue of the priority mode.
const PriorityHQ = 6

// Group indices of a switch egress in PortFC mode.
const (
	GroupA = 0 // the A queues, whose sum PortFC compares with X_off
	GroupB = 1
)

// SwitchEgress is the queue layout of a switch's fabric ports; n is the
// number of queues of modes where it is a choice (bfc; 0: the default).
func SwitchEgress(t bcube.Topology, mode string, n int) (queues.EgressConfig, error) {
	switch mode {
	case QueueingPortFC:
		c := queues.EgressConfig{Queues: t.SwitchQueues(), HQ: t.SwitchHQ(),
			Groups: []uint64{t.SwitchAQueues(), 1 << uint(t.SwitchB())}}
		for q := 0; q < c.Queues; q++ {
			c.Names = append(c.Names, t.SwitchQueueName(q))
		}
		return c, nil
	case QueueingPriority:
		return priorityEgress(), nil
	case QueueingBFC:
		return bfcEgress(n)
	}
	return queues.EgressConfig{}, fmt.Errorf("queueing %q: want %s, %s or %s", mode, QueueingPortFC, QueueingPriority, QueueingBFC)
}

// ServerEgress is the queue layout of a server's fabric ports; n as for
// SwitchEgress.
func ServerEgress(t bcube.Topology, mode string, n int) (queues.EgressConfig, error) {
	switch mode {
	case QueueingPortFC:
		// The relay queue goes right after the HQ: relayed frames arrive at
		// most at link rate and must leave as fast, or a relay server
		// would be a congestion point PortFC does not see.
		c := queues.EgressConfig{Queues: t.ServerQueues(), HQ: t.ServerHQ(), Strict: []int{t.ServerRQ()}}
		for q := 0; q < c.Queues; q++ {
			c.Names = append(c.Names, t.ServerQueueName(q))
		}
		return c, nil
	case QueueingPriority:
		return priorityEgress(), nil
	case QueueingBFC:
		return bfcEgress(n)
	}
	return queues.EgressConfig{}, fmt.Errorf("queueing %q: want %s, %s or %s", mode, QueueingPortFC, QueueingPriority, QueueingBFC)
}

// ServerEgress is the queue layout of the node's fabric ports if it is a
// server of t: ServerEgress of its queueing mode, with the relay queue
// served as RelayQueue says.
func (c *Node) ServerEgress(t bcube.Topology) (queues.EgressConfig, error) {
	qc, err := ServerEgress(t, c.Queueing, c.BFCQueues)
	if err != nil {
		return qc, err
	}
	switch c.RelayQueue {
	case "", RelayStrict:
	case RelayDRR:
		if c.Queueing != QueueingPortFC {
			return qc, fmt.Errorf("relay_queue %s: only queueing %s has a relay queue", c.RelayQueue, QueueingPortFC)
		}
		qc.Strict = nil
	default:
		return qc, fmt.Errorf("relay_queue %q: want %s or %s", c.RelayQueue, RelayStrict, RelayDRR)
	}
	return qc, nil
}

func priorityEgress() queues.EgressConfig {
	c := queues.EgressConfig{Queues: 8, HQ: PriorityHQ}
	for q := 0; q < 8; q++ {
		c.Names = append(c.Names, "P"+strconv.Itoa(q))
	}
	return c
}

func bfcEgress(n int) (queues.EgressConfig, error) {
	if n == 0 {
		n = DefaultBFCQueues
	}
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
