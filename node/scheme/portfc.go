package scheme

import (
	"errors"
	"fmt"

	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
)

// portfc is what PortFC's two halves share: the layout, classification
// and thresholds. PortFC is per-port flow control (DESIGN §5, the
// papers' Algorithms 1-4): a switch pauses the servers on its other
// ports when the sum of an egress port's A queues, or its B queue,
// crosses X_off (PortFCSwitch); a server obeys, relays B signals, and
// guards a relay queue that a link can outrun — a slower port's, or
// every port's when the relay queue is served in the round robin — as a
// switch does its egress (PortFCServer, signaling.GuardRelay).
type portfc struct {
	quiet
	alloc    allocation
	th       signaling.Thresholds
	relayDRR bool
	bdp      []int // each fabric port's one-hop BDP, for FCTiming (nil: not known)
}

// NewPortFC returns PortFC at place p with thresholds th; relayDRR serves
// a server's relay queue in the round robin, and guards it on every port.
func NewPortFC(p Place, th signaling.Thresholds, relayDRR bool) Scheme {
	return newPortFCAt(p, th, relayDRR, nil)
}

// newPortFCAt is NewPortFC whose ports' one-hop BDPs are bdp.
func newPortFCAt(p Place, th signaling.Thresholds, relayDRR bool, bdp []int) Scheme {
	pf := portfc{alloc: newAllocation(p), th: th, relayDRR: relayDRR, bdp: bdp}
	if p.Node.Switch {
		return &PortFCSwitch{portfc: pf}
	}
	return &PortFCServer{portfc: pf}
}

func newPortFC(c *config.Node, p Place) (Scheme, error) {
	var errs []error
	if c.Queueing != "" && c.Queueing != QueueingPortFC {
		errs = append(errs, fmt.Errorf("fc portfc needs queueing %s, not %s", QueueingPortFC, c.Queueing))
	}
	drr, err := relayDRR(c, true)
	errs = append(errs, err)
	for _, name := range c.FabricPorts() {
		if th := c.PortThresholds(name); th.XonA <= 0 || th.XonA >= th.XoffA || th.XonB <= 0 || th.XonB >= th.XoffB {
			errs = append(errs, fmt.Errorf("portfc thresholds of %s: want 0 < xon < xoff (A %d/%d, B %d/%d)", name, th.XonA, th.XoffA, th.XonB, th.XoffB))
			break
		}
	}
	errs = append(errs, checkRefresh(c), checkHold(c))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return newPortFCAt(p, PortFCThresholds(c), drr, portBDPs(c)), nil
}

func describePortFC(c *config.Node, perLevel PerLevel) string {
	relay := c.RelayQueue
	if relay == "" {
		relay = RelayStrict
	}
	return "portfc: switch egress " + perLevel(func(c *config.Node, port string) string {
		th, bdp := c.PortThresholds(port), c.PortBDP(port)
		if th.XoffA == th.XoffB && th.XonA == th.XonB {
			return fmt.Sprintf("X_off %s, X_on %s per class (A, B)", bytesBDP(th.XoffA, bdp), bytesBDP(th.XonA, bdp))
		}
		return fmt.Sprintf("A X_off %s X_on %s, B X_off %s X_on %s",
			bytesBDP(th.XoffA, bdp), bytesBDP(th.XonA, bdp), bytesBDP(th.XoffB, bdp), bytesBDP(th.XonB, bdp))
	}) + "; servers' relay queue " + relay
}

// relayVariant: portfc:drr and portfc:strict serve the servers' relay
// queue in the round robin of a and b, or before them; so do none:drr,
// irn:drr and gbn:drr, whose servers queue as PortFC's do.
func relayVariant(k *Knobs, w string) (bool, error) {
	if w != RelayDRR && w != RelayStrict {
		return false, nil
	}
	k.RelayQueue = w
	return true, nil
}

// relayKnobs keeps, of a lab's knobs, the relay queue's service.
func relayKnobs(k Knobs) Knobs { return Knobs{RelayQueue: k.RelayQueue} }

// PortFCThresholds are c's PortFC thresholds: XoffA..XonB at RateBps,
// and PerPort those of each fabric port at its own rate
// (config.Node.PortThresholds).
func PortFCThresholds(c *config.Node) signaling.Thresholds {
	p := c.PortThresholds("")
	th := signaling.Thresholds{XoffA: p.XoffA, XonA: p.XonA, XoffB: p.XoffB, XonB: p.XonB, Refresh: int64(c.FCRefresh), Hold: int64(c.FCHold)}
	for _, name := range c.FabricPorts() {
		th.PerPort = append(th.PerPort, c.PortThresholds(name))
	}
	return th
}

