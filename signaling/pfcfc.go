package signaling

// PFC (802.1Qbb) as a node runs it, switch or server alike (DESIGN §5):
//
//   - Ingress accounting: every frame a fabric port receives on a lossless
//     priority is charged to (that port, that priority) while it is
//     buffered anywhere in the node, whichever egress queue holds it. The
//     datapath tags the queued packet with both (IngressMeta); the egress
//     hooks add on enqueue and subtract on dequeue (or discard).
//   - X_off: when a counter reaches Xoff, the node sends the upstream
//     neighbour on that port a PFC frame pausing that priority for
//     MaxQuanta, and repeats it every half pause time while the counter
//     stays above Xon, so the pause never lapses while it is needed.
//   - X_on: at Xon or below, a frame with quanta 0 resumes it; it is
//     repeated ResumeRepeats times, Repeat apart, so a lost one does not
//     leave the priority paused for the receiver's hold (hold.go).
//   - Dynamic thresholds (PFCThresholds.Pool above 0, a port's Alpha
//     above 0), as a shared-buffer switch's: X_off is Alpha times the
//     free shared buffer, the Pool less every byte the node holds now
//     (all its egress queues, any priority), so a port pauses sooner the
//     fuller the node; X_on is that X_off less the port's (Xoff - Xon),
//     and at least 0. Both are evaluated when the pair's own counter
//     moves, as the pair's frames come and go.
//   - A PFC frame received on a port pauses each enabled priority's queue
//     of that port's egress for quanta x 512 bit times at the port's rate,
//     but at least Hold (default 1 s): at high rates 0xFFFF quanta last
//     less than a loaded machine may keep the pausing daemon from running
//     (67 ms at 500 Mb/s), and the pause must hold while its sender is
//     late. Quanta 0 resumes it. Control priorities (6, 7) are never
//     paused.
//
// Queues are indexed by priority (the "priority" queueing mode). PFC* is
// the same machine with more than one lossless priority; the relaying
// server raises a frame's priority by one, which is the datapath's job.

import (
	"net"
	"strconv"

	"github.com/bcfab/bcfab/queues"
)

// Packet meta layout shared with the datapath: bits 0-7 the ingress port
// plus one (0: made by this node), bits 8-10 the 802.1Q priority it
// arrived with, bit 11 set when the frame is charged to that pair (PFC);
// bits 12-31 BFC's (bfcnode.go); bits MetaOwnerShift and up are the
// node's own (hostd: the generated flow a frame belongs to).
const (
	metaPortMask = 0xFF
	metaPrioShft = 8
	metaCharged  = 1 << 11
	// MetaOwnerShift is the first meta bit flow control leaves alone.
	MetaOwnerShift = 32
)

// IngressMeta is the meta of a packet received on port in with priority
// pcp, which flow control charges to (in, pcp) while it is buffered.
func IngressMeta(in int, pcp uint8) uint64 {
	return uint64(in+1)&metaPortMask | uint64(pcp&7)<<metaPrioShft | metaCharged
}

// MetaIngress decodes IngressMeta; ok is false for a packet not charged
// to any ingress (made by the node itself).
func MetaIngress(meta uint64) (in int, pcp uint8, ok bool) {
	if meta&metaCharged == 0 || meta&metaPortMask == 0 {
		return 0, 0, false
	}
	return int(meta&metaPortMask) - 1, uint8(meta>>metaPrioShft) & 7, true
}

// PFCThresholds are per (ingress port, priority), in bytes.
type PFCThresholds struct {
	Xoff, Xon int
	// PerPort, when set, holds each ingress port's Xoff and Xon (index:
	// port) in place of the two above: headroom counts one-hop BDPs at
	// the port's own rate, and a node's ports may differ (a server's
	// levels in a Rail-only fabric). Ports past its end, and zero
	// entries, take the two above.
	PerPort []PFCLimits
	// Lossless is the set of priorities PFC protects, bit i for
	// priority i; frames of other priorities are not charged.
	Lossless uint8
	// Hold is the shortest pause a received X_off holds (ns; 0:
	// DefaultHold); Repeat the spacing of an X_on's repetitions (ns; 0:
	// DefaultPFCRepeat).
	Hold, Repeat int64
	// Alpha, above 0 with Pool, makes the thresholds dynamic (a port's
	// PerPort entry may give its own); Pool is the shared buffer they
	// divide, in bytes: the node's buffer less the headroom it reserves.
	Alpha float64
	Pool  int
}

