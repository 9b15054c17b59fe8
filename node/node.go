package node

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/queues"
)

// Port is one interface a node drives.
type Port struct {
	Ifname   string
	RateBps  uint64
	Delay    time.Duration
	CapBytes int
	// MAC and PeerMAC are a fabric port's cable ends, its own and its
	// peer's (nil for the application port): its link is probed.
	MAC, PeerMAC net.HardwareAddr
	// MaxDelay is the model's whole link delay, the most the probes may
	// steer Delay to (0: Delay).
	MaxDelay time.Duration
	Queues   queues.EgressConfig
}

// Spec is a node as its builder describes it (swd.NewNode, hostd.NewNode):
// its ports, the handler of its frames, and what it adds to bring-up and
// to its control socket.
type Spec struct {
	Kind    string // swd or hostd
	Config  *config.Node
	Ports   []Port
	Handler dataplane.BoundHandler
	Log     *slog.Logger
	// Setup, if set, runs inside the node's namespace after its ports are
	// bound and before its engine starts (hostd configures bc0 here).
	Setup func() error
	// Teardown, if set, undoes what Setup set up that the node's process
	// holds (hostd: the bc0 classifier); it runs when the node stops, and
	// must do nothing when Setup did not run.
	Teardown func() error
	// Routes, if set, adds handlers to the control socket.
	Routes func(mux *http.ServeMux)
	// HostStats, if set, is the server's own section of GET /stats.
	HostStats func() *api.HostStats
}

// Builder turns a validated node config into the node to run.
type Builder func(cfg *config.Node, t bcube.Topology, n bcube.Node, log *slog.Logger) (*Spec, error)

// TapPoll is how often a daemon looks for packet captures on its nodes'
// ports.
const TapPoll = time.Second
