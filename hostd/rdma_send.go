package hostd

// The NIC's RDMA, the sender's side (rdma.go): creating flows, producing
// their data packets, the ACKs, NAKs and CNPs that come back, the end of
// a flow, and the timers of senders and receivers.

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/wire/transport"
	"github.com/bcfab/bcfab/xdp"
)

// start validates reqs and starts their flows now, or schedules them
// for their time (RDMARequest.AtUnixNs or AtMonoNs; off converts engine
// time to those clocks). Every request is checked before any flow is
// created: reqs start all their flows or none.
func (r *rdma) start(reqs []api.RDMARequest, off clockOffsets) ([]*rdmaFlow, error) {
	now := r.h.e.Now()
	type item struct {
		pr *rdmaPrepared
		at int64
	}
	items := make([]item, len(reqs))
	first, scheduled := r.base+len(r.flows)+1, r.scheduled
	for i, req := range reqs {
		at, err := startTime(req, now, off)
		var pr *rdmaPrepared
		if err == nil {
			pr, err = r.prepare(req, first)
		}
		if err == nil && at > now {
			if scheduled += len(pr.plans); scheduled > api.MaxRDMAScheduled {
				err = fmt.Errorf("rdma: more than %d flows scheduled", api.MaxRDMAScheduled)
			}
		}
		if err != nil {
			if len(reqs) > 1 {
				err = fmt.Errorf("request %d of %d: %w", i+1, len(reqs), err)
			}
			return nil, err
		}
		first += len(pr.plans)
		items[i] = item{pr, at}
	}
	var out []*rdmaFlow
	for _, it := range items {
		if it.at == now {
			fs := r.create(it.pr, nil, now, api.RDMARunning)
			r.activate(fs, now)
			out = append(out, fs...)
			continue
		}
		fs := r.create(it.pr, nil, it.at, api.RDMAScheduled)
		p := &rdmaPending{at: it.at, req: it.pr.req, flows: fs}
		// After those due at the same time: in order of requests.
		k, _ := slices.BinarySearchFunc(r.due, it.at, func(q *rdmaPending, t int64) int { return cmp.Compare(q.at, t+1) })
		r.due = slices.Insert(r.due, k, p)
		r.scheduled += len(fs)
		out = append(out, fs...)
	}
	return out, nil
}

// startTime is when req's flows start, in engine time: now, or its
// AtUnixNs or AtMonoNs if that is later.
func startTime(req api.RDMARequest, now int64, off clockOffsets) (int64, error) {
	var at int64
	switch {
	case req.AtUnixNs == 0 && req.AtMonoNs == 0:
		return now, nil
	case req.AtUnixNs != 0 && req.AtMonoNs != 0:
		return 0, fmt.Errorf("rdma: at_unix_ns %d and at_mono_ns %d: want at most one", req.AtUnixNs, req.AtMonoNs)
	case req.AtUnixNs != 0:
		if req.AtUnixNs < 0 {
			return 0, fmt.Errorf("rdma: at_unix_ns %d: want a time at most %v ahead", req.AtUnixNs, api.MaxRDMAAhead)
		}
		at = req.AtUnixNs - off.unix
	default:
		if req.AtMonoNs < 0 {
			return 0, fmt.Errorf("rdma: at_mono_ns %d: want a time at most %v ahead", req.AtMonoNs, api.MaxRDMAAhead)
		}
		at = req.AtMonoNs - off.mono
	}
	if at > now+int64(api.MaxRDMAAhead) {
		name, t := "at_unix_ns", req.AtUnixNs
		if req.AtMonoNs != 0 {
			name, t = "at_mono_ns", req.AtMonoNs
		}
		return 0, fmt.Errorf("rdma: %s %d: want a time at most %v ahead", name, t, api.MaxRDMAAhead)
	}
	return max(now, at), nil
}

// rdmaPending is a request whose flows start later (RDMARequest.AtUnixNs):
// they exist, in state scheduled, and the engine starts them at at.
type rdmaPending struct {
	at    int64
	req   api.RDMARequest
	flows []*rdmaFlow
}

