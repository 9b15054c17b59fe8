package main

// What rperf prints: iperf3's text layout and its JSON document's three
// sections (start, intervals, end), computed from snapshots of the
// flows that hostd reports.
//
// Transfer and bitrate in intervals and on the receiver line are payload
// bytes acknowledged (what the receiver took in order); the sender line
// counts payload bytes sent, retransmissions included. The wire rate
// adds to the acknowledged payload the headers and framing of every
// packet that carried it (transport.DefaultWireOverhead: Ethernet,
// 802.1Q, IPv4, UDP, BTH and ICRC, preamble, FCS and inter-frame gap),
// and link utilisation is the wire rate over the link rate: the share of
// the link the flow's useful packets occupied from its first byte sent to
// its last byte acknowledged. Flows that leave by different ports take
// disjoint first links, so the sum's utilisation is over the link rate
// times the number of ports the flows leave by.

import (
	"encoding/json"
	"fmt"
	"github.com/bcfab/bcfab/model/scale"
	"io"
	"math"
	"strings"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/wire/transport"
)

// Document is rperf's JSON output (-J), shaped like iperf3's; perftest's
// modes fill Perftest instead of intervals and end.
type Document struct {
	Start     Start      `json:"start"`
	Intervals []Interval `json:"intervals"`
	End       End        `json:"end"`
	Perftest  *Perftest  `json:"perftest,omitempty"`
	Error     string     `json:"error,omitempty"`
}

// Start describes the test.
type Start struct {
	Version      string           `json:"version"`
	Timestamp    Timestamp        `json:"timestamp"`
	Lab          string           `json:"lab,omitempty"`
	Node         string           `json:"node,omitempty"`
	ConnectingTo ConnectingTo     `json:"connecting_to"`
	LinkRateBps  int64            `json:"link_rate_bps"`
	TestStart    TestStart        `json:"test_start"`
	Params       transport.Params `json:"params"`
	Streams      []StreamInfo     `json:"streams"`
	// Model is the lab's scale model (the network it emulates at D);
	// IdealFCTNs, for a sized test, a flow's FCT alone at line rate over
	// its path, in the lab's time (the target's x D).
	Model      *scale.Model `json:"model,omitempty"`
	IdealFCTNs int64        `json:"ideal_fct_ns,omitempty"`
	// The link rate and ideal FCT on the target's clock (x D, / D).
	LinkRateTargetBps int64 `json:"link_rate_target_bps,omitempty"`
	IdealFCTTargetNs  int64 `json:"ideal_fct_target_ns,omitempty"`
}

type Timestamp struct {
	Time     string `json:"time"`
	Timesecs int64  `json:"timesecs"`
}

type ConnectingTo struct {
	Host   string `json:"host"`
	Server string `json:"server"`
}

type TestStart struct {
	Protocol   string  `json:"protocol"`
	Mode       string  `json:"mode"`
	DCQCN      bool    `json:"dcqcn"`
	MTU        int     `json:"mtu"`
	NumStreams int     `json:"num_streams"`
	Bytes      int64   `json:"bytes"`    // per stream; 0 with a duration
	Duration   float64 `json:"duration"` // seconds of lab time; 0 with bytes
	// DurationTarget is Duration on the target's clock (seconds, / D).
	DurationTarget float64 `json:"duration_target,omitempty"`
	Interval       float64 `json:"interval"`
	Order          string  `json:"order,omitempty"`
	// Omit is -O's seconds; Reverse and Bidir the directions;
	// RateLimitBps -b's cap per flow; UntilStopped -t 0.
	Omit         float64 `json:"omit,omitempty"`
	Reverse      bool    `json:"reverse,omitempty"`
	Bidir        bool    `json:"bidir,omitempty"`
	RateLimitBps int64   `json:"rate_limit_bps,omitempty"`
	UntilStopped bool    `json:"until_stopped,omitempty"`
	// Perftest is perftest's test run (-a, -s, --lat): bandwidth or
	// latency.
	Perftest string `json:"perftest,omitempty"`
}

