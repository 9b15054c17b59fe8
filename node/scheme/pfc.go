package scheme

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
)

// PFC is 802.1Qbb priority flow control (DESIGN §5), switches and servers
// alike: one queue per priority; every frame a fabric port receives on a
// lossless priority is charged to (that port, that priority) while the
// node holds it, and a pair over X_off pauses the neighbour's priority.
// PFC* (pfcstar) protects one more priority per relay a path may cross,
// and a relaying server raises a frame's priority by one (Tagger-style),
// so no cycle of buffers waits on itself.
type PFC struct {
	quiet
	place Place
	th    signaling.PFCThresholds
	star  bool
	rate  uint64 // the link rate of a port the datapath does not shape
	hooks queues.Hooks
	sm    *signaling.PFC
	bdp   []int // each fabric port's one-hop BDP, for FCTiming (nil: not known)
}

// NewPFC returns PFC at place p with thresholds th (th.Lossless: the
// protected priorities), PFC* with star; rateBps is the rate pause times
// count at on ports the datapath does not shape.
func NewPFC(p Place, th signaling.PFCThresholds, rateBps uint64, star bool) *PFC {
	return &PFC{place: p, th: th, star: star, rate: rateBps}
}

// newPFC is the registry's constructor of pfc (star false) or pfcstar.
// checkPriorityPFC checks what every scheme over PFC needs of c: priority
// queueing, no relay round robin, and each fabric port's X_on below its
// X_off; name is the scheme's, for the errors.
func checkPriorityPFC(c *config.Node, name string) []error {
	var errs []error
	if c.Queueing != "" && c.Queueing != QueueingPriority {
		errs = append(errs, fmt.Errorf("fc %s needs queueing %s, not %s", name, QueueingPriority, c.Queueing))
	}
	_, err := relayDRR(c, false)
	errs = append(errs, err)
	for _, port := range c.FabricPorts() {
		if l := c.PortPFC(port); l.Xon <= 0 || l.Xon >= l.Xoff {
			errs = append(errs, fmt.Errorf("pfc thresholds of %s: want 0 < xon < xoff (%d/%d)", port, l.Xon, l.Xoff))
			break
		}
	}
	return errs
}

// checkPFCPool checks that dynamic thresholds th leave a shared buffer
// once the headroom is reserved.
func checkPFCPool(c *config.Node, th signaling.PFCThresholds) error {
	if c.Target.PFCAlpha <= 0 || th.Pool > 0 {
		return nil
	}
	return fmt.Errorf("pfc headroom of %g BDPs for each of %d fabric ports and %d lossless priorities leaves nothing of the %d-byte buffer for the dynamic thresholds",
		c.Target.PFCHeadroomBDPs, len(c.FabricPorts()), bits.OnesCount8(th.Lossless), c.BufferBytes)
}

func newPFC(star bool) func(c *config.Node, p Place) (Scheme, error) {
	return func(c *config.Node, p Place) (Scheme, error) {
		name := NamePFC
		if star {
			name = NamePFCStar
		}
		errs := checkPriorityPFC(c, name)
		if star && signaling.PCPData+c.K >= signaling.PCPControl {
			errs = append(errs, fmt.Errorf("fc pfcstar on BCube(%d,%d): a path crosses %d relays and needs priorities %d..%d, but %d is control: want k <= %d",
				c.N, c.K, c.K, signaling.PCPData, signaling.PCPData+c.K, signaling.PCPControl, signaling.PCPControl-1-signaling.PCPData))
		}
		th := PFCThresholds(c, star)
		errs = append(errs, checkHold(c), checkPFCPool(c, th))
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		s := NewPFC(p, th, c.RateBps, star)
		s.bdp = portBDPs(c)
		return s, nil
	}
}

func describePFC(star bool) func(c *config.Node, perLevel PerLevel) string {
	what := NamePFC
	if star {
		what = "pfcstar (PFC, priority +1 at every relay)"
	}
	return func(c *config.Node, perLevel PerLevel) string {
		return what + ": every ingress port and priority " + perLevel(func(c *config.Node, port string) string {
			l, bdp := c.PortPFC(port), c.PortBDP(port)
			return pfcLimitsText(l, bdp, PFCThresholds(c, star).Pool)
		}) + "; pauses of 65535 quanta, refreshed"
	}
}

