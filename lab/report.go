package lab

import (
	"time"

	"github.com/bcfab/bcfab/dataplane"
)

// Report is the status of a lab, node by node.
type Report struct {
	Lab     string       `json:"lab"`
	Spec    Spec         `json:"spec"`
	Phase   string       `json:"phase"`
	Created time.Time    `json:"created"`
	Nodes   []NodeStatus `json:"nodes"`
}

// NodeStatus is one node's status.
type NodeStatus struct {
	Name            string `json:"name"`
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace"`
	NamespaceExists bool   `json:"namespace_exists"`
	Pid             int    `json:"pid"`
	// Alive: the recorded pid runs with this node's config file.
	Alive bool `json:"alive"`
	// Healthy: GET /healthz answered 200.
	Healthy bool `json:"healthy"`
	// Stats summarises GET /stats; nil when it could not be read.
	Stats *StatsSummary `json:"stats,omitempty"`
	// Err says why the node is not healthy or has no stats.
	Err string `json:"error,omitempty"`
}

// OK reports whether the node's namespace exists and its daemon is alive
// and healthy.
func (n *NodeStatus) OK() bool { return n.NamespaceExists && n.Alive && n.Healthy }

// StatsSummary adds up a daemon's ports.
type StatsSummary struct {
	Ports     int    `json:"ports"`
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	RxBytes   uint64 `json:"rx_bytes"`
	TxBytes   uint64 `json:"tx_bytes"`
	// Drops is the sum of every port's PortStats.TotalDrops.
	Drops uint64 `json:"drops"`
}

// Summarize adds up the ports of a daemon's stats.
func Summarize(st *dataplane.Stats) StatsSummary {
	s := StatsSummary{Ports: len(st.Ports)}
	for i := range st.Ports {
		p := &st.Ports[i]
		s.RxPackets += p.RxPackets
		s.TxPackets += p.TxPackets
		s.RxBytes += p.RxBytes
		s.TxBytes += p.TxBytes
		s.Drops += p.TotalDrops()
	}
	return s
}

// LabInfo is one line of List.
type LabInfo struct {
	Name    string    `json:"name"`
	Phase   string    `json:"phase"` // "" for an orphan
	N       int       `json:"n"`
	K       int       `json:"k"`
	Created time.Time `json:"created"`
	// Nodes is the number of nodes the state records.
	Nodes int `json:"nodes"`
	// Namespaces is how many of the lab's namespaces exist now; Alive how
	// many recorded daemons still run.
	Namespaces int `json:"namespaces"`
	Alive      int `json:"alive"`
	// Orphan: namespaces named like a lab's exist, but no state file.
	Orphan bool `json:"orphan,omitempty"`
}
