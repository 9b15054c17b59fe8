package scheme

import (
	"fmt"
	"math/bits"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
)

// Fair queueing at every egress, with no flow control: the baselines
// BFC's paper measures against.
//
//   - ideal-fq (Ideal-FQ, BFC's optimum): every flow its own queue at
//     every egress, served round robin by bytes (the queues' DRR). A
//     port has 63 data queues (queues.MaxQueues, the HQ the 64th); a
//     flow keeps its queue while it has frames in it, so it is never
//     reordered, and a flow that has none takes an empty queue. Flows
//     are told apart by their whole 64-bit hash(egress port, 5-tuple),
//     not by a slot they might share: two flows share a queue only when
//     all 63 hold frames of other flows, and the port counts it
//     (fq_shared).
//   - sfq (stochastic fair queueing, "HPCC+SFQ" in BFC's paper): flows
//     hashed onto Q queues for good, BFC's hashed assignment
//     (signaling.NewHashedFlowTable), DRR among them.
//
// Neither pauses anything: lossless by construction, as the paper's
// Ideal-FQ has a buffer no flow fills. The registry marks both
// unbounded: a lab gives their nodes all of their UMEM as buffer
// (Unbounded), and an experiment's run with any drop is invalid.

// DefaultSFQQueues is SFQ's queues per port, the HQ included: BFC's.
const DefaultSFQQueues = DefaultBFCQueues

// The ideal-fq flow table of each egress port: fqSlots entries by
// hash, a flow found within fqProbe of its home slot.
const (
	fqSlots = 1024
	fqProbe = 16
	// fqEntryShift: a frame's meta holds its entry + 1 from this bit,
	// above the ingress meta (signaling.IngressMeta) and below the
	// owner's bits (signaling.MetaOwnerShift).
	fqEntryShift = 16
	fqEntryMask  = 1<<16 - 1
)

// FQ is ideal-fq or sfq (one type; Ideal says which).
type FQ struct {
	quiet
	name   string
	queues int // the HQ, the last, included
	hq     int
	// Ideal: per-flow queues (ft); otherwise SFQ (sfq).
	Ideal bool
	ft    []fqPort
	hooks []fqHooks
	sfq   *signaling.FlowTable
}

// fqEntry is one flow of a port's table: its hash, its queue and its
// frames queued at the port. It is free when it has none.
type fqEntry struct {
	hash    uint64
	queue   int16
	packets int32
}

// fqPort is ideal-fq's state of one egress port.
type fqPort struct {
	e     [fqSlots]fqEntry
	load  [queues.MaxQueues]int32 // frames per queue
	empty uint64                  // data queues holding no frame
	last  int                     // the queue given last: the next search starts after it
	C     FQCounters
}

// FQCounters are one port's ideal-fq counters.
type FQCounters struct {
	// Flows are the queues given to flows that had no frame queued.
	Flows uint64
	// Shared are the flows given a queue that held another flow's
	// frames, every data queue being busy: Ideal-FQ no longer.
	Shared uint64
	// TableFull are the frames of a flow that found no entry of its own
	// within its probe window, and took its home entry's queue (which
	// may reorder it): Ideal-FQ no longer.
	TableFull uint64
}

// Fill sets the counters' names in m; once m holds them it allocates
// nothing.
func (c *FQCounters) Fill(m map[string]uint64) {
	m["fq_flows"], m["fq_shared"], m["fq_table_full"] = c.Flows, c.Shared, c.TableFull
}

// NewIdealFQ returns Ideal-FQ; Bind makes its ports' tables.
func NewIdealFQ() *FQ {
	return &FQ{name: NameIdealFQ, queues: queues.MaxQueues, hq: queues.MaxQueues - 1, Ideal: true}
}

// NewSFQ returns SFQ with q queues per port, the HQ included (2 up to
// queues.MaxQueues); Bind makes its table: BFC's hashed one, of 100
// entries per queue, as bfc:hash has (BFCConfig).
func NewSFQ(q int) *FQ { return &FQ{name: NameSFQ, queues: q, hq: q - 1} }

