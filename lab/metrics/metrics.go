// Package metrics exports a lab's counters to Prometheus: a collector
// over every node's stats snapshot (GET /stats, and GET /classifier of
// servers), read when Prometheus scrapes, so nothing of it runs on the
// datapath.
//
// Names follow Prometheus' conventions: a bcfab_ prefix, base units
// (bytes, seconds), _total on counters, one metric per meaning with
// labels for what varies: lab, node, port, queue, and where a count is
// split, reason (drops), verdict (XDP), direction/type/class (flow-control
// signals) or priority (the bc0 classifier).
//
//	bcfab_port_tx_bytes_total{lab="pf",node="s0.0",port="p1"} 1.2e+08
//	bcfab_queue_paused_seconds_total{lab="pf",node="h1",port="eth0",queue="b0"} 0.31
//	bcfab_port_drops_total{lab="pf",node="s0.0",port="p1",reason="buffer_full"} 0
package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bcfab/bcfab/node/api"
)

// Node is one node's snapshot: its stats, the classifier's (servers
// only), or the error that kept them.
type Node struct {
	Name       string
	Kind       string
	Stats      *api.Stats
	Classifier *api.ClassifierStats
	Err        error
}

// Source takes a snapshot of every node of a lab.
type Source func(ctx context.Context) ([]Node, error)

// Collector is a prometheus.Collector of one lab's nodes.
type Collector struct {
	lab     string
	source  Source
	timeout time.Duration
	opts    Options
}

// Options say what the lab is, so that the collector leaves out the
// series its configuration keeps at zero: most of a lab's series are per
// queue, and most queues of a small lab never pause, mark or stall.
// The zero Options export every series.
type Options struct {
	// Lean leaves out what the fields below say cannot be non-zero, the
	// series of queues that have carried nothing and held no pause yet
	// (they appear with their first frame), and the zero parts of counts
	// split by reason, verdict, signal kind or priority (they appear with
	// their first count).
	Lean bool
	// Pauses: the lab runs flow control (a queue can be paused; never the
	// HQ). Without it, no pause and no watchdog stall can happen.
	Pauses bool
	// ECN: egress queues mark.
	ECN bool
	// Watchdog: stalls are detected; WatchdogActs: and acted on (ignored
	// pauses, recoveries).
	Watchdog, WatchdogActs bool
}

// NewCollector collects lab's counters from source, which must answer
// within timeout per scrape; every series, unless WithOptions says what
// the lab is.
func NewCollector(lab string, source Source, timeout time.Duration) *Collector {
	return &Collector{lab: lab, source: source, timeout: timeout}
}

// WithOptions sets what the collector leaves out.
func (c *Collector) WithOptions(o Options) *Collector {
	c.opts = o
	return c
}

// idle reports whether q has carried nothing and held no pause, drop or
// stall: a lean scrape leaves its series out until it does.
func idle(q *api.QueueStats) bool {
	if q.EnqPackets != 0 || q.MaxBytes != 0 || q.Paused || q.PausedNs != 0 || q.Stalls != 0 || q.Stalled || q.Recovering {
		return false
	}
	for _, v := range q.Drops {
		if v != 0 {
			return false
		}
	}
	return true
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("bcfab_"+name, help, append([]string{"lab", "node"}, labels...), nil)
}