// rdmaPrepared is a request checked and planned: its flows' ids, routes
// and senders, nothing of the NIC changed yet.
type rdmaPrepared struct {
	req   api.RDMARequest // with its defaults filled in
	mode  transport.Mode
	msgs  int64
	want  *bcube.Order
	plans []rdmaPlan
}

type rdmaPlan struct {
	id     int
	sport  uint16
	s      *transport.Sender
	o      bcube.Order
	port   int
	path   int64 // the path's slowest rate
	placed bool  // ATE chose its order
}

// prepare checks req and plans its flows, ids first on: everything is
// checked before anything is created, so a request starts all its flows
// or none.
func (r *rdma) prepare(req api.RDMARequest, first int) (*rdmaPrepared, error) {
	h := r.h
	t := h.t
	if req.Dst < 0 || req.Dst >= t.Servers() || req.Dst == h.self {
		return nil, fmt.Errorf("rdma: destination h%d: want another server of %v", req.Dst, t)
	}
	ways := 0
	for _, b := range []bool{req.Bytes > 0, req.Duration > 0, req.UntilStopped} {
		if b {
			ways++
		}
	}
	if ways != 1 || req.Bytes < 0 || req.Duration < 0 {
		return nil, errors.New("rdma: give bytes, a duration or until_stopped (one of them)")
	}
	msgs := int64(0)
	switch {
	case req.MsgBytes < 0 || req.RateBps < 0:
		return nil, errors.New("rdma: negative msg_bytes or rate_bps")
	case req.MsgBytes > 0:
		if req.Bytes <= 0 || req.Bytes%req.MsgBytes != 0 || req.Bytes/req.MsgBytes > api.MaxRDMAMessages {
			return nil, fmt.Errorf("rdma: messages of %d bytes: want bytes a multiple of them, at most %d messages", req.MsgBytes, api.MaxRDMAMessages)
		}
		msgs = req.Bytes / req.MsgBytes
	case req.Latency:
		return nil, errors.New("rdma: a latency flow needs msg_bytes")
	}
	mode := transport.Lossless
	if req.Mode != "" {
		m, err := transport.ParseMode(req.Mode)
		if err != nil {
			return nil, fmt.Errorf("rdma: %w", err)
		}
		mode = m
	}
	if req.MTU == 0 {
		req.MTU = api.DefaultRDMAMTU
	}
	if req.MTU < api.MinRDMAMTU || req.MTU > api.MaxRDMAMTU {
		return nil, fmt.Errorf("rdma: mtu %d: want %d..%d payload bytes", req.MTU, api.MinRDMAMTU, api.MaxRDMAMTU)
	}
	// Injected loss: checked once against the packets every flow of the
	// request will have (messages start packets of their own).
	packets := transport.Packets(req.Bytes, req.MTU)
	if msgs > 0 {
		packets = msgs * transport.Packets(req.MsgBytes, req.MTU)
	}
	if err := transport.CheckLoss(mode, req.Lose, packets); err != nil {
		return nil, fmt.Errorf("rdma: lose: %w", err)
	}
	if req.Flows == 0 {
		req.Flows = 1
	}
	if req.Flows < 1 || req.Flows > api.MaxRDMAParallel {
		return nil, fmt.Errorf("rdma: %d flows: want 1..%d", req.Flows, api.MaxRDMAParallel)
	}
	if first-1+req.Flows > maxRDMAFlows {
		return nil, errors.New("rdma: out of QP numbers")
	}
	// The congestion control: the request's, else the host's (the lab's
	// cc); the dcqcn switch off is none, on keeps the host's.
	var reqCC *transport.CC
	if req.CC != "" {
		c, err := transport.ParseCC(req.CC)
		if err != nil {
			return nil, fmt.Errorf("rdma: %w", err)
		}
		reqCC = &c
	}
	if req.DCQCN != nil && !*req.DCQCN {
		if reqCC != nil && *reqCC != transport.CCNone {
			return nil, fmt.Errorf("rdma: dcqcn off with cc %v", *reqCC)
		}
		none := transport.CCNone
		reqCC = &none
	}
	if reqCC != nil {
		if err := r.ccAllowed(*reqCC); err != nil {
			return nil, err
		}
	}
	var want *bcube.Order
	if req.Order != "" {
		pol, err := t.ParsePolicy(req.Order)
		if err != nil || pol.Fixed == nil {
			return nil, fmt.Errorf("rdma: order %q: want a permutation such as 0,1", req.Order)
		}
		want = pol.Fixed
		if h.policy.Fixed != nil && *h.policy.Fixed != *want {
			return nil, fmt.Errorf("rdma: order %s, but the lab routes every flow %s", want, h.policy.Fixed)
		}
	}
	// ATE places the flows of a request whose destination gives it a
	// choice all in one domain: nothing is sent while they are created,
	// so the in-flight bytes it decides by do not change.
	ateHBD := h.ate != nil && h.ate.HBD()
	src, dst := bcube.ServerIP(h.self).As4(), bcube.ServerIP(req.Dst).As4()
	plans := make([]rdmaPlan, req.Flows)
	for i := range plans {
		id := first + i
		w, placed := want, false
		if h.ate != nil && want == nil {
			if o, ok := h.ateOrder(req.Dst, id, ateHBD); ok {
				w, placed = &o, true
			}
		}
		sport, err := r.sourcePort(req.Dst, id, w)
		if err != nil {
			return nil, err
		}
		tuple := bcube.FiveTuple{Src: src, Dst: dst, Proto: header.ProtoUDP, SPort: sport, DPort: roce.UDPPort}
		o := t.FlowOrder(&h.policy, &tuple)
		port := t.NextLevel(h.self, req.Dst, &o)
		p := r.pathParams(port, req.Dst)
		path := r.pathRate(req.Dst, p.LineRateBps)
		if reqCC != nil {
			p.SetCC(*reqCC)
		}
		if p.CC() == transport.CCHPCC {
			// Every data packet carries the INT shim.
			p.WireOverhead += roce.INTLen
			if req.MTU+roce.INTLen > api.MaxRDMAMTU {
				return nil, fmt.Errorf("rdma: mtu %d: HPCC's INT leaves at most %d payload bytes", req.MTU, api.MaxRDMAMTU-roce.INTLen)
			}
		}
		if req.RateBps > 0 && (p.LineRateBps == 0 || req.RateBps < p.LineRateBps) {
			// The flow's own line: it is paced at most at the cap, and
			// DCQCN moves below it.
			p.LineRateBps = req.RateBps
		}
		if p.DCQCN.Enabled && p.LineRateBps <= 0 {
			return nil, errors.New("rdma: DCQCN needs a line rate")
		}
		qp := rdmaQP(mode, id)
		s, err := transport.NewSender(mode, p, rdmaStartPSN(qp), req.Bytes, req.MTU)
		if err != nil {
			return nil, fmt.Errorf("rdma: %w", err)
		}
		if msgs > 0 {
			if err := s.SetMessages(req.MsgBytes, req.Latency); err != nil {
				return nil, fmt.Errorf("rdma: %w", err)
			}
		}
		if len(req.Lose) > 0 {
			if err := s.SetLoss(req.Lose); err != nil {
				return nil, fmt.Errorf("rdma: lose: %w", err)
			}
		}
		plans[i] = rdmaPlan{id, sport, s, o, port, path, placed}
	}
	return &rdmaPrepared{req: req, mode: mode, msgs: msgs, want: want, plans: plans}, nil
}