// StreamInfo is one flow (QP) as started. Role, with --bidir, is TX-C
// (this server sends) or RX-C (DST sends); Dst is where it goes.
type StreamInfo struct {
	ID       int    `json:"id"`
	Role     string `json:"role,omitempty"`
	Dst      int    `json:"dst"`
	QP       uint32 `json:"qp"`
	SPort    uint16 `json:"sport"`
	Port     string `json:"port"`
	Queue    string `json:"queue"`
	Order    string `json:"order"`
	StartPSN uint32 `json:"start_psn"`
}

// Interval is one reporting interval: every stream and their sum; with
// --bidir, Sum is this server's flows' (TX-C) and SumBidirReverse DST's
// (RX-C), as iperf3 names them.
type Interval struct {
	Streams         []IntervalStream `json:"streams"`
	Sum             IntervalStream   `json:"sum"`
	SumBidirReverse *IntervalStream  `json:"sum_bidir_reverse,omitempty"`
}

// setOmitted marks the interval as within -O: left out of the summary.
func (iv *Interval) setOmitted(o bool) {
	for i := range iv.Streams {
		iv.Streams[i].Omitted = o
	}
	iv.Sum.Omitted = o
	if iv.SumBidirReverse != nil {
		iv.SumBidirReverse.Omitted = o
	}
}

// IntervalStream is a stream's (or the sum's) interval. Times are seconds
// since the test started. iperf3's keys are the lab's values; the
// _target ones the same on the target's clock (times / D, rates x D).
type IntervalStream struct {
	ID            int     `json:"id,omitempty"`
	Role          string  `json:"role,omitempty"`
	Omitted       bool    `json:"omitted"`
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   uint64  `json:"retransmits"`
	RetxBytes     uint64  `json:"retx_bytes"`
	CNPs          uint64  `json:"cnps"`
	RateBps       float64 `json:"rate_bps,omitempty"` // pacing rate at the end (DCQCN's Rc)

	StartTarget         float64 `json:"start_target,omitempty"`
	EndTarget           float64 `json:"end_target,omitempty"`
	SecondsTarget       float64 `json:"seconds_target,omitempty"`
	BitsPerSecondTarget float64 `json:"bits_per_second_target,omitempty"`
	RateBpsTarget       float64 `json:"rate_bps_target,omitempty"`
}

// End is the summary (from the end of -O); with --bidir SumSent and
// SumReceived are this server's flows' and the _bidir_reverse sums DST's.
type End struct {
	Streams                 []EndStream `json:"streams"`
	SumSent                 Sum         `json:"sum_sent"`
	SumReceived             Sum         `json:"sum_received"`
	SumSentBidirReverse     *Sum        `json:"sum_sent_bidir_reverse,omitempty"`
	SumReceivedBidirReverse *Sum        `json:"sum_received_bidir_reverse,omitempty"`
	Retransmits             uint64      `json:"retransmits"`
	RetxBytes               uint64      `json:"retx_bytes"`
	Timeouts                uint64      `json:"timeouts"`
	NAKs                    uint64      `json:"naks"`
	CNPs                    uint64      `json:"cnps"`
	Failures                int         `json:"failures"`
	// Injected counts the packets the NICs dropped on purpose (--lose).
	Injected uint64 `json:"injected,omitempty"`
	// Health is the emulation's over the test: every daemon of the lab,
	// not only this path's (absent when rperf was given --socket alone).
	Health *lab.Health `json:"emulation_health,omitempty"`
}

// EndStream is one flow's summary.
type EndStream struct {
	ID       int    `json:"id"`
	Role     string `json:"role,omitempty"`
	QP       uint32 `json:"qp"`
	Sender   Sum    `json:"sender"`
	Receiver Sum    `json:"receiver"`
	// FCTNs is the lab's FCT (iperf3's key, as FCTLabNs), FCTTargetNs
	// the target's (/ D).
	FCTNs       int64  `json:"fct_ns"`
	FCTLabNs    int64  `json:"fct_lab_ns,omitempty"`
	FCTTargetNs int64  `json:"fct_target_ns,omitempty"`
	Timeouts    uint64 `json:"timeouts"`
	NAKs        uint64 `json:"naks"`
	CNPs        uint64 `json:"cnps"`
	State       string `json:"state"`
	Failure     string `json:"failure,omitempty"`
	Injected    uint64 `json:"injected,omitempty"` // first transmissions dropped on purpose (--lose)
}