func newIdealFQ(c *config.Node, _ Place) (Scheme, error) {
	if err := fqChecks(c, NameIdealFQ); err != nil {
		return nil, err
	}
	if c.BFCQueues != 0 {
		return nil, fmt.Errorf("fc %s: bfc_queues %d: ideal-fq has %d queues per port, one per flow", NameIdealFQ, c.BFCQueues, queues.MaxQueues)
	}
	return NewIdealFQ(), nil
}

func newSFQ(c *config.Node, _ Place) (Scheme, error) {
	if err := fqChecks(c, NameSFQ); err != nil {
		return nil, err
	}
	q := c.BFCQueues
	if q == 0 {
		q = DefaultSFQQueues
	}
	if _, err := bfcEgress(q); err != nil {
		return nil, fmt.Errorf("fc %s: %w", NameSFQ, err)
	}
	return NewSFQ(q), nil
}

// fqChecks refuses the settings fair queueing has no use for.
func fqChecks(c *config.Node, name string) error {
	switch {
	case c.Queueing != "" && c.Queueing != QueueingBFC:
		return fmt.Errorf("fc %s needs queueing %s (queues assigned to flows), not %s", name, QueueingBFC, c.Queueing)
	case c.BFCAssign != "":
		return fmt.Errorf("fc %s: bfc_assign %q is BFC's", name, c.BFCAssign)
	}
	_, err := relayDRR(c, false)
	return err
}

func describeIdealFQ(c *config.Node, _ PerLevel) string {
	return fmt.Sprintf("ideal-fq: a queue per flow at every egress (%d, the HQ one of them), round robin by bytes; no pauses; buffer: all of the node's UMEM (%d frames per port), any drop makes a run invalid",
		queues.MaxQueues, c.FramesPerPort)
}

func describeSFQ(c *config.Node, _ PerLevel) string {
	q := c.BFCQueues
	if q == 0 {
		q = DefaultSFQQueues
	}
	return fmt.Sprintf("sfq: flows hashed onto %d queues per port (the HQ one of them), round robin by bytes; no pauses; buffer: all of the node's UMEM (%d frames per port), any drop makes a run invalid",
		q, c.FramesPerPort)
}

// sfqVariant: sfq:Q is SFQ with Q queues per port, the HQ included.
func sfqVariant(k *Knobs, w string) (bool, error) {
	known, err := bfcVariant(k, w)
	if k.BFCAssign != "" {
		return false, nil
	}
	return known, err
}

func sfqKnobs(k Knobs) Knobs { return Knobs{BFCQueues: k.BFCQueues} }

func (s *FQ) Name() string { return s.name }

func (s *FQ) Egress() queues.EgressConfig {
	c, _ := bfcEgress(s.queues) // checked by the constructor
	return c
}

// Bind makes the tables of the node's fabric ports.
func (s *FQ) Bind(_ Datapath, ports []Port) {
	if !s.Ideal {
		s.sfq = signaling.NewHashedFlowTable(len(ports), s.queues-1, 100*s.queues)
		return
	}
	s.ft = make([]fqPort, len(ports))
	s.hooks = make([]fqHooks, len(ports))
	all := uint64(1)<<(s.queues-1) - 1
	for p := range s.ft {
		s.ft[p].empty = all
		s.ft[p].last = s.queues - 2
		s.hooks[p] = fqHooks{&s.ft[p]}
	}
}

// Classify gives a data frame its flow's queue at its egress. Control
// frames ride the HQ; the frame's tag is left as it came.
func (s *FQ) Classify(f *Frame) (int, uint64) {
	if signaling.IsControl(f.PCP) {
		return s.hq, f.ingress()
	}
	tu := f.tuple()
	q, meta := s.flow(f.Out, bcube.FlowHash(&tu))
	return q, meta | f.ingress()
}

func (s *FQ) ControlQueue(int) int { return s.hq }

