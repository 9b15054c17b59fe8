// Package signaling holds what crosses the wire to steer flow control: the
// 802.1Q tag data frames carry and, later, the PFC, PortFC and BFC frames
// and their state machines.
package signaling

// 802.1Q priorities (PCP) of the fabric (DESIGN §6).
const (
	// PCPData is the lossless data class.
	PCPData = 3
	// PCPControl is control traffic — acknowledgements, congestion
	// notifications, ICMP — which every node queues in its strict
	// high-priority queue.
	PCPControl = 6
)

// IsControl reports whether a frame of priority pcp belongs in the HQ.
func IsControl(pcp uint8) bool { return pcp >= PCPControl }
