package api

import (
	"time"

	"github.com/bcfab/bcfab/wire/transport"
)

// What a server's hostd, its RDMA NIC, takes and answers on POST, GET and
// DELETE /rdma, and POST /rdma/batch (a list of RDMARequests in one call:
// the answer lists their flows in order, and either every request starts
// or, when one is wrong, none).

// Limits and defaults of RDMA flows.
const (
	// DefaultRDMAMTU is a flow's payload per packet unless told otherwise:
	// InfiniBand's 1024-byte MTU, the largest that fits a 1500-byte
	// Ethernet MTU.
	DefaultRDMAMTU = 1024
	// MinRDMAMTU and MaxRDMAMTU bound a flow's payload per packet; the
	// largest fills a 1518-byte tagged frame.
	MinRDMAMTU = 256
	MaxRDMAMTU = 1456
	// MaxRDMAParallel is the most flows one request starts.
	MaxRDMAParallel = 128
	// MaxRDMABatch is the most requests one POST /rdma/batch takes.
	MaxRDMABatch = 4096
	// MaxRDMAScheduled is the most flows a NIC holds scheduled
	// (RDMARequest.AtUnixNs or AtMonoNs) and not yet started.
	MaxRDMAScheduled = 1 << 16
	// MaxRDMAAhead is how far ahead a request may schedule its flows.
	MaxRDMAAhead = 10 * time.Minute
)

// Flow states.
const (
	// RDMAScheduled is a flow created by a request with a time
	// (RDMARequest.AtUnixNs or AtMonoNs), not yet started: its StartNs is when it is
	// due, and it has sent nothing.
	RDMAScheduled = "scheduled"
	RDMARunning   = "running"
	RDMADone      = "done"    // every byte acknowledged
	RDMAFailed    = "failed"  // the transport gave up (lossless: a gap, or no progress)
	RDMAAborted   = "aborted" // stopped by DELETE /rdma
)

// RDMARequest starts one or more flows to the same destination (POST
// /rdma).
type RDMARequest struct {
	Dst int `json:"dst"`
	// Bytes is each flow's size; Duration makes flows that send until it
	// has passed (their last packet is then the next one). Give one.
	Bytes    int64 `json:"bytes,omitempty"`
	Duration int64 `json:"duration_ns,omitempty"`
	// Mode is the loss recovery: lossless (default), gbn or irn.
	Mode string `json:"mode,omitempty"`
	// DCQCN false turns congestion control off (cc none); true or unset
	// keeps CC's, the host's by default: the lab's cc, DCQCN unless the
	// lab says otherwise (with switches marking no ECN no CNP is ever
	// sent, so DCQCN stays at the line rate).
	DCQCN *bool `json:"dcqcn,omitempty"`
	// CC is the congestion control: hpcc, dctcp, dcqcn, dcqcn-win, dcqcn-mlx or none (default:
	// the host's, the lab's cc). dctcp and hpcc need a host (a lab) of
	// that cc, dcqcn one of any other than dctcp (whose receivers send no
	// CNP).
	CC string `json:"cc,omitempty"`
	// Order fixes the level order ("0,1", ...) as GenRequest.Order does.
	Order string `json:"order,omitempty"`
	// MTU is the payload bytes per packet (default DefaultRDMAMTU).
	MTU int `json:"mtu,omitempty"`
	// Flows is the number of parallel flows (QPs), default 1.
	Flows int `json:"flows,omitempty"`
	// UntilStopped makes flows that send until POST /rdma/stop ends
	// them, instead of Bytes or Duration.
	UntilStopped bool `json:"until_stopped,omitempty"`
	// RateBps caps each flow's rate in bit/s, as iperf3's -b (0: the
	// link's; DCQCN stays at or below it).
	RateBps int64 `json:"rate_bps,omitempty"`
	// MsgBytes splits each flow into messages (RDMA SENDs) of that many
	// bytes; Bytes must be a multiple of it, at most MaxRDMAMessages
	// times. 0: a flow is one message.
	MsgBytes int64 `json:"msg_bytes,omitempty"`
	// Latency sends one message at a time, each once the one before is
	// acknowledged, and measures every message's round trip (posted to
	// acknowledged): a latency test. It needs MsgBytes.
	Latency bool `json:"latency,omitempty"`
	// Lose lists packets of each flow, by index from 0 (its PSN less
	// the flow's first PSN, the order of first transmissions), whose
	// first transmission the NIC drops instead of sending, counted as an
	// injected drop (RDMAFlow.Injected, RDMACounters.Injected and the
	// port's PortStats.InjectedTx); their retransmissions go out, and
	// loss recovery runs as for a loss on the wire. Only gbn and irn
	// flows of Bytes, each index below the flow's packets, none twice, at
	// most MaxRDMALose: a deterministic loss, where a link's loss_ppm is
	// random.
	Lose []int `json:"lose,omitempty"`
	// AtUnixNs, when set, starts the flows at that time (Unix ns, the
	// machine's clock) rather than when the request arrives: the NIC
	// checks the request at once and answers with its flows in state
	// scheduled, and its engine starts them when they are due, late by
	// an engine pass rather than by a control round trip (a workload's
	// schedule sent ahead). A time already past starts them at once; at
	// most MaxRDMAAhead ahead. DELETE /rdma aborts a scheduled flow,
	// which then never starts (its StartNs 0); POST /rdma/stop leaves it
	// be.
	AtUnixNs int64 `json:"at_unix_ns,omitempty"`
	// AtMonoNs is AtUnixNs on the machine's monotonic clock
	// (MonotonicNs), which a step of the wall clock does not move: what
	// a schedule computed ahead should use. At most one of the two.
	AtMonoNs int64 `json:"at_mono_ns,omitempty"`
}

