package transport

import (
	"math/rand/v2"
	"testing"
)

// A packet-level simulation on a fake clock: senders and receivers of
// this package joined by FIFO links of fixed rate and delay, with
// optional losses and RED/ECN marking, run event by event.

const (
	simDelay = 100_000 // propagation of one link, ns
	ackWire  = 90      // an ACK, NAK or CNP on the wire
)

type pktKind uint8

const (
	pData pktKind = iota
	pAck
	pNak
	pCNP
)

type pkt struct {
	kind      pktKind
	flow      int
	seg       Segment
	psn, sack uint32
	ce        bool
	ece       bool // an ACK's echo of CE marks (DCTCP)
	wire      int
	arrive    int64
}

// link is a FIFO: a packet waits behind what is queued, is serialized at
// rate and arrives delay later, at next (nil: the flow's end point).
type link struct {
	rate  float64 // bit/s; 0: no serialization
	delay int64
	next  *link
	busy  int64 // when the queue drains
	q     []pkt
	drop  func(p *pkt) bool
	ecn   ECNParams // marks when KmaxBytes > 0
	limit int       // bytes queued at most (0: no limit); more is dropped
	rng   *rand.Rand
	// observed
	drops, marks, maxQueue int
}

func (l *link) backlog(now int64) int {
	if l.rate == 0 || l.busy <= now {
		return 0
	}
	return int(float64(l.busy-now) * l.rate / 8e9)
}

func (l *link) send(p pkt, now int64) {
	if l.drop != nil && l.drop(&p) {
		l.drops++
		return
	}
	qb := l.backlog(now)
	if l.limit > 0 && qb+p.wire > l.limit {
		l.drops++
		return
	}
	l.maxQueue = max(l.maxQueue, qb)
	if p.kind == pData && l.ecn.KmaxBytes > 0 && l.red(qb) {
		if !p.ce {
			l.marks++
		}
		p.ce = true
	}
	start := max(now, l.busy)
	if l.rate > 0 {
		start += int64(float64(p.wire) * 8e9 / l.rate)
	}
	l.busy = start
	p.arrive = start + l.delay
	l.q = append(l.q, p)
}

func (l *link) red(qb int) bool {
	switch {
	case qb < l.ecn.KminBytes:
		return false
	case qb >= l.ecn.KmaxBytes:
		return true
	}
	return l.rng.Float64() < l.ecn.Pmax*float64(qb-l.ecn.KminBytes)/float64(l.ecn.KmaxBytes-l.ecn.KminBytes)
}

type simFlow struct {
	s     *Sender
	r     *Receiver
	fwd   *link // first link of the data path
	rev   *link // the path back
	start int64
	sent  []Segment // every segment, when recorded
	rec   bool
	// maxOut is the most packets the sender had outstanding.
	maxOut int64
	// wired counts the data packets put on fwd, injected those the
	// sender marked Drop, which never reach it.
	wired, injected int
}

type world struct {
	t     *testing.T
	now   int64
	flows []*simFlow
	links []*link
	steps int
	// onStep, when set, runs after every step.
	onStep func()
}

func (w *world) addLink(l *link) *link {
	w.links = append(w.links, l)
	return l
}

// newPair adds a flow over a fresh forward and reverse link.
func (w *world) newPair(mode Mode, p Params, start uint32, size int64) *simFlow {
	w.t.Helper()
	fwd := w.addLink(&link{rate: simRate, delay: simDelay})
	rev := w.addLink(&link{rate: simRate, delay: simDelay})
	return w.newFlow(mode, p, start, size, fwd, rev, 0)
}

func (w *world) newFlow(mode Mode, p Params, start uint32, size int64, fwd, rev *link, at int64) *simFlow {
	w.t.Helper()
	s, err := NewSender(mode, p, start, size, simMTU)
	if err != nil {
		w.t.Fatal(err)
	}
	r, err := NewReceiver(mode, p, start, simMTU)
	if err != nil {
		w.t.Fatal(err)
	}
	f := &simFlow{s: s, r: r, fwd: fwd, rev: rev, start: at}
	w.flows = append(w.flows, f)
	return f
}

func (w *world) reply(i int, a RxAction) {
	f := w.flows[i]
	switch a.Reply {
	case ReplyAck:
		f.rev.send(pkt{kind: pAck, flow: i, psn: a.PSN, ece: a.ECE, wire: ackWire}, w.now)
	case ReplyNak:
		f.rev.send(pkt{kind: pNak, flow: i, psn: a.PSN, sack: a.SackPSN, wire: ackWire}, w.now)
	}
	if a.CNP {
		f.rev.send(pkt{kind: pCNP, flow: i, wire: ackWire}, w.now)
	}
}

