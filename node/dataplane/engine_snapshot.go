package dataplane

// An engine's counters as readers get them (engine.go): copied on the
// worker's thread between steps without allocating, and built into stats
// on the reader's goroutine.

import (
	"maps"
	"slices"
	"time"

	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
)

// The snapshots a reader asks an engine for (Engine.snapWant).
const (
	snapFull   = 1
	snapSample = 2
)

// Snapshot returns a copy of every port's counters and of the frame pool.
// While the engine runs, its worker copies the raw counters between steps
// into a buffer the engine keeps (allocating nothing on the worker's
// thread, whose every node would wait for it) and this goroutine builds
// the stats from it; otherwise it reads them directly. It returns nil
// ports if a running engine does not answer within two seconds.
func (e *Engine) Snapshot() ([]api.PortStats, api.FrameStats) {
	ps, fs, _, _, _ := e.SnapshotAt(false)
	return ps, fs
}

// SnapshotAt is Snapshot, with the wall-clock time (Unix ns) at which the
// counters were copied: a running engine's worker copies them between two
// steps, so every frame its ports sent or received before that instant is
// counted and none after (a capture's frames can be matched against the
// counters by their timestamps). mark is what Options.Mark returned at
// that instant (0: none, or the engine was not running); busyNs is
// BusyNs then, copied with the counters rather than asked for again.
//
// With sample, the stats are a periodic sample's: every port's scalar
// counters, its shaper lag and its probes' round trips, and each queue's
// index, name, packets, bytes and enqueued and dequeued counts; no drop
// maps, signal counts, ECN histograms, pause timing or watchdog state
// (nil or zero), which the worker then does not copy either. A lab
// samples every node about once a second through a run, and the full
// stats cost several times as much to copy, build and encode.
func (e *Engine) SnapshotAt(sample bool) (ps []api.PortStats, fs api.FrameStats, at int64, mark uint64, busyNs int64) {
	kind := int32(snapFull)
	if sample {
		kind = snapSample
	}
	e.snapMu.Lock()
	defer e.snapMu.Unlock()
	select {
	case <-e.snapDone: // the late answer to a request that timed out
	default:
	}
	// Under callMu, as halt stops the engine: a request made while it
	// runs is answered, by the worker or by halt.
	e.callMu.Lock()
	if !e.running.Load() {
		e.takeSnapshot(sample)
		e.callMu.Unlock()
		ps, fs := e.buildStats(sample)
		return ps, fs, e.wallNs(e.snap.now), 0, e.snap.busy
	}
	e.snapWant.Store(kind)
	e.callMu.Unlock()
	e.poke()
	select {
	case <-e.snapDone:
		// The worker wrote e.snap and will not again until the next
		// request, which needs snapMu.
		ps, fs := e.buildStats(sample)
		return ps, fs, e.wallNs(e.snap.now), e.snap.mark, e.snap.busy
	case <-time.After(2 * time.Second):
		return nil, api.FrameStats{}, 0, 0, 0
	}
}

// Waits copies into dst, a histogram per port (grown to the ports'
// number), how long the frames that left each port's data queues waited
// there in the model: from their arrival (or their source's time) to the
// start of their first bit on the link, counted since the engine began.
// Copied on the engine's goroutine (Call); a reader subtracts two copies
// for what happened between them (queues.DelayHist.Sub).
func (e *Engine) Waits(dst []queues.DelayHist) []queues.DelayHist {
	if cap(dst) < len(e.ports) {
		dst = make([]queues.DelayHist, len(e.ports))
	}
	dst = dst[:len(e.ports)]
	e.Call(func() {
		for i, p := range e.ports {
			dst[i] = p.waits
		}
	})
	return dst
}

// wallNs turns a time of the engine's clock into Unix ns (0 under a
// test's clock, which has no wall time).
func (e *Engine) wallNs(now int64) int64 {
	if e.clock != nil || e.epoch.IsZero() {
		return 0
	}
	return e.epoch.Add(time.Duration(now)).UnixNano()
}

func (e *Engine) answerSnapshot() {
	if k := e.snapWant.Load(); k != 0 {
		e.snapWant.Store(0)
		e.takeSnapshot(k == snapSample)
		e.snap.mark = 0
		if e.opts.Mark != nil {
			e.snap.mark = e.opts.Mark()
		}
		e.snapDone <- struct{}{}
	}
}

