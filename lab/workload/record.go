package workload

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// FlowRecord is what a run measured of one flow.
type FlowRecord struct {
	ID   int   `json:"id"`
	Src  int   `json:"src"`
	Dst  int   `json:"dst"`
	Size int64 `json:"size"`
	// Start is when the flow started, from the start of the run: the
	// scheduled Start of its Flow until a runner records the actual one.
	Start time.Duration `json:"start_ns"`
	// FCT is the flow completion time, from its first byte sent to its
	// last byte acknowledged; valid when Completed.
	FCT time.Duration `json:"fct_ns"`
	// IdealFCT is the FCT of the flow alone in the fabric at line rate
	// (see Ideal); 0 when unknown.
	IdealFCT time.Duration `json:"ideal_fct_ns"`
	// Slowdown is FCT / IdealFCT; 0 when either is unknown. It is not
	// clamped: below 1 means the ideal's assumptions (rate, overheads)
	// are slower than the fabric.
	Slowdown float64 `json:"slowdown"`
	// Retransmissions counts the packets the sender sent again.
	Retransmissions uint64 `json:"retransmissions"`
	// Timeouts counts its sender's retransmission timeouts, Injected the
	// first transmissions its NIC dropped on purpose (Flow.Lose).
	Timeouts uint64 `json:"timeouts,omitempty"`
	Injected uint64 `json:"injected,omitempty"`
	// CNPs counts the congestion notifications its sender received
	// (DCQCN's, one per marked window of the receiver's).
	CNPs  uint64 `json:"cnps,omitempty"`
	Kind  Kind   `json:"kind"`
	Group int    `json:"group"`
	// Order is the level order its NIC gave it, the levels of its path's
	// links in turn ("0,1": level 0 first), as ATE or the flow hash chose
	// it when it started; empty when the NIC did not say (a run before
	// the field, a flow that never started, a fabric that is no BCube).
	Order string `json:"order,omitempty"`
	// Completed: every byte was acknowledged. Failed: the transport gave
	// up on the flow (a lossless run's sequence gap, a connection
	// error). Neither: the flow was still running when the run ended.
	Completed bool `json:"completed"`
	Failed    bool `json:"failed"`

	// The start, FCT and ideal FCT in the target network's time: the
	// lab's divided by the dilation D of the lab's scale model (package
	// scale). 0 when the run's D is not known (SetTarget).
	TargetStart    time.Duration `json:"start_target_ns,omitempty"`
	TargetFCT      time.Duration `json:"fct_target_ns,omitempty"`
	TargetIdealFCT time.Duration `json:"ideal_fct_target_ns,omitempty"`
}

// SetTarget fills r's target times from its lab times at dilation d.
func (r *FlowRecord) SetTarget(d float64) {
	if d <= 0 {
		return
	}
	at := func(t time.Duration) time.Duration { return time.Duration(math.Round(float64(t) / d)) }
	r.TargetStart, r.TargetFCT, r.TargetIdealFCT = at(r.Start), at(r.FCT), at(r.IdealFCT)
}

// NewRecord starts the record of f: identity, size, scheduled start and
// kind; nothing measured yet.
func NewRecord(f Flow) FlowRecord {
	return FlowRecord{ID: f.ID, Src: f.Src, Dst: f.Dst, Size: f.Size, Start: f.Start, Kind: f.Kind, Group: f.Group}
}

// Records starts the records of a schedule, one per flow, in order.
func Records(flows []Flow) []FlowRecord {
	recs := make([]FlowRecord, len(flows))
	for i, f := range flows {
		recs[i] = NewRecord(f)
	}
	return recs
}

// Complete marks r completed after fct, with the given ideal FCT (0 if
// unknown), and computes its slowdown.
func (r *FlowRecord) Complete(fct, ideal time.Duration) {
	r.Completed, r.FCT, r.IdealFCT = true, fct, ideal
	r.Slowdown = Slowdown(fct, ideal)
}