// MaxRDMALose is the most packets a request's Lose lists.
const MaxRDMALose = transport.MaxLoss

// MaxRDMAMessages is the most messages a flow of MsgBytes splits into.
const MaxRDMAMessages = 1 << 20

// LatencyStats are the round trips of a latency flow's messages, posted
// to acknowledged.
type LatencyStats struct {
	Samples int   `json:"samples"`
	MinNs   int64 `json:"min_ns"`
	MaxNs   int64 `json:"max_ns"`
	AvgNs   int64 `json:"avg_ns"`
	StdevNs int64 `json:"stdev_ns"`
	P50Ns   int64 `json:"p50_ns"`
	P99Ns   int64 `json:"p99_ns"`
	P999Ns  int64 `json:"p999_ns"`
}

// RDMAFlow is a flow's state at its sender (GET /rdma). Times are Unix
// nanoseconds; bytes are payload bytes.
type RDMAFlow struct {
	ID         int            `json:"id"`
	QP         uint32         `json:"qp"`
	Dst        int            `json:"dst"`
	Mode       transport.Mode `json:"mode"`
	DCQCN      bool           `json:"dcqcn"`
	CC         transport.CC   `json:"cc"`
	MTU        int            `json:"mtu"`
	Size       int64          `json:"size"` // 0 while a timed flow runs
	DurationNs int64          `json:"duration_ns,omitempty"`
	SPort      uint16         `json:"sport"`
	Port       int            `json:"port"`  // fabric port it leaves by
	Queue      string         `json:"queue"` // its queue there
	Order      string         `json:"order"` // its level order
	StartPSN   uint32         `json:"start_psn"`
	State      string         `json:"state"`
	Failure    string         `json:"failure,omitempty"`

	// PathRateBps is the rate of the slowest link of its path, what it
	// can reach alone (the levels of a Rail-only fabric differ; 0:
	// unshaped or not known).
	PathRateBps int64 `json:"path_rate_bps,omitempty"`

	// StartNs is when it started (a scheduled flow's: when it is due; 0:
	// never, a scheduled flow aborted before its time).
	StartNs int64 `json:"start_unix_ns"`
	FirstNs int64 `json:"first_unix_ns,omitempty"` // first packet sent
	EndNs   int64 `json:"end_unix_ns,omitempty"`   // last byte acknowledged, failed or aborted
	FCTNs   int64 `json:"fct_ns,omitempty"`        // first byte sent to last byte acknowledged
	// StartMonoNs and EndMonoNs are StartNs and EndNs on the machine's
	// monotonic clock (MonotonicNs), exact where the Unix times carry
	// the wall clock's steps and the jitter of converting to it.
	StartMonoNs int64 `json:"start_mono_ns,omitempty"`
	EndMonoNs   int64 `json:"end_mono_ns,omitempty"`

	Packets     uint64  `json:"packets"` // sent, retransmissions included
	Bytes       uint64  `json:"bytes"`
	RetxPackets uint64  `json:"retx_packets"`
	RetxBytes   uint64  `json:"retx_bytes"`
	Timeouts    uint64  `json:"timeouts"`
	ACKs        uint64  `json:"acks"` // received
	NAKs        uint64  `json:"naks"`
	CNPs        uint64  `json:"cnps"`
	AckedBytes  int64   `json:"acked_bytes"` // acknowledged cumulatively
	RateBps     float64 `json:"rate_bps"`    // pacing rate now (DCQCN's Rc, HPCC's W/T)
	// Window congestion controls: the window now in packets, and DCTCP's
	// alpha and window cuts or HPCC's U and cuts (updates with U >= eta).
	WindowPackets int64   `json:"window_packets,omitempty"`
	Alpha         float64 `json:"alpha,omitempty"`
	HPCCU         float64 `json:"hpcc_u,omitempty"`
	WindowCuts    uint64  `json:"window_cuts,omitempty"`
	NoFrame       uint64  `json:"no_frame"` // found no free frame, or the buffer refused one
	// Injected counts the first transmissions dropped on purpose
	// (RDMARequest.Lose), which Packets counts as sent.
	Injected uint64 `json:"injected,omitempty"`

	// RateLimitBps is the cap the request set (0: none).
	RateLimitBps int64 `json:"rate_limit_bps,omitempty"`
	// Flows of messages (RDMARequest.MsgBytes): the message size, the
	// messages acknowledged whole, and, once the flow ends, its peak
	// rate: payload acknowledged within the best tenth of its time.
	MsgBytes int64   `json:"msg_bytes,omitempty"`
	Messages int64   `json:"messages,omitempty"`
	PeakBps  float64 `json:"peak_bps,omitempty"`
	// Latency is a latency flow's round trips, once it has ended.
	Latency *LatencyStats `json:"latency,omitempty"`
}