var (
	nodeUp      = desc("node_up", "1 when the node's daemon answered this scrape, else 0.", "kind")
	nodeInfo    = desc("node_info", "The node's daemon: kind, pid, XDP attach mode (always 1).", "kind", "pid", "xdp_mode")
	nodeUptime  = desc("node_uptime_seconds", "Time since the node's daemon started.")
	nodeFrames  = desc("node_umem_frames", "Frames of the node's UMEM.")
	nodeFree    = desc("node_umem_free_frames", "Frames of the node's UMEM not in use.")
	scrapeError = prometheus.NewDesc("bcfab_scrape_failed_nodes", "Nodes whose snapshot failed in this scrape.", []string{"lab"}, nil)

	portRx        = desc("port_rx_packets_total", "Frames the port received.", "port")
	portRxBytes   = desc("port_rx_bytes_total", "Bytes the port received.", "port")
	portTx        = desc("port_tx_packets_total", "Frames the port transmitted.", "port")
	portTxBytes   = desc("port_tx_bytes_total", "Bytes the port transmitted.", "port")
	portSpeed     = desc("port_speed_bytes", "The port's emulated link rate in bytes per second (0: unshaped).", "port")
	portQueue     = desc("port_queue_bytes", "Bytes queued at the port's egress now.", "port")
	portQueuePkts = desc("port_queue_packets", "Frames queued at the port's egress now.", "port")
	portQueueMax  = desc("port_queue_max_bytes", "Most bytes queued at the port's egress so far.", "port")
	portDrops     = desc("port_drops_total", "Frames the emulator dropped at the port, by reason (the kernel's XSK ring drops have their own metrics; injected loss is an XDP verdict, not a drop).", "port", "reason")
	portXDPRx     = desc("port_xdp_rx_packets_total", "Frames the port's XDP program saw.", "port")
	portXDP       = desc("port_xdp_verdict_packets_total", "Frames the port's XDP program gave a verdict: redirect (to the AF_XDP socket), fallback, loss (injected), down (link down).", "port", "verdict")
	portLoss      = desc("port_injected_loss_ratio", "Injected loss of what the port receives now (0..1).", "port")
	portDown      = desc("port_link_down", "1 when the port's receive side is set down, else 0.", "port")
	portCaptured  = desc("port_captured", "1 while a packet capture listens on the port (it then transmits through the kernel).", "port")
	portLate      = desc("port_shaper_late_frames_total", "Frames the shaper sent later than their link was free.", "port")
	portMaxLate   = desc("port_shaper_max_late_seconds", "The largest lateness of a frame so far.", "port")
	portLost      = desc("port_shaper_lost_seconds_total", "Link time lost beyond the shaper's catch-up while frames waited (the daemon did not keep up).", "port")
	portSignals   = desc("port_signals_total", "Flow-control frames (PortFC/BFC signals, PFC) by direction (tx, rx, relayed), type (pause, resume, state, xoff, xon, refresh) and class (A, B, P3, ...; empty for BFC).", "port", "direction", "type", "class")
	portSigOther  = desc("port_signal_events_total", "Flow-control frames lost (to a full queue or no frame) or ignored, by event.", "port", "event")

	queueEnq      = desc("queue_enqueued_packets_total", "Frames that joined the queue.", "port", "queue")
	queueEnqBytes = desc("queue_enqueued_bytes_total", "Bytes that joined the queue.", "port", "queue")
	queueDeq      = desc("queue_dequeued_packets_total", "Frames that left the queue.", "port", "queue")
	queueDeqBytes = desc("queue_dequeued_bytes_total", "Bytes that left the queue.", "port", "queue")
	queueDepth    = desc("queue_depth_bytes", "Bytes in the queue now.", "port", "queue")
	queueDepthPk  = desc("queue_depth_packets", "Frames in the queue now.", "port", "queue")
	queueMax      = desc("queue_max_depth_bytes", "Most bytes the queue held so far.", "port", "queue")
	queuePaused   = desc("queue_paused", "1 while the queue is paused by flow control, else 0.", "port", "queue")
	queuePausedS  = desc("queue_paused_seconds_total", "Time the queue spent paused.", "port", "queue")
	queueMaxPause = desc("queue_max_pause_seconds", "The longest single pause of the queue.", "port", "queue")
	queueECN      = desc("queue_ecn_marks_total", "Frames of the queue marked CE.", "port", "queue")
	queueDrops    = desc("queue_drops_total", "Frames dropped for the queue, by reason.", "port", "queue", "reason")
	queueIgnored  = desc("queue_ignored_pauses_total", "Pauses the queue ignored while a watchdog recovery overrode them.", "port", "queue")
	queueStalls   = desc("queue_stalls_total", "Stalls the watchdog found (paused, not empty, nothing sent for the detection time).", "port", "queue")
	queueStalled  = desc("queue_stalled", "1 while the queue is stalled, else 0.", "port", "queue")
	queueStalledS = desc("queue_stalled_seconds_total", "Time the queue spent stalled.", "port", "queue")
	queueRecover  = desc("queue_recovering", "1 while a watchdog recovery action is in force on the queue, else 0.", "port", "queue")

	classPackets = desc("classifier_packets_total", "Frames of the kernel the bc0 classifier gave a priority (802.1Q PCP), by priority; untagged: left as they were (not IPv4).", "priority")
	classBytes   = desc("classifier_bytes_total", "Bytes of the kernel the bc0 classifier gave a priority, by priority.", "priority")
	classUp      = desc("classifier_attached", "1 when the classifier program runs on the server's bc0.")
)

