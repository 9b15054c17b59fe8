// Package api holds the types that cross a node's control socket as JSON:
// what GET /stats and GET/POST /link answer and take. Daemons fill them in;
// lab, rperf and other tools read them without linking any of the
// datapath.
package api

// Stats is the JSON a daemon serves on GET /stats.
//
// GET /stats?sample serves a periodic sample's: the same fields, less
// every port's Drops, Signals, ECNHist, FCTiming, XDP and Copies, and
// Host (all empty), and of each queue only its Index, Name and packet
// and byte counts (Enq*, Deq*, Packets, Bytes), at a fraction of the
// full stats' cost. What it keeps judges
// a run's emulation health (busy time, ring drops, shaper lag, round
// trips) and makes its queue and port series (queued and sent bytes).
type Stats struct {
	Node string `json:"node"`
	Kind string `json:"kind"` // swd or hostd
	// Pid is the process that hosts the node: its own daemon's, or its
	// worker's (Worker names it), which hosts other nodes too.
	Pid    int    `json:"pid"`
	Worker string `json:"worker,omitempty"`
	// StartedUnixNs is when this instance of the node started: a node
	// stopped and started again, or a daemon restarted, has a new one.
	StartedUnixNs int64 `json:"started_unix_ns"`
	UptimeNs      int64 `json:"uptime_ns"`
	// CountedUnixNs is when the ports' counters were copied, on the
	// node's worker thread between two of its steps: every frame a port
	// sent or received before that instant is counted, none after. A
	// capture's frames can be matched against two snapshots by their
	// timestamps (a port's own CountedUnixNs, when set, in its place).
	CountedUnixNs int64 `json:"counted_unix_ns"`
	// BusyNs is the time the node's engine spent on its work (receive,
	// forward, egress, transmit, timers), measured around each of its
	// steps on its worker's thread: the node's CPU time, also when it
	// shares its process.
	BusyNs  int64       `json:"busy_ns"`
	XDPMode string      `json:"xdp_mode"`
	Frames  FrameStats  `json:"frames"`
	Ports   []PortStats `json:"ports"`
	// Host is a server's own section (hostd only).
	Host *HostStats `json:"host,omitempty"`
}

// FrameStats describes the UMEM frame pool.
type FrameStats struct {
	Total int `json:"total"`
	Free  int `json:"free"`
	Size  int `json:"size"`
}

