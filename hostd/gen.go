package hostd

// The traffic generator of the NIC, and its sink.
//
// A generated flow sends UDP datagrams to api.GenPort of another server,
// through the queue PortFC allocates for it (a or b of the port its route
// leaves by; its priority's queue under PFC), and keeps at most Window
// bytes of its own queued there, as a NIC's send queue per connection: a
// flow whose queue is paused waits, it never overruns its own NIC, and
// frames of other flows or relayed for other servers in the same queue
// do not hold it back. The destination's
// hostd counts what arrives per flow — packets, bytes, sequence gaps,
// one-way delay — and drops it there: generated traffic never reaches the
// kernel. Everything runs on the engine goroutine.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/bcfab/bcfab/node/api"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
	"github.com/bcfab/bcfab/xdp"
)

// Limits of a generated flow.
const (
	minGenFrame   = 64
	genHeader     = header.EthLen + header.VLANLen + 20 + 8 // Ethernet, 802.1Q, IPv4, UDP
	genPayloadMin = 16                                      // sequence, send time
)

// genFlow is a generated flow at its source.
type genFlow struct {
	api.GenFlow
	req      api.GenRequest
	queue    int // -1: the scheme assigns one per packet (BFC)
	template []byte
	seq      uint64
	deadline int64 // engine time, 0: none
	startEng int64
	queued   int    // bytes of this flow in its queue
	hash     uint32 // bcube.FlowHash of its 5-tuple
}

// sinkFlow is what a destination counted of one flow.
type sinkFlow struct {
	api.SinkFlow
	sumDelay int64
}

// AvgDelayNs is the mean one-way delay.
func (s *sinkFlow) AvgDelayNs() int64 {
	if s.Packets == 0 {
		return 0
	}
	return s.sumDelay / int64(s.Packets)
}

type sinkKey struct {
	src   [4]byte
	sport uint16
}

type gen struct {
	h     *Host
	flows []*genFlow
	sink  map[sinkKey]*sinkFlow
}

// Start validates r and starts a flow; it runs on the engine goroutine.
func (g *gen) start(r api.GenRequest) (*genFlow, error) {
	h := g.h
	t := h.t
	if r.Dst < 0 || r.Dst >= t.Servers() || r.Dst == h.self {
		return nil, fmt.Errorf("gen: destination h%d: want another server of %v", r.Dst, t)
	}
	if r.FrameLen == 0 {
		r.FrameLen = api.DefaultGenFrame
	}
	if r.FrameLen < minGenFrame || r.FrameLen > 1518 {
		return nil, fmt.Errorf("gen: frame length %d: want %d..1518", r.FrameLen, minGenFrame)
	}
	if r.Window == 0 {
		r.Window = api.DefaultGenWindow
	}
	if r.Window < r.FrameLen {
		return nil, fmt.Errorf("gen: window %d is smaller than a frame", r.Window)
	}
	if r.Bytes <= 0 && r.Duration <= 0 {
		return nil, errors.New("gen: give bytes or a duration")
	}
	id := len(g.flows) + 1 // flows[id-1]; the owner bits of its frames' meta
	if id > (65535-20000)/64 {
		return nil, errors.New("gen: out of source ports")
	}
	sport, err := g.sourcePort(r, id)
	if err != nil {
		return nil, err
	}
	f := &genFlow{GenFlow: api.GenFlow{ID: id, Dst: r.Dst, SPort: sport, StartNs: time.Now().UnixNano()}, req: r, startEng: h.e.Now()}
	if r.Duration > 0 {
		f.deadline = f.startEng + r.Duration
	}
	f.template = g.template(f)
	var tuple header.Frame
	header.Parse(f.template, &tuple)
	h.f = tuple
	f.Port = h.route(r.Dst)
	f.Order = h.t.FlowOrder(&h.policy, &h.tuple).String()
	f.hash = bcube.FlowHash(&h.tuple)
	if f.queue = h.fc.FlowQueue(f.Port, r.Dst); f.queue < 0 {
		f.Queue = h.fc.Name() // assigned per packet
	} else {
		f.Queue = h.e.Egress(f.Port).Name(f.queue)
	}
	h.setMACs(f.template, f.Port)
	g.flows = append(g.flows, f)
	return f, nil
}

// sourcePort picks the flow's UDP source port: from its own block of 64,
// the first whose flow hash gives the requested level order.
func (g *gen) sourcePort(r api.GenRequest, id int) (uint16, error) {
	h := g.h
	base := uint16(20000 + 64*id)
	if r.Order == "" {
		return base, nil
	}
	want, err := h.t.ParsePolicy(r.Order)
	if err != nil || want.Fixed == nil {
		return 0, fmt.Errorf("gen: order %q: want a permutation such as 0,1", r.Order)
	}
	if h.policy.Fixed != nil {
		if h.policy.Fixed.String() != want.Fixed.String() {
			return 0, fmt.Errorf("gen: order %s, but the lab routes every flow %s", want.Fixed, h.policy.Fixed)
		}
		return base, nil
	}
	src, dst := bcube.ServerIP(h.self).As4(), bcube.ServerIP(r.Dst).As4()
	for sp := base; sp < base+64; sp++ {
		tuple := bcube.FiveTuple{Src: src, Dst: dst, Proto: header.ProtoUDP, SPort: sp, DPort: api.GenPort}
		if o := h.t.FlowOrder(&h.policy, &tuple); o.String() == want.Fixed.String() {
			return sp, nil
		}
	}
	return 0, fmt.Errorf("gen: no source port in %d..%d gives order %s", base, base+63, want.Fixed)
}