// Sum is bytes over a time span, from the test's start.
type Sum struct {
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Packets       uint64  `json:"packets,omitempty"`
	Retransmits   uint64  `json:"retransmits,omitempty"`
	RetxBytes     uint64  `json:"retx_bytes,omitempty"`
	// On receiver sums: the acknowledged payload with every packet's
	// headers and framing, per second, and that over the link rate.
	WireBitsPerSecond float64 `json:"wire_bits_per_second,omitempty"`
	LinkUtilization   float64 `json:"link_utilization,omitempty"`

	// The same on the target's clock (times / D, rates x D).
	StartTarget             float64 `json:"start_target,omitempty"`
	EndTarget               float64 `json:"end_target,omitempty"`
	SecondsTarget           float64 `json:"seconds_target,omitempty"`
	BitsPerSecondTarget     float64 `json:"bits_per_second_target,omitempty"`
	WireBitsPerSecondTarget float64 `json:"wire_bits_per_second_target,omitempty"`
}

// snapshot is the flows at one moment (Unix ns).
type snapshot struct {
	at    int64
	flows []api.RDMAFlow
}

// intervalOf is what happened between snapshots a and b, labelled from
// from to to (seconds since the test started); roles are the flows'.
func intervalOf(a, b snapshot, roles []string, from, to float64) Interval {
	var iv Interval
	secs := float64(b.at-a.at) / 1e9
	for i, f := range b.flows {
		p := a.flows[i]
		s := IntervalStream{ID: f.ID, Role: roles[i], Start: from, End: to, Seconds: secs,
			Bytes: f.AckedBytes - p.AckedBytes, Retransmits: f.RetxPackets - p.RetxPackets,
			RetxBytes: f.RetxBytes - p.RetxBytes, CNPs: f.CNPs - p.CNPs, RateBps: f.RateBps}
		s.BitsPerSecond = bps(s.Bytes, secs)
		iv.Streams = append(iv.Streams, s)
		sum := &iv.Sum
		if roles[i] == "RX-C" {
			if iv.SumBidirReverse == nil {
				iv.SumBidirReverse = &IntervalStream{Role: "RX-C"}
			}
			sum = iv.SumBidirReverse
		} else {
			sum.Role = roles[i]
		}
		sum.Bytes += s.Bytes
		sum.Retransmits += s.Retransmits
		sum.RetxBytes += s.RetxBytes
		sum.CNPs += s.CNPs
	}
	for _, sum := range []*IntervalStream{&iv.Sum, iv.SumBidirReverse} {
		if sum != nil {
			sum.Start, sum.End, sum.Seconds = from, to, secs
			sum.BitsPerSecond = bps(sum.Bytes, secs)
		}
	}
	return iv
}

func bps(bytes int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(bytes) * 8 / secs
}