// create makes the flows pr planned, in state, started at startEng (the
// engine's time; a scheduled flow's is when it is due): into fs when
// given (a scheduled request planned again as it starts), else new ones
// added to the NIC's flows. activate starts them.
func (r *rdma) create(pr *rdmaPrepared, fs []*rdmaFlow, startEng int64, state string) []*rdmaFlow {
	h := r.h
	req, mode, msgs := pr.req, pr.mode, pr.msgs
	src, dst := bcube.ServerIP(h.self).As4(), bcube.ServerIP(req.Dst).As4()
	out := make([]*rdmaFlow, 0, len(pr.plans))
	for i, pl := range pr.plans {
		qp := rdmaQP(mode, pl.id)
		tuple := bcube.FiveTuple{Src: src, Dst: dst, Proto: header.ProtoUDP, SPort: pl.sport, DPort: roce.UDPPort}
		o, port := pl.o, pl.port
		f := &rdmaFlow{
			RDMAFlow: api.RDMAFlow{ID: pl.id, QP: qp, Dst: req.Dst, Mode: mode, DCQCN: pl.s.DCQCN() != nil, CC: pl.s.CC(), MTU: req.MTU,
				Size: req.Bytes, DurationNs: req.Duration, SPort: pl.sport, Port: port, PathRateBps: pl.path, Order: o.String(),
				StartPSN: pl.s.StartPSN(), State: state, RateLimitBps: req.RateBps, MsgBytes: req.MsgBytes},
			s:        pl.s,
			hash:     bcube.FlowHash(&tuple),
			maxFrame: roce.DataFrameLen(roce.OpSendMiddle, req.MTU) + roce.INTShimLen(intSlots(pl.s)),
			intSlots: intSlots(pl.s),
			startEng: startEng,
			queue:    -1,
			placed:   pl.placed,
			atUnix:   req.AtUnixNs,
			tmpl: roce.Flow{SrcMAC: [6]byte(h.own[port]), DstMAC: [6]byte(h.sw[port]), PCP: signaling.PCPData,
				SrcIP: src, DstIP: dst, ECN: ecnECT0, SrcPort: pl.sport, DestQP: qp},
		}
		if msgs > 0 {
			// Sized at the start, so the per-packet paths allocate
			// nothing.
			f.msgSent, f.msgDone = make([]int64, msgs), make([]int64, msgs)
			if req.Latency {
				f.latency, f.lat = true, make([]int64, msgs)
			}
		}
		if f.queue = h.fc.FlowQueue(port, req.Dst); f.queue < 0 {
			f.Queue = h.fc.Name() // assigned per packet
		} else {
			f.Queue = h.e.Egress(port).Name(f.queue)
		}
		f.ate, f.fixed = h.ate != nil, pr.want != nil
		if fs != nil {
			*fs[i] = *f
			f = fs[i]
		} else {
			r.flows = append(r.flows, f)
		}
		out = append(out, f)
	}
	return out
}