// rawSnapshot is a copy of an engine's counters, taken on its worker's
// thread without allocating.
type rawSnapshot struct {
	now   int64
	busy  int64 // busyNs
	free  int
	mark  uint64 // Options.Mark's
	ports []rawPort
}

type rawPort struct {
	rxPackets, rxBytes, txPackets, txBytes uint64
	rxForwarded, rxConsumed                uint64
	intStamped                             uint64
	queueBytes, queuePackets, maxBytes     int
	captured                               bool
	drops                                  [numDropReasons]uint64
	injectedTx                             uint64
	lag                                    queues.Lag
	queues                                 []queues.QueueStats
	ecn                                    queues.ECNHist
	ecnOn                                  bool
	stalls                                 []api.QueueStats // the watchdog's fields only
	signals                                map[string]uint64
	fct                                    signaling.FCTiming
	rtt                                    rttHist
	delay                                  int64
}

// takeSnapshot copies the counters into e.snap (the engine's goroutine,
// or while the engine does not run), only a sample's with sample
// (SnapshotAt). After the first it allocates nothing.
func (e *Engine) takeSnapshot(sample bool) {
	sn := &e.snap
	sn.now, sn.busy, sn.free = e.Now(), e.busyNs, len(e.free)
	if sn.ports == nil {
		sn.ports = make([]rawPort, len(e.ports))
		for i, p := range e.ports {
			n := p.egress.Queues()
			sn.ports[i] = rawPort{queues: make([]queues.QueueStats, n), stalls: make([]api.QueueStats, n),
				signals: map[string]uint64{}}
		}
	}
	for i, p := range e.ports {
		r := &sn.ports[i]
		eg := p.egress
		r.rxPackets, r.rxBytes, r.txPackets, r.txBytes = p.rxPackets, p.rxBytes, p.txPackets, p.txBytes
		r.rxForwarded, r.rxConsumed = p.rxForwarded, p.rxConsumed
		r.intStamped = p.intStamped
		r.queueBytes, r.queuePackets, r.maxBytes = eg.Bytes(), eg.Len(), p.maxBytes
		r.captured = p.tapped.Load()
		r.drops = p.drops
		r.injectedTx = p.injectedTx
		r.lag = p.shaper.Lag()
		if p.probe {
			r.rtt = p.rtt
		}
		r.delay = p.delayNs
		for q := range r.queues {
			r.queues[q] = eg.Stats(q)
		}
		if sample {
			continue
		}
		r.ecn, r.ecnOn = eg.ECNHist()
		for q := range r.queues {
			r.stalls[q] = api.QueueStats{}
			e.stallStats(p, q, sn.now, &r.stalls[q])
		}
		if e.counters != nil {
			e.counters.PortCounters(i, r.signals)
		}
		r.fct.N = 0
		if e.timings != nil {
			e.timings.FCTiming(i, &r.fct)
		}
	}
}

// buildStats turns e.snap into stats (the caller's goroutine), a
// sample's with sample (SnapshotAt).
func (e *Engine) buildStats(sample bool) ([]api.PortStats, api.FrameStats) {
	sn := &e.snap
	out := make([]api.PortStats, len(e.ports))
	for i, p := range e.ports {
		r := &sn.ports[i]
		eg := p.egress
		ps := api.PortStats{
			Name:          p.spec.Name,
			RateBps:       p.spec.RateBps,
			RxPackets:     r.rxPackets,
			RxBytes:       r.rxBytes,
			RxForwarded:   r.rxForwarded,
			RxConsumed:    r.rxConsumed,
			TxPackets:     r.txPackets,
			TxBytes:       r.txBytes,
			INTStamped:    r.intStamped,
			QueueBytes:    uint64(r.queueBytes),
			QueuePackets:  uint64(r.queuePackets),
			MaxQueueBytes: uint64(r.maxBytes),
			Captured:      r.captured,
			InjectedTx:    r.injectedTx,
			LateFrames:    r.lag.LateFrames,
			MaxLateNs:     r.lag.MaxNs,
			LostLinkNs:    r.lag.LostNs,
			RTT:           r.rtt.export(),
			LinkDelayNs:   r.delay,
		}
		if sample {
			ps.Queues = make([]api.QueueStats, len(r.queues))
			for q := range r.queues {
				s := &r.queues[q]
				ps.Queues[q] = api.QueueStats{Index: q, Name: eg.Name(q), EnqPackets: s.EnqPackets, EnqBytes: s.EnqBytes,
					DeqPackets: s.DeqPackets, DeqBytes: s.DeqBytes, Packets: s.Packets, Bytes: s.Bytes}
			}
			out[i] = ps
			continue
		}
		ps.Drops = dropMap(r.drops[:])
		if len(r.signals) > 0 {
			ps.Signals = maps.Clone(r.signals)
		}
		if r.ecnOn {
			ps.ECNHist = exportECN(&r.ecn)
		}
		ps.FCTiming = exportFCTiming(&r.fct)
		for q := range r.queues {
			s := &r.queues[q]
			qd := s.Drops[:numDropReasons]
			st := r.stalls[q]
			st.Index, st.Name, st.Quantum = q, eg.Name(q), eg.Quantum(q) // fixed when the egress was made
			st.EnqPackets, st.EnqBytes, st.DeqPackets, st.DeqBytes = s.EnqPackets, s.EnqBytes, s.DeqPackets, s.DeqBytes
			st.Packets, st.Bytes, st.MaxBytes = s.Packets, s.Bytes, s.MaxBytes
			st.Paused, st.PausedNs, st.MaxPauseNs, st.ECNMarks = s.Paused, s.PausedNs, s.MaxPauseNs, s.ECNMarks
			st.Drops, st.IgnoredPauses = dropMap(qd), s.IgnoredPauses
			ps.Queues = append(ps.Queues, st)
			for r, v := range qd {
				ps.Drops[DropReason(r).String()] += v
			}
		}
		out[i] = ps
	}
	return out, api.FrameStats{Total: e.mem.NumFrames, Free: sn.free, Size: e.mem.FrameSize}
}

