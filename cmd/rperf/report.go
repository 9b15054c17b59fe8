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
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/bcfab/bcfab/api"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/transport"
	"github.com/bcfab/bcfab/units"
)

// Document is rperf's JSON output (-J), shaped like iperf3's.
type Document struct {
	Start     Start      `json:"start"`
	Intervals []Interval `json:"intervals"`
	End       End        `json:"end"`
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
	Duration   float64 `json:"duration"` // seconds; 0 with bytes
	Interval   float64 `json:"interval"`
	Order      string  `json:"order,omitempty"`
}

// StreamInfo is one flow (QP) as started.
type StreamInfo struct {
	ID       int    `json:"id"`
	QP       uint32 `json:"qp"`
	SPort    uint16 `json:"sport"`
	Port     string `json:"port"`
	Queue    string `json:"queue"`
	Order    string `json:"order"`
	StartPSN uint32 `json:"start_psn"`
}

// Interval is one reporting interval: every stream and their sum.
type Interval struct {
	Streams []IntervalStream `json:"streams"`
	Sum     IntervalStream   `json:"sum"`
}

// IntervalStream is a stream's (or the sum's) interval. Times are seconds
// since the test started.
type IntervalStream struct {
	ID            int     `json:"id,omitempty"`
	Start         float64 `json:"start"`
	End           float64 `json:"end"`
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   uint64  `json:"retransmits"`
	RetxBytes     uint64  `json:"retx_bytes"`
	CNPs          uint64  `json:"cnps"`
	RateBps       float64 `json:"rate_bps,omitempty"` // pacing rate at the end (DCQCN's Rc)
}

// End is the summary.
type End struct {
	Streams     []EndStream `json:"streams"`
	SumSent     Sum         `json:"sum_sent"`
	SumReceived Sum         `json:"sum_received"`
	Retransmits uint64      `json:"retransmits"`
	RetxBytes   uint64      `json:"retx_bytes"`
	Timeouts    uint64      `json:"timeouts"`
	NAKs        uint64      `json:"naks"`
	CNPs        uint64      `json:"cnps"`
	Failures    int         `json:"failures"`
	// Health is the emulation's over the test: every daemon of the lab,
	// not only this path's (absent when rperf was given --socket alone).
	Health *lab.Health `json:"emulation_health,omitempty"`
}

// EndStream is one flow's summary.
type EndStream struct {
	ID       int    `json:"id"`
	QP       uint32 `json:"qp"`
	Sender   Sum    `json:"sender"`
	Receiver Sum    `json:"receiver"`
	FCTNs    int64  `json:"fct_ns"`
	Timeouts uint64 `json:"timeouts"`
	NAKs     uint64 `json:"naks"`
	CNPs     uint64 `json:"cnps"`
	State    string `json:"state"`
	Failure  string `json:"failure,omitempty"`
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
}

// snapshot is the flows at one moment (Unix ns).
type snapshot struct {
	at    int64
	flows []api.RDMAFlow
}

// intervalOf is what happened between snapshots a and b, labelled from
// from to to (ns since t0).
func intervalOf(a, b snapshot, from, to float64) Interval {
	var iv Interval
	secs := float64(b.at-a.at) / 1e9
	for i, f := range b.flows {
		p := a.flows[i]
		s := IntervalStream{ID: f.ID, Start: from, End: to, Seconds: secs,
			Bytes: f.AckedBytes - p.AckedBytes, Retransmits: f.RetxPackets - p.RetxPackets,
			RetxBytes: f.RetxBytes - p.RetxBytes, CNPs: f.CNPs - p.CNPs, RateBps: f.RateBps}
		s.BitsPerSecond = bps(s.Bytes, secs)
		iv.Streams = append(iv.Streams, s)
		iv.Sum.Bytes += s.Bytes
		iv.Sum.Retransmits += s.Retransmits
		iv.Sum.RetxBytes += s.RetxBytes
		iv.Sum.CNPs += s.CNPs
	}
	iv.Sum.Start, iv.Sum.End, iv.Sum.Seconds = from, to, secs
	iv.Sum.BitsPerSecond = bps(iv.Sum.Bytes, secs)
	return iv
}

func bps(bytes int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(bytes) * 8 / secs
}