// RDMAReceiver is what a destination counted of one flow.
type RDMAReceiver struct {
	Src  int            `json:"src"`
	QP   uint32         `json:"qp"`
	Mode transport.Mode `json:"mode"`
	Done bool           `json:"done"`
	Gap  bool           `json:"gap"` // lossless: a PSN gap was seen (the flow failed)
	// Stats are transport.ReceiverStats.Map: packets, bytes, duplicates,
	// out_of_order, dropped, gaps, lost, acks, naks, cnps (sent), ce.
	Stats map[string]uint64 `json:"stats"`
	// Times of the first packet and of the flow's last byte in order,
	// Unix ns (0: not yet).
	FirstNs    int64 `json:"first_unix_ns"`
	CompleteNs int64 `json:"complete_unix_ns,omitempty"`
}

// RDMACounters are the NIC's RDMA events that belong to no flow.
type RDMACounters struct {
	// Malformed counts frames to UDP port 4791 that are not RoCEv2
	// frames the NIC parses, BadICRC those whose ICRC is wrong; both are
	// dropped as malformed.
	Malformed uint64 `json:"malformed"`
	BadICRC   uint64 `json:"bad_icrc"`
	// UnknownQP counts ACKs, NAKs and CNPs for no flow of this NIC and
	// data whose QP names no mode; Unsupported RNR NAKs and NAK codes
	// other than a PSN sequence error; ReceiverLimit data for a new QP
	// beyond the receivers a NIC keeps. All are dropped.
	UnknownQP     uint64 `json:"unknown_qp"`
	Unsupported   uint64 `json:"unsupported"`
	ReceiverLimit uint64 `json:"receiver_limit"`
	// NoFrame counts ACKs, NAKs and CNPs not sent for want of a frame or
	// buffer room.
	NoFrame uint64 `json:"no_frame"`
	// Injected counts the data packets of every flow dropped on purpose
	// instead of sent (RDMARequest.Lose): injected drops, also in the
	// port's PortStats.InjectedTx.
	Injected uint64 `json:"injected"`
}

// RDMAReport is GET /rdma.
type RDMAReport struct {
	NowNs     int64            `json:"now_unix_ns"`
	Params    transport.Params `json:"params"`
	Flows     []RDMAFlow       `json:"flows"`
	Receivers []RDMAReceiver   `json:"receivers,omitempty"`
	Counters  RDMACounters     `json:"counters"`
}