// PortStats are one port's counters. Drops maps a reason to a count and
// lists every reason, zero or not; XSK and XDP are the kernel's view.
type PortStats struct {
	Name      string `json:"name"`
	RateBps   uint64 `json:"rate_bps"`
	RxPackets uint64 `json:"rx_packets"`
	RxBytes   uint64 `json:"rx_bytes"`
	// What became of every frame received (RxPackets): handed to an
	// egress queue of the node (RxForwarded; the queue admits it or
	// drops it, counted in Drops under buffer_full, no_frames or
	// watchdog), taken by the node itself (RxConsumed: flow-control
	// frames, probes, frames for a server's NIC or its generator's sink),
	// or dropped on receive (RxDrops: Drops under RxDropReasons). In
	// every snapshot RxPackets = RxForwarded + RxConsumed + RxDrops().
	RxForwarded uint64 `json:"rx_forwarded"`
	RxConsumed  uint64 `json:"rx_consumed"`
	TxPackets   uint64 `json:"tx_packets"`
	// INTStamped counts the INT records (HPCC) the port stamped into
	// data frames leaving it.
	INTStamped    uint64 `json:"int_stamped,omitempty"`
	TxBytes       uint64 `json:"tx_bytes"`
	QueueBytes    uint64 `json:"queue_bytes"`
	QueuePackets  uint64 `json:"queue_packets"`
	MaxQueueBytes uint64 `json:"max_queue_bytes"`
	// Captured: a packet capture listens on the port, so it transmits
	// through the kernel's packet path (slower) where the capture sees it,
	// or, patched, its cable has its worker's copier write a copy of each
	// frame there (Copies).
	Captured bool `json:"captured"`
	// Patched: the port's cable joins two nodes of one worker in memory
	// (lab up --links patch); XDP and XSK then count what the cable did
	// as the program and the socket would have, and XDP "mirror" the
	// copies written for captures.
	Patched bool `json:"patched,omitempty"`
	// CountedUnixNs, when set, is the instant that divides this port's
	// capture copies as the snapshot divides its counters, in place of
	// the node's CountedUnixNs: a patched port's copies are written by
	// its worker's copier thread a little after the frames crossed, and
	// the copier says when it had written the copy of every frame counted
	// and of none after.
	CountedUnixNs int64 `json:"counted_unix_ns,omitempty"`
	// Copies counts a patched port's capture copies of what it sent:
	// "written", refused by the packet socket ("write_errors"), and
	// dropped because its worker's copier had no room ("queue_full"); nil
	// until the port's cable first wrote one.
	Copies map[string]uint64 `json:"copies,omitempty"`
	Drops  map[string]uint64 `json:"drops"`
	Queues []QueueStats      `json:"queues,omitempty"`
	// ECNHist is the egress's ECN decisions by the length of the queue
	// each packet joined (nil: marking off, or nothing decided yet).
	ECNHist *ECNHist `json:"ecn_hist,omitempty"`
	// FCTiming is how the port's pauses met its thresholds, per class
	// the scheme pauses by it (nil: it pauses nothing by this port).
	FCTiming *FCTiming `json:"fc_timing,omitempty"`
	// Signals counts flow-control frames sent, received and relayed by
	// class and type ("tx_pause_A", "rx_resume_B", "relayed_state_B", ...).
	Signals map[string]uint64 `json:"signals,omitempty"`
	XSK     map[string]uint64 `json:"xsk,omitempty"`
	XDP     map[string]uint64 `json:"xdp,omitempty"`
	// LossPPM and LinkDown are the injected impairment of the port's
	// receive side now (POST /link, Config.LossPPM); what they dropped is
	// XDP "loss" and "down".
	LossPPM  int  `json:"loss_ppm,omitempty"`
	LinkDown bool `json:"link_down,omitempty"`
	// InjectedTx counts the frames the node's own NIC dropped on purpose
	// instead of sending them by the port: RDMA packets whose first
	// transmission a flow's request told it to lose (RDMARequest.Lose).
	// Like XDP "loss" they are injected drops (InjectedDrops), not the
	// emulator's (TotalDrops), and never reach TxPackets.
	InjectedTx uint64 `json:"injected_tx,omitempty"`
	// Shaper lag of a shaped port (emulation health): frames that
	// started later than their link was free, the largest lateness, and
	// link time lost beyond the shaper's catch-up (the daemon did not keep
	// up with its link).
	LateFrames uint64 `json:"shaper_late_frames,omitempty"`
	MaxLateNs  int64  `json:"shaper_max_late_ns,omitempty"`
	LostLinkNs int64  `json:"shaper_lost_ns,omitempty"`
	// RTT is the one-hop round trips the port's timing probes measured
	// (the fidelity monitor; nil: none yet, or the port does not probe).
	RTT *RTT `json:"rtt,omitempty"`
	// LinkDelayNs is how long the port holds a frame after its last bit
	// now: the model's link delay less the emulator's latency, as the
	// probes steer it.
	LinkDelayNs int64 `json:"link_delay_ns,omitempty"`
}

// QueueStats are one egress queue's counters.
type QueueStats struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	// Quantum is the queue's DRR quantum in bytes, what a visit of the
	// round adds to its deficit: its weight (lab up --drr-weights) in
	// full frames; 0 for the HQ and a strict queue (a server's relay
	// queue under relay_queue strict), which the round does not serve.
	Quantum    int               `json:"quantum,omitempty"`
	EnqPackets uint64            `json:"enq_packets"`
	EnqBytes   uint64            `json:"enq_bytes"`
	DeqPackets uint64            `json:"deq_packets"`
	DeqBytes   uint64            `json:"deq_bytes"`
	Packets    int               `json:"packets"`
	Bytes      int               `json:"bytes"`
	MaxBytes   int               `json:"max_bytes"`
	Paused     bool              `json:"paused"`
	PausedNs   int64             `json:"paused_ns"`
	MaxPauseNs int64             `json:"max_pause_ns"` // longest single pause
	ECNMarks   uint64            `json:"ecn_marks"`
	Drops      map[string]uint64 `json:"drops"`
	// IgnoredPauses counts pauses ignored while a watchdog recovery
	// overrode them.
	IgnoredPauses uint64 `json:"ignored_pauses,omitempty"`
	// The watchdog's view: stalls found (paused, not empty, nothing sent
	// for the detection time), whether one is going on and for how long,
	// the time stalled in all, and whether a recovery action is in force.
	Stalls       uint64 `json:"stalls,omitempty"`
	Stalled      bool   `json:"stalled,omitempty"`
	StalledForNs int64  `json:"stalled_for_ns,omitempty"`
	StalledNs    int64  `json:"stalled_ns,omitempty"`
	Recovering   bool   `json:"recovering,omitempty"`
}

