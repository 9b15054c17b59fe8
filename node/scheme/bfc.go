package scheme

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
)

// How BFC gives flows queues (config.Node.BFCAssign).
const (
	// BFCAssignDynamic is BFC's own assignment: a flow keeps its queue
	// while it has packets in the node or was seen within the sticky
	// time, and otherwise takes an empty queue.
	BFCAssignDynamic = "dynamic"
	// BFCAssignHash fixes a flow's queue by its hash (stochastic fair
	// queueing): flows whose hashes collide share a queue for good.
	BFCAssignHash = "hash"
)

// DefaultBFCQueues is BFC's physical queues per port, the HQ included.
const DefaultBFCQueues = 32

// BFC is Backpressure Flow Control (DESIGN §5), switches and servers
// alike: each fabric port's data queues are given to flows as they come
// (a flow table per egress), every data frame carries the queue it left
// its sender by in its VID, and a node pauses the upstream queue whose
// frames join one of its queues over Th = one-hop BDP / active queues.
// Servers relay with the same logic; as sources they only obey.
type BFC struct {
	quiet
	place Place
	cfg   signaling.BFCConfig
	sm    *signaling.BFC
	hq    int
	dp    Datapath
}

// NewBFC returns BFC at place p with cfg, which must be valid.
func NewBFC(p Place, cfg signaling.BFCConfig) *BFC {
	return &BFC{place: p, cfg: cfg, hq: cfg.Queues - 1}
}

func newBFC(c *config.Node, p Place) (Scheme, error) {
	var errs []error
	if c.Queueing != "" && c.Queueing != QueueingBFC {
		errs = append(errs, fmt.Errorf("fc bfc needs queueing %s, not %s", QueueingBFC, c.Queueing))
	}
	_, err := relayDRR(c, false)
	errs = append(errs, err)
	cfg := BFCConfig(c)
	if _, err := bfcEgress(cfg.Queues); err != nil {
		errs = append(errs, err)
	} else if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch c.BFCAssign {
	case "", BFCAssignDynamic, BFCAssignHash:
	default:
		errs = append(errs, fmt.Errorf("bfc_assign %q: want %s or %s", c.BFCAssign, BFCAssignDynamic, BFCAssignHash))
	}
	errs = append(errs, checkRefresh(c), checkHold(c))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return NewBFC(p, cfg), nil
}

func describeBFC(c *config.Node, perLevel PerLevel) string {
	q, assign := c.BFCQueues, c.BFCAssign
	if q == 0 {
		q = DefaultBFCQueues
	}
	if assign == "" {
		assign = BFCAssignDynamic
	}
	return fmt.Sprintf("bfc: %d queues per port (the HQ one of them), assignment %s; pause threshold one-hop BDP %s / active queues",
		q, assign, perLevel(func(c *config.Node, port string) string { return fmt.Sprintf("%d B", c.PortBDP(port)) }))
}

// bfcVariant: bfc:Q is BFC with Q queues per port, the HQ included
// (bfc:2 a single data queue); bfc:hash keeps every flow in a queue its
// hash chooses (stochastic fair queueing), bfc:dynamic is BFC's own.
func bfcVariant(k *Knobs, w string) (bool, error) {
	switch w {
	case BFCAssignHash, BFCAssignDynamic:
		k.BFCAssign = w
		return true, nil
	}
	n, err := strconv.Atoi(w)
	switch {
	case err != nil:
		return false, nil
	case n < 2:
		return true, fmt.Errorf("bfc's queue count %d: want at least 2 (bfc:32, bfc:2)", n)
	}
	k.BFCQueues = n
	return true, nil
}

func bfcKnobs(k Knobs) Knobs { return Knobs{BFCQueues: k.BFCQueues, BFCAssign: k.BFCAssign} }

// BFCConfig is c's BFC: BFCQueues queues (0: DefaultBFCQueues) and
// BFCTable entries (0: 100 per queue); the sticky time the model's (two
// one-hop RTTs); Th's BDP the one-hop BDP at each port's rate; the
// random queue choices seeded by the node's name, so each node differs
// and every run is the same.
func BFCConfig(c *config.Node) signaling.BFCConfig {
	h := fnv.New64a()
	h.Write([]byte(c.Node))
	b := signaling.BFCConfig{Queues: c.BFCQueues, TableSize: c.BFCTable, Sticky: int64(c.Model().FlowControl().Sticky),
		Refresh: int64(c.FCRefresh), Hold: int64(c.FCHold), BDP: c.BDP(), Seed: h.Sum64(),
		Hashed: c.BFCAssign == BFCAssignHash}
	if b.Queues == 0 {
		b.Queues = DefaultBFCQueues
	}
	if b.TableSize == 0 {
		b.TableSize = 100 * b.Queues
	}
	for _, name := range c.FabricPorts() {
		b.PerPortBDP = append(b.PerPortBDP, c.PortBDP(name))
	}
	return b
}

func (*BFC) Name() string { return NameBFC }

func (s *BFC) Egress() queues.EgressConfig {
	c, _ := bfcEgress(s.cfg.Queues) // checked by the constructor
	return c
}

func (s *BFC) Bind(dp Datapath, ports []Port) {
	var bp []signaling.BFCPort
	for _, p := range ports {
		bp = append(bp, signaling.BFCPort{Own: p.Own, Peer: p.Peer})
	}
	s.dp = dp
	s.sm = signaling.NewBFC(dp, bp, s.cfg)
}

// Classify assigns a data frame to a queue of its flow's and tags it
// with it, its upstream queue at the next node. A control frame, or one
// without a tag to carry the queue, rides the HQ.
func (s *BFC) Classify(f *Frame) (int, uint64) {
	if signaling.IsControl(f.PCP) || !f.Tagged {
		return s.hq, 0
	}
	tu := f.tuple()
	q, meta := s.sm.Classify(f.Out, bcube.FlowHash(&tu), f.In, f.H.VID, s.dp.Now())
	header.SetVID(f.B, signaling.VID(q))
	return q, meta
}

func (s *BFC) ControlQueue(int) int { return s.hq }

// FlowQueue: BFC assigns queues per frame.
func (*BFC) FlowQueue(int, int) int { return -1 }

func (s *BFC) OwnFrame(p int, flowHash uint32, now int64) (int, uint64) {
	return s.sm.Classify(p, flowHash, -1, 0, now)
}

func (s *BFC) OnSignal(in int, sig signaling.Signal) bool {
	s.sm.OnSignal(in, sig)
	return true
}

// Hooks account each fabric port's packets in its flow table and pause
// counters: the ports Bind was given (a graph fabric's switch has no
// BCube place to count them by).
func (s *BFC) Hooks(p int) queues.Hooks {
	if s.sm == nil || p >= len(s.sm.B.C) {
		return nil
	}
	return s.sm.Hooks(p)
}

func (s *BFC) NextTick() int64 { return s.sm.NextTick() }
func (s *BFC) Tick(now int64)  { s.sm.Tick(now) }

func (s *BFC) PortCounters(p int, m map[string]uint64) {
	if p < len(s.sm.B.C) { // a server's application port carries no signals
		s.sm.B.C[p].Fill(m)
	}
}

// State is the node's BFC (nil until bound).
func (s *BFC) State() *signaling.BFC { return s.sm }
