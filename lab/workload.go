package lab

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/fabric/topo"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/wire/transport"
)

// FlowCC is the congestion control of a run's flows on a lab whose cc is
// labCC (empty: dcqcn).
func (o WorkloadOptions) FlowCC(labCC string) (transport.CC, error) {
	lab := transport.CCDCQCN
	if labCC != "" {
		c, err := transport.ParseCC(labCC)
		if err != nil {
			return c, err
		}
		lab = c
	}
	if o.CC == "" {
		if o.NoDCQCN {
			return transport.CCNone, nil
		}
		return lab, nil
	}
	c, err := transport.ParseCC(o.CC)
	switch {
	case err != nil:
		return c, err
	case o.NoDCQCN && c.Rate():
		return c, fmt.Errorf("cc %v with DCQCN off", c)
	case (c == transport.CCDCTCP || c == transport.CCHPCC) && c != lab:
		return c, fmt.Errorf("cc %v: the lab's egresses run cc %v (%s needs a lab up with --cc %v)", c, lab, c, c)
	case c.Rate() && lab == transport.CCDCTCP:
		return c, fmt.Errorf("cc %v: the lab's receivers echo marks for DCTCP and send no CNP", c)
	}
	return c, nil
}

// A workload run (RunWorkload) drives the RDMA NICs of an up lab with the
// flows of a workload.Config: each flow is started at its scheduled time
// by its source's hostd (POST /rdma), the NICs are polled for the flows'
// outcomes, and the run ends when every flow has ended or the drain time
// after the last start has passed; flows still running then are stopped
// and counted incomplete. The report holds a record per flow (FCT from
// the NIC, ideal FCT from the lab's link rate, MTU and path length), their
// summary, what the fabric did meanwhile (drops, pauses, ECN marks, CNPs)
// and the run's emulation health.

const (
	// drainFactor is the slowdown of the slowest flow the default drain
	// time waits for. Under WebSearch at load 0.5 with incasts, flows of
	// tens of MB finish at slowdowns up to about 7 (docs/BENCHMARKS.md,
	// "Scale model"); 10 leaves them room.
	drainFactor = 10
	// workloadLead is the time between starting the run and its first
	// possible flow start, for the starters to hand the first flows to
	// their NICs.
	workloadLead = 250 * time.Millisecond
	// wallStepShown is the smallest step of the wall clock during a run
	// its report names (WorkloadReport.WallStep), and wallReadGap the
	// longest read of the two clocks that measures one: the reading's
	// error is half of it.
	wallStepShown = 100 * time.Microsecond
	wallReadGap   = 20 * time.Microsecond
)

// WorkloadOptions describe a workload run on an up lab.
type WorkloadOptions struct {
	// Config is the workload. Its Hosts, LinkRate and LinksPerHost are
	// the lab's (servers, link rate, k+1 links) when zero.
	Config workload.Config
	// Mode is the flows' loss recovery: lossless (default), gbn or irn.
	Mode string
	// NoDCQCN turns DCQCN off (on by default; it only acts on a lab
	// that marks ECN, lab up --ecn).
	NoDCQCN bool
	// CC is the flows' congestion control (hpcc, dctcp, dcqcn, dcqcn-win, dcqcn-mlx or none;
	// empty: the lab's cc, none with NoDCQCN). dctcp and hpcc need the
	// lab's egresses to do their part: a lab up with that cc.
	CC string
	// MTU is the flows' payload per packet (0: api.DefaultRDMAMTU).
	MTU int
	// Drain is how long the run waits for flows after the last start
	// (0: DefaultDrain, the largest of the model's least drain time, the
	// target's 2 ms x D, Config.Duration and drainFactor times the ideal
	// FCT of the schedule's slowest flow).
	Drain time.Duration
	// Interval is the time between polls, queue samples and progress
	// reports (0: the model's queue sample interval, the target's 200 µs
	// x D, at least scale.MinSample).
	Interval time.Duration
	// Limits judge the run's emulation health.
	Limits HealthLimits
	// Progress, when not nil, is called after every poll.
	Progress func(WorkloadProgress)
	// Flows, when not nil, is the schedule to run in place of the one
	// Config generates (Config still gives the hosts, and its Duration
	// the window the starts fall in): a hand-made set of flows, as the
	// conformance checks run. Their IDs are their indices.
	Flows []workload.Flow
	// FlowSeries samples every running flow's acknowledged bytes at
	// every poll (WorkloadReport.FlowSeries): the rates over time that
	// a fair-share check reads. Off by default, as a workload's
	// thousands of flows would make the report large.
	FlowSeries bool
	// PortSeries samples every port's transmitted and queued bytes at
	// every queue sample (WorkloadReport.PortSeries): each link's
	// utilisation and each port's queue over time. Off by default.
	PortSeries bool
}

// DefaultDrain is the drain time of a run of the given duration and
// flows under model m: at least the model's least drain time (the
// target's x D) and the duration, and long enough for its slowest flow
// to finish at 1/drainFactor of its ideal rate after the last start.
// A run ends as soon as its last flow does, so the drain costs time only
// when flows never end (a deadlock).
func DefaultDrain(m scale.Model, duration time.Duration, flows []workload.Flow, ideal workload.IdealFunc) time.Duration {
	d := max(m.Runner().DrainMin, duration)
	for _, f := range flows {
		d = max(d, drainFactor*ideal(f.Src, f.Dst, f.Size))
	}
	return d
}

// sampleDue says whether a run's tick at at, of a ticker of the given
// period, takes the run's sample, the last one taken at the tick last
// (or the run's start). The ticks' own times are compared, not when a
// tick's polls ended, and a tick up to half a period short of the
// interval counts: a run samples every interval, rounded to whole
// periods, however long each tick's work takes. Compared with the end of
// the last sample's work, a tick as long as the interval came a little
// short each time and a run sampled every second tick.
func sampleDue(at, last time.Time, interval, period time.Duration) bool {
	return at.Sub(last) >= interval-period/2
}