func (w *world) deliver(l *link, p pkt) {
	if l.next != nil {
		l.next.send(p, w.now)
		return
	}
	f := w.flows[p.flow]
	switch p.kind {
	case pData:
		last := p.seg.Pos == Last || p.seg.Pos == Only
		w.reply(p.flow, f.r.OnData(p.seg.PSN, p.seg.Len, last, p.seg.AckReq, p.ce, w.now))
	case pAck:
		f.s.OnAckEcho(p.psn, &Echo{ECE: p.ece}, w.now)
	case pNak:
		f.s.OnNak(p.psn, p.sack, w.now)
	case pCNP:
		f.s.OnCNP(w.now)
	}
}

// nextEvent is the time of the next thing to happen, or -1.
func (w *world) nextEvent() int64 {
	t := int64(-1)
	at := func(x int64) {
		if x >= 0 && (t < 0 || x < t) {
			t = x
		}
	}
	for _, l := range w.links {
		if len(l.q) > 0 {
			at(l.q[0].arrive)
		}
	}
	for _, f := range w.flows {
		if w.now < f.start {
			at(f.start)
			continue
		}
		if x := f.s.NextSendTime(); x >= 0 {
			at(max(x, w.now))
		}
		at(f.s.NextTimer())
		at(f.r.NextTimer())
	}
	return t
}

// step advances to the next event and runs everything due; false when
// nothing is left to happen or until is reached.
func (w *world) step(until int64) bool {
	t := w.nextEvent()
	if t < 0 || t > until {
		return false
	}
	if t < w.now {
		w.t.Fatalf("event at %d before now %d", t, w.now)
	}
	w.now = t
	w.steps++
	for _, l := range w.links {
		for len(l.q) > 0 && l.q[0].arrive <= w.now {
			p := l.q[0]
			l.q = l.q[1:]
			w.deliver(l, p)
		}
	}
	for i, f := range w.flows {
		if w.now < f.start {
			continue
		}
		if x := f.s.NextTimer(); x >= 0 && x <= w.now {
			f.s.OnTimer(w.now)
		}
		if x := f.r.NextTimer(); x >= 0 && x <= w.now {
			w.reply(i, f.r.OnTimer(w.now))
		}
		for {
			seg, ok := f.s.Next(w.now)
			if !ok {
				break
			}
			if f.rec {
				f.sent = append(f.sent, seg)
			}
			if seg.Drop {
				f.injected++
				continue
			}
			f.wired++
			f.fwd.send(pkt{kind: pData, flow: i, seg: seg, wire: seg.Len + DefaultWireOverhead}, w.now)
		}
		f.maxOut = max(f.maxOut, f.s.Outstanding())
	}
	if w.onStep != nil {
		w.onStep()
	}
	return true
}

// run steps until every flow is done or failed, or until.
func (w *world) run(until int64) {
	for {
		all := true
		for _, f := range w.flows {
			if !f.s.Done() && !f.s.Failed() {
				all = false
			}
		}
		if all || !w.step(until) {
			return
		}
	}
}

// lossy drops packets independently with probability p: each
// transmission of each data packet by a hash of (seed, flow, packet,
// transmission), so two runs see the same losses of the same
// transmissions whatever else differs; control packets by their count.
func lossy(seed uint64, p float64) func(*pkt) bool {
	tries := map[[2]int64]uint64{}
	return func(k *pkt) bool {
		key := [2]int64{int64(k.flow), k.seg.Seq}
		if k.kind != pData {
			key = [2]int64{-1 - int64(k.flow), 0}
		}
		n := tries[key]
		tries[key] = n + 1
		h := mix(seed ^ mix(uint64(key[0])<<40^uint64(key[1])) ^ mix(n+0x51))
		return float64(h>>11)/(1<<53) < p
	}
}

func mix(z uint64) uint64 {
	z += 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// dropFirst drops the first transmission of the listed packets of flow 0.
func dropFirst(seqs ...int64) func(*pkt) bool {
	left := map[int64]bool{}
	for _, s := range seqs {
		left[s] = true
	}
	return func(k *pkt) bool {
		if k.kind == pData && k.flow == 0 && left[k.seg.Seq] {
			delete(left, k.seg.Seq)
			return true
		}
		return false
	}
}
