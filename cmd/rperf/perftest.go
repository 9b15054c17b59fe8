package main

// perftest's tests over hostd's RDMA flows: a bandwidth test of one
// message size (-s) or a sweep of sizes (-a), as ib_send_bw, and a
// latency test (--lat), as ib_send_lat, each size a flow of messages
// (RDMARequest.MsgBytes) that rperf waits for:
//
//  1. the sizes: 2, 4, ... --max-size with -a, else -s;
//  2. per size, POST /rdma a flow of --iters messages of it (fewer when
//     that would take more than about a second of the link: large sizes
//     stay affordable at these link rates), latency flows one message at
//     a time;
//  3. wait for it to end and make a row of its report: bandwidth peak
//     and average and message rate, or the round trips' statistics.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/api"
)

// Perftest is the result of -a, -s or --lat: a row per message size.
type Perftest struct {
	Test      string         `json:"test"` // bandwidth or latency
	Bandwidth []BandwidthRow `json:"bandwidth,omitempty"`
	Latency   []LatencyRow   `json:"latency,omitempty"`
	Health    *lab.Health    `json:"emulation_health,omitempty"`
}

// BandwidthRow is perftest's bandwidth line: #bytes, #iterations, BW peak,
// BW average, MsgRate. Average is the payload over the flows' time (first
// byte sent to last acknowledged), peak the payload acknowledged within
// the best tenth of that time; both in bit/s (printed in Mb/sec).
type BandwidthRow struct {
	Bytes      int64   `json:"bytes"`
	Iterations int64   `json:"iterations"`
	PeakBps    float64 `json:"bw_peak_bps"`
	AvgBps     float64 `json:"bw_average_bps"`
	MsgRate    float64 `json:"msg_rate_pps"`
	// The same on the target's clock (x D).
	PeakTargetBps float64 `json:"bw_peak_target_bps,omitempty"`
	AvgTargetBps  float64 `json:"bw_average_target_bps,omitempty"`
	MsgRateTarget float64 `json:"msg_rate_target_pps,omitempty"`
}

// LatencyRow is perftest's latency line: a message's round trip, posted
// to acknowledged, over the iterations: the lab's, and Target the same
// on the target's clock (/ D).
type LatencyRow struct {
	Bytes      int64 `json:"bytes"`
	Iterations int64 `json:"iterations"`
	api.LatencyStats
	Target *api.LatencyStats `json:"round_trip_target,omitempty"`
}

// sizes are the message sizes to run.
func (o *options) sizes() []int64 {
	if !o.sweep {
		return []int64{o.size}
	}
	var out []int64
	for s := int64(2); s <= o.maxSize; s *= 2 {
		out = append(out, s)
	}
	return out
}

// iterations is how many messages of size to run at rateBps (0:
// unknown): --iters, but no more than about a second of the link.
func (o *options) iterations(size int64, rateBps int64) int64 {
	n := int64(o.iters)
	if rateBps > 0 {
		n = min(n, max(rateBps/8/size, 10))
	}
	return max(n, 1)
}

// perftest runs -a, -s or --lat from this server's NIC to DST.
func (t *test) perftest(ctx context.Context, rep reporter) (err error) {
	o := t.o
	doc := &Document{Intervals: []Interval{}}
	pt := &Perftest{Test: "bandwidth"}
	if o.lat {
		pt.Test = "latency"
	}
	doc.Perftest = pt
	defer func() {
		if err != nil {
			doc.Error = err.Error()
		}
		rep.finish(doc, err)
	}()
	var before *lab.HealthSample
	if o.lab != "" {
		before, _ = lab.SampleHealth(o.runRoot, o.lab)
	}
	health := func() *lab.Health {
		if before == nil {
			return nil
		}
		after, err := lab.SampleHealth(o.runRoot, o.lab)
		if err != nil {
			return nil
		}
		h := after.Since(before, 0, lab.HealthLimits{})
		return &h
	}
	// failed is why a size ended the test: the emulation's health when it
	// is invalid (a gap the rings' drops made is not the flow's), else err.
	failed := func(err error) error {
		pt.Health = health()
		if doc.Start.Version != "" { // the header is out: end its table with the health
			rep.end(doc)
		}
		if bad := invalid(pt.Health); bad != nil {
			return fmt.Errorf("%w (%v)", bad, err)
		}
		return err
	}
	var params api.RDMAReport // the NIC's parameters: its link rate
	if err := t.local.call(ctx, http.MethodGet, "/rdma", nil, &params); err != nil {
		return err
	}
	rate := params.Params.LineRateBps
	if o.rateBps > 0 && (rate == 0 || int64(o.rateBps) < rate) {
		rate = int64(o.rateBps)
	}
	printed := false
	for _, size := range o.sizes() {
		n := o.iterations(size, rate)
		flows, roles, err := t.start(ctx, func(s *side) api.RDMARequest {
			r := t.request(s.dst)
			r.Bytes, r.Duration, r.UntilStopped = n*size, 0, false
			r.MsgBytes, r.Latency = size, o.lat
			return r
		})
		if err != nil {
			return err
		}
		if !printed {
			doc.Start = t.startSection(flows, roles, flows[0].StartNs, &params)
			ts := &doc.Start.TestStart
			ts.Bytes, ts.Duration, ts.Interval, ts.Perftest = 0, 0, 0, pt.Test
			rep.start(doc)
			printed = true
		}
		fl, err := t.wait(ctx)
		if err != nil {
			return failed(err)
		}
		for _, f := range fl {
			if f.State != api.RDMADone {
				return failed(fmt.Errorf("%d-byte messages: flow %d %s: %s", size, f.ID, f.State, f.Failure))
			}
		}
		if o.lat {
			row := LatencyRow{Bytes: size, Iterations: n}
			if l := fl[0].Latency; l != nil {
				row.LatencyStats = *l
			}
			row.setTarget(doc.Start.Model)
			pt.Latency = append(pt.Latency, row)
			rep.row(row)
			continue
		}
		row := BandwidthRow{Bytes: size, Iterations: n}
		first, last := int64(0), int64(0)
		var acked int64
		for _, f := range fl {
			if first == 0 || f.FirstNs < first {
				first = f.FirstNs
			}
			last = max(last, f.EndNs)
			acked += f.AckedBytes
			row.PeakBps += f.PeakBps
		}
		if secs := float64(last-first) / 1e9; secs > 0 {
			row.AvgBps = float64(acked) * 8 / secs
			row.MsgRate = float64(n*int64(len(fl))) / secs
		}
		row.setTarget(doc.Start.Model)
		pt.Bandwidth = append(pt.Bandwidth, row)
		rep.row(row)
	}
	pt.Health = health()
	rep.end(doc)
	return invalid(pt.Health)
}