// endOf summarises the final state of flows (roles: theirs) from base,
// the snapshot the summary counts from (the test's start, or the end of
// -O), with times from t0 (Unix ns) and the link's rate.
func endOf(flows []api.RDMAFlow, roles []string, base snapshot, t0, linkBps int64) End {
	var e End
	rel := func(ns int64) float64 { return float64(ns-t0) / 1e9 }
	type agg struct {
		sent, recv  *Sum
		first, last int64
		wire        float64
		ports       map[int]bool
		any         bool
	}
	fwd := &agg{sent: &e.SumSent, recv: &e.SumReceived, first: math.MaxInt64, ports: map[int]bool{}}
	var rev *agg
	for i, f := range flows {
		p := base.flows[i] // zero at the start of the test
		fs, fe := f.FirstNs, f.EndNs
		if fs == 0 {
			fs = f.StartNs
		}
		if fe == 0 {
			fe = fs
		}
		fs = max(fs, base.at)
		fe = max(fe, fs)
		es := EndStream{ID: f.ID, Role: roles[i], QP: f.QP, FCTNs: f.FCTNs, Timeouts: f.Timeouts - p.Timeouts, NAKs: f.NAKs - p.NAKs,
			CNPs: f.CNPs - p.CNPs, State: f.State, Failure: f.Failure, Injected: f.Injected - p.Injected}
		es.Sender = Sum{Start: rel(fs), End: rel(fe), Seconds: float64(fe-fs) / 1e9, Bytes: int64(f.Bytes - p.Bytes),
			Packets: f.Packets - p.Packets, Retransmits: f.RetxPackets - p.RetxPackets, RetxBytes: f.RetxBytes - p.RetxBytes}
		es.Sender.BitsPerSecond = bps(es.Sender.Bytes, es.Sender.Seconds)
		acked := f.AckedBytes - p.AckedBytes
		es.Receiver = Sum{Start: rel(fs), End: rel(fe), Seconds: float64(fe-fs) / 1e9, Bytes: acked}
		es.Receiver.BitsPerSecond = bps(acked, es.Receiver.Seconds)
		w := wireBytes(acked, f.MTU)
		if es.Receiver.Seconds > 0 {
			es.Receiver.WireBitsPerSecond = w * 8 / es.Receiver.Seconds
			if linkBps > 0 {
				es.Receiver.LinkUtilization = es.Receiver.WireBitsPerSecond / float64(linkBps)
			}
		}
		e.Streams = append(e.Streams, es)
		a := fwd
		if roles[i] == "RX-C" {
			if rev == nil {
				e.SumSentBidirReverse, e.SumReceivedBidirReverse = &Sum{}, &Sum{}
				rev = &agg{sent: e.SumSentBidirReverse, recv: e.SumReceivedBidirReverse, first: math.MaxInt64, ports: map[int]bool{}}
			}
			a = rev
		}
		a.any = true
		a.first, a.last = min(a.first, fs), max(a.last, fe)
		a.ports[f.Port] = true
		a.wire += w
		a.sent.Bytes += es.Sender.Bytes
		a.sent.Packets += es.Sender.Packets
		a.sent.Retransmits += es.Sender.Retransmits
		a.sent.RetxBytes += es.Sender.RetxBytes
		a.recv.Bytes += acked
		e.Retransmits += es.Sender.Retransmits
		e.RetxBytes += es.Sender.RetxBytes
		e.Timeouts += es.Timeouts
		e.NAKs += es.NAKs
		e.CNPs += es.CNPs
		e.Injected += es.Injected
		if f.State != api.RDMADone {
			e.Failures++
		}
	}
	for _, a := range []*agg{fwd, rev} {
		if a == nil || !a.any {
			continue
		}
		for _, s := range []*Sum{a.sent, a.recv} {
			s.Start, s.End, s.Seconds = rel(a.first), rel(a.last), float64(a.last-a.first)/1e9
			s.BitsPerSecond = bps(s.Bytes, s.Seconds)
		}
		if a.recv.Seconds > 0 {
			a.recv.WireBitsPerSecond = a.wire * 8 / a.recv.Seconds
			if linkBps > 0 {
				a.recv.LinkUtilization = a.recv.WireBitsPerSecond / float64(linkBps*int64(len(a.ports)))
			}
		}
	}
	return e
}

// wireBytes is what the packets carrying acked payload bytes of mtu
// occupy on the link.
func wireBytes(acked int64, mtu int) float64 {
	if mtu <= 0 || acked <= 0 {
		return 0
	}
	packets := (acked + int64(mtu) - 1) / int64(mtu)
	return float64(acked + packets*transport.DefaultWireOverhead)
}

// reporter is where a test's report goes as it runs: text, one JSON
// document (-J), or JSON lines (--json-stream).
type reporter interface {
	start(d *Document)
	interval(d *Document, iv *Interval)
	// row is a perftest row (BandwidthRow, LatencyRow).
	row(r any)
	end(d *Document)
	// finish is called last, with the error that ended the test.
	finish(d *Document, err error)
}

// textReporter prints iperf3's text, on the clock of the test's model
// (labUnits: --lab-units).
type textReporter struct {
	w        io.Writer
	labUnits bool
	c        clock
}