// pfcLimitsText describes a port's PFC thresholds l, static or dynamic
// with the X_off of an empty node (bdp: the port's one-hop
// BDP), pool the shared buffer dynamic ones divide (0: static).
func pfcLimitsText(l signaling.PFCLimits, bdp, pool int) string {
	if l.Alpha <= 0 || pool <= 0 {
		return fmt.Sprintf("X_off %s, X_on %s", bytesBDP(l.Xoff, bdp), bytesBDP(l.Xon, bdp))
	}
	return fmt.Sprintf("X_off dynamic, %.4g of the free shared buffer (%s when the node is empty), X_on %s below it",
		l.Alpha, bytesBDP(l.XoffAt(pool), bdp), bytesBDP(l.Xoff-l.Xon, bdp))
}

// PFCThresholds are c's PFC thresholds and lossless priorities: Xoff and
// Xon at RateBps, PerPort those of each fabric port at its own rate
// (config.Node.PortPFC); the data priority is lossless, and under PFC*
// (star) one more per relay a path may cross (k), on a graph fabric as
// many as its routing uses (config.Fabric.Lossless).
func PFCThresholds(c *config.Node, star bool) signaling.PFCThresholds {
	n := 1
	switch {
	case star:
		n += c.K
	case c.Fabric != nil && c.Fabric.Lossless > 1:
		n = c.Fabric.Lossless
	}
	var mask uint8
	for i := range n {
		mask |= 1 << (signaling.PCPData + i)
	}
	l := c.PortPFC("")
	th := signaling.PFCThresholds{Xoff: l.Xoff, Xon: l.Xon, Alpha: l.Alpha, Lossless: mask, Hold: int64(c.FCHold), Repeat: int64(c.FCRefresh),
		Pool: c.PFCPool(n)}
	for _, name := range c.FabricPorts() {
		th.PerPort = append(th.PerPort, c.PortPFC(name))
	}
	return th
}

func (s *PFC) Name() string {
	if s.star {
		return NamePFCStar
	}
	return NamePFC
}

func (*PFC) Egress() queues.EgressConfig { return priorityEgress() }

// Bind makes the node's PFC, which counts pause times at each fabric
// port's own rate (a lab file overrides single links).
func (s *PFC) Bind(dp Datapath, ports []Port) {
	var pp []signaling.PFCPort
	for i, p := range ports {
		rate := s.rate
		if r := dp.PortRate(i); r != 0 {
			rate = r
		}
		pp = append(pp, signaling.PFCPort{MAC: p.Own, RateBps: rate})
	}
	s.sm = signaling.NewPFC(dp, pp, s.th)
	s.hooks = s.sm.Hooks()
}

// Classify: the queue is the frame's priority. A server relaying a frame
// under PFC*, or a switch where its routing says so (Frame.Raise: FC+'s
// down-up turn), raises it by one lossless priority first; the frame
// stays charged to the priority it arrived with.
func (s *PFC) Classify(f *Frame) (int, uint64) {
	meta, pcp := f.ingress(), f.PCP
	if (f.Raise || s.star && f.In >= 0 && !s.place.Node.Switch) && f.Tagged && pcp < 7 &&
		s.th.Lossless&(1<<pcp) != 0 && s.th.Lossless&(1<<(pcp+1)) != 0 {
		pcp++
		header.SetPCP(f.B, pcp)
	}
	return int(pcp), meta
}

func (*PFC) ControlQueue(int) int { return signaling.PCPControl }

func (*PFC) FlowQueue(int, int) int { return signaling.PCPData }

func (s *PFC) OnPFC(in int, f signaling.PFCFrame) bool {
	s.sm.OnPFC(in, f)
	return true
}

// Hooks charge and release the ingress pairs on every port's egress, a
// server's application port's too: what waits for the host's kernel
// still occupies the NIC's buffer.
func (s *PFC) Hooks(int) queues.Hooks { return s.hooks }

func (s *PFC) NextTick() int64 { return s.sm.NextTick() }
func (s *PFC) Tick(now int64)  { s.sm.Tick(now) }

func (s *PFC) PortCounters(p int, m map[string]uint64) {
	if p < len(s.sm.C) { // a server's application port carries no signals
		s.sm.C[p].Fill(s.sm.Lossless(), m)
	}
}

// FCTiming: a class per lossless priority of every fabric port
// (signaling.PFC.Timing).
func (s *PFC) FCTiming(p int, t *signaling.FCTiming) {
	s.sm.Timing(p, t)
	t.BDPBytes = portBDP(s.bdp, p)
}

// State is the node's PFC (nil until bound).
func (s *PFC) State() *signaling.PFC { return s.sm }
