package api

// GenPort is the UDP destination port of hostd's generated traffic.
const GenPort = 5999

// Defaults of a generated flow.
const (
	DefaultGenFrame  = 1518
	DefaultGenWindow = 64 << 10
)

// GenRequest starts a generated flow (POST /gen on a server's control
// socket).
type GenRequest struct {
	Dst      int   `json:"dst"`
	Bytes    int64 `json:"bytes,omitempty"`       // stop after this many frame bytes (0: by duration)
	Duration int64 `json:"duration_ns,omitempty"` // stop after this long (0: by bytes)
	FrameLen int   `json:"frame_len,omitempty"`   // on the wire without FCS, default 1518
	Window   int   `json:"window,omitempty"`      // bytes the flow may hold in its queue, default 64 KiB
	// Order fixes the flow's level order ("0,1", "1,0", ...): under the
	// hash policy the generator picks a source port whose hash gives it,
	// so every node routes the flow that way; under a fixed policy it must
	// be that policy's order.
	Order string `json:"order,omitempty"`
}

// GenFlow is a generated flow's state at its source.
type GenFlow struct {
	ID      int    `json:"id"`
	Dst     int    `json:"dst"`
	SPort   uint16 `json:"sport"`
	Port    int    `json:"port"`  // fabric port it leaves by
	Queue   string `json:"queue"` // queue it uses there
	Order   string `json:"order"` // its level order
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
	StartNs int64  `json:"start_unix_ns"`
	EndNs   int64  `json:"end_unix_ns,omitempty"`
	Done    bool   `json:"done"`
	NoFrame uint64 `json:"no_frame"` // times it found no free frame, or the buffer refused one
}

// SinkFlow is what a destination counted of one generated flow.
type SinkFlow struct {
	Src        int    `json:"src"`
	SPort      uint16 `json:"sport"`
	Packets    uint64 `json:"packets"`
	Bytes      uint64 `json:"bytes"`
	Gaps       uint64 `json:"gaps"` // sequence numbers missing (lost or reordered)
	NextSeq    uint64 `json:"next_seq"`
	FirstNs    int64  `json:"first_unix_ns"`
	LastNs     int64  `json:"last_unix_ns"`
	MaxDelayNs int64  `json:"max_delay_ns"` // one-way, send to arrival
}

// SinkReport is one sink flow with its mean delay.
type SinkReport struct {
	SinkFlow
	AvgDelayNs int64 `json:"avg_delay_ns"`
}

// GenReport is GET /gen.
type GenReport struct {
	Flows []GenFlow    `json:"flows"`
	Sink  []SinkReport `json:"sink"`
}