// activate starts the created flows fs at now: they run from now, a
// timed one until its duration has passed, and ATE counts its choice.
func (r *rdma) activate(fs []*rdmaFlow, now int64) {
	for _, f := range fs {
		f.State, f.startEng = api.RDMARunning, now
		if f.DurationNs > 0 {
			f.deadline = now + f.DurationNs
		}
		if f.ate {
			if f.placed {
				r.h.ate.Chose(f.Port == 0)
			} else {
				r.h.ate.NoChoice(f.fixed)
			}
		}
		r.active = append(r.active, f)
	}
}

// startDue starts the scheduled requests due at now, in order of their
// time. Under ATE a request is planned again as it starts, so that its
// flows are placed by the bytes in flight then, as an immediate
// request's are; should that fail, its flows fail with the reason.
func (r *rdma) startDue(now int64) {
	n := 0
	for n < len(r.due) && r.due[n].at <= now {
		p := r.due[n]
		n++
		fs := slices.DeleteFunc(p.flows, func(f *rdmaFlow) bool { return f.State != api.RDMAScheduled }) // aborted or stopped
		r.scheduled -= len(fs)
		if len(fs) == 0 {
			continue
		}
		if r.h.ate != nil && len(fs) == len(p.flows) {
			pr, err := r.prepare(p.req, fs[0].ID)
			if err != nil {
				for _, f := range fs {
					f.State, f.Failure, f.endEng = api.RDMAFailed, err.Error(), now
					r.finish(f)
				}
				continue
			}
			r.create(pr, fs, now, api.RDMARunning)
		}
		r.activate(fs, now)
	}
	clear(r.due[:n])
	r.due = r.due[n:]
}

