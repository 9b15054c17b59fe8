package queues

import "time"

// WireOverhead is what Ethernet puts on the wire around every frame the
// datapath sees: preamble and SFD (8), FCS (4) and the inter-frame gap (12).
// A shaped port's rate counts them, as a real link's does.
const WireOverhead = 24

// Shaper paces a port to a link rate. It tracks the time the emulated link
// becomes free. A frame may start when that time is at most Burst ahead of
// now, so the average rate is exact and the port may run ahead by one
// burst's worth of bytes; a backlogged port that was woken late may also
// catch up on a bounded amount of time it lost, so scheduling jitter of the
// daemon does not turn into lost link capacity. A port that went idle
// starts afresh (Restart): idle time earns no credit. Times are nanoseconds
// of a monotonic clock; internally picoseconds, so rates up to 100 Gb/s
// keep their precision.
type Shaper struct {
	psPerByte int64 // 0: unshaped
	burstPs   int64
	catchupPs int64
	overhead  int64
	freePs    int64
	quietPs   int64 // the link was idle until then (lag accounting only)
	lag       Lag
}

// Lag is how well a backlogged shaped port kept up with its link: a frame
// that starts later than the link became free (beyond one burst) was
// late by the difference; lateness beyond the catch-up bound is link time
// lost for good, capacity the emulated link had and the daemon did not
// use. Idle time is neither.
type Lag struct {
	LateFrames uint64 // frames that started late
	MaxNs      int64  // the largest lateness
	LostNs     int64  // link time lost beyond the catch-up bound
}

// NewShaper returns a shaper for rateBps (0 = unshaped) that lets the port
// run up to burst ahead of real time and, backlogged, make up for up to
// catchup of time it was not served.
func NewShaper(rateBps uint64, burst, catchup time.Duration) Shaper {
	if rateBps == 0 {
		return Shaper{}
	}
	return Shaper{
		psPerByte: int64(8e12 / float64(rateBps)),
		burstPs:   burst.Nanoseconds() * 1000,
		catchupPs: catchup.Nanoseconds() * 1000,
		overhead:  WireOverhead,
	}
}

// Unshaped reports whether the shaper passes everything.
func (s *Shaper) Unshaped() bool { return s.psPerByte == 0 }

// Ready reports whether a frame may start at now.
func (s *Shaper) Ready(nowNs int64) bool {
	return s.psPerByte == 0 || s.freePs-nowNs*1000 <= s.burstPs
}

// ReadyAt is the earliest time (ns) at which Ready holds.
func (s *Shaper) ReadyAt() int64 {
	t := s.freePs - s.burstPs
	return (t + 999) / 1000
}

// WakeAt is when a blocked port should next be served: when only a quarter
// of the burst is still ahead of real time, so that each wake-up sends
// about three quarters of a burst rather than one frame.
func (s *Shaper) WakeAt() int64 {
	t := s.freePs - s.burstPs/4
	return (t + 999) / 1000
}

// Restart marks the link idle at now: a frame queued on an empty port
// starts no earlier than now.
func (s *Shaper) Restart(nowNs int64) {
	if now := nowNs * 1000; s.freePs < now {
		s.freePs = now
	}
}

// RestartAt marks the link idle until t, when a frame the daemon handles
// at now arrived: the frame starts no earlier than t, nor earlier than
// the catch-up bound before now. So a frame that reached an idle port
// late, because the emulator was late to deliver it, starts when it
// would have had it arrived on time; lateness beyond the bound stays. A
// frame the emulator delivered ahead of its time starts at t in the
// link's schedule: within the burst it leaves at once, further ahead it
// waits in its queue until the burst reaches it; either way it arrives
// on time.
func (s *Shaper) RestartAt(t, nowNs int64) {
	if s.psPerByte == 0 {
		return
	}
	start := max(t*1000, nowNs*1000-s.catchupPs)
	if s.freePs < start {
		s.freePs = start
	}
}