// PFCLimits are one ingress port's PFC thresholds, in bytes, and its
// dynamic threshold's alpha (0: static).
type PFCLimits struct {
	Xoff, Xon int
	Alpha     float64
}

// XoffAt is the dynamic X_off of a port whose node has free bytes of its
// pool left: Alpha times them.
func (l PFCLimits) XoffAt(free int) int { return int(l.Alpha * float64(max(0, free))) }

// Port is the thresholds of ingress port p (a zero entry is the node's).
func (th PFCThresholds) Port(p int) PFCLimits {
	if p >= 0 && p < len(th.PerPort) && th.PerPort[p] != (PFCLimits{}) {
		return th.PerPort[p]
	}
	return PFCLimits{Xoff: th.Xoff, Xon: th.Xon, Alpha: th.Alpha}
}

// Dynamic reports whether the thresholds follow the free buffer.
func (th PFCThresholds) Dynamic() bool { return th.Pool > 0 }

// PFCPort is a port that runs PFC with its neighbour.
type PFCPort struct {
	MAC     net.HardwareAddr // this port's address, the frames' source
	RateBps uint64           // the link's rate, for pause times
}

// PFCCounters are one port's PFC frames, per priority.
type PFCCounters struct {
	TxXoff, TxXon, TxRefresh [8]uint64
	RxXoff, RxXon            [8]uint64
	Lost                     uint64 // could not be emitted (no frame)
	Ignored                  uint64 // pauses of a control priority (never paused)
}

// Map flattens c for stats, listing the priorities in mask:
// "tx_xoff_P3", "tx_xon_P3", "tx_refresh_P3", "rx_xoff_P3", "rx_xon_P3".
func (c *PFCCounters) Map(mask uint8) map[string]uint64 {
	m := map[string]uint64{}
	c.Fill(mask, m)
	return m
}

// pfcKeys are Fill's names per priority: tx_xoff, tx_xon, tx_refresh,
// rx_xoff and rx_xon, each with _P<priority>.
var pfcKeys = func() (k [8][5]string) {
	for i := range 8 {
		for j, n := range [5]string{"tx_xoff", "tx_xon", "tx_refresh", "rx_xoff", "rx_xon"} {
			k[i][j] = n + "_P" + strconv.Itoa(i)
		}
	}
	return k
}()

// Fill sets Map's names in m. Once m holds them it allocates nothing.
func (c *PFCCounters) Fill(mask uint8, m map[string]uint64) {
	m["lost"], m["ignored"] = c.Lost, c.Ignored
	for i := range 8 {
		if mask&(1<<i) == 0 {
			continue
		}
		k := &pfcKeys[i]
		m[k[0]], m[k[1]], m[k[2]] = c.TxXoff[i], c.TxXon[i], c.TxRefresh[i]
		m[k[3]], m[k[4]] = c.RxXoff[i], c.RxXon[i]
	}
}

// PFC is the 802.1Qbb logic of one node.
type PFC struct {
	env   Env
	th    PFCThresholds
	ports []PFCPort
	lim   []PFCLimits // per ingress port, resolved from th
	// Per ingress port and priority: bytes charged, whether an X_off is
	// in force, X_on repetitions still owed, and when either must be
	// repeated.
	bytes  [][8]int
	on     [][8]bool
	xon    [][8]uint8
	due    [][8]int64
	used   int   // bytes in the node's queues (dynamic thresholds)
	active int   // X_offs in force
	owed   int   // pairs with X_on repetitions owed
	next   int64 // earliest due; meaningful when active+owed > 0
	C      []PFCCounters
	// T is the pause timing of every ingress port and lossless
	// priority (fctiming.go), dep the X_offs being timed.
	T      [][8]ClassTiming
	dep    departures
	buf    [PFCLen]byte
	quanta [8]uint16
}

