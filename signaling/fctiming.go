package signaling

// Pause timing: how a node's pauses met its thresholds, per (port, class),
// so that a conformance check can hold them against the model (the pause
// leaves within a one-hop RTT of X_off being crossed, resume at X_on, the
// counter never far above X_off). The state machines keep it as they
// decide, allocating nothing:
//
//  1. the counter a class compares with its thresholds (PFC: the bytes
//     charged to an ingress port and priority; PortFC: a switch egress's A
//     queues' sum or B queue, a guarded relay queue) at its greatest;
//  2. its value at every pause and every resume decided, the least and
//     the greatest, and the decisions counted, refreshes apart;
//  3. each pause frame's latency: from the decision, which is the
//     counter's crossing of X_off (both happen in the same enqueue hook),
//     to the instant the frame leaves the egress queue it was emitted
//     into (departures below), on the node's clock (Env.Now);
//  4. each pause's round trip as the port saw it: from the decision to
//     the last growth of the counter before the resume, which is the
//     last byte the senders had on the wire or sent before the pause
//     reached them; and what they added past the counter at the pause
//     (the overshoot), at its greatest.

import (
	"math/bits"
	"strconv"

	"github.com/bcfab/bcfab/queues"
)

// LatBuckets is the number of buckets of a LatHist: bucket 0 holds 0 ns,
// bucket i the latencies in [2^(i-1), 2^i) ns, the bit length of the
// latency (a non-negative int64's is at most 63).
const LatBuckets = 64

// LatHist is a histogram of latencies in ns, by powers of two.
type LatHist struct {
	Count        uint64
	SumNs, MaxNs int64
	Buckets      [LatBuckets]uint64
	// Untimed counts the frames that were to be timed and were not:
	// not emitted (the node had no frame to spare) or not seen leaving
	// (the departures table was full, or the egress they went into runs
	// no hooks of the state machine).
	Untimed uint64
}

// LatBucket is the bucket of a latency of ns (negative: 0).
func LatBucket(ns int64) int { return bits.Len64(uint64(max(ns, 0))) }

func (h *LatHist) add(ns int64) {
	ns = max(ns, 0)
	h.Count++
	h.SumNs += ns
	h.MaxNs = max(h.MaxNs, ns)
	h.Buckets[LatBucket(ns)]++
}

// ClassTiming is one (port, class)'s pause timing: the thresholds it
// runs with (bytes; under PFC's dynamic thresholds, an empty node's, the
// highest they reach), the greatest value its counter reached, and its
// value at the pauses and resumes decided (meaningful once Pauses or
// Resumes is above 0).
type ClassTiming struct {
	// Class names it: "P3" (a PFC priority), "A", "B" (PortFC's switch
	// classes), "RQ" (a PortFC server's guarded relay queue).
	Class     string
	Xoff, Xon int
	Peak      int
	// Pauses and Resumes count the decisions (a crossing of X_off up, of
	// X_on down), however many frames each sent; Refreshes the pauses
	// repeated while in force (PFC's X_off every half pause time,
	// PortFC's states every Refresh), which are not timed.
	Pauses, Refreshes, Resumes uint64
	AtPauseMin, AtPauseMax     int
	AtResumeMin, AtResumeMax   int
	// Lat is the latency of every pause frame from the decision to its
	// departure (one per decision under PFC, one per other port under
	// PortFC).
	Lat LatHist
	// Trip times the pauses after which the counter still grew: from
	// the decision to the last growth before the resume (the pause's
	// round trip: its frame out and across the link, the senders'
	// reaction, their last frame across); a pause after which nothing
	// more came is not in it, nor one still in force.
	Trip LatHist
	// Overshoot is the most the counter grew past its value at a pause
	// before the resume.
	Overshoot int
	ep        episode
}

// episode is a pause in force: decided at t0 with the counter at at;
// the counter's greatest since, and whether and when it last grew.
type episode struct {
	on, grew bool
	t0, last int64
	at, peak int
}

// charged notes the counter at b after it grew, at clock's now when a
// pause is in force.
func (c *ClassTiming) charged(b int, clock interface{ Now() int64 }) {
	c.Peak = max(c.Peak, b)
	if c.ep.on {
		c.ep.grew, c.ep.last, c.ep.peak = true, clock.Now(), max(c.ep.peak, b)
	}
}