// sourcePort picks flow id's UDP source port, its entropy: from the
// flow's block of 64, the first whose flow hash gives the level order
// want (nil: any).
func (r *rdma) sourcePort(dst, id int, want *bcube.Order) (uint16, error) {
	h := r.h
	base := rdmaSPortBase + (id*64)%(65536-rdmaSPortBase)
	if want == nil || h.policy.Fixed != nil {
		return uint16(base), nil
	}
	src, d := bcube.ServerIP(h.self).As4(), bcube.ServerIP(dst).As4()
	for sp := base; sp < base+64; sp++ {
		tuple := bcube.FiveTuple{Src: src, Dst: d, Proto: header.ProtoUDP, SPort: uint16(sp), DPort: roce.UDPPort}
		if o := h.t.FlowOrder(&h.policy, &tuple); o == *want {
			return uint16(sp), nil
		}
	}
	return 0, fmt.Errorf("rdma: no source port in %d..%d gives order %s", base, base+63, want)
}

// alloc takes a frame of the engine's memory, the spare first.
func (r *rdma) alloc() (uint64, bool) {
	if r.hasSp {
		r.hasSp = false
		return r.spare, true
	}
	return r.h.e.Alloc()
}

// Produce queues the data packets every running flow may send now.
func (r *rdma) Produce(now int64) int {
	made := 0
	for i := 0; i < len(r.active); {
		f := r.active[i]
		if f.State == api.RDMARunning {
			made += r.produce(f, now)
		}
		if f.State != api.RDMARunning {
			r.active = slices.Delete(r.active, i, i+1)
			continue
		}
		i++
	}
	return made
}

func (r *rdma) produce(f *rdmaFlow, now int64) int {
	e := r.h.e
	eg := e.Egress(f.Port)
	r.deadline(f, now)
	f.blocked = blockNone
	// A flow that waited only for its pacer sends as of its packets'
	// slots: when the worker comes late, the link still carries them on
	// the pacer's schedule (Engine.SendAt). One that waited for an ACK
	// sends as of the ACK's arrival in the model (or its slot, if later);
	// one that waited for anything else (room, a pause) starts from now.
	var since int64
	switch {
	case f.paced:
		since = -1
	case f.waitAck && f.ackAt > 0:
		since = f.ackAt
	}
	f.paced, f.waitAck, f.ackAt = false, false, 0
	made := 0
	for {
		if t := f.s.NextSendTime(); t < 0 || t > now {
			f.paced, f.waitAck = t > now, t < 0
			break
		}
		q, meta := f.queue, rdmaOwner|uint64(f.ID)<<signaling.MetaOwnerShift
		if q < 0 {
			var m uint64
			q, m = r.h.fc.OwnFrame(f.Port, f.hash, now)
			meta |= m
		}
		if eg.PausedAt(q, now) {
			f.blocked, f.blockQ = blockPaused, q
			break
		}
		if r.queueFull(f) {
			f.blocked = blockQueue
			break
		}
		// The NIC's own packet waits for room in its half of the
		// node's buffer rather than being made and refused (a loss the
		// NIC would inflict on itself); the other half is the relay's.
		if !e.AdmitsOwn(f.Port, q, f.maxFrame) {
			f.NoFrame++
			f.blocked, f.blockAt = blockFrame, now
			break
		}
		addr, ok := r.alloc()
		if !ok {
			f.NoFrame++
			f.blocked, f.blockAt = blockFrame, now
			break
		}
		seg, ok := f.s.Next(now)
		if !ok {
			r.spare, r.hasSp = addr, true
			break
		}
		if f.msgSent != nil && !seg.Retx && (seg.Pos == transport.First || seg.Pos == transport.Only) {
			f.msgSent[seg.Msg] = now // a message posted: its round trip starts
		}
		if seg.Drop {
			// An injected loss (RDMARequest.Lose): sent as far as the
			// flow knows, lost before the wire, counted as injected, and
			// recovered as any loss.
			r.spare, r.hasSp = addr, true
			r.c.Injected++
			e.CountInjected(f.Port)
			if f.ate {
				f.sent += int64(seg.Len) // in flight until acknowledged
				r.ateSync(f)
			}
			continue
		}
		op := sendOpcode(seg.Pos)
		d := xdp.Desc{Addr: addr, Len: uint32(roce.DataFrameLen(op, seg.Len) + roce.INTShimLen(f.intSlots))}
		b := e.Frame(&d)
		if f.queue < 0 {
			f.tmpl.VID = signaling.VID(q)
		}
		// The packet carries zeros: PutData writes them and steps the
		// ICRC over them without reading them.
		roce.PutData(b, &f.tmpl, &roce.Data{Opcode: op, PSN: seg.PSN, AckReq: seg.AckReq, Payload: seg.Len, INTSlots: f.intSlots, Zeros: true})
		at := int64(0)
		if since != 0 {
			at = max(seg.Slot, since)
		}
		if !e.SendAt(f.Port, q, &d, roce.EthLen+roce.VLANLen, meta, at) {
			// Refused by the shared buffer (counted there): the packet
			// is lost, and the transport deals with it as with any loss.
			f.NoFrame++
			f.blocked, f.blockAt = blockFrame, now
			break
		}
		f.queued += int(d.Len)
		if f.ate && !seg.Retx {
			f.sent += int64(seg.Len)
			r.ateSync(f)
		}
		made++
	}
	return made
}