// goodput prints a measured rate; unlike a link rate, 0 is just 0.
func goodput(bps float64) string {
	if bps < 1 {
		return "0 bit/s"
	}
	return FormatRate(uint64(bps))
}

// sizeText prints a byte count with the unit it was most likely given in:
// binary when a whole number of KiB or MiB, else decimal (1 MB, 64 kB).
func sizeText(n int64) string {
	switch {
	case n >= 1<<10 && n%(1<<10) == 0:
		return FormatSize(int(n))
	case n >= 1e6 && n%1e6 == 0:
		return fmt.Sprintf("%d MB", n/1e6)
	case n >= 1e3 && n%1e3 == 0:
		return fmt.Sprintf("%d kB", n/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// WorkloadReport is the outcome of a workload run.
type WorkloadReport struct {
	Lab      string `json:"lab"`
	Topology string `json:"topology"`
	RateBps  uint64 `json:"rate_bps"`
	// Rates are the levels' rates where they differ (Spec.Rates).
	Rates []uint64 `json:"rates,omitempty"`
	FC    string   `json:"fc"`
	ECN   bool     `json:"ecn"`
	// The workload: CDF name, load and its basis, duration, seed,
	// incast and pattern, as run.
	CDF      string        `json:"cdf,omitempty"`
	Load     float64       `json:"load"`
	Basis    string        `json:"basis"`
	Duration time.Duration `json:"duration_ns"`
	Seed     uint64        `json:"seed"`
	// Pairing is the background's (uniform when empty), Perm its
	// permutation of the hosts.
	Pairing workload.Pairing  `json:"pairing,omitempty"`
	Perm    []int             `json:"perm,omitempty"`
	Incast  *workload.Incast  `json:"incast,omitempty"`
	Pattern *workload.Pattern `json:"pattern,omitempty"`
	Long    *workload.Long    `json:"long,omitempty"`
	// HandMade: the schedule was given (WorkloadOptions.Flows), not
	// generated from the load, incast, pattern and seed above.
	HandMade bool           `json:"hand_made,omitempty"`
	Mode     transport.Mode `json:"mode"`
	DCQCN    bool           `json:"dcqcn"`
	MTU      int            `json:"mtu"`

	Started time.Time `json:"started"`
	// Elapsed runs from the run's start to its end: every flow ended, or
	// the drain time passed. It and Duration are lab time; TargetElapsed
	// and TargetDuration the same on the target's clock (/ D).
	Elapsed        time.Duration `json:"elapsed_ns"`
	TargetElapsed  time.Duration `json:"elapsed_target_ns,omitempty"`
	TargetDuration time.Duration `json:"duration_target_ns,omitempty"`
	// Wall is the wall time of the whole run (the lab's clock), from
	// RunWorkload's first look at the lab to its report: the checks,
	// the samples of the emulation health, the flows and their drain.
	// WallPerTargetMs is that per ms of TargetElapsed, in seconds
	// (scale.WallPerTargetMs): what a ms of the target cost, D x 1 ms at
	// the least.
	Wall            time.Duration `json:"wall_ns,omitempty"`
	WallPerTargetMs float64       `json:"wall_s_per_target_ms,omitempty"`
	// StartLag is how late the flows started against their schedule (the
	// starters' and NICs' scheduling on a busy machine; a flow that waits
	// for a group is due when the group's first phase has ended, if
	// later than its start); it does not enter FCTs, which the NICs
	// measure from the first byte sent.
	StartLag workload.Dist[time.Duration] `json:"start_lag_ns"`
	// Waits is how long the switches' frames waited in their queues
	// (nil: the switches do not count it).
	Waits *QueueWaits `json:"switch_waits,omitempty"`
	// WallStep is the largest step of the machine's wall clock against
	// its monotonic clock seen at the run's polls (a time service setting
	// the clock). The flows' times, the lab's and the NICs', are on the
	// monotonic clock and do not move with it; Unix times in the
	// daemons' reports do.
	WallStep time.Duration `json:"wall_step_ns,omitempty"`
	// StartErrors counts flows their NIC refused to start, FirstError
	// says why the first was; those flows count as failed.
	StartErrors int    `json:"start_errors,omitempty"`
	FirstError  string `json:"first_error,omitempty"`
	// Aborted counts the flows stopped at the end of the drain time.
	Aborted int `json:"aborted,omitempty"`
	// Stalls are the queues the nodes' watchdogs reported stalled when
	// the drain time ended with flows still running (taken before they
	// were stopped), and Cycle those of them that pause each other
	// around a loop of links: a deadlock, which is why those flows never
	// end. Both are empty when every flow ended in time.
	Stalls []Stall `json:"stalls,omitempty"`
	Cycle  []Stall `json:"cycle,omitempty"`

	// QueueNodes names the columns of Queues: every node of the lab.
	// Queues is a time series, one row per progress interval, of the
	// bytes each node held in its egress queues (all ports).
	QueueNodes []string   `json:"queue_nodes"`
	Queues     []QueueRow `json:"queues"`
	// FlowSeries, with WorkloadOptions.FlowSeries, is every flow's
	// acknowledged bytes at every poll that found it running, and once
	// more when it ended, in the order of the polls.
	FlowSeries []FlowSample `json:"flow_series,omitempty"`
	// PortSeries, with WorkloadOptions.PortSeries, is every port of
	// every node at every queue sample, in the order of the samples and
	// of the nodes' ports.
	PortSeries []PortPoint `json:"port_series,omitempty"`

	// Model is the scale model the lab ran (the target and D); Target is
	// Summary in the target's time and rates (FCTs and the duration / D,
	// goodput x D), which the report prints. Summary and Records keep
	// the lab's own times (records also give the target's).
	Model   scale.Model           `json:"model"`
	Records []workload.FlowRecord `json:"records"`
	Summary workload.Summary      `json:"summary"`
	Target  workload.Summary      `json:"target_summary"`
	Fabric  FabricCounters        `json:"fabric"`
	Health  Health                `json:"health"`
}

// Valid reports whether the run's results stand: its emulation health is
// valid.
func (r *WorkloadReport) Valid() bool { return r.Health.Valid }

// QueueRow is one sample of the queue series of a run.
type QueueRow struct {
	// Elapsed is lab time since the run started, TargetElapsed the
	// same on the target's clock.
	Elapsed       time.Duration `json:"elapsed_ns"`
	TargetElapsed time.Duration `json:"elapsed_target_ns,omitempty"`
	Bytes         []uint64      `json:"bytes"` // by QueueNodes; 0 for a node that did not answer
	// PortMax is, by QueueNodes, the bytes queued at the node's fullest
	// egress port: the queue one frame waits behind, where Bytes sums
	// the node's ports.
	PortMax []uint64 `json:"port_max,omitempty"`
	// CNPs are the CNPs the flows' senders had received in all, by the
	// flows' last poll (the CNP series: its differences are the CNPs of
	// each interval).
	CNPs uint64 `json:"cnps"`
}

// PortPoint is one port's counters, or one of its egress queues', at
// one queue sample. Elapsed is when the node copied them
// (api.Stats.CountedUnixNs, between two of its steps) as lab time since
// the run started, so that two samples' difference in TxBytes over their
// difference in Elapsed is the link's rate between them (the queue's
// share of it), whatever the node's place in the sample's reads.
type PortPoint struct {
	Node string `json:"node"`
	Port string `json:"port"`
	// Queue names the egress queue (api.QueueStats.Name) whose bytes
	// dequeued (TxBytes) and queued (QueueBytes) the point gives; empty
	// for the port's own point, its bytes transmitted and queued.
	Queue         string        `json:"queue,omitempty"`
	Elapsed       time.Duration `json:"elapsed_ns"`
	TargetElapsed time.Duration `json:"elapsed_target_ns,omitempty"`
	TxBytes       uint64        `json:"tx_bytes"`
	QueueBytes    uint64        `json:"queue_bytes"`
	RateBps       uint64        `json:"rate_bps"` // the lab's link rate (0: unshaped)
}

// FlowSample is what a poll learnt of one flow: its acknowledged bytes
// at a time since the run's start, on the lab's clock and the target's.
type FlowSample struct {
	Flow          int           `json:"flow"` // index in the schedule, FlowRecord.ID
	Elapsed       time.Duration `json:"elapsed_ns"`
	TargetElapsed time.Duration `json:"elapsed_target_ns,omitempty"`
	Acked         int64         `json:"acked"`
}

// QueuePeakSample is the largest queue of a series.
type QueuePeakSample struct {
	Node    string
	Elapsed time.Duration
	Bytes   uint64
}

// QueuePeak is the largest node queue in r's series.
func (r *WorkloadReport) QueuePeak() QueuePeakSample {
	var p QueuePeakSample
	for _, row := range r.Queues {
		for i, b := range row.Bytes {
			if b > p.Bytes && i < len(r.QueueNodes) {
				p = QueuePeakSample{Node: r.QueueNodes[i], Elapsed: row.Elapsed, Bytes: b}
			}
		}
	}
	return p
}

// WriteQueuesCSV writes r's queue series as CSV: the sample's time into
// the run on the target's clock (elapsed_target_us; empty for a lab
// without a model) and on the lab's (elapsed_lab_s), the CNPs, then the
// bytes queued at every node (bytes are the same in both).
func (r *WorkloadReport) WriteQueuesCSV(w io.Writer) error {
	var b strings.Builder
	b.WriteString("elapsed_target_us,elapsed_lab_s,cnps," + strings.Join(r.QueueNodes, ",") + "\n")
	for _, row := range r.Queues {
		fmt.Fprintf(&b, "%s,%.3f,%d", r.targetMicros(row.Elapsed), row.Elapsed.Seconds(), row.CNPs)
		for _, v := range row.Bytes {
			fmt.Fprintf(&b, ",%d", v)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSeriesCSV writes r's flow series (WorkloadOptions.FlowSeries) as
// CSV: a row per flow and poll, the flow's id in the schedule, the time
// on the target's clock (µs; empty on a native lab) and the lab's (s),
// and the bytes its receiver had acknowledged.
func (r *WorkloadReport) WriteSeriesCSV(w io.Writer) error {
	var b strings.Builder
	b.WriteString("flow,elapsed_target_us,elapsed_lab_s,acked_bytes\n")
	for _, s := range r.FlowSeries {
		fmt.Fprintf(&b, "%d,%s,%.6f,%d\n", s.Flow, r.targetMicros(s.Elapsed), s.Elapsed.Seconds(), s.Acked)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sampleTimeout bounds a queue sample's wait for each node's counters.
const sampleTimeout = 2 * time.Second

// countedElapsed is when a node copied its counters (countedUnix, on the
// wall clock) as time since the run's start, given the sample's start
// both ways (elapsed since the run's start and unix, read together): the
// counters' own instant, not the sample's. A node that gave none, or an
// instant further from the sample's than a sample may take (a step of
// the wall clock between the two readings), is taken at the sample's.
func countedElapsed(elapsed time.Duration, unix, countedUnix int64) time.Duration {
	d := time.Duration(countedUnix - unix)
	if countedUnix == 0 || d < -sampleTimeout || d > sampleTimeout {
		return elapsed
	}
	return elapsed + d
}

// WritePortsCSV writes r's port series (WorkloadOptions.PortSeries) as
// CSV: a row per port and sample, then one per egress queue of the
// port: the node, port and queue (empty on the port's row), the time
// the node copied its counters on the target's clock (µs; empty on a
// native lab) and the lab's (s), the bytes the port transmitted (the
// queue dequeued) so far and the bytes it holds.
func (r *WorkloadReport) WritePortsCSV(w io.Writer) error {
	var b strings.Builder
	b.WriteString("node,port,queue,elapsed_target_us,elapsed_lab_s,tx_bytes,queue_bytes\n")
	for _, s := range r.PortSeries {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%.6f,%d,%d\n", s.Node, s.Port, s.Queue, r.targetMicros(s.Elapsed), s.Elapsed.Seconds(), s.TxBytes, s.QueueBytes)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// targetMicros is lab time d on the target's clock in µs, as the CSV
// series write it; empty on a native lab.
func (r *WorkloadReport) targetMicros(d time.Duration) string {
	if r.Model.D <= 0 {
		return ""
	}
	return strconv.FormatFloat(float64(r.Model.TargetTime(d))/float64(time.Microsecond), 'f', 3, 64)
}

// QueueWaits is how long the frames the switches sent waited in their
// data queues during a run, every switch port together, each frame from
// its arrival in the model to the start of its first bit on the link
// (the switches' GET /waits, taken before and after the run): the
// per-packet queueing delay of a switch, in the lab's time (a target's
// is that over D). The quantiles are read off log-linear buckets, within
// 6.25% of the frames' own.
type QueueWaits struct {
	Frames uint64        `json:"frames"`
	Mean   time.Duration `json:"mean_ns"`
	P50    time.Duration `json:"p50_ns"`
	P99    time.Duration `json:"p99_ns"`
	P999   time.Duration `json:"p999_ns"`
	// MaxBound bounds the longest wait from above: the top edge of its
	// bucket.
	MaxBound time.Duration `json:"max_bound_ns"`
	// Early counts the frames whose link started them before they
	// arrived (counted as waiting 0): a port that catches up on time its
	// worker lost may start a frame that arrived meanwhile that soon.
	// EarlyMean is by how much, on average.
	Early     uint64        `json:"early,omitempty"`
	EarlyMean time.Duration `json:"early_mean_ns,omitempty"`
	// Restarted names the switches left out because they restarted
	// during the run (their counts began again).
	Restarted []string `json:"restarted,omitempty"`
}

// switchWaits is what the ports of the switches named in sw counted
// between two sets of waits (by node); nil when no switch is in both.
func switchWaits(before, after map[string]*api.Waits, sw map[string]bool) (*QueueWaits, error) {
	var sum queues.DelayHist
	out := &QueueWaits{}
	found := false
	for node, a := range after {
		b, ok := before[node]
		if !ok || !sw[node] {
			continue
		}
		if a.StartedUnixNs != b.StartedUnixNs || len(a.Ports) != len(b.Ports) {
			out.Restarted = append(out.Restarted, node)
			continue
		}
		for i := range a.Ports {
			y, err := a.Ports[i].Hist()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", node, err)
			}
			x, err := b.Ports[i].Hist()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", node, err)
			}
			if !y.Sub(x) {
				return nil, fmt.Errorf("%s port %s: waits counted fewer frames after the run than before", node, a.Ports[i].Name)
			}
			sum.Merge(y)
		}
		found = true
	}
	if !found {
		return nil, nil
	}
	slices.SortFunc(out.Restarted, compareNodes)
	out.Frames = sum.N()
	out.Mean = time.Duration(sum.Mean())
	out.P50 = time.Duration(sum.Quantile(0.5))
	out.P99 = time.Duration(sum.Quantile(0.99))
	out.P999 = time.Duration(sum.Quantile(0.999))
	out.MaxBound = time.Duration(sum.MaxBound())
	if out.Early = sum.Early; out.Early > 0 {
		out.EarlyMean = time.Duration(sum.EarlyNs / int64(sum.Early))
	}
	return out, nil
}

// FabricCounters is what the fabric's nodes did during a run.
type FabricCounters struct {
	// Drops are the frames the emulator lost (PortStats.TotalDrops),
	// Injected those dropped on purpose (injected loss, links down).
	Drops    uint64 `json:"drops"`
	Injected uint64 `json:"injected"`
	// Pauses counts the pause signals sent (PortFC, PFC and BFC pauses,
	// every class), PausesRx those received, ECNMarks the frames marked
	// CE, CNPs those the senders received.
	Pauses   uint64 `json:"pauses"`
	PausesRx uint64 `json:"pauses_rx"`
	ECNMarks uint64 `json:"ecn_marks"`
	CNPs     uint64 `json:"cnps"`
	// Isolations counts congestion isolation's signals sent (ici, ci);
	// Isolated the flows its congestion roots isolated, TableFull the
	// isolations refused for want of a table entry, and ECNMarksCQ the
	// ECNMarks of the congested-flow queues (the isolated flows' marks;
	// the rest are the normal queues', the victims').
	Isolations uint64 `json:"isolations,omitempty"`
	Isolated   uint64 `json:"isolated,omitempty"`
	TableFull  uint64 `json:"table_full,omitempty"`
	ECNMarksCQ uint64 `json:"ecn_marks_cq,omitempty"`
	// FQShared counts the flows ideal-fq could not give a queue of their
	// own (its ports' fq_shared and fq_table_full): the run was no
	// longer Ideal-FQ for them.
	FQShared uint64 `json:"fq_shared,omitempty"`
	// Nodes lists the nodes with drops, pauses, marks or isolations.
	Nodes []NodeCounters `json:"nodes,omitempty"`
}

// NodeCounters is one node's share of FabricCounters.
type NodeCounters struct {
	Node       string `json:"node"`
	Drops      uint64 `json:"drops,omitempty"`
	Injected   uint64 `json:"injected,omitempty"`
	Pauses     uint64 `json:"pauses,omitempty"`
	PausesRx   uint64 `json:"pauses_rx,omitempty"`
	ECNMarks   uint64 `json:"ecn_marks,omitempty"`
	Isolations uint64 `json:"isolations,omitempty"`
	Isolated   uint64 `json:"isolated,omitempty"`
	TableFull  uint64 `json:"table_full,omitempty"`
	ECNMarksCQ uint64 `json:"ecn_marks_cq,omitempty"`
	FQShared   uint64 `json:"fq_shared,omitempty"`
}

// nodeCounters adds up a daemon's drop, pause and mark counters.
func nodeCounters(st *api.Stats) NodeCounters {
	n := NodeCounters{Node: st.Node}
	for i := range st.Ports {
		p := &st.Ports[i]
		n.Drops += p.TotalDrops()
		n.Injected += p.InjectedDrops()
		for k, v := range p.Signals {
			// PortFC and BFC count "pause" signals, PFC "xoff" frames.
			switch {
			case strings.HasPrefix(k, "tx_pause"), strings.HasPrefix(k, "tx_xoff"):
				n.Pauses += v
			case strings.HasPrefix(k, "rx_pause"), strings.HasPrefix(k, "rx_xoff"):
				n.PausesRx += v
			case k == "tx_isolate":
				n.Isolations += v
			case k == "ici_isolated":
				n.Isolated += v
			case k == "ici_table_full":
				n.TableFull += v
			case k == "fq_shared", k == "fq_table_full":
				n.FQShared += v
			}
		}
		_, ci := p.Signals["tx_isolate"]
		for _, q := range p.Queues {
			n.ECNMarks += q.ECNMarks
			if ci && q.Index == int(signaling.PCPCongested) {
				n.ECNMarksCQ += q.ECNMarks
			}
		}
	}
	return n
}

// fabricDelta is what the nodes counted between two sets of stats (by
// node); a node missing from either is left out.
func fabricDelta(before, after map[string]*api.Stats) FabricCounters {
	var f FabricCounters
	for node, a := range after {
		b, ok := before[node]
		if !ok {
			continue
		}
		x, y := nodeCounters(b), nodeCounters(a)
		d := NodeCounters{Node: node, Drops: y.Drops - x.Drops, Injected: y.Injected - x.Injected,
			Pauses: y.Pauses - x.Pauses, PausesRx: y.PausesRx - x.PausesRx, ECNMarks: y.ECNMarks - x.ECNMarks,
			Isolations: y.Isolations - x.Isolations, Isolated: y.Isolated - x.Isolated, TableFull: y.TableFull - x.TableFull,
			ECNMarksCQ: y.ECNMarksCQ - x.ECNMarksCQ, FQShared: y.FQShared - x.FQShared}
		f.Drops += d.Drops
		f.Injected += d.Injected
		f.Pauses += d.Pauses
		f.PausesRx += d.PausesRx
		f.ECNMarks += d.ECNMarks
		f.Isolations += d.Isolations
		f.Isolated += d.Isolated
		f.TableFull += d.TableFull
		f.ECNMarksCQ += d.ECNMarksCQ
		f.FQShared += d.FQShared
		if d.Drops+d.Injected+d.Pauses+d.PausesRx+d.ECNMarks+d.Isolations+d.FQShared > 0 {
			f.Nodes = append(f.Nodes, d)
		}
	}
	slices.SortFunc(f.Nodes, func(a, b NodeCounters) int { return compareNodes(a.Node, b.Node) })
	return f
}

// compareNodes orders node names as a lab lists them: servers by index,
// then switches by level and index.
func compareNodes(a, b string) int {
	key := func(s string) (kind, x, y int) {
		if _, err := fmt.Sscanf(s, "h%d", &x); err == nil {
			return 0, x, 0
		}
		if _, err := fmt.Sscanf(s, "s%d.%d", &x, &y); err == nil {
			return 1, x, y
		}
		return 2, 0, 0
	}
	ka, xa, ya := key(a)
	kb, xb, yb := key(b)
	switch {
	case ka != kb:
		return ka - kb
	case xa != xb:
		return xa - xb
	case ya != yb:
		return ya - yb
	}
	return strings.Compare(a, b)
}

// resolveWorkload fills in what c leaves to the lab of st: hosts, link
// rate, links per host, the incast's default period; it returns the
// lab's topology too.
func resolveWorkload(st *State, c workload.Config) (bcube.Topology, workload.Config, error) {
	return resolveSpecWorkload(st.Spec, c)
}

// resolveSpecWorkload is resolveWorkload for a lab of spec, up or not.
func resolveSpecWorkload(spec Spec, c workload.Config) (bcube.Topology, workload.Config, error) {
	// A graph fabric's servers see it as bcube.Star: one link each.
	t, err := spec.ServerTopology()
	if err != nil {
		return t, c, err
	}
	rates := spec.LevelRates()
	switch {
	case slices.Contains(rates, 0):
		return t, c, fmt.Errorf("lab %s has unshaped links: a workload needs a link rate (lab up --rate)", spec.Name)
	case c.Hosts == 0:
		c.Hosts = t.Servers()
	case c.Hosts != t.Servers():
		return t, c, fmt.Errorf("workload for %d hosts, lab %s has %d servers", c.Hosts, spec.Name, t.Servers())
	}
	if c.LinkRate == 0 {
		// The load counts the slowest level's links (package workload,
		// "Load"): with per-level rates, the rails of a Rail-only fabric.
		c.LinkRate = slices.Min(rates)
		if !spec.Uniform() && c.HostRate == 0 {
			for _, r := range rates {
				c.HostRate += r
			}
		}
	}
	if c.LinksPerHost == 0 {
		c.LinksPerHost = t.Levels()
	}
	if in := c.Incast; in != nil && in.Period == 0 {
		x := *in
		x.Period = workload.DefaultIncastPeriod(c.LinkRate, x.Senders, x.Size)
		c.Incast = &x
	}
	if p := c.Pattern; p != nil {
		x := p.Resolved(c.Hosts)
		c.Pattern = &x
	}
	if c.Pairing.IsPermutation() && c.Perm == nil {
		if spec.Fabric == nil {
			return t, c, fmt.Errorf("pairing %s: a permutation of racks needs a graph fabric (%s has no ToRs)", c.Pairing, spec.TopologyText())
		}
		if c.Perm, err = spec.Fabric.Permutation(c.Pairing, c.Seed); err != nil {
			return t, c, err
		}
	}
	return t, c, nil
}

// WorkloadSchedule is the schedule RunWorkload would run on lab name for
// c: the flows, and c as the lab completes it.
func WorkloadSchedule(runRoot, name string, c workload.Config) (workload.Config, []workload.Flow, error) {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return c, nil, err
	}
	return SpecSchedule(st.Spec, c)
}

// SpecSchedule is the schedule RunWorkload would run for c on a lab of
// spec, up or not (a lab file's, say): the flows, and c as such a lab
// completes it. The same spec and c give the same flows as
// WorkloadSchedule on the lab brought up from it.
func SpecSchedule(spec Spec, c workload.Config) (workload.Config, []workload.Flow, error) {
	_, c, err := resolveSpecWorkload(spec, c)
	if err != nil {
		return c, nil, err
	}
	flows, err := workload.Generate(c)
	return c, flows, err
}

// SpecFlows is SpecSchedule for a hand-made schedule (WorkloadOptions.Flows,
// as lab workload --flows reads it): c as a lab of spec completes it, and
// CheckFlows of flows against it. c gives no flows of its own: Load 0 and
// no incast, pattern or long flows.
func SpecFlows(spec Spec, c workload.Config, flows []workload.Flow) (workload.Config, error) {
	if c.Load > 0 || c.Incast != nil || c.Pattern != nil || c.Long != nil {
		return c, errors.New("workload: a hand-made schedule and a generated one (load, incast, pattern or long flows): give one")
	}
	_, c, err := resolveSpecWorkload(spec, c)
	if err != nil {
		return c, err
	}
	if len(flows) == 0 {
		return c, errors.New("workload: the schedule has no flows")
	}
	return c, CheckFlows(flows, c)
}

// WorkloadFlows is SpecFlows on lab name.
func WorkloadFlows(runRoot, name string, c workload.Config, flows []workload.Flow) (workload.Config, error) {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return c, err
	}
	return SpecFlows(st.Spec, c, flows)
}

// WorkloadWire is the Wire of the ideal FCTs on a lab's links: the
// slowest level's rate and the delay, the flows' MTU and RoCEv2's
// per-packet overhead as the shapers count it, and the last ACK's way
// back.
func WorkloadWire(spec Spec, mtu int) workload.Wire {
	return workload.Wire{
		Rate:     slices.Min(spec.LevelRates()),
		Payload:  mtu,
		Overhead: transport.DefaultWireOverhead,
		Prop:     spec.Model().LinkDelay(),
		Ack:      transport.DefaultWireOverhead + roce.AETHLen,
	}
}

// WorkloadIdeal is the ideal FCT of a flow alone on a lab of spec (t its
// topology): store and forward over its path at line rate
// (workload.IdealPath). The path of hosts whose addresses differ in d
// digits crosses two links of each of those d levels (into the level's
// switch and out of it), each at its level's rate; the slowest of them
// sets the ideal's rate, whatever order the flow corrects the levels in.
// Cables of Spec.Links do not enter it: which relay a flow takes is its
// level order's choice, a hash of its 5-tuple.
//
// On a graph fabric the path is a shortest one between the two servers
// (graphIdealPath): the ideal of the best route, whatever the switches'
// routing (ECMP's are all shortest; K shortest paths may take longer
// ones, which the slowdown then shows).
func WorkloadIdeal(spec Spec, t bcube.Topology, mtu int) workload.IdealFunc {
	w := WorkloadWire(spec, mtu)
	if spec.Fabric != nil {
		if g, err := spec.Fabric.Graph(); err == nil {
			return workload.IdealByPath(w, graphIdealPath(spec, g))
		}
	}
	if spec.Uniform() {
		return workload.IdealByHops(w, t.Hops)
	}
	rates := spec.LevelRates()
	return workload.IdealByPath(w, func(src, dst int) []uint64 {
		var path []uint64
		for l := range t.Levels() {
			if t.Digit(src, l) != t.Digit(dst, l) {
				path = append(path, rates[l], rates[l])
			}
		}
		return path
	})
}

// WriteText writes r for people: the run, the summary table, the fabric's
// counters and the emulation health; an invalid run says so first.
func (r *WorkloadReport) WriteText(w io.Writer) error {
	var b strings.Builder
	if !r.Valid() {
		b.WriteString("INVALID RUN: the emulation did not keep up (see the health below); these numbers are not the fabric's.\n\n")
	}
	wl := fmt.Sprintf("load %g", r.Load)
	if r.CDF != "" {
		wl = fmt.Sprintf("%s at load %g (per %s)", r.CDF, r.Load, r.Basis)
	}
	if r.Pairing.IsPermutation() {
		wl += fmt.Sprintf(", pairs by a %s permutation %v", r.Pairing, r.Perm)
	}
	if in := r.Incast; in != nil {
		wl += fmt.Sprintf(", incast %d x %s every %s", in.Senders, sizeText(in.Size), r.labTime(in.Period))
		if in.Trees > 1 {
			wl += fmt.Sprintf(" (%d trees at once)", in.Trees)
		}
	}
	if l := r.Long; l != nil {
		wl += fmt.Sprintf(", %s of %s", units.Count(l.Flows, "long flow", "long flows"), sizeText(l.Size))
	}
	if p := r.Pattern; p != nil {
		wl += fmt.Sprintf(", %s x %s every %s", p.Kind, sizeText(p.Size), r.labTime(p.Period))
		if p.Kind == workload.KindMoE && p.Few > 0 {
			wl += fmt.Sprintf(" (%d experts, top-%d", p.Few, p.TopK)
			if p.Skew > 0 {
				wl += fmt.Sprintf(", Zipf skew %g", p.Skew)
			}
			wl += ")"
		}
		if p.Wait {
			wl += ", second phase once the first has ended"
		}
	}
	fc := r.FC
	if fc == "" {
		fc = scheme.Default
	}
	dcqcn := "off"
	if r.DCQCN {
		dcqcn = "on"
		if !r.ECN {
			dcqcn = "on (no ECN marking in this lab)"
		}
	}
	rate := FormatRate(r.RateBps)
	if len(r.Rates) > 0 {
		rate = Spec{Rates: r.Rates}.RatesText()
	}
	if r.Model.D > 0 {
		rate += " in the lab"
	}
	if r.HandMade {
		fmt.Fprintf(&b, "workload on lab %s, %s at %s, fc %s: a hand-made schedule of %s starting within %s\n", r.Lab, r.Topology, rate, fc,
			units.Count(len(r.Records), "flow", "flows"), r.labTime(r.Duration))
	} else {
		fmt.Fprintf(&b, "workload on lab %s, %s at %s, fc %s: %s for %s, seed %d\n", r.Lab, r.Topology, rate, fc, wl, r.labTime(r.Duration), r.Seed)
	}
	if r.Model.D > 0 {
		fmt.Fprintf(&b, "emulates %s: every time and rate below is the target's (the lab's time / D, its rate x D), the emulation health's the lab's own\n", r.Model)
	}
	fmt.Fprintf(&b, "transport %s, MTU %d, DCQCN %s; ran %s", r.Mode, r.MTU, dcqcn, r.runTime(r.Elapsed))
	if r.StartLag.N > 0 {
		fmt.Fprintf(&b, "; flows started late by %s on average, %s at p99, %s at most",
			r.lagTime(r.StartLag.Mean), r.lagTime(r.StartLag.P99), r.lagTime(r.StartLag.Max))
	}
	b.WriteString("\n")
	if q := r.Waits; q != nil && q.Frames > 0 {
		fmt.Fprintf(&b, "switches' queueing delay, frame by frame (%s): mean %s, p50 %s, p99 %s, p99.9 %s, at most %s\n",
			units.Count(int(q.Frames), "frame", "frames"), r.lagTime(q.Mean), r.lagTime(q.P50), r.lagTime(q.P99), r.lagTime(q.P999), r.lagTime(q.MaxBound))
		if q.Early > 0 {
			fmt.Fprintf(&b, "  of them %s, by %s on average (a port catching up on time it lost)\n",
				units.Count(int(q.Early), "frame started on its link before it arrived", "frames started on their links before they arrived"), r.lagTime(q.EarlyMean))
		}
	}
	if cost := r.CostText(); cost != "" {
		b.WriteString(cost + "\n")
	}
	if r.WallStep.Abs() >= wallStepShown {
		fmt.Fprintf(&b, "the machine's wall clock stepped by %v of lab time during the run; the flows' times are monotonic and do not carry it\n", r.WallStep)
	}
	if r.StartErrors > 0 {
		fmt.Fprintf(&b, "%s not start (first: %s)\n", units.Count(r.StartErrors, "flow could", "flows could"), r.FirstError)
	}
	if r.Aborted > 0 {
		fmt.Fprintf(&b, "%s still running at the end and stopped\n", units.Count(r.Aborted, "flow was", "flows were"))
		switch {
		case len(r.Cycle) > 0:
			fmt.Fprintf(&b, "deadlock: at the end a cycle of %d stalled queues, each paused by the next: %s (%s stalled in all)\n",
				len(r.Cycle), CycleText(r.Cycle), units.Count(len(r.Stalls), "queue", "queues"))
		case len(r.Stalls) > 0:
			fmt.Fprintf(&b, "%s stalled at the end, in no cycle\n", units.Count(len(r.Stalls), "queue was", "queues were"))
		}
	}
	sum := &r.Summary
	if r.Model.D > 0 {
		sum = &r.Target
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := sum.WriteText(w); err != nil {
		return err
	}
	b.Reset()
	f := r.Fabric
	fmt.Fprintf(&b, "\nfabric: %d drops, %d injected drops, %d pauses sent, %d received, %d ECN marks, %d CNPs\n",
		f.Drops, f.Injected, f.Pauses, f.PausesRx, f.ECNMarks, f.CNPs)
	if len(f.Nodes) > 0 {
		fmt.Fprintf(&b, "  %-6s %8s %8s %8s %8s %8s\n", "node", "drops", "injected", "pauses", "paused", "marks")
	}
	for _, n := range f.Nodes {
		fmt.Fprintf(&b, "  %-6s %8d %8d %8d %8d %8d\n", n.Node, n.Drops, n.Injected, n.Pauses, n.PausesRx, n.ECNMarks)
	}
	if q := r.QueuePeak(); q.Bytes > 0 {
		bdps := ""
		if r.Model.D > 0 {
			bdps = fmt.Sprintf(" (%.1f one-hop BDPs of the target)", float64(q.Bytes)/float64(r.Model.Target.BDP(0)))
		}
		fmt.Fprintf(&b, "queues: largest %s%s at %s, %s into the run (series of %d samples: --queues)\n",
			sizeText(int64(q.Bytes)), bdps, q.Node, r.peakTime(q.Elapsed), len(r.Queues))
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return r.Health.WriteText(w)
}

// CostText is the run's cost for people: "cost: 6.522s of wall time per
// ms in the target (21.43s of wall time for 3.286ms in the target; at D
// = 5000 no less than 5s of wall time)"; "" for a run of no model or no
// wall time (a report of an older build).
func (r *WorkloadReport) CostText() string {
	text := scale.CostText(r.Wall, r.TargetElapsed)
	if r.Model.D <= 0 || text == "" {
		return ""
	}
	least := time.Duration(r.Model.D * float64(time.Millisecond))
	return fmt.Sprintf("cost: %s; at D = %s no less than %v %s)", strings.TrimSuffix(text, ")"),
		strconv.FormatFloat(r.Model.D, 'f', -1, 64), scale.RoundTime(least), scale.WallWord)
}

// labTime prints a duration the user gave in the lab's time (a flag's)
// with the target's beside it: "8s of lab time = 1.6ms in the target".
func (r *WorkloadReport) labTime(d time.Duration) string {
	if r.Model.D > 0 {
		return r.Model.LabTimeText(d)
	}
	return d.String()
}

// runTime prints a time the run took on the target's clock with the
// lab's beside it.
func (r *WorkloadReport) runTime(d time.Duration) string {
	if r.Model.D > 0 {
		return r.Model.TimeBoth(d.Round(time.Millisecond))
	}
	return d.Round(time.Millisecond).String()
}

// peakTime prints a time into the run on the target's clock with the
// lab's beside it.
func (r *WorkloadReport) peakTime(d time.Duration) string {
	if r.Model.D > 0 {
		return fmt.Sprintf("%s (%.1fs %s)", r.Model.TimeText(d), d.Seconds(), scale.LabWord)
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// lagTime prints a start lag on the target's clock.
func (r *WorkloadReport) lagTime(d time.Duration) string {
	if r.Model.D > 0 {
		return r.Model.TimeText(d)
	}
	return d.Round(time.Microsecond).String()
}

// graphIdealPath is the rates of the cables of a shortest path between
// two servers of graph fabric g, each its capacity x the lab's rate: at
// every node the next hop nearest the destination with the fastest
// cable (distances by one breadth-first search per destination, made
// once).
func graphIdealPath(spec Spec, g *topo.Graph) func(src, dst int) []uint64 {
	dist := make([][]int, len(g.Nodes))
	var mu sync.Mutex
	return func(src, dst int) []uint64 {
		mu.Lock()
		if dist[dst] == nil {
			dist[dst] = g.Distances(dst)
		}
		d := dist[dst]
		mu.Unlock()
		var path []uint64
		for u := src; u != dst && d[u] > 0; {
			best, bestCap := -1, 0.0
			for p := range g.Nodes[u].Ports {
				a := g.Out(u, p)
				if v := g.Head(a).Node; d[v] == d[u]-1 && g.Capacity(a) > bestCap {
					best, bestCap = v, g.Capacity(a)
				}
			}
			path = append(path, spec.cableRate(bestCap))
			u = best
		}
		return path
	}
}

// CheckLose checks the injected losses of a hand-made schedule
// (workload.Flow.Lose) run in mode with packets of mtu payload bytes, as
// each flow's NIC will: gbn or irn, every index below the flow's
// packets, none twice, at most api.MaxRDMALose.
func CheckLose(flows []workload.Flow, mode transport.Mode, mtu int) error {
	for i, f := range flows {
		if err := transport.CheckLoss(mode, f.Lose, transport.Packets(f.Size, mtu)); err != nil {
			return fmt.Errorf("workload: flow %d: lose: %w", i, err)
		}
	}
	return nil
}

// A FlowError is what CheckFlows found wrong with the flow at index Flow
// of a schedule.
type FlowError struct {
	Flow int
	Err  error
}

func (e *FlowError) Error() string { return fmt.Sprintf("workload: flow %d: %v", e.Flow, e.Err) }

func (e *FlowError) Unwrap() error { return e.Err }

// CheckFlows checks a hand-made schedule (WorkloadOptions.Flows) against
// the workload c it runs in: every flow's ID its index, its hosts
// distinct servers of c, its size positive and its start in c's window.
// The error is a *FlowError.
func CheckFlows(flows []workload.Flow, c workload.Config) error {
	for i, f := range flows {
		var err error
		switch {
		case f.ID != i:
			err = fmt.Errorf("id %d, want its index", f.ID)
		case f.Src < 0 || f.Src >= c.Hosts || f.Dst < 0 || f.Dst >= c.Hosts:
			err = fmt.Errorf("h%d -> h%d, want servers h0..h%d", f.Src, f.Dst, c.Hosts-1)
		case f.Src == f.Dst:
			err = fmt.Errorf("h%d to itself", f.Src)
		case f.Size < 1:
			err = fmt.Errorf("size %d, want at least 1 byte", f.Size)
		case f.Start < 0 || f.Start >= c.Duration:
			err = fmt.Errorf("starts at %v, outside the window [0, %v)", f.Start, c.Duration)
		}
		if err != nil {
			return &FlowError{Flow: i, Err: err}
		}
	}
	return nil
}
