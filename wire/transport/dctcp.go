package transport

// DCTCP's sender (Alizadeh et al., SIGCOMM 2010) as a window on an RDMA
// flow, the way the HPCC paper's evaluation runs it against RDMA
// transports: the sender keeps a window of W bytes in flight, paced at
// W over the longest path's base RTT, the switches mark CE above one
// threshold K, and the receiver echoes marks in its ACKs (ECE, the BTH's
// BECN bit of an ACK).
//
//   - An observation window is the data outstanding when the previous one
//     ended: it ends when every packet sent before its start is
//     acknowledged (una reaches winEnd). At its end alpha moves as alpha =
//     (1-g) alpha + g F, F the fraction of its acknowledged bytes whose
//     ACKs echoed a mark; unless a cut still waits for the data sent
//     before it (TCP's CWR state), W grows by one MTU, marks or not
//     (additive increase, one MTU per window, as RFC 8257's congestion
//     avoidance and the HPCC simulator's DCTCP grow). A new window starts
//     at the next packet to send.
//   - An ACK that echoes a mark cuts W to W (1 - alpha/2) with the alpha
//     of that moment, at most once per window of data: after a cut the
//     next is allowed once everything sent before it is acknowledged.
//   - W stays between one MTU and its start, W_max, the BDP of the
//     longest path (the sender's BDPBytes): a window beyond it only
//     queues. Alpha starts at 1 (RFC 8257), so the first cut halves W.
//   - The sender paces at the line rate x W / W_max, W over the longest
//     path's base RTT, as the HPCC simulator's DCTCP does: its rate is
//     what it cuts and raises, and its window the longest path's BDP x
//     rate / line rate (VAR_WIN). (Paced at the line rate, a window's
//     packets left in bursts; docs/VALIDATION.md has both on the
//     conformance cases.)
//
// Sequence numbers are the sender's packet indexes (from 0).

// DCTCPCounters count what a window machine did.
type DCTCPCounters struct {
	Cuts      uint64 // windows cut on an echoed mark
	Windows   uint64 // observation windows ended (alpha updates)
	Increases uint64 // windows ended with no cut pending: W += MTU
}

// DCTCP is one sender's window machine. Not safe for concurrent use.
type DCTCP struct {
	g         float64
	mtu, wmax float64
	w         float64 // bytes
	alpha     float64
	winEnd    int64 // the observation window ends when una reaches it
	cutEnd    int64 // no cut until una reaches it
	acked     int64 // bytes acknowledged in the observation window
	marked    int64 // of which echoed a mark

	C DCTCPCounters
}

// NewDCTCP returns a window machine for packets of mtu payload bytes,
// starting (and capped) at initBytes.
func NewDCTCP(p DCTCPParams, mtu int, initBytes int64) *DCTCP {
	d := &DCTCP{}
	d.init(p, mtu, initBytes)
	return d
}

func (d *DCTCP) init(p DCTCPParams, mtu int, initBytes int64) {
	w := max(float64(initBytes), float64(mtu))
	*d = DCTCP{g: p.G, mtu: float64(mtu), wmax: w, w: w, alpha: 1}
}

// Window is W in bytes.
func (d *DCTCP) Window() float64 { return d.w }

// Alpha is the estimate of the fraction of marked bytes.
func (d *DCTCP) Alpha() float64 { return d.alpha }

// Rate is the pacing rate for a line rate of line bit/s: line x W / W_max.
func (d *DCTCP) Rate(line float64) float64 { return line * d.w / d.wmax }

// Packets is W in whole packets, at least one.
func (d *DCTCP) Packets() int64 { return max(1, int64(d.w/d.mtu)) }

// OnAck takes an ACK that acknowledged newly bytes (0 for a duplicate),
// echoing a mark or not; una is the oldest packet still unacknowledged
// after it and hi one past the highest sent.
func (d *DCTCP) OnAck(newly int64, ece bool, una, hi int64) {
	d.acked += newly
	if ece {
		d.marked += newly
		if una >= d.cutEnd {
			d.w = max(d.mtu, d.w*(1-d.alpha/2))
			d.cutEnd = hi + 1
			d.C.Cuts++
		}
	}
	if una < d.winEnd || d.acked == 0 {
		return
	}
	f := float64(d.marked) / float64(d.acked)
	d.alpha = (1-d.g)*d.alpha + d.g*f
	d.C.Windows++
	if una >= d.cutEnd {
		d.w = min(d.wmax, d.w+d.mtu)
		d.C.Increases++
	}
	d.acked, d.marked = 0, 0
	d.winEnd = hi + 1
}