// TotalDrops sums the frames the emulator lost: every drop counter of the
// port, the kernel's XSK ring drops included, but not the frames the XDP
// program dropped on purpose (InjectedDrops). A run with no drops is one
// whose every port's TotalDrops is zero, injected loss or not.
func (p *PortStats) TotalDrops() uint64 {
	var n uint64
	for _, v := range p.Drops {
		n += v
	}
	return n + p.RingDrops()
}

// RxDropReasons are the drop reasons of frames dropped on receive, at the
// port they came in by. The other reasons count frames where they were
// to leave: buffer_full, no_frames and watchdog at an egress queue,
// tx_error on transmit.
var RxDropReasons = []string{"malformed", "unsupported", "no_route", "hairpin"}

// RxDrops counts the frames the port dropped on receive (RxDropReasons).
func (p *PortStats) RxDrops() uint64 {
	var n uint64
	for _, r := range RxDropReasons {
		n += p.Drops[r]
	}
	return n
}

// RingDrops counts the frames the kernel's XSK rings of the port dropped:
// received frames no fill-ring frame or receive-ring slot was there for,
// and descriptors the kernel refused. (rx_fill_ring_empty counts the same
// losses as rx_dropped, not more.)
func (p *PortStats) RingDrops() uint64 {
	var n uint64
	for _, k := range []string{"rx_dropped", "rx_ring_full", "tx_invalid_descs", "rx_invalid_descs"} {
		n += p.XSK[k]
	}
	return n
}

// InjectedDrops counts the frames the port dropped because it was told
// to: received, by its XDP program's injected loss (XDP "loss") and a
// link set down (XDP "down"), see LossPPM and LinkDown; to be sent, by
// the node's NIC, an RDMA flow's injected loss (InjectedTx).
func (p *PortStats) InjectedDrops() uint64 {
	return p.XDP["loss"] + p.XDP["down"] + p.InjectedTx
}

// LinkRequest is the body of POST /link: a change to what one port's XDP
// program does to the frames it receives. A field left out keeps its
// value.
type LinkRequest struct {
	Port string `json:"port"`
	// LossPPM drops that many of each million frames received, at random
	// (0..1000000).
	LossPPM *int `json:"loss_ppm,omitempty"`
	// Down drops every frame received, as if the cable were cut in that
	// direction.
	Down *bool `json:"down,omitempty"`
}

// LinkState is the receive impairment of one port, as GET /link (every
// port) and POST /link (the port changed) answer it.
type LinkState struct {
	Port    string `json:"port"`
	LossPPM int    `json:"loss_ppm"`
	Down    bool   `json:"down"`
	// App: the port is a server's application port, which is never
	// impaired.
	App bool `json:"app,omitempty"`
}

// Impaired reports whether the port drops received frames on purpose.
func (l LinkState) Impaired() bool { return l.LossPPM > 0 || l.Down }

// HostStats are what a server's hostd adds to its Stats.
type HostStats struct {
	// ATE is the source's Asymmetric Traffic Engineering (level order
	// ate), nil under any other policy.
	ATE *ATEStats `json:"ate,omitempty"`
}

// ATEStats are a source's ATE choices (the PortFC paper's Algorithm 5):
// a new RDMA flow that may start in either domain goes to the
// high-bandwidth domain (level 0) unless the bytes its flows there have
// in flight (sent, not acknowledged) reach P x CapHBDBytes (B_H), else
// to the network domain (the other levels).
type ATEStats struct {
	P           float64 `json:"p"`
	CapHBDBytes int64   `json:"cap_hbd_bytes"` // B_H
	LimitBytes  int64   `json:"limit_bytes"`   // ceil(P x B_H)
	// In-flight bytes now of the flows whose first hop is in each domain
	// (T_H, T_N).
	InFlightHBD     int64 `json:"inflight_hbd_bytes"`
	InFlightNetwork int64 `json:"inflight_network_bytes"`
	// Flows placed in each domain, and how often the choice differed
	// from the one before (the HBD filling up, or draining).
	HBD      uint64 `json:"hbd"`
	Network  uint64 `json:"network"`
	Switches uint64 `json:"switches"`
	// Flows ATE did not place: their destination left no choice (it
	// differs from the source in one domain only), or their request fixed
	// the level order.
	Fixed   uint64 `json:"fixed"`
	Ordered uint64 `json:"ordered"`
}

// DelayRequest is what POST /delay takes: the emulator's own per-hop
// latency, measured by the lab, to take off the model's link delay.
type DelayRequest struct {
	CompNs int64 `json:"comp_ns"`
}

// DelayState is what POST /delay answers: the compensation now, and what
// every fabric port's delay line holds a frame for after its last bit.
type DelayState struct {
	CompNs  int64 `json:"comp_ns"`
	DelayNs int64 `json:"delay_ns"`
}
