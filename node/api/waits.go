package api

import (
	"fmt"

	"github.com/bcfab/bcfab/queues"
)

// Waits is what GET /waits answers: for every port of the node, how long
// the frames that left its data queues (every queue but the HQ) waited
// there in the model, from their arrival (or the time their source gave
// them) to the start of their first bit on the link, counted since the
// node started. Times are the lab's ns; a lab's target time is that over
// its D. Two answers subtract into what happened between them.
type Waits struct {
	Node string `json:"node"`
	// StartedUnixNs is the node's (Stats.StartedUnixNs): two answers
	// with different ones count from different starts.
	StartedUnixNs int64       `json:"started_unix_ns"`
	Ports         []PortWaits `json:"ports"`
}

// PortWaits is one port's queues.DelayHist: its non-empty buckets as
// [index, count] pairs in increasing index, and the sum of the waits.
type PortWaits struct {
	Name    string      `json:"name"`
	Buckets [][2]uint64 `json:"buckets,omitempty"`
	SumNs   int64       `json:"sum_ns"`
	// Early and EarlyNs are queues.DelayHist's: frames that started on
	// the link before they joined the queue (counted as 0 above), and
	// by how much in all.
	Early   uint64 `json:"early,omitempty"`
	EarlyNs int64  `json:"early_ns,omitempty"`
}

// NewPortWaits is h as port name's PortWaits.
func NewPortWaits(name string, h *queues.DelayHist) PortWaits {
	w := PortWaits{Name: name, SumNs: h.SumNs, Early: h.Early, EarlyNs: h.EarlyNs}
	for i, c := range h.Counts {
		if c != 0 {
			w.Buckets = append(w.Buckets, [2]uint64{uint64(i), c})
		}
	}
	return w
}

// Hist is w's histogram; an index out of the layout, or out of order, is
// an error.
func (w *PortWaits) Hist() (*queues.DelayHist, error) {
	h := &queues.DelayHist{SumNs: w.SumNs, Early: w.Early, EarlyNs: w.EarlyNs}
	last := -1
	for _, b := range w.Buckets {
		if b[0] >= queues.DelayBuckets || int(b[0]) <= last {
			return nil, fmt.Errorf("waits of %s: bucket %d out of order or past %d", w.Name, b[0], queues.DelayBuckets-1)
		}
		last = int(b[0])
		h.Counts[b[0]] = b[1]
	}
	return h, nil
}
