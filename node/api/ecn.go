package api

import (
	"fmt"
	"slices"
)

// ECNHist is how a port's egress decided ECN marks, by the length in
// bytes of the queue each packet joined (the length RED decides on), so
// that marking can be checked against RED's line on real frames without
// knowing the port's configuration.
//
// Edges are in bytes, rising, and there is one bucket more than edges:
// bucket 0 holds the lengths below Edges[0] (K_min), bucket i the lengths
// in [Edges[i-1], Edges[i]), and the last bucket those at or above the
// last edge (K_max). The edges between split [K_min, K_max) evenly,
// rounded up to the byte: ten buckets, fewer when K_max - K_min is under
// ten bytes, none with K_min = K_max (a single threshold, DCTCP's).
//
// Decided counts the packets the egress decided on (every packet of a
// queue other than the HQ, ECN-capable or not; a queue's ecn_marks count
// the CE marks set) and Marked those RED marked: none below K_min, a
// probability rising linearly from 0 at K_min towards P_max just below
// K_max, all at or above K_max. Final, when present, counts the marks the
// port's scheme decided in RED's place (congestion isolation marks by
// what it isolated); absent, they were RED's. The counts are cumulative
// since the node started; a run takes the difference of two snapshots
// (Sub).
type ECNHist struct {
	Edges   []int    `json:"edges"`
	Decided []uint64 `json:"decided"`
	Marked  []uint64 `json:"marked"`
	Final   []uint64 `json:"final,omitempty"`
}

// Bucket is the bucket of a queue of qbytes: the number of edges at or
// below it.
func (h *ECNHist) Bucket(qbytes int) int {
	b := 0
	for b < len(h.Edges) && h.Edges[b] <= qbytes {
		b++
	}
	return b
}

// FinalMarks are the marks the egress returned, bucket by bucket:
// Final, or Marked when the scheme left the marks to RED.
func (h *ECNHist) FinalMarks() []uint64 {
	if h.Final != nil {
		return h.Final
	}
	return h.Marked
}

// Sub is h less an earlier snapshot of the same port's histogram: what
// was decided between the two. If old is not an earlier snapshot of the
// same histogram (other edges, or more decisions: the node restarted),
// all of h is new.
func (h ECNHist) Sub(old ECNHist) ECNHist {
	if !slices.Equal(h.Edges, old.Edges) || len(old.Decided) != len(h.Decided) {
		return h
	}
	for i, n := range old.Decided {
		if n > h.Decided[i] {
			return h
		}
	}
	out := ECNHist{Edges: slices.Clone(h.Edges)}
	out.Decided = subCounts(h.Decided, old.Decided)
	out.Marked = subCounts(h.Marked, old.Marked)
	if h.Final != nil || old.Final != nil {
		out.Final = subCounts(h.FinalMarks(), old.FinalMarks())
		if slices.Equal(out.Final, out.Marked) {
			out.Final = nil
		}
	}
	return out
}

// Add merges o, a histogram with the same edges (another port
// configured alike), into h; into an empty h it copies o.
func (h *ECNHist) Add(o ECNHist) error {
	if h.Edges == nil {
		*h = ECNHist{Edges: slices.Clone(o.Edges), Decided: slices.Clone(o.Decided),
			Marked: slices.Clone(o.Marked), Final: slices.Clone(o.Final)}
		return nil
	}
	if !slices.Equal(h.Edges, o.Edges) || len(o.Decided) != len(h.Decided) {
		return fmt.Errorf("ecn histogram: edges %v and %v differ", h.Edges, o.Edges)
	}
	if h.Final != nil || o.Final != nil {
		h.Final = addCounts(slices.Clone(h.FinalMarks()), o.FinalMarks())
	}
	h.Decided = addCounts(h.Decided, o.Decided)
	h.Marked = addCounts(h.Marked, o.Marked)
	return nil
}

func subCounts(a, b []uint64) []uint64 {
	out := make([]uint64, len(a))
	for i := range a {
		out[i] = a[i] - min(b[i], a[i])
	}
	return out
}

func addCounts(a, b []uint64) []uint64 {
	for i := range a {
		a[i] += b[i]
	}
	return a
}