// wait polls the sides' flows until they have all ended (or made no
// progress for --timeout, or ctx ends: then they are aborted).
func (t *test) wait(ctx context.Context) ([]api.RDMAFlow, error) {
	var last snapshot
	progress := time.Now().UnixNano()
	for {
		select {
		case <-ctx.Done():
			t.stop(context.Background(), false)
			return nil, errors.New("interrupted")
		case <-time.After(20 * time.Millisecond):
		}
		snap, _, err := t.snapshot(context.Background())
		if err != nil {
			return nil, err
		}
		if last.flows == nil || moved(last, snap) {
			progress = snap.at
		}
		last = snap
		if allEnded(snap) {
			return snap.flows, nil
		}
		if snap.at-progress > int64(t.o.timeout) {
			t.stop(context.Background(), false)
			return nil, fmt.Errorf("no flow made progress for %v", t.o.timeout)
		}
	}
}

const perftestRule = "---------------------------------------------------------------------------------------"

func printPerftestHeader(w io.Writer, c clock, d *Document) {
	ts := &d.Start.TestStart
	test := ts.Perftest
	fmt.Fprintln(w, perftestRule)
	what := "Send BW Test"
	if test == "latency" {
		what = "Send Latency Test (round trip: posted to acknowledged)"
	}
	fmt.Fprintf(w, "                    RDMA_%s\n", what)
	fmt.Fprintf(w, " Number of qps   : %d\t\tTransport type : RoCEv2 (bcfab)\n", ts.NumStreams)
	dcqcn := "on"
	if !ts.DCQCN {
		dcqcn = "off"
	}
	fmt.Fprintf(w, " Connection type : RC\t\tMode           : %s, DCQCN %s\n", ts.Mode, dcqcn)
	link := trim(formatBits(c.rate(float64(d.Start.LinkRateBps))))
	if c.label != "" {
		link += " (" + c.label + ")"
	}
	fmt.Fprintf(w, " Mtu             : %d[B]\tLink           : %s\n", ts.MTU, link)
	fmt.Fprintln(w, perftestRule)
	switch {
	case c.target():
		fmt.Fprintf(w, " Times and rates in the target: the lab's time / D, its rates x D (D = %s; --lab-units: the lab's)\n", formatD(c.m.D))
	case c.label == "lab":
		fmt.Fprintf(w, " Times and rates of the lab's clock (D = %s: the target's time x D, its rates / D)\n", formatD(c.m.D))
	}
	if test == "latency" {
		fmt.Fprintln(w, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]")
		return
	}
	unit := "Mb/sec"
	if c.target() {
		unit = "Gb/sec"
	}
	fmt.Fprintf(w, " #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n", unit, unit)
}

// formatD prints a dilation: 5000, 2.5.
func formatD(d float64) string { return strconv.FormatFloat(d, 'f', -1, 64) }

func printBandwidthRow(w io.Writer, c clock, r BandwidthRow) {
	div := 1e6
	if c.target() {
		div = 1e9
	}
	fmt.Fprintf(w, " %-10d %-14d %-18.2f %-20.2f %.6f\n", r.Bytes, r.Iterations, c.rate(r.PeakBps)/div, c.rate(r.AvgBps)/div, c.rate(r.MsgRate)/1e6)
}

func printLatencyRow(w io.Writer, c clock, r LatencyRow) {
	us := func(ns int64) float64 { return float64(ns) / 1e3 / c.d() }
	f := " %-6d %-13d %-14.2f %-12.2f %-18.2f %-14.2f %-15.2f %-22.2f %.2f\n"
	if c.target() { // a few µs: to the ns
		f = " %-6d %-13d %-14.3f %-12.3f %-18.3f %-14.3f %-15.3f %-22.3f %.3f\n"
	}
	fmt.Fprintf(w, f, r.Bytes, r.Iterations,
		us(r.MinNs), us(r.MaxNs), us(r.P50Ns), us(r.AvgNs), us(r.StdevNs), us(r.P99Ns), us(r.P999Ns))
}