// exportECN is an egress's ECN histogram as the stats give it: nil
// when nothing was decided; a bucket between two equal edges, which
// nothing lands in, left out with its edge; Final only where a scheme's
// marks differ from RED's.
func exportECN(h *queues.ECNHist) *api.ECNHist {
	var n uint64
	for _, d := range h.Decided {
		n += d
	}
	if n == 0 {
		return nil
	}
	out := &api.ECNHist{Edges: []int{h.Edges[0]}}
	var final []uint64
	bucket := func(i int) {
		out.Decided = append(out.Decided, h.Decided[i])
		out.Marked = append(out.Marked, h.Marked[i])
		final = append(final, h.Final[i])
	}
	bucket(0)
	for i := 1; i < len(h.Edges); i++ {
		if h.Edges[i] > h.Edges[i-1] {
			bucket(i)
			out.Edges = append(out.Edges, h.Edges[i])
		}
	}
	bucket(queues.ECNBuckets - 1)
	if !slices.Equal(final, out.Marked) {
		out.Final = final
	}
	return out
}

// exportFCTiming is a port's pause timing as the stats give it: nil when
// it has no class, each latency histogram up to its last non-empty
// bucket.
func exportFCTiming(t *signaling.FCTiming) *api.FCTiming {
	if t.N == 0 {
		return nil
	}
	out := &api.FCTiming{BDPBytes: t.BDPBytes, Classes: make([]api.FCClass, t.N)}
	for i := range t.N {
		c := &t.C[i]
		out.Classes[i] = api.FCClass{
			Class: c.Class, XoffBytes: c.Xoff, XonBytes: c.Xon, PeakBytes: c.Peak,
			Pauses: c.Pauses, Refreshes: c.Refreshes, Resumes: c.Resumes,
			AtPauseMinBytes: c.AtPauseMin, AtPauseMaxBytes: c.AtPauseMax,
			AtResumeMinBytes: c.AtResumeMin, AtResumeMaxBytes: c.AtResumeMax,
			PauseLatNs: exportLat(&c.Lat), TripNs: exportLat(&c.Trip), OvershootBytes: c.Overshoot,
		}
	}
	return out
}

// exportLat is a latency histogram as the stats give it: up to its last
// non-empty bucket (empty, not nil, when it has none).
func exportLat(h *signaling.LatHist) api.PauseLat {
	n := len(h.Buckets)
	for n > 0 && h.Buckets[n-1] == 0 {
		n--
	}
	hist := slices.Clone(h.Buckets[:n:n])
	if hist == nil {
		hist = []uint64{}
	}
	return api.PauseLat{Count: h.Count, Sum: h.SumNs, Max: h.MaxNs, Hist: hist, Untimed: h.Untimed}
}

func dropMap(counts []uint64) map[string]uint64 {
	m := make(map[string]uint64, numDropReasons-1)
	for r := DropReason(1); r < numDropReasons; r++ {
		m[r.String()] = counts[r]
	}
	return m
}