// Slowdown is fct / ideal, or 0 when either is not positive.
func Slowdown(fct, ideal time.Duration) float64 {
	if fct <= 0 || ideal <= 0 {
		return 0
	}
	return float64(fct) / float64(ideal)
}

// Wire describes the links of a path for Ideal. Every link is assumed to
// run at Rate; IdealPath takes each hop's own rate (the Rail-only
// fabric). The sizes are those the egress shapers count, since they set
// the line rate: Overhead is what the transport says a data packet adds
// to its payload on the link (headers, trailers and whatever framing the
// shaper charges), Ack the size of an acknowledgement as the shaper
// counts it. This package keeps no copy of those numbers; the caller
// takes them from the transport's parameters.
type Wire struct {
	Rate     uint64        // bit/s
	Payload  int           // largest payload of one packet, bytes
	Overhead int           // bytes a packet adds to its payload on the link
	Prop     time.Duration // propagation delay of one link
	// Ack, when positive, makes the ideal include the last
	// acknowledgement's way back (FCT ends when the last byte is
	// acknowledged); 0 leaves it out.
	Ack int
}

// Ideal is the completion time of a flow of size bytes alone on a path of
// hops links (bcube.Topology.Hops: NIC traversals), store and forward at
// every hop:
//
//	packets = ceil(size / Payload)
//	ideal   = (size + packets·Overhead)·8/Rate        the whole flow serialized on the first link
//	        + (hops-1)·(min(size, Payload)+Overhead)·8/Rate
//	                                                   each further hop stores and forwards one packet
//	        + hops·Prop                                propagation of the last byte
//	        + [Ack > 0] hops·(Ack·8/Rate + Prop)       the last acknowledgement's way back
//
// rounded to the nanosecond. The packets of a flow pipeline over the hops,
// so only the first link carries all of them in the ideal's critical
// path; each later hop adds the serialization of one full packet (a
// shorter last packet waits for the full one ahead of it). It is 0 when
// w, hops or size is not usable (no rate, no payload, hops or size < 1).
func Ideal(size int64, hops int, w Wire) time.Duration {
	if hops < 1 || hops > 64 {
		return 0
	}
	var rates [64]uint64
	for i := range hops {
		rates[i] = w.Rate
	}
	return IdealPath(size, rates[:hops], w)
}

// IdealPath is Ideal over a path whose hops run at rates (one per hop,
// w.Rate unused): the slowest link, the bottleneck, serializes the whole
// flow, and every other hop adds one packet at its own rate:
//
//	ideal = (size + packets·Overhead)·8/min(rates)
//	      + Σ over the other hops (min(size, Payload)+Overhead)·8/rate
//	      + hops·Prop
//	      + [Ack > 0] Σ over all hops (Ack·8/rate + Prop)
//
// With equal rates it is Ideal. It is 0 when a rate is 0 or w, rates or
// size is not usable.
func IdealPath(size int64, rates []uint64, w Wire) time.Duration {
	if len(rates) > 64 {
		return 0
	}
	var hops [64]Hop
	for i, r := range rates {
		hops[i] = Hop{Rate: r, Prop: w.Prop}
	}
	return IdealHops(size, hops[:len(rates)], w)
}

// Hop is one link of a path for IdealHops: its rate in bit/s and its
// propagation delay.
type Hop struct {
	Rate uint64
	Prop time.Duration
}