var allDescs = []*prometheus.Desc{
	nodeUp, nodeInfo, nodeUptime, nodeFrames, nodeFree, scrapeError,
	portRx, portRxBytes, portTx, portTxBytes, portSpeed, portQueue, portQueuePkts, portQueueMax, portDrops, portXDPRx, portXDP,
	portLoss, portDown, portCaptured, portLate, portMaxLate, portLost, portSignals, portSigOther,
	queueEnq, queueEnqBytes, queueDeq, queueDeqBytes, queueDepth, queueDepthPk, queueMax, queuePaused, queuePausedS, queueMaxPause,
	queueECN, queueDrops, queueIgnored, queueStalls, queueStalled, queueStalledS, queueRecover,
	classPackets, classBytes, classUp,
}

// xskDesc describes one of the kernel's XSK counters of a port, one metric each
// (bcfab_port_xsk_rx_dropped_total, ...), made as the keys appear.
func xskDesc(key string) *prometheus.Desc {
	return desc("port_xsk_"+sanitize(key)+"_total", "The kernel's XSK counter "+key+" of the port's AF_XDP socket.", "port")
}

// Describe sends the fixed descriptions; the XSK counters are described
// as they are collected (the collector is then "unchecked" for them).
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
	for _, k := range xskKeys {
		ch <- xskDesc(k)
	}
}

// xskKeys are the XSK counters daemons report (api.PortStats.XSK).
var xskKeys = []string{"rx_dropped", "rx_invalid_descs", "tx_invalid_descs", "rx_ring_full", "rx_fill_ring_empty", "tx_ring_empty"}

// Collect takes a snapshot of every node and sends its metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	nodes, err := c.source(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(scrapeError, err)
		return
	}
	failed := 0
	for i := range nodes {
		if nodes[i].Err != nil || nodes[i].Stats == nil {
			failed++
		}
		c.node(ch, &nodes[i])
	}
	ch <- prometheus.MustNewConstMetric(scrapeError, prometheus.GaugeValue, float64(failed), c.lab)
}