// ccAllowed says whether a flow may run cc here: DCTCP and HPCC need the
// lab's egresses and receivers (the host's cc): marks at one threshold
// and ECN echo, INT stamping; DCQCN needs receivers that send CNPs, which
// DCTCP's do not.
func (r *rdma) ccAllowed(cc transport.CC) error {
	host := r.params.CC()
	switch {
	case (cc == transport.CCDCTCP || cc == transport.CCHPCC) && cc != host,
		cc.Rate() && host == transport.CCDCTCP:
		return fmt.Errorf("rdma: cc %v on a host of cc %v (the lab's --cc): its receivers and egresses do not do their part", cc, host)
	}
	return nil
}

// intSlots is the INT records a sender's data packets reserve: HPCC's,
// none otherwise.
func intSlots(s *transport.Sender) int {
	if s.HPCC() != nil {
		return roce.INTSlots
	}
	return 0
}

// ateSync brings the in-flight bytes f counts in ATE's domain of its
// first hop up to date: new bytes sent less bytes acknowledged.
func (r *rdma) ateSync(f *rdmaFlow) {
	x := max(f.sent-f.s.Acked(), 0)
	r.h.ate.Add(f.Port == 0, x-f.inflight)
	f.inflight = x
}

func sendOpcode(p transport.Position) roce.Opcode {
	switch p {
	case transport.First:
		return roce.OpSendFirst
	case transport.Last:
		return roce.OpSendLast
	case transport.Only:
		return roce.OpSendOnly
	}
	return roce.OpSendMiddle
}

// deadline tells a timed flow whose time is up that its next packet is
// its last.
func (r *rdma) deadline(f *rdmaFlow, now int64) {
	if f.deadline > 0 && !f.stopped && now >= f.deadline {
		f.s.Stop()
		f.stopped = true
	}
}

// settle records the end of a flow the transport finished or gave up;
// acked, if not 0, is when the ACK it handled arrived in the model, the
// end of a flow it finished.
func (r *rdma) settle(f *rdmaFlow, now, acked int64) {
	if f.State != api.RDMARunning {
		return
	}
	switch {
	case f.s.Done():
		f.State, f.endEng = api.RDMADone, f.s.S.End
		if acked != 0 {
			f.endEng = acked
		}
		if f.msgDone != nil {
			f.PeakBps = f.peak()
		}
	case f.s.Failed():
		f.State, f.endEng = api.RDMAFailed, now
		if f.s.S.Timeouts > 0 {
			f.Failure = fmt.Sprintf("lossless: nothing acknowledged for %v with data outstanding", time.Duration(r.params.LosslessTimeout))
		} else {
			f.Failure = "lossless: the receiver saw a PSN gap (packets lost)"
		}
	default:
		return
	}
	r.finish(f)
}

