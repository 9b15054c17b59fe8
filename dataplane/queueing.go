package dataplane

import (
	"fmt"
	"strconv"

	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/queues"
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
)

// PriorityHQ is the strict queue of the priority mode.
const PriorityHQ = 6

// Group indices of a switch egress in PortFC mode.
const (
	GroupA = 0 // the A queues, whose sum PortFC compares with X_off
	GroupB = 1
)

// SwitchEgress is the queue layout of a switch's fabric ports.
func SwitchEgress(t bcube.Topology, mode string) (queues.EgressConfig, error) {
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
	}
	return queues.EgressConfig{}, fmt.Errorf("queueing %q: want %s or %s", mode, QueueingPortFC, QueueingPriority)
}

// ServerEgress is the queue layout of a server's fabric ports.
func ServerEgress(t bcube.Topology, mode string) (queues.EgressConfig, error) {
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
	}
	return queues.EgressConfig{}, fmt.Errorf("queueing %q: want %s or %s", mode, QueueingPortFC, QueueingPriority)
}

func priorityEgress() queues.EgressConfig {
	c := queues.EgressConfig{Queues: 8, HQ: PriorityHQ}
	for q := 0; q < 8; q++ {
		c.Names = append(c.Names, "P"+strconv.Itoa(q))
	}
	return c
}