// FlowQueue: a flow's queue is chosen per frame.
func (*FQ) FlowQueue(int, int) int { return -1 }

func (s *FQ) OwnFrame(p int, flowHash uint32, _ int64) (int, uint64) { return s.flow(p, flowHash) }

// flow is the queue at port out of the flow whose 5-tuple hash is h,
// and its meta.
func (s *FQ) flow(out int, h uint32) (int, uint64) {
	ph := signaling.PortHash(h, out)
	if !s.Ideal {
		_, q := s.sfq.Assign(out, ph, 0)
		return q, 0
	}
	if out >= len(s.ft) {
		return 0, 0 // a server's application port: one queue
	}
	e, q := s.ft[out].assign(ph, s.queues-1)
	return q, uint64(e+1) << fqEntryShift
}

// assign is the entry and queue of the flow whose hash is h at the
// port, of data queues: its entry while it has frames queued, else a
// free entry within its probe window and an empty queue.
func (p *fqPort) assign(h uint64, data int) (entry, q int) {
	home := int(h % fqSlots)
	free, was := -1, -1
	for i := range fqProbe {
		j := (home + i) % fqSlots
		e := &p.e[j]
		switch {
		case e.packets != 0:
			if e.hash == h {
				return j, int(e.queue)
			}
		case e.hash == h && was < 0:
			was = j
		case free < 0:
			free = j
		}
	}
	// A flow whose last frames have left takes its queue again while
	// that is empty: the same queue whatever the pacing.
	if was >= 0 && p.empty&(1<<uint(p.e[was].queue)) != 0 {
		return was, int(p.e[was].queue)
	}
	if was >= 0 {
		free = was
	}
	if free < 0 {
		p.C.TableFull++
		return home, int(p.e[home].queue)
	}
	e := &p.e[free]
	e.hash = h
	if p.empty != 0 {
		q = nextAfter(p.empty, p.last)
		p.last = q
	} else {
		q = int(h % uint64(data))
		p.C.Shared++
	}
	e.queue = int16(q)
	p.C.Flows++
	return free, q
}

// fqHooks count a port's frames per flow and per queue.
type fqHooks struct{ p *fqPort }

func (h *fqHooks) Enqueued(_ int, pk queues.Packet) {
	e := int(pk.Meta>>fqEntryShift&fqEntryMask) - 1
	if e < 0 {
		return
	}
	en := &h.p.e[e]
	en.packets++
	q := int(en.queue)
	h.p.load[q]++
	h.p.empty &^= 1 << q
}

func (h *fqHooks) Dequeued(_ int, pk queues.Packet) {
	e := int(pk.Meta>>fqEntryShift&fqEntryMask) - 1
	if e < 0 {
		return
	}
	en := &h.p.e[e]
	en.packets--
	q := int(en.queue)
	if h.p.load[q]--; h.p.load[q] == 0 {
		h.p.empty |= 1 << q
	}
}

// Hooks are ideal-fq's accounting of each fabric port's frames; SFQ
// needs none.
func (s *FQ) Hooks(p int) queues.Hooks {
	if !s.Ideal || p >= len(s.hooks) {
		return nil
	}
	return &s.hooks[p]
}

func (s *FQ) PortCounters(p int, m map[string]uint64) {
	if s.Ideal && p < len(s.ft) {
		s.ft[p].C.Fill(m)
	}
}

// Port is ideal-fq's counters of port p (zero for SFQ).
func (s *FQ) Port(p int) FQCounters {
	if !s.Ideal || p >= len(s.ft) {
		return FQCounters{}
	}
	return s.ft[p].C
}

// nextAfter is the first queue of m after queue i, cyclically; m != 0.
func nextAfter(m uint64, i int) int {
	if i >= 0 && i < 63 {
		if hi := m >> uint(i+1) << uint(i+1); hi != 0 {
			return bits.TrailingZeros64(hi)
		}
	}
	return bits.TrailingZeros64(m)
}