// dequeued returns a frame's bytes to its flow's queue allowance; the
// frame has left the NIC, which restarts a lossless sender's
// no-progress clock.
func (r *rdma) dequeued(meta uint64, n int) {
	if f := r.flow(int(meta >> signaling.MetaOwnerShift & (1<<31 - 1))); f != nil {
		f.queued -= n
		if f.s != nil && f.s.CountsDepartures() {
			f.s.Departed(r.h.e.Now())
		}
	}
}

// NextTick implements dataplane.Timer: the earliest of the senders'
// timers and pacing (of the flows not waiting on their queue) and the
// receivers' ACK coalescing.
func (r *rdma) NextTick() int64 {
	next := int64(-1)
	consider := func(t int64) {
		if t >= 0 && (next < 0 || t < next) {
			next = t
		}
	}
	for _, f := range r.active {
		if f.State != api.RDMARunning {
			continue
		}
		consider(f.s.NextTimer())
		if f.deadline > 0 && !f.stopped {
			consider(f.deadline)
		}
		st := f.s.NextSendTime()
		if st < 0 {
			continue
		}
		switch f.blocked {
		case blockNone:
			consider(st)
		case blockPaused:
			// A resume arrives as a frame, which wakes the engine; a
			// pause that lapses does not.
			eg := r.h.e.Egress(f.Port)
			if !eg.Paused(f.blockQ) {
				consider(st)
			} else if x, ok := eg.NextExpiry(); ok {
				consider(x)
			}
		case blockQueue:
			// Its frames leaving wake the engine.
			if !r.queueFull(f) {
				consider(st)
			}
		case blockFrame:
			consider(max(st, f.blockAt+int64(rdmaAllocRetry)))
		}
	}
	for _, rc := range r.armed {
		consider(rc.r.NextTimer())
	}
	if len(r.due) > 0 {
		consider(r.due[0].at)
	}
	return next
}

// Tick implements dataplane.Timer: the senders' and receivers' timers
// due at now. Produce, which runs in the same pass, sends what pacing
// allows.
func (r *rdma) Tick(now int64) {
	if len(r.due) > 0 && r.due[0].at <= now {
		r.startDue(now)
	}
	for _, f := range r.active {
		if f.State != api.RDMARunning {
			continue
		}
		r.deadline(f, now)
		if t := f.s.NextTimer(); t >= 0 && t <= now {
			f.s.OnTimer(now)
			r.settle(f, now, 0)
		}
	}
	for i := 0; i < len(r.armed); {
		rc := r.armed[i]
		if t := rc.r.NextTimer(); t >= 0 && t <= now {
			// Answered when the timer was due, however late the worker.
			r.reply(rc, rc.r.OnTimer(now), t)
		}
		if rc.r.NextTimer() < 0 {
			rc.armed = false
			r.armed = slices.Delete(r.armed, i, i+1)
			continue
		}
		i++
	}
}

// sender is the running flow an ACK, NAK or CNP is for; nil with ok
// for a flow that has ended (the frame is late and simply consumed);
// ok false, counted, when the QP names no flow of this NIC.
func (r *rdma) sender(p *roce.Packet) (f *rdmaFlow, ok bool) {
	qp := p.DestQP()
	id := int(qp & (1<<22 - 1))
	if id < 1 || id > r.base+len(r.flows) {
		r.c.UnknownQP++
		return nil, false
	}
	f = r.flow(id)
	if f == nil {
		return nil, true // ended long ago, its record released
	}
	if f.QP != qp || f.tmpl.DstIP != p.SrcIP {
		r.c.UnknownQP++
		return nil, false
	}
	if f.State != api.RDMARunning {
		return nil, true
	}
	return f, true
}

