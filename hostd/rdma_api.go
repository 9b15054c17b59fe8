package hostd

// The NIC's RDMA as the daemon serves it (rdma.go): starting, stopping,
// aborting and reporting flows. Each call runs on the engine goroutine.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// StartRDMA starts the flows of req (on the engine goroutine), or
// schedules them for its time (RDMARequest.AtUnixNs).
func (h *Host) StartRDMA(req api.RDMARequest) ([]api.RDMAFlow, error) {
	return h.StartRDMABatch([]api.RDMARequest{req})
}

// StartRDMABatch starts or schedules the flows of every request of reqs,
// at most api.MaxRDMABatch, in one call on the engine goroutine: all of
// them or, when one is wrong, none. The answer lists their flows in the
// order of reqs.
func (h *Host) StartRDMABatch(reqs []api.RDMARequest) ([]api.RDMAFlow, error) {
	if len(reqs) == 0 || len(reqs) > api.MaxRDMABatch {
		return nil, fmt.Errorf("rdma: %d requests: want 1..%d", len(reqs), api.MaxRDMABatch)
	}
	var out []api.RDMAFlow
	var err error
	h.e.Call(func() {
		off := h.offsets()
		var fs []*rdmaFlow
		fs, err = h.r.start(reqs, off)
		out = make([]api.RDMAFlow, 0, len(fs))
		for _, f := range fs {
			out = append(out, f.report(off))
		}
	})
	return out, err
}

// RDMA reports the NIC's flows (those of ids, or all with the receivers
// when ids is empty).
func (h *Host) RDMA(ids []int) api.RDMAReport {
	var r api.RDMAReport
	lat := map[int][]int64{} // ended latency flows' round trips, by report index
	h.e.Call(func() {
		r = h.r.report(ids)
		for i, f := range r.Flows {
			rf := h.r.flow(f.ID)
			switch {
			case rf == nil || !rf.latency || rf.State == api.RDMARunning || rf.State == api.RDMAScheduled:
			case rf.lat == nil:
				r.Flows[i].Latency = rf.latStats
			default:
				lat[i] = rf.lat[:rf.seenMsgs] // never written again
			}
		}
	})
	if len(lat) == 0 {
		return r
	}
	// Sorted here, off the engine goroutine, once: the stats replace the
	// samples.
	for i, samples := range lat {
		r.Flows[i].Latency = latencyStats(samples)
	}
	h.e.Call(func() {
		for i := range lat {
			if rf := h.r.flow(r.Flows[i].ID); rf != nil && rf.lat != nil {
				rf.latStats, rf.lat = r.Flows[i].Latency, nil
			}
		}
	})
	return r
}

