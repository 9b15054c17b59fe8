package lab

// A capture's tally: how many frames a capture on a port holds in each
// direction, against what the cable's two ends counted over the same
// window.
//
// The window is bounded by two pairs of daemon snapshots (GET /stats of
// the node and of its peer). A daemon copies its counters on its worker's
// thread between two steps and says when (api.Stats.CountedUnixNs): a
// frame its port transmitted before that instant is counted, none after.
// On a veth the port writes the frame the capture sees in the same step,
// so its timestamp falls on the same side of the instant, to within the
// kernel's few microseconds between the write and the timestamp. On a
// patched cable the worker's copier writes the copies on its own thread,
// up to a few milliseconds later, in order; it says when it had written
// the copy of every frame counted and of none after
// (api.PortStats.CountedUnixNs), and that instant divides the port's
// copies in place of the node's. So the frames of
// the capture sent by the port with timestamps in (from, to] of the
// node's snapshots are exactly the increase of the port's tx_packets, if
// the capture lost none; and those sent by the peer in the peer's window,
// the increase of the peer port's tx_packets. On a veth cable the
// received direction is not captured at all (XDP hands those frames to
// the AF_XDP socket before the taps); Tally says so instead of counting.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/api"
)

// Tally counts a capture's frames against the counters of the cable's
// two ends. Start it once the capture listens, feed it every frame, Stop
// it before the capture stops. Safe for concurrent use.
type Tally struct {
	runRoot, lab      string
	node, port        string
	peer, peerPort    string
	self, other       string // the two ends' names as the ethers file gives them: "s0.0.p1"
	names             map[string]string
	stats             func(node string) (*api.Stats, error)
	captureTimeout    time.Duration
	mu                sync.Mutex
	started, stopped  bool
	from, to          [2]*api.Stats // node, peer
	sentTs, recvTs    []int64
	others            int
	startErr, stopErr error
}

// TallyResult is what a tally found.
type TallyResult struct {
	Node, Port, Peer, PeerPort string
	// From and To bound the node's window (its two snapshots).
	From, To time.Time
	// Sent is the increase of the port's tx_packets over its window;
	// SentCaptured the capture's frames from the port in it.
	Sent, SentCaptured uint64
	// PeerSent is the increase of the peer port's tx_packets over the
	// peer's window; ReceivedCaptured the capture's frames from the peer
	// in it; Received the increase of the port's rx_packets over its own
	// window (frames still on its receive ring at a snapshot count later
	// than their copies).
	PeerSent, ReceivedCaptured, Received uint64
	// Patched: the cable is patched, so the capture shows what the port
	// receives; on a veth it does not, and the received counts are not
	// compared.
	Patched bool
	// Others is how many captured frames neither end sent (none on a
	// fabric cable).
	Others int
	// LostLink is the link time the port lost to a late daemon in the
	// window (api.PortStats.LostLinkNs): what capturing it cost its
	// timing, if anything.
	LostLink time.Duration
}

// Exact reports whether the capture holds every frame each direction
// carried in the window, and nothing else.
func (r TallyResult) Exact() bool {
	return r.Sent == r.SentCaptured && r.Others == 0 && (!r.Patched || r.PeerSent == r.ReceivedCaptured)
}

// String is the tally in two lines.
func (r TallyResult) String() string {
	ok := func(a, b uint64) string {
		if a == b {
			return "all of them"
		}
		if b < a {
			return fmt.Sprintf("MISSING %d", a-b)
		}
		return fmt.Sprintf("%d MORE", b-a)
	}
	s := fmt.Sprintf("counted %s to %s: %s %s sent %s, captured %d (%s)",
		r.From.Local().Format("15:04:05.000000"), r.To.Local().Format("15:04:05.000000"),
		r.Node, r.Port, units.Count(r.Sent, "frame", "frames"), r.SentCaptured, ok(r.Sent, r.SentCaptured))
	if r.Patched {
		s += fmt.Sprintf("\n  %s %s sent %d toward it, captured %d (%s); %s %s's rx_packets rose %d",
			r.Peer, r.PeerPort, r.PeerSent, r.ReceivedCaptured, ok(r.PeerSent, r.ReceivedCaptured), r.Node, r.Port, r.Received)
	} else {
		s += fmt.Sprintf("\n  what %s %s receives is not captured: the cable is a veth, whose XDP program hands received frames to AF_XDP before the taps (lab up --links patch shows both directions)", r.Node, r.Port)
	}
	s += fmt.Sprintf("\n  %s %s lost %v of the lab's link time to lateness in the window", r.Node, r.Port, r.LostLink)
	if r.Others > 0 {
		s += fmt.Sprintf("\n  %s from neither end", units.Count(r.Others, "captured frame came", "captured frames came"))
	}
	return s
}

// NewTally prepares a tally of a capture on port of node in lab name.
// names are the lab's MACs by node and port (ReadEthers).
func NewTally(runRoot, name, node, port string, names map[string]string) (*Tally, error) {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return nil, err
	}
	peerOf, err := st.Spec.PeerFunc()
	if err != nil {
		return nil, err
	}
	peer, peerPort, ok := peerOf(node, port)
	if !ok {
		return nil, fmt.Errorf("tally: %s %s has no cable (its ports: %s)", node, port, strings.Join(st.Spec.NodePorts(node), ", "))
	}
	if names == nil {
		return nil, fmt.Errorf("tally: lab %s has no ethers file to tell the cable's ends apart", name)
	}
	return &Tally{runRoot: runRoot, lab: name, node: node, port: port, peer: peer, peerPort: peerPort,
		self: node + "." + port, other: peer + "." + peerPort, names: names,
		stats:          func(n string) (*api.Stats, error) { return Stats(runRoot, name, n) },
		captureTimeout: 5 * time.Second}, nil
}