func (r *textReporter) start(d *Document) {
	r.c = newClock(d.Start.Model, r.labUnits)
	printHeader(r.w, r.c, d)
	switch {
	case d.Perftest != nil:
		printPerftestHeader(r.w, r.c, d)
	case d.Start.TestStart.Interval > 0:
		printIntervalHeader(r.w, r.c)
	}
}
func (r *textReporter) interval(d *Document, iv *Interval) {
	printInterval(r.w, r.c, iv, len(d.Start.Streams))
}
func (r *textReporter) row(row any) {
	switch x := row.(type) {
	case BandwidthRow:
		printBandwidthRow(r.w, r.c, x)
	case LatencyRow:
		printLatencyRow(r.w, r.c, x)
	}
}
func (r *textReporter) end(d *Document) {
	if pt := d.Perftest; pt != nil {
		fmt.Fprintln(r.w, perftestRule)
		if h := pt.Health; h != nil {
			fmt.Fprintln(r.w, strings.ToUpper(h.Short()[:1])+h.Short()[1:])
		}
		return
	}
	printSummary(r.w, r.c, d)
}
func (r *textReporter) finish(d *Document, err error) {
	if err == nil {
		fmt.Fprintln(r.w, "\nrperf Done.")
	}
}

// docReporter writes one JSON document at the end (-J).
type docReporter struct{ w io.Writer }

