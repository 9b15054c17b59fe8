package hostd

// The NIC's RDMA, the receiver's side (rdma.go): RoCE frames addressed to
// this server, the receivers of their flows, the ACKs, NAKs and CNPs they
// answer with, and what stays of a receiver once released.

import (
	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/wire/transport"
	"github.com/bcfab/bcfab/xdp"
)

// receive takes a RoCE frame b addressed to this server, whose Ethernet,
// 802.1Q and IPv4 headers Handle parsed into f, and settles v: it
// is consumed, or dropped as malformed.
func (r *rdma) receive(b []byte, f *header.Frame, now int64, v *dataplane.Verdict) {
	v.Port = -1
	p := &r.pkt
	if err := roce.ParseFrame(b, f, p); err != nil {
		if err == roce.ErrBadICRC {
			r.c.BadICRC++
		} else {
			r.c.Malformed++
		}
		v.Drop = dataplane.DropMalformed
		return
	}
	switch op := p.Opcode(); {
	case op == roce.OpAck:
		r.onAck(p, now, v)
	case op == roce.OpCNP:
		f, ok := r.sender(p)
		switch {
		case !ok:
			v.Drop = dataplane.DropUnsupported
		case f != nil:
			f.s.OnCNP(now)
		}
	case op.IsData():
		r.onData(p, now, v)
	default:
		r.c.Unsupported++
		v.Drop = dataplane.DropUnsupported
	}
}

func (r *rdma) onData(p *roce.Packet, now int64, v *dataplane.Verdict) {
	key := recvKey{src: p.SrcIP, qp: p.DestQP()}
	rc := r.recvs[key]
	if rc == nil {
		rc = r.newReceiver(key, p.SrcPort)
		if rc == nil {
			v.Drop = dataplane.DropUnsupported
			return
		}
	}
	op := p.Opcode()
	rc.echoLen = 0
	if p.INT != nil && len(p.INT) <= len(rc.echo) {
		rc.echoLen = copy(rc.echo[:], p.INT)
	}
	// The receiver's clock is the model's: its coalescing timer runs
	// from when the packet arrived, not from when a late worker got to
	// it (what it answers now leaves as of then: Engine.Arrived).
	a := rc.r.OnData(p.PSN(), len(p.Payload), op.Last(), p.BTH.AckReq(), p.ECN == header.ECNCE, r.h.e.Arrived())
	r.reply(rc, a, 0)
	if !rc.armed && rc.r.NextTimer() >= 0 {
		rc.armed = true
		r.armed = append(r.armed, rc)
	}
	if rc.endAt == 0 && (rc.r.Done() || rc.r.Failed()) {
		rc.endAt = max(now, 1)
		r.over = append(r.over, rc)
	}
}

// release lets go of the receivers whose flows ended linger ago and whose
// ACK timers are done, keeping a summary of each among the last
// maxRDMAPastReceivers. It runs when a receiver is created and for a
// report, so the receivers kept are bounded by the flows of the last
// linger and an eighth. It lets them go an eighth of a linger's flows at
// a time and looks only at those (over is in the order the flows ended):
// a NIC receiving thousands of flows a second, whose receivers are
// created in its engine's steps, does not look through every receiver
// that lingers for each one it creates.
func (r *rdma) release(now int64) {
	if now < r.releaseAt {
		return
	}
	batch := r.linger / 8
	kept, gone, i := r.over[:0], 0, 0
	for ; i < len(r.over); i++ {
		rc := r.over[i]
		if now-rc.endAt < r.linger {
			break
		}
		if rc.armed {
			kept = append(kept, rc)
			continue
		}
		delete(r.recvs, rc.key)
		r.past.add(pastRecv{src: rc.src, qp: rc.key.qp, mode: rc.mode, done: rc.r.Done(), gap: rc.r.Failed(), s: rc.r.S})
		rc.r = nil
		gone++
	}
	n := len(kept) + copy(r.over[len(kept):], r.over[i:])
	clear(r.over[n:])
	r.over = r.over[:n]
	switch {
	case len(kept) > 0:
		// An ACK timer still pending past the linger: look again soon.
		r.releaseAt = now + batch
	case n > 0:
		r.releaseAt = r.over[0].endAt + r.linger + batch
	default:
		r.releaseAt = 0
	}
	if gone == 0 {
		return
	}
	live := r.rlist[:0]
	for _, rc := range r.rlist {
		if rc.r != nil {
			live = append(live, rc)
		}
	}
	clear(r.rlist[len(live):])
	r.rlist = live
}

// summary is what a report says of rc, with engine times made Unix
// times by off.
func (rc *rdmaRecv) summary(off int64) api.RDMAReceiver {
	return receiverSummary(rc.src, rc.key.qp, rc.mode, rc.r.Done(), rc.r.Failed(), &rc.r.S, off)
}

// receiverSummary is a receiver's report, with engine times made Unix
// times by off.
func receiverSummary(src int, qp uint32, mode transport.Mode, done, gap bool, st *transport.ReceiverStats, off int64) api.RDMAReceiver {
	x := api.RDMAReceiver{Src: src, QP: qp, Mode: mode, Done: done, Gap: gap, Stats: st.Map()}
	if st.First >= 0 {
		x.FirstNs = st.First + off
	}
	if st.Complete >= 0 {
		x.CompleteNs = st.Complete + off
	}
	return x
}