// NewPFC returns the PFC logic of a node whose ports 0..len(ports)-1 run
// PFC with their neighbours (a server's application port does not).
func NewPFC(env Env, ports []PFCPort, th PFCThresholds) *PFC {
	n := len(ports)
	f := &PFC{env: env, th: th, ports: ports,
		bytes: make([][8]int, n), on: make([][8]bool, n), xon: make([][8]uint8, n), due: make([][8]int64, n), C: make([]PFCCounters, n),
		T: make([][8]ClassTiming, n)}
	for p := range n {
		f.lim = append(f.lim, th.Port(p))
		xoff, xon := f.Limits(p) // an empty node's, when dynamic
		for i := range 8 {
			f.T[p][i] = ClassTiming{Class: pcpNames[i], Xoff: xoff, Xon: xon}
		}
	}
	return f
}

// Lossless is the set of protected priorities.
func (f *PFC) Lossless() uint8 { return f.th.Lossless }

// Charged is the bytes charged to (in, pcp) now.
func (f *PFC) Charged(in int, pcp uint8) int { return f.bytes[in][pcp] }

// Asserted reports whether an X_off for (in, pcp) is in force.
func (f *PFC) Asserted(in int, pcp uint8) bool { return f.on[in][pcp] }

// Hooks are the queue hooks to install on every egress of the node (the
// application port's too: what waits for the host's kernel still
// occupies the NIC's buffer).
func (f *PFC) Hooks() queues.Hooks { return pfcHooks{f} }

type pfcHooks struct{ f *PFC }

func (h pfcHooks) Enqueued(_ int, p queues.Packet) {
	h.f.dep.enqueued(p)
	h.f.used += int(p.Len)
	h.f.charge(p, int(p.Len))
}

func (h pfcHooks) Dequeued(_ int, p queues.Packet) {
	h.f.dep.dequeued(p, h.f.env)
	h.f.used -= int(p.Len)
	h.f.charge(p, -int(p.Len))
}

// Limits are ingress port in's X_off and X_on now: the static ones, or
// under dynamic thresholds those the node's free buffer gives.
func (f *PFC) Limits(in int) (xoff, xon int) {
	l := &f.lim[in]
	if f.th.Pool <= 0 || l.Alpha <= 0 {
		return l.Xoff, l.Xon
	}
	xoff = l.XoffAt(f.th.Pool - f.used)
	return xoff, max(0, xoff-(l.Xoff-l.Xon))
}

// Used is the bytes the node's queues hold, as dynamic thresholds count
// them.
func (f *PFC) Used() int { return f.used }

// charge adds n bytes (negative: releases) to the packet's ingress pair
// and signals crossings of the thresholds.
func (f *PFC) charge(p queues.Packet, n int) {
	in, pcp, ok := MetaIngress(p.Meta)
	if !ok || in >= len(f.ports) || f.th.Lossless&(1<<pcp) == 0 {
		return
	}
	b := f.bytes[in][pcp] + n
	f.bytes[in][pcp] = b
	ct := &f.T[in][pcp]
	if n > 0 {
		ct.charged(b, f.env)
	}
	xoff, xon := f.Limits(in)
	switch {
	case n > 0 && !f.on[in][pcp] && b >= xoff:
		now := f.env.Now()
		ct.paused(b, now)
		f.setXon(in, pcp, 0)
		f.on[in][pcp] = true
		f.active++
		f.send(in, 1<<pcp, 0, now, &ct.Lat)
		f.C[in].TxXoff[pcp]++
		f.schedule(in, pcp, now+f.refresh(in))
	case n < 0 && f.on[in][pcp] && b <= xon:
		ct.resumed(b)
		f.on[in][pcp] = false
		f.active--
		f.send(in, 0, 1<<pcp, 0, nil)
		f.C[in].TxXon[pcp]++
		f.setXon(in, pcp, ResumeRepeats)
		f.schedule(in, pcp, f.env.Now()+f.repeat())
	}
}

