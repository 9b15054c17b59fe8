package scale

import "time"

// What the emulator adds to a model: tolerances for its own scheduling
// jitter, in the lab's time. None of them is part of the target; each
// says why it is a lab time and what it changes in target time.
const (
	// HoldFloor is the least lab time a receiver keeps a pause it does
	// not hear again. A pause must hold while the daemon that sent it is
	// descheduled, or a late daemon would make a lossless run lossy; at
	// large D the target's hold is longer anyway (335 µs x 5,000 = 1.7
	// s).
	HoldFloor = time.Second

	// ShaperBurst is how far ahead of its link's schedule a port may take
	// a frame from its queue. A frame still reaches the peer at its
	// scheduled time (the delay line releases it when its last bit has
	// been serialised, plus the link delay), so the burst changes only
	// how early a frame leaves its queue: at most 100 µs / D of target
	// time (20 ns at D = 5,000). It bounds a busy port's wake-ups to
	// about one per 75 µs.
	ShaperBurst = 100 * time.Microsecond

	// catchupTime and catchupFrames bound the link time a backlogged port
	// (or a paced flow) that was served late may make up for by sending
	// back to back: the larger of a time — the kernel's own frame work
	// lands on the nodes' cores in bursts of up to a softirq's 2 ms
	// budget — and a number of full frames, so a slow link tolerates
	// the same jitter in frames as a fast one. Frames sent to catch up
	// arrive later than the target's link would deliver them; the
	// fidelity monitor sees that as one-hop delay beyond the model's.
	catchupTime   = time.Millisecond
	catchupFrames = 8
	fullFrame     = 1518 + 24 // bytes on the wire: frame, preamble, FCS, gap

	// slackShare, minSlack and maxSlack make a model's worker slack
	// (Model.WorkerSlack).
	slackShare = 20
	minSlack   = 50 * time.Microsecond
	maxSlack   = time.Millisecond

	// MinSample is the shortest interval a run samples every node's
	// queues at: each sample asks every node for its counters.
	MinSample = 100 * time.Millisecond

	// ProbeInterval is how often every fabric port sends a timing probe
	// to its peer (the fidelity monitor): a 60-byte frame in the strict
	// high-priority queue, which the peer answers at once. At 100 ms a
	// BCube(4,1) lab sends about 2,000 frames a second for it, 1% of
	// what the machine carries.
	ProbeInterval = 100 * time.Millisecond

	// MaxRTTError is the largest relative error of a run's median
	// achieved one-hop RTT against the model's (target x D) that keeps
	// the run valid, unless the error is within MinRTTError.
	MaxRTTError = 0.10

	// MinRTTError is the error of a run's median one-hop RTT that never
	// invalidates it: what the emulator's own per-hop latency swings by
	// between an idle engine and a busy one (55-218 µs a hop measured,
	// docs/BENCHMARKS.md), which the delay lines' steering takes a second
	// or two to follow. Above D = 3,000 (a 6 ms model RTT) MaxRTTError is
	// the stricter bound.
	MinRTTError = 300 * time.Microsecond

	// MaxRTTErrorP99 is the largest relative error of a run's p99
	// one-hop RTT against the model's that keeps the run valid, unless
	// the error is within MinRTTError: the tail of the links' delay,
	// which small flows feel. In the invariance study (docs/VALIDATION.md)
	// the runs at the D that held invariance (5,000 to 1,000) reached
	// 1.76 at most; at D = 500, where small flows' slowdowns moved by
	// 5-17%, the runs' means were 1.5 and 2.7.
	MaxRTTErrorP99 = 2.0

	// MaxStartLag is the largest p99 start lag of a valid workload run,
	// in the target's time: how much later than its schedule a flow may
	// start. The invariance study's reference runs (D = 5,000) started
	// their flows at most 4 µs of the target late at p99, which
	// changed nothing they measured; a run whose flows start later runs
	// another schedule than the one it reports.
	MaxStartLag = 5 * time.Microsecond

	// MaxSkippedShare is the largest share of a run's time a worker may
	// skip and the run stay valid: the time it was later than its
	// replay's reach (twice its slack), whose work it stepped as of its
	// reach ago, at once (docs/DESIGN.md, "The engine's pass"). In the
	// invariance study (docs/VALIDATION.md, "Time a worker skipped") the
	// reference point's worker skipped 1.6-3.4% of the run at D = 1,000
	// and 9.4-21.7% at D = 500, both of which held invariance, and
	// 24-42% at D = 333, which did not: the bound lies below every
	// D = 333 run, at six times D = 1,000's, and holds a D = 500 run
	// that comes close to D = 333 invalid.
	MaxSkippedShare = 0.20

	// MaxWorkerLoad is the share of one CPU a lab's worker thread may
	// spend on a workload's frame-hops, its sleeps and wake-ups included,
	// when --rate auto chooses D. The invariance study's reference point
	// held at D = 1,000 and broke at 500 (docs/VALIDATION.md); lab
	// calibrate measures that point at D = 1,000 at 0.59-0.60 of a CPU
	// (its frame-hops over the run, the drain included, times the
	// worker's CPU per frame-hop), and at D = 500 it would need twice
	// that. The limit leaves that measurement 8% for its noise, so the
	// reference point stays at D = 1,000 (docs/BENCHMARKS.md, "Choosing
	// D").
	MaxWorkerLoad = 0.65

	// MinAutoD is the smallest D --rate auto chooses: the smallest at
	// which the invariance study held on this machine (docs/VALIDATION.md,
	// "Invariance across D"). Below it the emulator's own lateness, a
	// fixed time of the machine's, weighs too much in the target's time
	// whatever the load: at D = 500 the reference point's small and
	// medium flows' p50 slowdowns were 5-9% off D = 5,000's in runs the
	// fidelity monitor judged valid, with the worker at 42% of a CPU at
	// D = 1,000 (build ce9eb14) as at 60% (earlier builds).
	MinAutoD = 1000.0
)

// Catchup is the catch-up bound of a port or a paced flow on a link of
// rateBps (0: unshaped).
func Catchup(rateBps uint64) time.Duration {
	if rateBps == 0 {
		return catchupTime
	}
	frames := time.Duration(catchupFrames*fullFrame*8) * time.Second / time.Duration(rateBps)
	return max(catchupTime, frames)
}

// WorkerSlack is how late the model's workers may serve a deadline so
// that deadlines close together share a wake-up: a 20th of its one-hop
// RTT (100 ns of the papers' 2 µs: 100 µs of the lab's time at D =
// 1,000, 500 µs at 5,000), at least 50 µs and at most 1 ms. A frame a
// late wake-up serves leaves its delay line up to that much late; the
// delay lines' steering keeps the median one-hop RTT the model's, and
// the fidelity monitor's p99 sees the rest. At D = 1,000 twice the old
// fixed 50 µs cost 15% less CPU a frame-hop and moved no per-size
// slowdown (docs/BENCHMARKS.md, "The worker's slack"). Derived from the
// model, it is the same share of the target's time at every D.
func (m Model) WorkerSlack() time.Duration {
	return min(max(m.OneHopRTT()/slackShare, minSlack), maxSlack)
}