// Quiet tells the lag accounting that the link had nothing it could
// send until t (ns): a frame held by a pause until t is not late before
// t. It does not change what the shaper lets through.
func (s *Shaper) Quiet(t int64) {
	s.quietPs = max(s.quietPs, t*1000)
}

// Send accounts for a frame of n bytes starting at now, and returns when
// the frame starts on the emulated link (ns): when the link became free,
// up to a burst ahead of now or back to the catch-up bound before it; now
// when unshaped.
func (s *Shaper) Send(nowNs int64, n int) (startNs int64) {
	if s.psPerByte == 0 {
		return nowNs
	}
	now := nowNs * 1000
	due := max(s.freePs, s.quietPs) // when the frame could have started
	if late := now - s.burstPs - due; late > 0 {
		s.lag.LateFrames++
		s.lag.MaxNs = max(s.lag.MaxNs, late/1000)
	}
	if floor := now - s.catchupPs; s.freePs < floor {
		if due < floor {
			s.lag.LostNs += (floor - due) / 1000
		}
		s.freePs = floor
	}
	startNs = s.freePs / 1000
	s.freePs += (int64(n) + s.overhead) * s.psPerByte
	return startNs
}

// Lag reports how late the port's frames started.
func (s *Shaper) Lag() Lag { return s.lag }

// Free is when (ns) the link ends serialising the last frame Send
// accounted for: the frame's last bit, when a store-and-forward link
// delivers it (plus its propagation delay).
func (s *Shaper) Free() int64 { return (s.freePs + 999) / 1000 }

// TxTime is the serialisation time of an n-byte frame.
func (s *Shaper) TxTime(n int) time.Duration {
	return time.Duration((int64(n) + s.overhead) * s.psPerByte / 1000)
}

// DelayLine holds frames that have left the shaper until the time their
// link delivers them (the end of their serialisation plus the
// propagation delay, which the caller computes), in order.
//
// Each frame may also carry the time its link delivers it in the model
// (PutAt), which the line's hold may come before: a hold shortened to
// make up for the emulator's own lateness releases a frame early in
// the lab's time, but the frame arrives when the model says.
type DelayLine struct {
	fifo *FIFO
	due  []int64
	at   []int64
}

// NewDelayLine returns a delay line for up to capacity frames (a power of
// two).
func NewDelayLine(capacity int) (*DelayLine, error) {
	f, err := NewFIFO(capacity)
	if err != nil {
		return nil, err
	}
	return &DelayLine{fifo: f, due: make([]int64, capacity), at: make([]int64, capacity)}, nil
}

func (d *DelayLine) Len() int   { return d.fifo.Len() }
func (d *DelayLine) Full() bool { return d.fifo.Full() }

// Put holds p until due (ns). Frames leave in the order they were put: a
// due earlier than the one ahead of it waits for that one.
func (d *DelayLine) Put(due int64, p Packet) bool { return d.PutAt(due, due, p) }

// PutAt holds p until due (ns), to arrive at at (ns) in the model.
func (d *DelayLine) PutAt(due, at int64, p Packet) bool {
	slot := d.fifo.tail & d.fifo.mask
	if !d.fifo.Push(p) {
		return false
	}
	d.due[slot] = due
	d.at[slot] = at
	return true
}

// Take returns the head if it is due by now.
func (d *DelayLine) Take(nowNs int64) (Packet, bool) {
	p, _, ok := d.TakeAt(nowNs)
	return p, ok
}

// TakeAt returns the head if it is due by now, and when it arrives in
// the model.
func (d *DelayLine) TakeAt(nowNs int64) (Packet, int64, bool) {
	slot := d.fifo.head & d.fifo.mask
	if d.fifo.Len() == 0 || d.due[slot] > nowNs {
		return Packet{}, 0, false
	}
	p, ok := d.fifo.Pop()
	return p, d.at[slot], ok
}

// NextDue is when the head is due; ok is false when the line is empty.
func (d *DelayLine) NextDue() (int64, bool) {
	if d.fifo.Len() == 0 {
		return 0, false
	}
	return d.due[d.fifo.head&d.fifo.mask], true
}