// latencyStats summarises round trips (ns); nil when there are none.
func latencyStats(samples []int64) *api.LatencyStats {
	n := len(samples)
	if n == 0 {
		return nil
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum float64
	for _, v := range s {
		sum += float64(v)
	}
	avg := sum / float64(n)
	var sq float64
	for _, v := range s {
		sq += (float64(v) - avg) * (float64(v) - avg)
	}
	pct := func(p float64) int64 { // nearest rank
		i := int(math.Ceil(p*float64(n))) - 1
		return s[min(max(i, 0), n-1)]
	}
	return &api.LatencyStats{Samples: n, MinNs: s[0], MaxNs: s[n-1], AvgNs: int64(math.Round(avg)),
		StdevNs: int64(math.Round(math.Sqrt(sq / float64(n)))), P50Ns: pct(0.5), P99Ns: pct(0.99), P999Ns: pct(0.999)}
}

// StopRDMA ends the timed and until-stopped flows of ids that still run
// as their time would: the next packet is the last, and the flow is done
// once every byte is acknowledged. It reports how many it told to stop
// (sized flows run on).
func (h *Host) StopRDMA(ids []int) int {
	n := 0
	h.e.Call(func() {
		now := h.e.Now()
		for _, id := range ids {
			if f := h.r.flow(id); f != nil {
				if f.State == api.RDMARunning && f.s.Size() == 0 && !f.stopped {
					f.deadline = now
					n++
				}
			}
		}
	})
	return n
}

// AbortRDMA stops the flows of ids that still run, and those scheduled,
// which then never start; it reports how many it stopped.
func (h *Host) AbortRDMA(ids []int) int {
	n := 0
	h.e.Call(func() {
		now := h.e.Now()
		for _, id := range ids {
			if f := h.r.flow(id); f != nil {
				if f.State == api.RDMAScheduled {
					h.r.scheduled--
					f.startEng = -1 // never started
				}
				if f.State == api.RDMARunning || f.State == api.RDMAScheduled {
					f.State, f.endEng = api.RDMAAborted, now
					h.r.finish(f)
					n++
				}
			}
		}
	})
	return n
}

// unixOffset converts engine time to Unix time: unix = engine + offset.
func (h *Host) unixOffset() int64 { return time.Now().UnixNano() - h.e.Now() }

// clockOffsets convert engine time to the machine's clocks: unix to Unix
// time (read when asked, so it carries the wall clock's steps and the
// jitter of reading two clocks), mono to the monotonic clock
// (api.MonotonicNs; fixed, exact).
type clockOffsets struct{ unix, mono int64 }

// offsets are the engine's clock offsets now (on the engine goroutine).
func (h *Host) offsets() clockOffsets {
	return clockOffsets{unix: h.unixOffset(), mono: h.e.Monotonic(0)}
}

// report copies the flows of ids (all, with the receivers, when empty).
func (r *rdma) report(ids []int) api.RDMAReport {
	off := r.h.offsets()
	rep := api.RDMAReport{NowNs: r.h.e.Now() + off.unix, Params: r.params, Counters: r.c, Flows: []api.RDMAFlow{}}
	if len(ids) > 0 {
		for _, id := range ids {
			if f := r.flow(id); f != nil {
				rep.Flows = append(rep.Flows, f.report(off))
				if f.State != api.RDMARunning && f.s == nil && !f.fetched {
					f.fetched = true
					r.fetched = append(r.fetched, f.ID)
				}
			}
		}
		for len(r.fetched) > maxRDMAFetched {
			r.forget(r.fetched[0])
			r.fetched = r.fetched[1:]
		}
		return rep
	}
	for _, f := range r.flows {
		if f != nil {
			rep.Flows = append(rep.Flows, f.report(off))
		}
	}
	r.release(r.h.e.Now())
	r.past.each(func(p *pastRecv) {
		rep.Receivers = append(rep.Receivers, receiverSummary(p.src, p.qp, p.mode, p.done, p.gap, &p.s, off.unix))
	})
	for _, rc := range r.rlist {
		rep.Receivers = append(rep.Receivers, rc.summary(off.unix))
	}
	return rep
}

// report is the flow's state with engine times made the machine's times
// by off.
func (f *rdmaFlow) report(off clockOffsets) api.RDMAFlow {
	out := f.RDMAFlow
	first := f.firstEng
	if f.s != nil {
		f.counters(&out)
		first = f.s.S.Start
	}
	// A flow never reports a start before the time it was asked for:
	// what would put it there is the jitter of off.unix, not the engine.
	out.StartNs = max(f.startEng+off.unix, f.atUnix)
	out.StartMonoNs = f.startEng + off.mono
	if f.startEng < 0 {
		out.StartNs, out.StartMonoNs = 0, 0
	}
	if first >= 0 {
		out.FirstNs = first + off.unix
	}
	if f.State != api.RDMARunning && f.State != api.RDMAScheduled {
		out.EndNs, out.EndMonoNs = f.endEng+off.unix, f.endEng+off.mono
	}
	return out
}

// counters sets out's counters from the flow's sender.
func (f *rdmaFlow) counters(out *api.RDMAFlow) {
	st := &f.s.S
	if fct := st.FCT(); fct >= 0 {
		out.FCTNs = fct
		// A flow done ended when its last ACK arrived in the model
		// (settle): before the transport took it, when the worker got
		// to the ACK late.
		if f.State == api.RDMADone && f.endEng >= st.Start && f.endEng < st.End {
			out.FCTNs = f.endEng - st.Start
		}
	}
	out.Size = f.s.Size()
	out.Packets, out.Bytes = st.Packets, st.Bytes
	out.RetxPackets, out.RetxBytes = st.RetxPackets, st.RetxBytes
	out.Timeouts, out.ACKs, out.NAKs, out.CNPs = st.Timeouts, st.ACKs, st.NAKs, st.CNPs
	out.Injected = st.Injected
	out.AckedBytes = f.s.Acked()
	out.RateBps = f.s.Rate()
	out.Messages = f.s.Messages()
	if d := f.s.DCTCP(); d != nil {
		out.WindowPackets, out.Alpha, out.WindowCuts = f.s.Window(), d.Alpha(), d.C.Cuts
	}
	if h := f.s.HPCC(); h != nil {
		out.WindowPackets, out.HPCCU, out.WindowCuts = f.s.Window(), h.U(), h.C.Cuts
	}
}

// parseIDs reads a list of flow ids, "1,2,3" ("" : none).
func parseIDs(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var ids []int
	for _, f := range strings.Split(s, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || id < 1 {
			return nil, fmt.Errorf("rdma: flow id %q: want a positive number", f)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