// schedule sets when (in, pcp) is due and keeps next the earliest due.
func (f *PFC) schedule(in int, pcp uint8, due int64) {
	f.due[in][pcp] = due
	if f.active+f.owed == 1 || due < f.next {
		f.next = due
	}
}

// setXon sets the X_on repetitions (in, pcp) still owes.
func (f *PFC) setXon(in int, pcp uint8, n uint8) { setOwed(&f.xon[in][pcp], &f.owed, n) }

// repeat is the spacing of an X_on's repetitions.
func (f *PFC) repeat() int64 {
	if f.th.Repeat > 0 {
		return f.th.Repeat
	}
	return DefaultPFCRepeat
}

// refresh is how often port in repeats an X_off: half the pause a frame
// of MaxQuanta asks for, so one lost frame does not let it lapse.
func (f *PFC) refresh(in int) int64 {
	return PauseNs(MaxQuanta, f.ports[in].RateBps) / 2
}

// send emits one PFC frame out of port in pausing the priorities of off
// for MaxQuanta and resuming those of on (quanta 0), timed from t0 into
// lat unless lat is nil; a frame the node cannot spare is counted lost.
func (f *PFC) send(in int, off, on uint8, t0 int64, lat *LatHist) {
	for i := range 8 {
		f.quanta[i] = 0
		if off&(1<<i) != 0 {
			f.quanta[i] = MaxQuanta
		}
	}
	PutPFC(f.buf[:], f.ports[in].MAC, off|on, &f.quanta)
	if !f.dep.emit(f.env, in, f.buf[:], t0, lat) {
		f.C[in].Lost++
	}
}

// NextTick is when an X_off or an X_on must be repeated next, or -1.
// (After a change it may be early: Tick then finds nothing due and
// recomputes it.)
func (f *PFC) NextTick() int64 {
	if f.active+f.owed == 0 {
		return -1
	}
	return f.next
}

// Tick repeats the X_offs and X_ons that are due, one frame per port for
// all its due priorities.
func (f *PFC) Tick(now int64) {
	if f.active+f.owed == 0 || now < f.next {
		return
	}
	f.next = -1
	for in := range f.on {
		var off, on uint8
		for p := range 8 {
			pcp := uint8(p)
			switch {
			case f.on[in][p]:
				if f.due[in][p] <= now {
					off |= 1 << p
					f.due[in][p] = now + f.refresh(in)
					f.C[in].TxRefresh[p]++
					f.T[in][p].Refreshes++
				}
			case f.xon[in][p] > 0:
				if f.due[in][p] <= now {
					on |= 1 << p
					f.setXon(in, pcp, f.xon[in][p]-1)
					f.due[in][p] = now + f.repeat()
					f.C[in].TxXon[p]++
				}
				if f.xon[in][p] == 0 {
					continue
				}
			default:
				continue
			}
			if f.next < 0 || f.due[in][p] < f.next {
				f.next = f.due[in][p]
			}
		}
		if off|on != 0 {
			f.send(in, off, on, 0, nil)
		}
	}
}

// Timing sets t to port in's pause timing, a class per lossless
// priority (none for a port that runs no PFC).
func (f *PFC) Timing(in int, t *FCTiming) {
	t.N = 0
	if in >= len(f.ports) {
		return
	}
	for p := range 8 {
		if f.th.Lossless&(1<<p) != 0 {
			t.add(&f.T[in][p])
		}
	}
}

// OnPFC applies a PFC frame that arrived on port in to that port's
// egress queues.
func (f *PFC) OnPFC(in int, fr PFCFrame) {
	if in >= len(f.ports) {
		return
	}
	eg := f.env.Egress(in)
	now := f.env.Now()
	c := &f.C[in]
	for p := range 8 {
		if fr.Enable()&(1<<p) == 0 {
			continue
		}
		if IsControl(uint8(p)) || p >= eg.Queues() {
			c.Ignored++
			continue
		}
		q := fr.Quanta(p)
		if q == 0 {
			c.RxXon[p]++
			eg.Resume(p, now)
			continue
		}
		c.RxXoff[p]++
		eg.Pause(p, now, now+max(PauseNs(q, f.ports[in].RateBps), holdOr(f.th.Hold)))
	}
}