// IdealHops is IdealPath over hops that each have their own delay
// (w.Rate and w.Prop unused): a path of links of several kinds, as the
// reference simulator's BCube hosts reach their relays by a short link
// (package lab/ns3).
//
//	ideal = (size + packets·Overhead)·8/min(rates)
//	      + Σ over the other hops (min(size, Payload)+Overhead)·8/rate
//	      + Σ over all hops Prop
//	      + [Ack > 0] Σ over all hops (Ack·8/rate + Prop)
//
// It is 0 when a rate is 0 or w, hops or size is not usable.
func IdealHops(size int64, hops []Hop, w Wire) time.Duration {
	if w.Payload < 1 || w.Overhead < 0 || w.Ack < 0 || len(hops) < 1 || size < 1 {
		return 0
	}
	slow := 0
	for i, h := range hops {
		if h.Rate == 0 {
			return 0
		}
		if h.Rate < hops[slow].Rate {
			slow = i
		}
	}
	packets := (size + int64(w.Payload) - 1) / int64(w.Payload)
	first := float64(min(size, int64(w.Payload)) + int64(w.Overhead))
	sec := 8 * float64(size+packets*int64(w.Overhead)) / float64(hops[slow].Rate)
	for i, h := range hops {
		sec += h.Prop.Seconds()
		if i != slow {
			sec += 8 * first / float64(h.Rate)
		}
		if w.Ack > 0 {
			sec += 8*float64(w.Ack)/float64(h.Rate) + h.Prop.Seconds()
		}
	}
	return time.Duration(math.Round(sec * 1e9))
}

// IdealFunc gives the ideal FCT of a flow of size bytes from src to dst.
type IdealFunc func(src, dst int, size int64) time.Duration

// IdealByHops is the IdealFunc of Ideal over w, with the number of hops
// between two hosts given by hops (bcube.Topology.Hops).
func IdealByHops(w Wire, hops func(src, dst int) int) IdealFunc {
	return func(src, dst int, size int64) time.Duration { return Ideal(size, hops(src, dst), w) }
}

// IdealByPath is the IdealFunc of IdealPath over w, with the rates of the
// hops between two hosts given by path.
func IdealByPath(w Wire, path func(src, dst int) []uint64) IdealFunc {
	return func(src, dst int, size int64) time.Duration { return IdealPath(size, path(src, dst), w) }
}

// csvHeader is the first line of WriteCSV; its names are the JSON keys.
// Files written before the target times were recorded lack the last
// five columns, those written before the CNPs the last two, those
// written before the level order the last one; ReadCSV reads all four.
var csvHeader = []string{"id", "src", "dst", "size", "start_ns", "fct_ns", "ideal_fct_ns", "slowdown", "retransmissions", "kind", "group", "completed", "failed",
	"start_target_ns", "fct_target_ns", "ideal_fct_target_ns", "cnps", "order"}

// csvLabColumns is the number of columns before the target times,
// csvTargetColumns those before the CNPs, csvCNPColumns those before the
// level order.
const (
	csvLabColumns    = 13
	csvTargetColumns = 16
	csvCNPColumns    = 17
)

