package api

import (
	"math"
	"math/bits"
)

// FCTiming is how a port's flow control met its thresholds, per class it
// pauses, so that a check can hold it against the model without knowing
// the port's configuration: the pause leaves within a one-hop RTT of X_off
// being crossed, a resume comes at X_on, the counter stays near X_off.
//
// A class's counter is what the scheme compares with its thresholds, in
// bytes: under PFC (and PFC*, CI, ICI) the bytes received on this port
// with that priority and still held anywhere in the node ("P3"); under
// PortFC at a switch the sum of this egress's A queues ("A") or its B
// queue ("B"), and at a server that guards this port's relay queue, the
// relay queue ("RQ"). Values are cumulative since the node started.
type FCTiming struct {
	// BDPBytes is the one-hop bandwidth-delay product of the port's link
	// in the model (the target's at the port's rate), the unit the
	// thresholds count. The model reserves no headroom of its own above
	// X_off (the shared buffer holds what comes); a check's allowance is
	// its own multiple of this.
	BDPBytes int       `json:"bdp_bytes,omitempty"`
	Classes  []FCClass `json:"classes"`
}

// FCClass is the timing of one class of a port.
type FCClass struct {
	Class string `json:"class"`
	// The thresholds the class runs with.
	XoffBytes int `json:"xoff_bytes"`
	XonBytes  int `json:"xon_bytes"`
	// PeakBytes is the greatest value the counter reached.
	PeakBytes int `json:"peak_bytes"`
	// Pauses and Resumes count the decisions: the counter reaching
	// X_off from below with no pause in force, falling to X_on with one.
	// Refreshes counts the pauses repeated while in force (PFC's X_off
	// every half pause time, PortFC's state every fc_refresh), which are
	// not timed.
	Pauses    uint64 `json:"pauses"`
	Refreshes uint64 `json:"refreshes"`
	Resumes   uint64 `json:"resumes"`
	// The counter's least and greatest values when a pause (resume) was
	// decided; meaningful once Pauses (Resumes) is above 0.
	AtPauseMinBytes  int `json:"at_pause_min_bytes"`
	AtPauseMaxBytes  int `json:"at_pause_max_bytes"`
	AtResumeMinBytes int `json:"at_resume_min_bytes"`
	AtResumeMaxBytes int `json:"at_resume_max_bytes"`
	// PauseLatNs times every pause frame of the class's pauses, from
	// the decision to the frame's departure (PauseLat).
	PauseLatNs PauseLat `json:"pause_lat_ns"`
	// TripNs times each pause's round trip as the port saw it, in
	// PauseLat's form (Untimed unused): from the decision to the last
	// growth of the counter before the resume, the last byte the
	// senders had on the wire or sent before the pause reached them. A
	// pause after which nothing more came, or still in force, is not in
	// it. OvershootBytes is the most the counter grew past its value at
	// a pause before the resume.
	TripNs         PauseLat `json:"trip_ns"`
	OvershootBytes int      `json:"overshoot_bytes"`
}

// PauseLat is the latency of pause frames in ns of the lab's clock (a
// check divides by the dilation D): from the instant the counter crossed
// X_off, which is when the pause was decided, to the instant the frame
// left the port's egress queue (its HQ), dequeued by the port's transmit
// step when its shaper found the link free — before the frame's own
// serialisation and its link's delay. Both instants are the node's clock
// as its engine reads it once per pass (again after receiving), so they
// are as exact as a pass is short. A PFC pause is one frame, out of the
// port the class is charged to; a PortFC switch's one frame to each other
// port, a guarded relay queue's one to each port of the other levels'
// switches but the server's own: each is timed.
//
// Count, Sum and Max are over the frames timed; Hist counts them by
// powers of two (LatBucketBounds: bucket 0 holds 0 ns, bucket i [2^(i-1),
// 2^i) ns), up to its last non-empty bucket. Untimed counts the frames
// not timed: the node had no frame to spare (the port's signals count it
// "lost"), or the frame was not seen leaving. So pauses x frames per
// pause = Count + Untimed + the frames still queued.
type PauseLat struct {
	Count   uint64   `json:"count"`
	Sum     int64    `json:"sum"`
	Max     int64    `json:"max"`
	Hist    []uint64 `json:"hist"`
	Untimed uint64   `json:"untimed"`
}

// LatBucket is the PauseLat.Hist bucket of a latency of ns: its bit
// length (0 for 0 and below).
func LatBucket(ns int64) int { return bits.Len64(uint64(max(ns, 0))) }

// LatBucketBounds are the latencies bucket i holds, [lo, hi) ns (the
// last, 63, up to math.MaxInt64 itself).
func LatBucketBounds(i int) (lo, hi int64) {
	switch {
	case i <= 0:
		return 0, 1
	case i >= 63:
		return 1 << 62, math.MaxInt64
	}
	return 1 << (i - 1), 1 << i
}

// Above bounds the frames whose latency was over ns: at least those of
// the buckets wholly over it, at most those of the buckets that reach
// over it.
func (l *PauseLat) Above(ns int64) (atLeast, atMost uint64) {
	for i, n := range l.Hist {
		lo, hi := LatBucketBounds(i)
		if lo > ns {
			atLeast += n
		}
		if hi-1 > ns {
			atMost += n
		}
	}
	return atLeast, atMost
}

// Mean is the mean latency of the frames timed in ns (0: none).
func (l *PauseLat) Mean() float64 {
	if l.Count == 0 {
		return 0
	}
	return float64(l.Sum) / float64(l.Count)
}