// endOf summarises the final state of flows, with times from t0 (Unix
// ns) and the link's rate.
func endOf(flows []api.RDMAFlow, t0, linkBps int64) End {
	var e End
	rel := func(ns int64) float64 { return float64(ns-t0) / 1e9 }
	first, last := int64(math.MaxInt64), int64(0)
	var wire float64
	ports := map[int]bool{}
	for _, f := range flows {
		fs, fe := f.FirstNs, f.EndNs
		if fs == 0 {
			fs = f.StartNs
		}
		if fe == 0 {
			fe = fs
		}
		es := EndStream{ID: f.ID, QP: f.QP, FCTNs: f.FCTNs, Timeouts: f.Timeouts, NAKs: f.NAKs, CNPs: f.CNPs,
			State: f.State, Failure: f.Failure}
		es.Sender = Sum{Start: rel(fs), End: rel(fe), Seconds: float64(fe-fs) / 1e9, Bytes: int64(f.Bytes),
			Packets: f.Packets, Retransmits: f.RetxPackets, RetxBytes: f.RetxBytes}
		es.Sender.BitsPerSecond = bps(es.Sender.Bytes, es.Sender.Seconds)
		es.Receiver = Sum{Start: rel(fs), End: rel(fe), Seconds: float64(fe-fs) / 1e9, Bytes: f.AckedBytes}
		es.Receiver.BitsPerSecond = bps(f.AckedBytes, es.Receiver.Seconds)
		w := wireBytes(f.AckedBytes, f.MTU)
		if es.Receiver.Seconds > 0 {
			es.Receiver.WireBitsPerSecond = w * 8 / es.Receiver.Seconds
			if linkBps > 0 {
				es.Receiver.LinkUtilization = es.Receiver.WireBitsPerSecond / float64(linkBps)
			}
		}
		e.Streams = append(e.Streams, es)
		first, last = min(first, fs), max(last, fe)
		ports[f.Port] = true
		wire += w
		e.SumSent.Bytes += es.Sender.Bytes
		e.SumSent.Packets += f.Packets
		e.SumSent.Retransmits += f.RetxPackets
		e.SumSent.RetxBytes += f.RetxBytes
		e.SumReceived.Bytes += f.AckedBytes
		e.Retransmits += f.RetxPackets
		e.RetxBytes += f.RetxBytes
		e.Timeouts += f.Timeouts
		e.NAKs += f.NAKs
		e.CNPs += f.CNPs
		if f.State != api.RDMADone {
			e.Failures++
		}
	}
	if len(flows) == 0 {
		return e
	}
	for _, s := range []*Sum{&e.SumSent, &e.SumReceived} {
		s.Start, s.End, s.Seconds = rel(first), rel(last), float64(last-first)/1e9
		s.BitsPerSecond = bps(s.Bytes, s.Seconds)
	}
	if e.SumReceived.Seconds > 0 {
		e.SumReceived.WireBitsPerSecond = wire * 8 / e.SumReceived.Seconds
		if linkBps > 0 {
			e.SumReceived.LinkUtilization = e.SumReceived.WireBitsPerSecond / float64(linkBps*int64(len(ports)))
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

// Text output, as iperf3 lays it out.

const separator = "- - - - - - - - - - - - - - - - - - - - - - - - -"

func printHeader(w io.Writer, d *Document) {
	s := &d.Start
	ts := &s.TestStart
	dc := "on"
	if !ts.DCQCN {
		dc = "off"
	}
	what := fmt.Sprintf("%s per flow", formatBytes(float64(ts.Bytes)))
	if ts.Bytes == 0 {
		what = fmt.Sprintf("%g seconds", ts.Duration)
	}
	fmt.Fprintf(w, "Connecting to host %s (%s) from %s over RoCEv2: mode %s, DCQCN %s, MTU %d, %d flow%s, %s\n",
		s.ConnectingTo.Host, s.ConnectingTo.Server, nodeName(s), ts.Mode, dc, ts.MTU, ts.NumStreams, plural(ts.NumStreams), what)
	for _, st := range s.Streams {
		fmt.Fprintf(w, "[%3d] QP 0x%06x, UDP source port %d, leaves by %s (queue %s), level order %s\n",
			st.ID, st.QP, st.SPort, st.Port, st.Queue, st.Order)
	}
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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func printIntervalHeader(w io.Writer) {
	fmt.Fprintln(w, "[ ID] Interval           Transfer     Bitrate         Retr   CNPs  Rate")
}

func printInterval(w io.Writer, iv *Interval, sum bool) {
	for _, s := range iv.Streams {
		fmt.Fprintf(w, "[%3d] %s  %5d  %5d  %s\n", s.ID, span(s.Start, s.End, s.Bytes, s.BitsPerSecond), s.Retransmits, s.CNPs, formatBits(s.RateBps))
	}
	if sum {
		s := &iv.Sum
		fmt.Fprintf(w, "[SUM] %s  %5d  %5d\n", span(s.Start, s.End, s.Bytes, s.BitsPerSecond), s.Retransmits, s.CNPs)
	}
}

// span is iperf3's "  0.00-1.00   sec  11.9 MBytes  99.8 Mbits/sec".
func span(from, to float64, bytes int64, bits float64) string {
	return fmt.Sprintf("%6.2f-%-6.2f sec  %s  %s", from, to, pad(formatBytes(float64(bytes)), 11), pad(formatBits(bits), 14))
}

func pad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat(" ", n-len(s)) + s
}

func printSummary(w io.Writer, d *Document) {
	e := &d.End
	fmt.Fprintln(w, separator)
	fmt.Fprintln(w, "[ ID] Interval           Transfer     Bitrate         Retr")
	for _, s := range e.Streams {
		fmt.Fprintf(w, "[%3d] %s  %5d  sender\n", s.ID, span(s.Sender.Start, s.Sender.End, s.Sender.Bytes, s.Sender.BitsPerSecond), s.Sender.Retransmits)
		fmt.Fprintf(w, "[%3d] %s         receiver\n", s.ID, span(s.Receiver.Start, s.Receiver.End, s.Receiver.Bytes, s.Receiver.BitsPerSecond))
	}
	if len(e.Streams) > 1 {
		fmt.Fprintf(w, "[SUM] %s  %5d  sender\n", span(e.SumSent.Start, e.SumSent.End, e.SumSent.Bytes, e.SumSent.BitsPerSecond), e.SumSent.Retransmits)
		fmt.Fprintf(w, "[SUM] %s         receiver\n", span(e.SumReceived.Start, e.SumReceived.End, e.SumReceived.Bytes, e.SumReceived.BitsPerSecond))
	}
	fmt.Fprintln(w)
	for _, s := range e.Streams {
		fct := "-"
		if s.FCTNs > 0 {
			fct = time.Duration(s.FCTNs).Round(time.Microsecond).String()
		}
		line := fmt.Sprintf("[%3d] %s  FCT %s  retransmitted %d packets (%s)  timeouts %d  NAKs %d  CNPs %d",
			s.ID, s.State, fct, s.Sender.Retransmits, strings.TrimSpace(formatBytes(float64(s.Sender.RetxBytes))), s.Timeouts, s.NAKs, s.CNPs)
		if s.Failure != "" {
			line += "  (" + s.Failure + ")"
		}
		fmt.Fprintln(w, line)
	}
	r := &e.SumReceived
	if d.Start.LinkRateBps > 0 && r.Seconds > 0 && r.LinkUtilization > 0 {
		links := r.WireBitsPerSecond / r.LinkUtilization / float64(d.Start.LinkRateBps)
		what := "the link"
		if links > 1.5 {
			what = fmt.Sprintf("%.0f links", links)
		}
		fmt.Fprintf(w, "Link %s: goodput %s, on the wire with headers %s, %.1f%% of %s\n",
			strings.TrimSpace(formatBits(float64(d.Start.LinkRateBps))), strings.TrimSpace(formatBits(r.BitsPerSecond)),
			strings.TrimSpace(formatBits(r.WireBitsPerSecond)), 100*r.LinkUtilization, what)
	}
	fmt.Fprintf(w, "Retransmits %d (%s), timeouts %d, NAKs %d, CNPs %d, failures %d\n",
		e.Retransmits, strings.TrimSpace(formatBytes(float64(e.RetxBytes))), e.Timeouts, e.NAKs, e.CNPs, e.Failures)
	if h := e.Health; h != nil {
		fmt.Fprintln(w, strings.ToUpper(h.Short()[:1])+h.Short()[1:])
	}
}

// formatBytes is iperf3's adaptive byte count ("11.9 MBytes").
func formatBytes(v float64) string { return units.IperfBytes(v) }

// formatBits is iperf3's adaptive bit rate ("99.8 Mbits/sec").
func formatBits(v float64) string { return units.IperfBits(v) }