func (*portfc) Name() string { return NamePortFC }

func (s *portfc) Egress() queues.EgressConfig { return s.alloc.egress(s.relayDRR) }

func (s *portfc) Classify(f *Frame) (int, uint64) { return s.alloc.queue(f), f.ingress() }

func (s *portfc) ControlQueue(int) int { return s.alloc.hq }

func (s *portfc) FlowQueue(p, dst int) int { return s.alloc.flowQueue(p, dst) }

// PortFCSwitch is PortFC at a switch.
type PortFCSwitch struct {
	portfc
	sm *signaling.SwitchPortFC
}

func (s *PortFCSwitch) Bind(dp Datapath, _ []Port) {
	s.sm = signaling.NewSwitchPortFC(s.alloc.t, s.alloc.node.Level, s.alloc.node.Index, dp, s.th)
}

func (s *PortFCSwitch) OnSignal(in int, sig signaling.Signal) bool {
	s.sm.OnSignal(in, sig)
	return true
}

// Hooks: every egress signals its A and B classes.
func (s *PortFCSwitch) Hooks(p int) queues.Hooks { return s.sm.Hooks(p) }

func (s *PortFCSwitch) NextTick() int64                         { return s.sm.NextTick() }
func (s *PortFCSwitch) Tick(now int64)                          { s.sm.Tick(now) }
func (s *PortFCSwitch) PortCounters(p int, m map[string]uint64) { s.sm.C[p].Fill(m) }

// FCTiming: classes A and B of every port.
func (s *PortFCSwitch) FCTiming(p int, t *signaling.FCTiming) {
	s.sm.Timing(p, t)
	t.BDPBytes = portBDP(s.bdp, p)
}

// State is the switch's state machine (nil until bound).
func (s *PortFCSwitch) State() *signaling.SwitchPortFC { return s.sm }

// PortFCServer is PortFC at a server.
type PortFCServer struct {
	portfc
	sm *signaling.HostPortFC
}

// Bind guards the relay queue of every port slower than another of the
// server's (a Rail-only fabric's rails): what it relays can outrun it;
// with relayDRR, every port's.
func (s *PortFCServer) Bind(dp Datapath, _ []Port) {
	t := s.alloc.t
	s.sm = signaling.NewHostPortFC(t, s.alloc.node.Index, dp, s.th)
	for l := 0; l < t.Levels(); l++ {
		for l2 := 0; l2 < t.Levels(); l2++ {
			if r, r2 := dp.PortRate(l), dp.PortRate(l2); s.relayDRR || r != 0 && (r2 == 0 || r2 > r) {
				s.sm.GuardRelay(l)
				break
			}
		}
	}
}

func (s *PortFCServer) OnSignal(in int, sig signaling.Signal) bool {
	s.sm.OnSignal(in, sig)
	return true
}

// Hooks: a guarded relay queue signals the switches it is fed from. With
// one guarded, every fabric port has hooks: the pauses leave by the
// other ports, whose hooks time them (signaling.HostPortFC.RelayHooks).
func (s *PortFCServer) Hooks(p int) queues.Hooks {
	if p >= s.alloc.t.Levels() || !s.sm.Guarding() {
		return nil
	}
	return s.sm.RelayHooks(p)
}

func (s *PortFCServer) NextTick() int64 { return s.sm.NextTick() }
func (s *PortFCServer) Tick(now int64)  { s.sm.Tick(now) }

func (s *PortFCServer) PortCounters(p int, m map[string]uint64) {
	if p < len(s.sm.C) { // the application port carries no signals
		s.sm.C[p].Fill(m)
	}
}

// FCTiming: a guarded relay queue's ("RQ"); none on other ports.
func (s *PortFCServer) FCTiming(p int, t *signaling.FCTiming) {
	t.N = 0
	if p < len(s.sm.C) {
		s.sm.Timing(p, t)
	}
	t.BDPBytes = portBDP(s.bdp, p)
}

// State is the server's state machine (nil until bound).
func (s *PortFCServer) State() *signaling.HostPortFC { return s.sm }
