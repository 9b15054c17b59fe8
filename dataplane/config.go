package dataplane

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/bcfab/bcfab/bcube"
)

// Config is what lab writes for one daemon (swd or hostd) as JSON. Everything
// a daemon derives from the topology (interface names, MACs, neighbours) is
// not in it: bcube computes those from N, K and Node.
type Config struct {
	Lab  string `json:"lab"`
	Node string `json:"node"` // h<i> or s<l>.<w>
	N    int    `json:"n"`
	K    int    `json:"k"`

	// RateBps is the emulated link rate of every fabric port, in bit/s, on
	// the wire (Ethernet preamble, IFG and FCS included); 0 means unshaped.
	RateBps uint64 `json:"rate_bps"`
	// Delay is the propagation delay each egress holds a frame for after
	// serialising it.
	Delay Duration `json:"delay"`
	// BufferBytes caps the bytes queued at one egress port.
	BufferBytes int `json:"buffer_bytes"`

	// RxCoalesce is the receive moderation window (like a NIC's rx-usecs):
	// after a wake-up the daemon polls receive again no sooner than this.
	// Zero takes DefaultRxCoalesce; a negative value turns it off.
	RxCoalesce Duration `json:"rx_coalesce,omitempty"`

	// XDPMode is native, generic or auto (native, falling back to generic).
	XDPMode string `json:"xdp_mode"`
	// LevelOrder is the hosts' routing policy: hash, ascending, descending
	// or a permutation such as "1,0".
	LevelOrder string `json:"level_order,omitempty"`

	// Control is the path of the daemon's control socket (HTTP over a unix
	// socket: GET /healthz, GET /stats).
	Control string `json:"control"`

	// FramesPerPort sizes the UMEM: NumFrames = FramesPerPort x ports,
	// rounded up to a power of two. RingSize is every ring's size.
	FramesPerPort int `json:"frames_per_port"`
	RingSize      int `json:"ring_size"`
	// FrameSize is the UMEM chunk size (2048 or 4096).
	FrameSize int `json:"frame_size"`
}

// Defaults for the fields a lab may leave zero.
const (
	// DefaultRateBps is the link rate a lab gets unless told otherwise: what
	// this class of machine (2 cores) sustains faithfully on a 4-hop path of
	// kernel TCP through five daemons (docs/BENCHMARKS.md). The papers run
	// 100 Gb/s; thresholds scale with the rate, so the ratios hold.
	DefaultRateBps       = 500_000_000
	DefaultBufferBytes   = 1 << 20
	DefaultFramesPerPort = 2048
	DefaultRingSize      = 512
	DefaultFrameSize     = 2048
	DefaultXDPMode       = "native"
	DefaultRxCoalesce    = Duration(20 * time.Microsecond)
)

// SetDefaults fills zero fields with the defaults above (RateBps excepted:
// zero means unshaped and is a valid choice).
func (c *Config) SetDefaults() {
	if c.BufferBytes == 0 {
		c.BufferBytes = DefaultBufferBytes
	}
	if c.FramesPerPort == 0 {
		c.FramesPerPort = DefaultFramesPerPort
	}
	if c.RingSize == 0 {
		c.RingSize = DefaultRingSize
	}
	if c.FrameSize == 0 {
		c.FrameSize = DefaultFrameSize
	}
	if c.XDPMode == "" {
		c.XDPMode = DefaultXDPMode
	}
	if c.RxCoalesce == 0 {
		c.RxCoalesce = DefaultRxCoalesce
	}
}

// Validate checks the config and resolves its topology and node.
func (c *Config) Validate() (bcube.Topology, bcube.Node, error) {
	t, err := bcube.New(c.N, c.K)
	if err != nil {
		return t, bcube.Node{}, err
	}
	node, err := t.ParseNode(c.Node)
	if err != nil {
		return t, node, err
	}
	var errs []error
	pow2 := func(v int) bool { return v > 0 && v&(v-1) == 0 }
	if c.Control == "" {
		errs = append(errs, errors.New("control socket path is empty"))
	}
	if c.BufferBytes < 2*1518 {
		errs = append(errs, fmt.Errorf("buffer_bytes %d is below two full frames", c.BufferBytes))
	}
	if !pow2(c.RingSize) || c.RingSize < 64 || c.RingSize > 8192 {
		errs = append(errs, fmt.Errorf("ring_size %d: want a power of two in [64, 8192]", c.RingSize))
	}
	if c.FrameSize != 2048 && c.FrameSize != 4096 {
		errs = append(errs, fmt.Errorf("frame_size %d: want 2048 or 4096", c.FrameSize))
	}
	if c.FramesPerPort < 2*c.RingSize+64 {
		errs = append(errs, fmt.Errorf("frames_per_port %d: need at least fill + tx rings (2 x %d) + 64", c.FramesPerPort, c.RingSize))
	}
	if c.RxCoalesce.D() > time.Millisecond {
		errs = append(errs, fmt.Errorf("rx_coalesce %v: want at most 1ms", c.RxCoalesce.D()))
	}
	if c.Delay < 0 || c.Delay.D() > time.Second {
		errs = append(errs, fmt.Errorf("delay %v: want 0..1s", c.Delay.D()))
	}
	switch c.XDPMode {
	case "native", "generic", "auto":
	default:
		errs = append(errs, fmt.Errorf("xdp_mode %q: want native, generic or auto", c.XDPMode))
	}
	if !node.Switch {
		if _, err := t.ParsePolicy(c.LevelOrder); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return t, node, fmt.Errorf("config for %s: %w", c.Node, err)
	}
	return t, node, nil
}

// LoadConfig reads and validates a daemon config file.
func LoadConfig(path string) (*Config, bcube.Topology, bcube.Node, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, bcube.Topology{}, bcube.Node{}, fmt.Errorf("read config: %w", err)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, bcube.Topology{}, bcube.Node{}, fmt.Errorf("parse config %s: %w", path, err)
	}
	c.SetDefaults()
	t, n, err := c.Validate()
	if err != nil {
		return nil, t, n, err
	}
	return &c, t, n, nil
}

// Duration is a time.Duration that reads and writes as "1.5ms" in JSON.
type Duration time.Duration

func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = Duration(v)
	return nil
}