func (r *rdma) onAck(p *roce.Packet, now int64, v *dataplane.Verdict) {
	s := p.AETH.Syndrome()
	if s.Kind() != roce.KindACK && s != roce.SyndromePSNSeq {
		r.c.Unsupported++
		v.Drop = dataplane.DropUnsupported
		return
	}
	f, ok := r.sender(p)
	if !ok {
		v.Drop = dataplane.DropUnsupported
		return
	}
	if f == nil {
		return
	}
	if expected, got, ok := p.SelectiveNAK(); ok {
		f.s.OnNak(expected, got, now)
	} else {
		e := &r.echo
		e.ECE, e.Hops = p.BTH.BECN(), 0
		if p.INT != nil {
			e.Hops = min(p.INT.Hops(), p.INT.Slots(), transport.MaxINTHops)
			for i := range e.Hops {
				v := p.INT.Record(i)
				e.Hop[i] = transport.INTHop{TS: v.TS, TxBytes: v.TxBytes, QLen: v.QLen, RateKbps: v.RateKbps}
			}
		}
		f.s.OnAckEcho(p.PSN(), e, now)
	}
	if f.ate {
		r.ateSync(f)
	}
	// What the flow's ends record, they record at the time the ACK
	// arrived in the model: a late worker's lateness in getting to it
	// is the emulator's, not the flow's.
	at := r.h.e.Arrived()
	f.ackAt = at
	f.messagesDone(at)
	r.settle(f, now, at)
}

// messagesDone records the messages acknowledged whole by now.
func (f *rdmaFlow) messagesDone(now int64) {
	for n := min(f.s.Messages(), int64(len(f.msgDone))); f.seenMsgs < n; f.seenMsgs++ {
		f.msgDone[f.seenMsgs] = now
		if f.latency {
			f.lat[f.seenMsgs] = now - f.msgSent[f.seenMsgs]
		}
	}
}

// peakMinWindow is the shortest window peak measures over: longer than
// the scheduling jitter of daemons on a loaded machine, which delays and
// bunches ACKs by up to a millisecond or two and would otherwise show as
// rates above the link's.
const peakMinWindow = 10 * time.Millisecond

// peak is a message flow's payload rate over the best tenth of its time
// (first message posted to last acknowledged): the best rate over a span
// that opens at a completion (or at the first posting) and closes at the
// first completion at least that long after, counting the messages
// completed within it (those completed at its opening were delivered
// before). A span closes at a completion, not at a fixed time, so a
// message that straddles a window's end does not go missing from it (with
// large messages that made peak read below the average); it is no
// shorter than peakMinWindow, so an ACK that completes many small
// messages at once counts as the burst it is, not as an infinite rate.
// The whole flow is one of the spans: peak is never below the average.
func (f *rdmaFlow) peak() float64 {
	n := int(f.seenMsgs)
	if n == 0 {
		return 0
	}
	d := f.msgDone
	dur := d[n-1] - f.msgSent[0]
	x := min(dur, max(dur/10, int64(peakMinWindow)))
	if x <= 0 {
		return 0
	}
	best := 0.0
	// rate of the span (open, d[j]] holding messages k..j.
	rate := func(open int64, k, j int) {
		if span := d[j] - open; span > 0 {
			best = max(best, float64(int64(j-k+1)*f.MsgBytes*8)*1e9/float64(span))
		}
	}
	rate(f.msgSent[0], 0, n-1) // the whole flow
	j := 0
	for j < n && d[j]-f.msgSent[0] < x {
		j++
	}
	if j < n {
		rate(f.msgSent[0], 0, j)
	}
	k := 0 // the first message completed after d[i]
	for i := 0; i < n; i++ {
		for j < n && d[j]-d[i] < x {
			j++
		}
		if j == n {
			break
		}
		for k < n && d[k] <= d[i] {
			k++
		}
		rate(d[i], k, j)
	}
	return best
}
