package scheme

import (
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
)

// CI is congestion isolation over PFC, switches and relaying servers
// alike (docs/SCHEMES.md, "Congestion isolation"): PFC as it runs alone
// (priority queues, data priority 3), plus a lossless priority 2 for the
// congested-flow queue; a data frame whose flow is isolated at its
// egress leaves by that queue retagged with priority 2, so the node
// downstream charges it to priority 2 and a pause of it holds no victim.
// The state machine is signaling.ICI. Coordinated is ICI, whose ECN
// marking follows the isolation; otherwise it is plain CI, whose DCQCN
// marks as if it were not there.
type CI struct {
	*PFC
	coordinated bool
	cfg         signaling.ICIConfig
	sm          *signaling.ICI
	hooks       []ciHooks
	dp          Datapath
}

// NewCI returns congestion isolation at place p over PFC with thresholds
// th (priorities 3 and 2 lossless), cfg its settings (Coordinated: ICI).
func NewCI(p Place, th signaling.PFCThresholds, rateBps uint64, cfg signaling.ICIConfig) *CI {
	th.Lossless |= 1<<signaling.PCPData | 1<<signaling.PCPCongested
	cfg.Normal, cfg.Congested = signaling.PCPData, signaling.PCPCongested
	if !p.Node.Switch {
		cfg.Server, cfg.Own = true, bcube.ServerIP(p.Node.Index).As4()
	}
	return &CI{PFC: NewPFC(p, th, rateBps, false), coordinated: cfg.Coordinated, cfg: cfg}
}

// newCI is the registry's constructor of ici (coordinated) or ci.
func newCI(coordinated bool) func(c *config.Node, p Place) (Scheme, error) {
	return func(c *config.Node, p Place) (Scheme, error) {
		errs := checkPriorityPFC(c, ciName(coordinated))
		cfg := ICIConfig(c, coordinated)
		switch {
		case cfg.Table < 1 || cfg.Table > signaling.MaxICITable:
			errs = append(errs, fmt.Errorf("ci_table %d: want 1..%d entries per port", cfg.Table, signaling.MaxICITable))
		case cfg.Detect <= 0:
			errs = append(errs, fmt.Errorf("ci_detect_bytes %d: want > 0", cfg.Detect))
		case cfg.CQKmin < 0 || cfg.CQKmin > cfg.CQKmax:
			errs = append(errs, fmt.Errorf("ci_kmin_bytes %d, ci_kmax_bytes %d: want 0 <= kmin <= kmax", cfg.CQKmin, cfg.CQKmax))
		case cfg.Residency <= 0:
			errs = append(errs, fmt.Errorf("ci_residency %v: want > 0", c.CIResidency.D()))
		}
		errs = append(errs, checkRefresh(c), checkHold(c), checkPFCPool(c, PFCThresholds(c, false)))
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		s := NewCI(p, PFCThresholds(c, false), c.RateBps, cfg)
		s.bdp = portBDPs(c)
		return s, nil
	}
}

func ciName(coordinated bool) string {
	if coordinated {
		return NameICI
	}
	return NameCI
}

func describeCI(coordinated bool) func(c *config.Node, perLevel PerLevel) string {
	return func(c *config.Node, perLevel PerLevel) string {
		ci := c.NodeCI()
		what := "ici: congestion isolation, victims unmarked while the table has room"
		if !coordinated {
			what = "ci: congestion isolation, DCQCN marking as usual"
		}
		return fmt.Sprintf("%s; %d entries per port, detection %s, residency %v; over PFC (P3 data, P2 isolated) ",
			what, ci.Table, bytesBDP(ci.Detect, c.BDP()), ci.Residency) + perLevel(func(c *config.Node, port string) string {
			return pfcLimitsText(c.PortPFC(port), c.PortBDP(port), PFCThresholds(c, false).Pool)
		})
	}
}