func (r *docReporter) start(*Document)               {}
func (r *docReporter) interval(*Document, *Interval) {}
func (r *docReporter) row(any)                       {}
func (r *docReporter) end(*Document)                 {}
func (r *docReporter) finish(d *Document, err error) {
	enc := json.NewEncoder(r.w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(d)
}

// streamReporter writes a JSON line per event (--json-stream), as
// iperf3 does: {"event": "start", "data": ...}, then "interval", "end",
// and "error" when the test fails.
type streamReporter struct{ w io.Writer }

func (r *streamReporter) emit(event string, data any) {
	b, err := json.Marshal(struct {
		Event string `json:"event"`
		Data  any    `json:"data"`
	}{event, data})
	if err == nil {
		r.w.Write(append(b, '\n'))
	}
}

func (r *streamReporter) start(d *Document)                  { r.emit("start", d.Start) }
func (r *streamReporter) interval(_ *Document, iv *Interval) { r.emit("interval", iv) }
func (r *streamReporter) row(row any)                        { r.emit("interval", row) }
func (r *streamReporter) end(d *Document) {
	if d.Perftest != nil {
		r.emit("end", d.Perftest)
		return
	}
	r.emit("end", d.End)
}
func (r *streamReporter) finish(d *Document, err error) {
	if err != nil {
		r.emit("error", err.Error())
	}
}

// Text output, as iperf3 lays it out.

const separator = "- - - - - - - - - - - - - - - - - - - - - - - - -"

func printHeader(w io.Writer, c clock, d *Document) {
	s := &d.Start
	ts := &s.TestStart
	dc := "on"
	if !ts.DCQCN {
		dc = "off"
	}
	what := fmt.Sprintf("%s per flow", formatBytes(float64(ts.Bytes)))
	switch {
	case ts.Perftest != "":
		what = "perftest's " + ts.Perftest + " test"
	case ts.UntilStopped:
		what = "until stopped (Ctrl-C)"
	case ts.Bytes == 0:
		what = c.given(ts.Duration)
		if ts.Omit > 0 {
			what += " after " + c.given(ts.Omit) + " omitted"
		}
	}
	if ts.RateLimitBps > 0 {
		what += ", at most " + c.givenRate(float64(ts.RateLimitBps)) + " each"
	}
	fmt.Fprintf(w, "Connecting to host %s (%s) from %s over RoCEv2: mode %s, DCQCN %s, MTU %d, %d flow%s, %s\n",
		s.ConnectingTo.Host, s.ConnectingTo.Server, nodeName(s), ts.Mode, dc, ts.MTU, ts.NumStreams, plural(ts.NumStreams), what)
	switch {
	case ts.Reverse:
		fmt.Fprintf(w, "Reverse mode, remote host %s is sending\n", s.ConnectingTo.Host)
	case ts.Bidir:
		fmt.Fprintf(w, "Bidirectional: TX-C from %s, RX-C from %s\n", nodeName(s), s.ConnectingTo.Server)
	}
	for i, st := range s.Streams {
		fmt.Fprintf(w, "%s flow %d, QP 0x%06x, UDP source port %d, leaves by %s (queue %s), level order %s\n",
			streamTag(i+1, st.Role), st.ID, st.QP, st.SPort, st.Port, st.Queue, st.Order)
	}
}

// streamTag is "[  1]", or "[  1][TX-C]" with --bidir: the stream's
// number in the test, as iperf3 numbers its streams (the NICs number
// their flows each on its own, so both directions may have a flow 1).
func streamTag(id int, role string) string {
	if role != "" {
		return fmt.Sprintf("[%3d][%s]", id, role)
	}
	return fmt.Sprintf("[%3d]", id)
}

// sumTag is "[SUM]", or "[SUM][TX-C]" with --bidir.
func sumTag(role string) string {
	if role != "" {
		return "[SUM][" + role + "]"
	}
	return "[SUM]"
}

func nodeName(s *Start) string {
	switch {
	case s.Lab != "" && s.Node != "":
		return s.Node + " of lab " + s.Lab
	case s.Node != "":
		return s.Node
	}
	return "this host"
}

// seconds is a time in seconds: "1 second", "2.5 seconds".
func seconds(s float64) string {
	if s == 1 {
		return "1 second"
	}
	return fmt.Sprintf("%g seconds", s)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func printIntervalHeader(w io.Writer, c clock) {
	if c.label == "" {
		fmt.Fprintln(w, "[ ID] Interval           Transfer     Bitrate         Retr   CNPs  Rate")
		return
	}
	fmt.Fprintf(w, "[ ID] %-18s Transfer     %-15s Retr   CNPs  %s\n", c.head("Interval"), c.head("Bitrate"), c.head("Rate"))
}

func printInterval(w io.Writer, c clock, iv *Interval, streams int) {
	omitted := ""
	if iv.Sum.Omitted {
		omitted = "  (omitted)"
	}
	for i, s := range iv.Streams {
		fmt.Fprintf(w, "%s %s  %5d  %5d  %s%s\n", streamTag(i+1, s.Role), c.span(s.Start, s.End, s.Bytes, s.BitsPerSecond), s.Retransmits, s.CNPs,
			formatBits(c.rate(s.RateBps)), omitted)
	}
	if streams > 1 {
		for _, s := range []*IntervalStream{&iv.Sum, iv.SumBidirReverse} {
			if s != nil && (s.Role != "" || iv.SumBidirReverse == nil) {
				fmt.Fprintf(w, "%s %s  %5d  %5d%s\n", sumTag(s.Role), c.span(s.Start, s.End, s.Bytes, s.BitsPerSecond), s.Retransmits, s.CNPs, omitted)
			}
		}
	}
}

// span is iperf3's "  0.00-1.00   sec  11.9 MBytes  99.8 Mbits/sec"
// (from and to in seconds of the lab, bits its rate), on clock c: on
// the target's, "   0.0-200.0  µs   2.15 MBytes  90.0 Gbits/sec".
func (c clock) span(from, to float64, bytes int64, bits float64) string {
	mult, unit := c.spanUnit()
	f := "%6.2f-%-6.2f %s  %s  %s"
	if mult != 1 {
		f = "%6.1f-%-6.1f %s  %s  %s"
	}
	return fmt.Sprintf(f, from*mult, to*mult, unit, pad(formatBytes(float64(bytes)), 11), pad(formatBits(c.rate(bits)), 14))
}

func pad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat(" ", n-len(s)) + s
}

func printSummary(w io.Writer, c clock, d *Document) {
	e := &d.End
	fmt.Fprintln(w, separator)
	if c.label == "" {
		fmt.Fprintln(w, "[ ID] Interval           Transfer     Bitrate         Retr")
	} else {
		fmt.Fprintf(w, "[ ID] %-18s Transfer     %-15s Retr\n", c.head("Interval"), c.head("Bitrate"))
	}
	for i, s := range e.Streams {
		tag := streamTag(i+1, s.Role)
		fmt.Fprintf(w, "%s %s  %5d  sender\n", tag, c.span(s.Sender.Start, s.Sender.End, s.Sender.Bytes, s.Sender.BitsPerSecond), s.Sender.Retransmits)
		fmt.Fprintf(w, "%s %s         receiver\n", tag, c.span(s.Receiver.Start, s.Receiver.End, s.Receiver.Bytes, s.Receiver.BitsPerSecond))
	}
	sums := []struct {
		role       string
		sent, recv *Sum
	}{{"", &e.SumSent, &e.SumReceived}}
	if e.SumSentBidirReverse != nil {
		sums = []struct {
			role       string
			sent, recv *Sum
		}{{"TX-C", &e.SumSent, &e.SumReceived}, {"RX-C", e.SumSentBidirReverse, e.SumReceivedBidirReverse}}
	}
	if len(e.Streams) > 1 {
		for _, x := range sums {
			fmt.Fprintf(w, "%s %s  %5d  sender\n", sumTag(x.role), c.span(x.sent.Start, x.sent.End, x.sent.Bytes, x.sent.BitsPerSecond), x.sent.Retransmits)
			fmt.Fprintf(w, "%s %s         receiver\n", sumTag(x.role), c.span(x.recv.Start, x.recv.End, x.recv.Bytes, x.recv.BitsPerSecond))
		}
	}
	fmt.Fprintln(w)
	for i, s := range e.Streams {
		fct := "-"
		if s.FCTNs > 0 {
			fct = c.fct(s.FCTNs, d.Start.IdealFCTNs)
		}
		line := fmt.Sprintf("%s %s  FCT %s  retransmitted %d packet%s (%s)  timeouts %d  NAKs %d  CNPs %d",
			streamTag(i+1, s.Role), s.State, fct, s.Sender.Retransmits, plural(int(min(s.Sender.Retransmits, 2))), strings.TrimSpace(formatBytes(float64(s.Sender.RetxBytes))), s.Timeouts, s.NAKs, s.CNPs)
		if s.Injected > 0 {
			line += fmt.Sprintf("  injected losses %d", s.Injected)
		}
		if s.Failure != "" {
			line += "  (" + s.Failure + ")"
		}
		fmt.Fprintln(w, line)
	}
	for _, x := range sums {
		r := x.recv
		if d.Start.LinkRateBps > 0 && r.Seconds > 0 && r.LinkUtilization > 0 {
			links := r.WireBitsPerSecond / r.LinkUtilization / float64(d.Start.LinkRateBps)
			what := "the link"
			if links > 1.5 {
				what = fmt.Sprintf("%.0f links", links)
			}
			label := "Link"
			if x.role != "" {
				label = x.role + " link"
			}
			f := "%s %s: goodput %s, on the wire with headers %s, %.1f%% of %s\n"
			if c.label != "" {
				// "In the target: link 100 Gbits/sec, goodput ...".
				in := map[string]string{"target": "In the target: ", "lab": "In the lab: "}[c.label]
				label = in + strings.Replace(label, "Link", "link", 1)
				f = "%s %s, goodput %s, on the wire with headers %s, %.1f%% of %s\n"
			}
			fmt.Fprintf(w, f, label,
				trim(formatBits(c.rate(float64(d.Start.LinkRateBps)))), trim(formatBits(c.rate(r.BitsPerSecond))),
				trim(formatBits(c.rate(r.WireBitsPerSecond))), 100*r.LinkUtilization, what)
		}
	}
	if d.Start.TestStart.Omit > 0 {
		fmt.Fprintf(w, "The first %s are omitted from this summary\n", c.given(d.Start.TestStart.Omit))
	}
	injected := ""
	if e.Injected > 0 {
		injected = fmt.Sprintf(", injected losses %d", e.Injected)
	}
	fmt.Fprintf(w, "Retransmits %d (%s), timeouts %d, NAKs %d, CNPs %d, failures %d%s\n",
		e.Retransmits, strings.TrimSpace(formatBytes(float64(e.RetxBytes))), e.Timeouts, e.NAKs, e.CNPs, e.Failures, injected)
	if h := e.Health; h != nil {
		fmt.Fprintln(w, strings.ToUpper(h.Short()[:1])+h.Short()[1:])
	}
}

// formatBytes is iperf3's adaptive byte count ("11.9 MBytes").
func formatBytes(v float64) string { return units.IperfBytes(v) }

// formatBits is iperf3's adaptive bit rate ("99.8 Mbits/sec").
func formatBits(v float64) string { return units.IperfBits(v) }