// paused notes a pause decided at counter b at now.
func (c *ClassTiming) paused(b int, now int64) {
	if c.Pauses == 0 || b < c.AtPauseMin {
		c.AtPauseMin = b
	}
	c.AtPauseMax = max(c.AtPauseMax, b)
	c.Pauses++
	c.ep = episode{on: true, t0: now, at: b, peak: b}
}

// resumed notes a resume decided at counter b, which ends the pause's
// episode.
func (c *ClassTiming) resumed(b int) {
	if c.Resumes == 0 || b < c.AtResumeMin {
		c.AtResumeMin = b
	}
	c.AtResumeMax = max(c.AtResumeMax, b)
	c.Resumes++
	if c.ep.grew {
		c.Trip.add(c.ep.last - c.ep.t0)
	}
	if c.ep.on {
		c.Overshoot = max(c.Overshoot, c.ep.peak-c.ep.at)
	}
	c.ep = episode{}
}

// MaxTimedClasses bounds the classes of one port: PFC's priorities.
const MaxTimedClasses = 8

// FCTiming is one port's pause timing, its classes in C[:N], copied
// without allocating (a node's stats snapshot).
type FCTiming struct {
	N int
	C [MaxTimedClasses]ClassTiming
	// BDPBytes is the one-hop BDP at the port's rate that its thresholds
	// count (0: not known to the state machine; its scheme sets it).
	BDPBytes int
}

// add appends c to t.
func (t *FCTiming) add(c *ClassTiming) {
	t.C[t.N] = *c
	t.N++
}

// pcpNames are the classes of PFC's priorities.
var pcpNames = func() (n [8]string) {
	for i := range n {
		n[i] = "P" + strconv.Itoa(i)
	}
	return n
}()

// maxDepartures bounds the pause frames a node times at once: those
// emitted and not yet out of their egress. A PortFC switch of n ports
// sends n-1 per pause; they leave within a frame time or so.
const maxDepartures = 64

// departures times the pause frames a state machine emits, from the
// decision to the instant the frame leaves the egress queue Env.Emit put
// it in (the HQ): the egress's Dequeued hook, which the datapath runs
// when its transmit step takes the frame for the link — when the port's
// shaper finds the link free, before the frame's serialisation and its
// link's delay. Emit hides the frame's address, so the Enqueued hook
// learns it as the frame joins the HQ, during Emit. The state machine's
// hooks must be those of the egress the frame goes to: they call
// enqueued and dequeued first thing. Not safe for concurrent use (the
// datapath goroutine's).
type departures struct {
	capturing, captured bool
	addr                uint64
	n                   int
	pend                [maxDepartures]departure
}

type departure struct {
	addr uint64
	t0   int64
	lat  *LatHist
}

// emit emits b out of port as Env.Emit does and, with lat, times it
// from t0 into lat.
func (d *departures) emit(env Env, port int, b []byte, t0 int64, lat *LatHist) bool {
	if lat == nil {
		return env.Emit(port, b)
	}
	d.capturing, d.captured = true, false
	ok := env.Emit(port, b)
	d.capturing = false
	if !ok || !d.captured || d.n == len(d.pend) {
		lat.Untimed++
		return ok
	}
	d.pend[d.n] = departure{addr: d.addr, t0: t0, lat: lat}
	d.n++
	return ok
}

// enqueued is the Enqueued hook's part: during emit, the frame joining
// a queue is the one emitted.
func (d *departures) enqueued(p queues.Packet) {
	if d.capturing && !d.captured {
		d.addr, d.captured = p.Addr, true
	}
}

// dequeued is the Dequeued hook's part: a frame being timed left at now.
func (d *departures) dequeued(p queues.Packet, env Env) {
	if d.n == 0 {
		return
	}
	for i := range d.n {
		if x := d.pend[i]; x.addr == p.Addr {
			d.n--
			d.pend[i] = d.pend[d.n]
			x.lat.add(env.Now() - x.t0)
			return
		}
	}
}