// ICIConfig is c's congestion isolation (config.Node.NodeCI), the
// congested queue's marking seeded by the node's name.
func ICIConfig(c *config.Node, coordinated bool) signaling.ICIConfig {
	ci := c.NodeCI()
	h := fnv.New64a()
	h.Write([]byte(c.Node))
	return signaling.ICIConfig{Table: ci.Table, Detect: ci.Detect, CQKmin: ci.CQKmin, CQKmax: ci.CQKmax, Pmax: ci.Pmax,
		Residency: int64(ci.Residency), Refresh: int64(ci.Refresh), Coordinated: coordinated, Seed: h.Sum64()}
}

func (s *CI) Name() string { return ciName(s.coordinated) }

// Bind makes the node's PFC and its congestion isolation.
func (s *CI) Bind(dp Datapath, ports []Port) {
	s.PFC.Bind(dp, ports)
	s.dp = dp
	var ip []signaling.ICIPort
	for _, p := range ports {
		ip = append(ip, signaling.ICIPort{Own: p.Own, Peer: p.Peer})
	}
	s.sm = signaling.NewICI(dp, ip, s.cfg)
	pfc := s.PFC.Hooks(0)
	for p := range ports {
		s.hooks = append(s.hooks, ciHooks{pfc: pfc, ici: s.sm.Hooks(p)})
	}
}

// Classify: a data frame of priority 3 or 2 that a node forwards is
// isolation's to queue (and retag); anything else, and a server's own
// kernel frames, PFC's. The frame stays charged to the priority it
// arrived with.
func (s *CI) Classify(f *Frame) (int, uint64) {
	if !f.Tagged || f.In < 0 || (f.PCP != signaling.PCPData && f.PCP != signaling.PCPCongested) {
		return s.PFC.Classify(f)
	}
	tu := f.tuple()
	q, meta := s.sm.Classify(f.Out, f.In, f.PCP, &tu, bcube.FlowHash(&tu), s.dp.Now())
	if q != f.PCP {
		header.SetPCP(f.B, q)
	}
	return int(q), f.ingress() | meta
}

func (s *CI) OnSignal(in int, sig signaling.Signal) bool { return s.sm.OnSignal(in, sig) }

// Hooks: PFC's on every port; on fabric ports isolation's counting and
// marking too.
func (s *CI) Hooks(p int) queues.Hooks {
	if p >= len(s.hooks) {
		return s.PFC.Hooks(p)
	}
	return &s.hooks[p]
}

// NextTick is the earlier of PFC's and isolation's.
func (s *CI) NextTick() int64 {
	a, b := s.PFC.NextTick(), s.sm.NextTick()
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

func (s *CI) Tick(now int64) {
	if t := s.PFC.NextTick(); t >= 0 && t <= now {
		s.PFC.Tick(now)
	}
	if t := s.sm.NextTick(); t >= 0 && t <= now {
		s.sm.Tick(now)
	}
}

func (s *CI) PortCounters(p int, m map[string]uint64) {
	s.PFC.PortCounters(p, m)
	if p < len(s.sm.C) {
		s.sm.C[p].Fill(m)
	}
}

// Isolation is the node's congestion isolation (nil until bound).
func (s *CI) Isolation() *signaling.ICI { return s.sm }

// ciHooks are a fabric port's hooks: PFC's ingress accounting, and
// isolation's counts and marks.
type ciHooks struct {
	pfc queues.Hooks
	ici *signaling.ICIHooks
}

func (h *ciHooks) Enqueued(q int, p queues.Packet) {
	h.pfc.Enqueued(q, p)
	h.ici.Enqueued(q, p)
}

func (h *ciHooks) Dequeued(q int, p queues.Packet) {
	h.pfc.Dequeued(q, p)
	h.ici.Dequeued(q, p)
}

func (h *ciHooks) Mark(q, qbytes int, red bool) bool { return h.ici.Mark(q, qbytes, red) }