// newReceiver creates the receiver of a flow whose first packet (to
// arrive) came from key.src with UDP source port sport; nil, counted,
// when it cannot.
func (r *rdma) newReceiver(key recvKey, sport uint16) *rdmaRecv {
	h := r.h
	r.release(h.e.Now())
	mode, ok := rdmaQPMode(key.qp)
	src := h.t.ServerIndex(key.src)
	switch {
	case !ok || src < 0:
		r.c.UnknownQP++
		return nil
	case len(r.recvs) >= maxRDMAReceivers:
		r.c.ReceiverLimit++
		return nil
	}
	tr, err := transport.NewReceiver(mode, r.params, rdmaStartPSN(key.qp), api.MinRDMAMTU)
	if err != nil {
		r.c.Unsupported++
		return nil
	}
	self := bcube.ServerIP(h.self).As4()
	// Replies take the data's entropy: one flow hash for both directions
	// is as good as any, and they ride the HQ anyway.
	tuple := bcube.FiveTuple{Src: self, Dst: key.src, Proto: header.ProtoUDP, SPort: sport, DPort: roce.UDPPort}
	o := h.t.FlowOrder(&h.policy, &tuple)
	port := h.t.NextLevel(h.self, src, &o)
	rc := &rdmaRecv{key: key, src: src, mode: mode, r: tr, port: port, hq: h.controlQueue(port),
		reply: roce.Flow{SrcMAC: [6]byte(h.own[port]), DstMAC: [6]byte(h.sw[port]), PCP: signaling.PCPControl,
			SrcIP: self, DstIP: key.src, SrcPort: sport, DestQP: key.qp}}
	if r.recvs == nil {
		r.recvs = map[recvKey]*rdmaRecv{}
	}
	r.recvs[key] = rc
	r.rlist = append(r.rlist, rc)
	return rc
}

// controlQueue is the queue of control frames at fabric port l.
func (h *Host) controlQueue(l int) int { return h.fc.ControlQueue(l) }

// reply sends what a receiver answered: a CNP, then the ACK or NAK; at,
// if not 0, is when it answered in the model (a timer's due time), else
// the frame being handled's arrival or now.
func (r *rdma) reply(rc *rdmaRecv, a transport.RxAction, at int64) {
	if a.CNP {
		if b, d, ok := r.ctlFrame(roce.CNPLen); ok {
			roce.PutCNP(b, &rc.reply)
			r.sendCtl(rc, d, at)
		}
	}
	switch a.Reply {
	case transport.ReplyAck:
		if b, d, ok := r.ctlFrame(roce.AckLen + rc.echoLen); ok {
			if rc.echoLen > 0 {
				roce.PutAckINT(b, &rc.reply, a.PSN, rc.echo[:rc.echoLen])
			} else {
				roce.PutAck(b, &rc.reply, roce.SyndromeACK, a.PSN, 0)
			}
			if a.ECE {
				// DCTCP's ECN echo: the ACK's BECN (outside the ICRC).
				roce.BTH(b[roce.HeadersLen-roce.BTHLen : roce.HeadersLen]).SetBECN(true)
			}
			r.sendCtl(rc, d, at)
		}
	case transport.ReplyNak:
		if b, d, ok := r.ctlFrame(roce.AckLen); ok {
			roce.PutSelectiveNAK(b, &rc.reply, a.PSN, a.SackPSN)
			r.sendCtl(rc, d, at)
		}
	}
}

func (r *rdma) ctlFrame(n int) ([]byte, xdp.Desc, bool) {
	addr, ok := r.h.e.AllocControl()
	if !ok {
		r.c.NoFrame++
		return nil, xdp.Desc{}, false
	}
	d := xdp.Desc{Addr: addr, Len: uint32(n)}
	return r.h.e.Frame(&d), d, true
}

func (r *rdma) sendCtl(rc *rdmaRecv, d xdp.Desc, at int64) {
	if !r.h.e.SendAt(rc.port, rc.hq, &d, 0, 0, at) {
		r.c.NoFrame++
	}
}

// pastRecv is what stays of a released receiver: its final state and
// counters, a value of fixed size (a report makes it an api.RDMAReceiver,
// whose counters are a map, only when asked).
type pastRecv struct {
	src       int
	qp        uint32
	mode      transport.Mode
	done, gap bool
	s         transport.ReceiverStats
}

// pastRing keeps the last maxRDMAPastReceivers released receivers,
// oldest first; it allocates once, when it is first full.
type pastRing struct {
	buf  []pastRecv
	head int // the oldest, once buf is full
}

func (p *pastRing) add(x pastRecv) {
	if len(p.buf) < maxRDMAPastReceivers {
		p.buf = append(p.buf, x)
		return
	}
	p.buf[p.head] = x
	p.head = (p.head + 1) % len(p.buf)
}

// each calls fn for every kept receiver, oldest first.
func (p *pastRing) each(fn func(*pastRecv)) {
	for i := range p.buf {
		fn(&p.buf[(p.head+i)%len(p.buf)])
	}
}

// len is the number of receivers kept.
func (p *pastRing) len() int { return len(p.buf) }
