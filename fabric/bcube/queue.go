package bcube

import "strconv"

// Queue allocation of PortFC (DESIGN §4). Every egress port of a switch has
// n+1 queues and every fabric port of a server 2n; which queue a frame
// joins depends only on the topology, the port, the frame's destination and
// its level order, so the switch and the servers around it agree on it
// without signalling.
//
// Switch (level l), egress port p toward server X:
//
//	A queues 0..n-2  X will relay the frame through its next level l'; the
//	                 frame will leave that switch by port e = dst.digit[l'];
//	                 queue Compress(e, X.digit[l'])
//	B queue  n-1     X is the destination
//	HQ       n       control frames: strict priority, never paused
//
// Server, port l toward its level-l switch:
//
//	a queues 0..n-2     own traffic of more than one hop: Compress(dst.digit[l], self.digit[l])
//	b queues n-1..2n-3  own one-hop traffic: n-1 + Compress(dst.digit[l], self.digit[l])
//	RQ       2n-2       frames this server relays for others
//	HQ       2n-1       control frames
//
// For k > 1 the same layout is used: "one hop" and "more than one hop"
// take the places of the paper's 2-hop and 4-hop traffic, and X's next
// level is the one the flow's level order names.

// Compress maps a port index x that can never be own onto 0..n-2.
func Compress(x, own int) int {
	if x < own {
		return x
	}
	return x - 1
}

// SwitchQueues is the number of queues of a switch egress port: n+1.
func (t Topology) SwitchQueues() int { return t.n + 1 }

// SwitchB is the index of a switch port's B queue (destination traffic).
func (t Topology) SwitchB() int { return t.n - 1 }

// SwitchHQ is the index of a switch port's high-priority queue.
func (t Topology) SwitchHQ() int { return t.n }

// SwitchQueue returns the data queue at egress port p of switch (l, w) for
// a frame to server dst that follows order.
func (t Topology) SwitchQueue(l, w, p, dst int, order *Order) int {
	x := t.ServerAt(l, w, p)
	if x == dst {
		return t.n - 1
	}
	next := t.NextLevel(x, dst, order)
	if next < 0 || next == l {
		// Not a frame this port can carry correctly; keep it out of the
		// A queues' accounting.
		return t.n - 1
	}
	return Compress(t.Digit(dst, next), t.Digit(x, next))
}

// ServerQueues is the number of queues of a server's fabric port: 2n.
func (t Topology) ServerQueues() int { return 2 * t.n }

// ServerRQ is the index of a server port's relay queue.
func (t Topology) ServerRQ() int { return 2*t.n - 2 }

// ServerHQ is the index of a server port's high-priority queue.
func (t Topology) ServerHQ() int { return 2*t.n - 1 }

// ServerQueue returns the data queue at port l of server self for a frame
// to dst; relayed says the frame is another server's that self relays.
func (t Topology) ServerQueue(self, l, dst int, relayed bool) int {
	if relayed {
		return 2*t.n - 2
	}
	c := Compress(t.Digit(dst, l), t.Digit(self, l))
	if t.Hops(self, dst) == 2 {
		return t.n - 1 + c
	}
	return c
}

// SwitchQueueName names switch queue q: A<i>, B or HQ.
func (t Topology) SwitchQueueName(q int) string {
	switch {
	case q == t.n:
		return "HQ"
	case q == t.n-1:
		return "B"
	default:
		return "A" + strconv.Itoa(q)
	}
}

// ServerQueueName names server queue q: a<i>, b<i>, RQ or HQ.
func (t Topology) ServerQueueName(q int) string {
	switch {
	case q == 2*t.n-1:
		return "HQ"
	case q == 2*t.n-2:
		return "RQ"
	case q >= t.n-1:
		return "b" + strconv.Itoa(q-(t.n-1))
	default:
		return "a" + strconv.Itoa(q)
	}
}

// SwitchAQueues is the bitmask of a switch port's A queues.
func (t Topology) SwitchAQueues() uint64 { return 1<<uint(t.n-1) - 1 }
