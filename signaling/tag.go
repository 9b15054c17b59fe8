// Package signaling holds what crosses the wire to steer flow control and
// the state machines that send and obey it: the 802.1Q priorities data
// frames carry (tag.go), the PortFC, BFC and congestion isolation signal
// frame, EtherType 0x88B5 (frame.go, layer.go), the 802.1Qbb PFC frame
// (pfc.go, pfc_layer.go), and what a node runs of each scheme: PortFC's
// switch and server sides (portfc.go) and a relay's guard of a slower
// port (relayguard.go), PFC (pfcfc.go), BFC (bfc.go, bfcnode.go) and
// congestion isolation (ici.go), with the hold that keeps a received
// pause (hold.go). None of it needs a network:
// each state machine is driven by frames and an explicit clock.
package signaling

// 802.1Q priorities (PCP) of the fabric (DESIGN §6).
const (
	// PCPData is the lossless data class.
	PCPData = 3
	// PCPCongested is the class of the flows congestion isolation has
	// isolated (fc ici and ci): lossless too, so PFC pauses it apart from
	// the data class.
	PCPCongested = 2
	// PCPControl is control traffic — acknowledgements, congestion
	// notifications, ICMP — which every node queues in its strict
	// high-priority queue.
	PCPControl = 6
)

// IsControl reports whether a frame of priority pcp belongs in the HQ.
func IsControl(pcp uint8) bool { return pcp >= PCPControl }