// WriteCSV writes records as CSV with a header line; times are integer
// nanoseconds (the lab's, then the target's), booleans true/false.
func WriteCSV(w io.Writer, recs []FlowRecord) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	row := make([]string, len(csvHeader))
	for i := range recs {
		r := &recs[i]
		row[0] = strconv.Itoa(r.ID)
		row[1] = strconv.Itoa(r.Src)
		row[2] = strconv.Itoa(r.Dst)
		row[3] = strconv.FormatInt(r.Size, 10)
		row[4] = strconv.FormatInt(int64(r.Start), 10)
		row[5] = strconv.FormatInt(int64(r.FCT), 10)
		row[6] = strconv.FormatInt(int64(r.IdealFCT), 10)
		row[7] = strconv.FormatFloat(r.Slowdown, 'g', -1, 64)
		row[8] = strconv.FormatUint(r.Retransmissions, 10)
		row[9] = string(r.Kind)
		row[10] = strconv.Itoa(r.Group)
		row[11] = strconv.FormatBool(r.Completed)
		row[12] = strconv.FormatBool(r.Failed)
		row[13] = strconv.FormatInt(int64(r.TargetStart), 10)
		row[14] = strconv.FormatInt(int64(r.TargetFCT), 10)
		row[15] = strconv.FormatInt(int64(r.TargetIdealFCT), 10)
		row[16] = strconv.FormatUint(r.CNPs, 10)
		row[17] = r.Order
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// ReadCSV reads what WriteCSV wrote.
func ReadCSV(r io.Reader) ([]FlowRecord, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("read csv header: %w", err)
	}
	if len(head) != len(csvHeader) && len(head) != csvCNPColumns && len(head) != csvTargetColumns && len(head) != csvLabColumns {
		return nil, fmt.Errorf("read csv header: %d columns, want %d (or %d without the level order, %d without CNPs, %d without target times)",
			len(head), len(csvHeader), csvCNPColumns, csvTargetColumns, csvLabColumns)
	}
	cr.FieldsPerRecord = len(head)
	for i, name := range csvHeader[:len(head)] {
		if head[i] != name {
			return nil, fmt.Errorf("read csv header: column %d is %q, want %q", i+1, head[i], name)
		}
	}
	var recs []FlowRecord
	for {
		row, err := cr.Read()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read csv: %w", err)
		}
		line, _ := cr.FieldPos(0)
		rec, err := parseRow(row)
		if err != nil {
			return nil, fmt.Errorf("read csv line %d: %w", line, err)
		}
		recs = append(recs, rec)
	}
}

func parseRow(row []string) (FlowRecord, error) {
	var (
		r    FlowRecord
		errs []error
	)
	integer := func(i int) int64 {
		v, err := strconv.ParseInt(row[i], 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", csvHeader[i], err))
		}
		return v
	}
	boolean := func(i int) bool {
		v, err := strconv.ParseBool(row[i])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", csvHeader[i], err))
		}
		return v
	}
	r.ID = int(integer(0))
	r.Src = int(integer(1))
	r.Dst = int(integer(2))
	r.Size = integer(3)
	r.Start = time.Duration(integer(4))
	r.FCT = time.Duration(integer(5))
	r.IdealFCT = time.Duration(integer(6))
	var err error
	if r.Slowdown, err = strconv.ParseFloat(row[7], 64); err != nil {
		errs = append(errs, fmt.Errorf("slowdown: %w", err))
	}
	if r.Retransmissions, err = strconv.ParseUint(row[8], 10, 64); err != nil {
		errs = append(errs, fmt.Errorf("retransmissions: %w", err))
	}
	if r.Kind, err = ParseKind(row[9]); err != nil {
		errs = append(errs, err)
	}
	r.Group = int(integer(10))
	r.Completed = boolean(11)
	r.Failed = boolean(12)
	if len(row) > csvLabColumns {
		r.TargetStart = time.Duration(integer(13))
		r.TargetFCT = time.Duration(integer(14))
		r.TargetIdealFCT = time.Duration(integer(15))
	}
	if len(row) > csvTargetColumns {
		r.CNPs = uint64(integer(16))
	}
	if len(row) > csvCNPColumns {
		r.Order = row[17]
	}
	return r, errors.Join(errs...)
}

// WriteJSONL writes records as JSON lines, one object per record.
func WriteJSONL(w io.Writer, recs []FlowRecord) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return fmt.Errorf("write json lines: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write json lines: %w", err)
	}
	return nil
}

// ReadJSONL reads what WriteJSONL wrote. Keys it does not know are
// ignored (a newer writer may add some); every record must name a kind.
func ReadJSONL(r io.Reader) ([]FlowRecord, error) {
	dec := json.NewDecoder(r)
	var recs []FlowRecord
	for {
		var rec FlowRecord
		err := dec.Decode(&rec)
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read json lines, record %d: %w", len(recs)+1, err)
		}
		if _, err := ParseKind(string(rec.Kind)); err != nil {
			return nil, fmt.Errorf("read json lines, record %d: %w", len(recs)+1, err)
		}
		recs = append(recs, rec)
	}
}
