package config

import (
	"time"

	"github.com/bcfab/bcfab/model/scale"
)

// CI are the congestion isolation settings of a node (fc ici and ci),
// as a lab's spec carries them too: every zero field is the model's
// (scale.Model.CI), the congested queue's marking thresholds the node's
// ECN ones.
type CI struct {
	// CITable is the congested-flow table's entries per egress port.
	CITable int `json:"ci_table,omitempty"`
	// CIDetect is the detection threshold in bytes: a normal data queue
	// at least this long makes its port a congestion root.
	CIDetect int `json:"ci_detect_bytes,omitempty"`
	// CIKmin and CIKmax are the congested queue's own ECN thresholds.
	CIKmin int `json:"ci_kmin_bytes,omitempty"`
	CIKmax int `json:"ci_kmax_bytes,omitempty"`
	// CIResidency is how long an entry outlives its last refresh.
	CIResidency Duration `json:"ci_residency,omitempty"`
}

// NodeCI is the node's congestion isolation: its settings, and the
// model's at the node's rate (and its ECN) for those left zero.
func (c *Node) NodeCI() scale.CI {
	m := c.Model().CI(c.RateBps)
	if e := c.PortECN(""); e.On() {
		m.CQKmin, m.CQKmax, m.Pmax = e.KminBytes, e.KmaxBytes, e.Pmax
	}
	m.Table = or(c.CITable, m.Table)
	m.Detect = or(c.CIDetect, m.Detect)
	m.CQKmin = or(c.CIKmin, m.CQKmin)
	m.CQKmax = or(c.CIKmax, m.CQKmax)
	if c.CIResidency != 0 {
		m.Residency = time.Duration(c.CIResidency)
	}
	m.Refresh = c.FCRefresh.D()
	return m
}