func (c *Collector) node(ch chan<- prometheus.Metric, n *Node) {
	L, N := c.lab, n.Name
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append([]string{L, N}, labels...)...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{L, N}, labels...)...)
	}
	seconds := func(d *prometheus.Desc, ns int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(max(ns, 0))/1e9, append([]string{L, N}, labels...)...)
	}
	st := n.Stats
	if n.Err != nil || st == nil {
		gauge(nodeUp, 0, n.Kind)
		return
	}
	gauge(nodeUp, 1, st.Kind)
	gauge(nodeInfo, 1, st.Kind, itoa(st.Pid), st.XDPMode)
	gauge(nodeUptime, float64(st.UptimeNs)/1e9)
	gauge(nodeFrames, float64(st.Frames.Total))
	gauge(nodeFree, float64(st.Frames.Free))
	for i := range st.Ports {
		p := &st.Ports[i]
		P := p.Name
		counter(portRx, p.RxPackets, P)
		counter(portRxBytes, p.RxBytes, P)
		counter(portTx, p.TxPackets, P)
		counter(portTxBytes, p.TxBytes, P)
		gauge(portSpeed, float64(p.RateBps)/8, P)
		gauge(portQueue, float64(p.QueueBytes), P)
		gauge(portQueuePkts, float64(p.QueuePackets), P)
		gauge(portQueueMax, float64(p.MaxQueueBytes), P)
		o := c.opts
		// A count split by reason, verdict, class or priority shows, in
		// a lean scrape, the parts that have counted something: most
		// reasons and signal kinds of a port stay at zero all run.
		split := func(v uint64) bool { return !o.Lean || v != 0 }
		for _, r := range sortedKeys(p.Drops) {
			if split(p.Drops[r]) {
				counter(portDrops, p.Drops[r], P, r)
			}
		}
		for _, k := range xskKeys {
			if v, ok := p.XSK[k]; ok {
				counter(xskDesc(k), v, P)
			}
		}
		for _, k := range sortedKeys(p.XDP) {
			if k == "rx" {
				counter(portXDPRx, p.XDP[k], P)
			} else if split(p.XDP[k]) {
				counter(portXDP, p.XDP[k], P, k)
			}
		}
		gauge(portLoss, float64(p.LossPPM)/1e6, P)
		gauge(portDown, b2f(p.LinkDown), P)
		gauge(portCaptured, b2f(p.Captured), P)
		counter(portLate, p.LateFrames, P)
		gauge(portMaxLate, float64(p.MaxLateNs)/1e9, P)
		seconds(portLost, p.LostLinkNs, P)
		for _, k := range sortedKeys(p.Signals) {
			if !split(p.Signals[k]) {
				continue
			}
			if dir, typ, class, ok := signalKey(k); ok {
				counter(portSignals, p.Signals[k], P, dir, typ, class)
			} else {
				counter(portSigOther, p.Signals[k], P, k)
			}
		}
		for qi := range p.Queues {
			q := &p.Queues[qi]
			if o.Lean && idle(q) {
				continue
			}
			Q := q.Name
			// The HQ is never paused, in every scheme.
			pauses := !o.Lean || o.Pauses && Q != "HQ"
			counter(queueEnq, q.EnqPackets, P, Q)
			counter(queueEnqBytes, q.EnqBytes, P, Q)
			counter(queueDeq, q.DeqPackets, P, Q)
			counter(queueDeqBytes, q.DeqBytes, P, Q)
			gauge(queueDepth, float64(q.Bytes), P, Q)
			gauge(queueDepthPk, float64(q.Packets), P, Q)
			gauge(queueMax, float64(q.MaxBytes), P, Q)
			if pauses {
				gauge(queuePaused, b2f(q.Paused), P, Q)
				seconds(queuePausedS, q.PausedNs, P, Q)
				gauge(queueMaxPause, float64(q.MaxPauseNs)/1e9, P, Q)
			}
			if !o.Lean || o.ECN {
				counter(queueECN, q.ECNMarks, P, Q)
			}
			for _, r := range sortedKeys(q.Drops) {
				// The port's drops by reason are always there; a queue's
				// show the reasons it has dropped for.
				if !o.Lean || q.Drops[r] != 0 {
					counter(queueDrops, q.Drops[r], P, Q, r)
				}
			}
			if pauses && (!o.Lean || o.Watchdog) {
				counter(queueStalls, q.Stalls, P, Q)
				gauge(queueStalled, b2f(q.Stalled), P, Q)
				seconds(queueStalledS, q.StalledNs, P, Q)
				if !o.Lean || o.WatchdogActs {
					counter(queueIgnored, q.IgnoredPauses, P, Q)
					gauge(queueRecover, b2f(q.Recovering), P, Q)
				}
			}
		}
	}
	if cl := n.Classifier; cl != nil {
		gauge(classUp, b2f(cl.Attached))
		for prio, cc := range cl.Classes {
			if !c.opts.Lean || cc.Packets != 0 {
				counter(classPackets, cc.Packets, itoa(prio))
				counter(classBytes, cc.Bytes, itoa(prio))
			}
		}
		counter(classPackets, cl.Untagged.Packets, "untagged")
		counter(classBytes, cl.Untagged.Bytes, "untagged")
	}
}