// snapshot reads both ends' stats.
func (t *Tally) snapshot() ([2]*api.Stats, error) {
	var s [2]*api.Stats
	for i, n := range []string{t.node, t.peer} {
		st, err := t.stats(n)
		if err != nil {
			return s, err
		}
		if st.CountedUnixNs == 0 {
			return s, fmt.Errorf("%s's daemon does not say when it counted (an older build)", n)
		}
		s[i] = st
	}
	return s, nil
}

// Start waits until the node's daemon reports the port captured (it
// looks for captures once a second) and takes the first snapshots. ctx
// ends the wait.
func (t *Tally) Start(ctx context.Context) error {
	deadline := time.Now().Add(t.captureTimeout)
	for {
		st, err := t.stats(t.node)
		if err != nil {
			return t.failStart(err)
		}
		if p := findPort(st, t.port); p != nil && p.Captured {
			break
		}
		if time.Now().After(deadline) {
			return t.failStart(fmt.Errorf("%s did not notice the capture on %s within %v", t.node, t.port, t.captureTimeout))
		}
		select {
		case <-ctx.Done():
			return t.failStart(ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	s, err := t.snapshot()
	if err != nil {
		return t.failStart(err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped || t.stopErr != nil {
		t.startErr = t.endedEarly()
		return t.startErr
	}
	t.from, t.started = s, true
	return nil
}

// endedEarly says that the capture stopped before the node's daemon
// noticed it: a daemon looks for captures once a second.
func (t *Tally) endedEarly() error {
	return fmt.Errorf("the capture stopped before %s noticed it on %s (a daemon looks once a second); capture for 2s or more to get one", t.node, t.port)
}

func (t *Tally) failStart(err error) error {
	t.mu.Lock()
	t.startErr = err
	t.mu.Unlock()
	return err
}

// Stop takes the last snapshots. Call it before the capture stops; the
// capture should go on a moment longer, for copies in flight.
func (t *Tally) Stop() error {
	s, err := t.snapshot()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.to, t.stopped, t.stopErr = s, err == nil, err
	return err
}

// Frame counts one captured frame, by its source MAC.
func (t *Tally) Frame(ts time.Time, data []byte) {
	if len(data) < 12 {
		return
	}
	src := t.names[net.HardwareAddr(data[6:12]).String()]
	t.mu.Lock()
	defer t.mu.Unlock()
	switch src {
	case t.self:
		t.sentTs = append(t.sentTs, ts.UnixNano())
	case t.other:
		t.recvTs = append(t.recvTs, ts.UnixNano())
	default:
		t.others++
	}
}

// Result is the tally, once Start and Stop succeeded.
func (t *Tally) Result() (TallyResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.startErr != nil:
		return TallyResult{}, t.startErr
	case !t.started:
		return TallyResult{}, t.endedEarly()
	case t.stopErr != nil:
		return TallyResult{}, t.stopErr
	case !t.stopped:
		return TallyResult{}, errors.New("the capture ended before its last counters were read")
	}
	from, to := findPort(t.from[0], t.port), findPort(t.to[0], t.port)
	pfrom, pto := findPort(t.from[1], t.peerPort), findPort(t.to[1], t.peerPort)
	if from == nil || to == nil || pfrom == nil || pto == nil {
		return TallyResult{}, fmt.Errorf("%s %s or %s %s missing from their daemons' stats", t.node, t.port, t.peer, t.peerPort)
	}
	if t.to[0].StartedUnixNs != t.from[0].StartedUnixNs || t.to[1].StartedUnixNs != t.from[1].StartedUnixNs {
		return TallyResult{}, fmt.Errorf("%s or %s started again during the capture", t.node, t.peer)
	}
	r := TallyResult{Node: t.node, Port: t.port, Peer: t.peer, PeerPort: t.peerPort,
		From: time.Unix(0, countedAt(t.from[0], from)), To: time.Unix(0, countedAt(t.to[0], to)),
		Sent:             to.TxPackets - from.TxPackets,
		PeerSent:         pto.TxPackets - pfrom.TxPackets,
		Received:         to.RxPackets - from.RxPackets,
		Patched:          from.Patched,
		Others:           t.others,
		LostLink:         time.Duration(to.LostLinkNs - from.LostLinkNs),
		SentCaptured:     uint64(countIn(t.sentTs, countedAt(t.from[0], from), countedAt(t.to[0], to))),
		ReceivedCaptured: uint64(countIn(t.recvTs, countedAt(t.from[1], pfrom), countedAt(t.to[1], pto))),
	}
	return r, nil
}

// countedAt is the instant that divides port p's capture frames as
// snapshot s divides its counters: the port's own when its daemon gives
// one (a patched port's copier), else the node's.
func countedAt(s *api.Stats, p *api.PortStats) int64 {
	if p.CountedUnixNs != 0 {
		return p.CountedUnixNs
	}
	return s.CountedUnixNs
}

// countIn counts the timestamps in (from, to].
func countIn(ts []int64, from, to int64) int {
	n := 0
	for _, x := range ts {
		if x > from && x <= to {
			n++
		}
	}
	return n
}

func findPort(s *api.Stats, port string) *api.PortStats {
	if s == nil {
		return nil
	}
	i := slices.IndexFunc(s.Ports, func(p api.PortStats) bool { return p.Name == port })
	if i < 0 {
		return nil
	}
	return &s.Ports[i]
}