// template builds the flow's frame: Ethernet, 802.1Q (data), IPv4, UDP to
// GenPort, and a payload whose first 16 bytes the sender stamps.
func (g *gen) template(f *genFlow) []byte {
	b := make([]byte, f.req.FrameLen)
	binary.BigEndian.PutUint16(b[12:], header.EtherTypeVLAN)
	binary.BigEndian.PutUint16(b[14:], uint16(signaling.PCPData)<<13)
	binary.BigEndian.PutUint16(b[16:], header.EtherTypeIPv4)
	ip := b[18:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(len(b)-18))
	ip[6] = 0x40 // don't fragment
	ip[8] = 64
	ip[9] = header.ProtoUDP
	src, dst := bcube.ServerIP(g.h.self).As4(), bcube.ServerIP(f.Dst).As4()
	copy(ip[12:], src[:])
	copy(ip[16:], dst[:])
	binary.BigEndian.PutUint16(ip[10:], header.IPv4Checksum(ip[:20]))
	udp := ip[20:]
	binary.BigEndian.PutUint16(udp[0:], f.SPort)
	binary.BigEndian.PutUint16(udp[2:], api.GenPort)
	binary.BigEndian.PutUint16(udp[4:], uint16(len(b)-18-20))
	return b
}

// Produce implements dataplane.Source: every active flow tops its queue up
// to its window, unless that queue is paused.
func (g *gen) Produce(now int64) int {
	if len(g.flows) == 0 {
		return 0
	}
	e := g.h.e
	made := 0
	for _, f := range g.flows {
		if f.Done {
			continue
		}
		eg := e.Egress(f.Port)
		for {
			q, meta := f.queue, uint64(f.ID)<<signaling.MetaOwnerShift
			if q < 0 {
				var m uint64
				q, m = g.h.fc.OwnFrame(f.Port, f.hash, now)
				meta |= m
			}
			// A flow's end does not wait for its queue's pause to lift.
			if (f.deadline > 0 && now >= f.deadline) || (f.req.Bytes > 0 && int64(f.Bytes) >= f.req.Bytes) {
				f.Done = true
				f.EndNs = time.Now().UnixNano()
				break
			}
			if eg.PausedAt(q, now) || f.queued+f.req.FrameLen > f.req.Window {
				break
			}
			addr, ok := e.Alloc()
			if !ok {
				f.NoFrame++
				break
			}
			d := xdp.Desc{Addr: addr, Len: uint32(len(f.template))}
			b := e.Frame(&d)
			copy(b, f.template)
			binary.BigEndian.PutUint64(b[genHeader:], f.seq)
			binary.BigEndian.PutUint64(b[genHeader+8:], uint64(time.Now().UnixNano()))
			if f.queue < 0 {
				header.SetVID(b, signaling.VID(q))
			}
			f.seq++
			if !e.Send(f.Port, q, &d, header.EthLen+header.VLANLen, meta) {
				f.NoFrame++
				break
			}
			f.queued += len(b)
			f.Packets++
			f.Bytes += uint64(len(b))
			made++
		}
	}
	return made
}

// dequeued returns a frame's bytes to its flow's window (meta: the
// owner bits of queues.Packet.Meta).
func (g *gen) dequeued(meta uint64, n int) {
	id := int(meta >> signaling.MetaOwnerShift)
	if id > 0 && id <= len(g.flows) {
		g.flows[id-1].queued -= n
	}
}

// NextTick implements dataplane.Timer: the engine wakes at the next
// flow deadline, and at the next pause expiry of a running flow's port
// (a pause whose Resume was lost lapses without a frame to wake the
// engine), even if nothing else is due.
func (g *gen) NextTick() int64 {
	next := int64(-1)
	consider := func(t int64) {
		if next < 0 || t < next {
			next = t
		}
	}
	for _, f := range g.flows {
		if f.Done {
			continue
		}
		if f.deadline > 0 {
			consider(f.deadline)
		}
		if t, ok := g.h.e.Egress(f.Port).NextExpiry(); ok {
			consider(t)
		}
	}
	return next
}

// Tick implements dataplane.Timer; Produce, which runs in the same pass,
// ends the flows whose deadline passed.
func (g *gen) Tick(int64) {}

// count records a generated frame that reached this server.
func (g *gen) count(b []byte, fr *header.Frame) {
	k := sinkKey{src: fr.Src, sport: fr.SPort}
	s := g.sink[k]
	if s == nil {
		s = &sinkFlow{SinkFlow: api.SinkFlow{Src: g.h.t.ServerIndex(fr.Src), SPort: fr.SPort}}
		if g.sink == nil {
			g.sink = map[sinkKey]*sinkFlow{}
		}
		g.sink[k] = s
	}
	now := time.Now().UnixNano()
	off := fr.L3 + 28
	if len(b) >= off+genPayloadMin {
		seq := binary.BigEndian.Uint64(b[off:])
		sent := int64(binary.BigEndian.Uint64(b[off+8:]))
		if seq > s.NextSeq {
			s.Gaps += seq - s.NextSeq
		}
		if seq >= s.NextSeq {
			s.NextSeq = seq + 1
		}
		if delay := now - sent; delay > 0 {
			s.sumDelay += delay
			s.MaxDelayNs = max(s.MaxDelayNs, delay)
		}
	}
	if s.Packets == 0 {
		s.FirstNs = now
	}
	s.LastNs = now
	s.Packets++
	s.Bytes += uint64(len(b))
}

// report copies the generator's state.
func (g *gen) report() api.GenReport {
	var r api.GenReport
	for _, f := range g.flows {
		r.Flows = append(r.Flows, f.GenFlow)
	}
	for _, s := range g.sink {
		r.Sink = append(r.Sink, api.SinkReport{SinkFlow: s.SinkFlow, AvgDelayNs: s.AvgDelayNs()})
	}
	return r
}
