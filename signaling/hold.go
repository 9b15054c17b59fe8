package signaling

import "time"

// Holding a pause under overload. The nodes are daemons that share a few
// cores: one may go unscheduled for hundreds of milliseconds on a loaded
// machine (docs/DECISIONS.md, "A pause holds while its sender is late"). A receiver
// that let a pause lapse after a few refresh periods would then send into
// a full buffer while the pausing node is merely late. So every scheme
// holds a pause for Hold without hearing it again (PFC: at least Hold, or
// the frame's quanta if longer), far above any stall, and ends it early
// only on an explicit resume. A lost resume must not then stall a queue
// for Hold: senders repeat a resume ResumeRepeats times, one refresh
// apart, after sending it (BFC: the bitmap without the queue), so it
// takes that many frames lost in a row before the hold has to end the
// pause.
const (
	// DefaultHold is how long a receiver keeps a pause it does not hear
	// again.
	DefaultHold = int64(time.Second)
	// ResumeRepeats is how many times, one refresh apart, a sender
	// repeats a resume after sending it.
	ResumeRepeats = 3
	// DefaultPFCRepeat is the spacing of PFC's repeated X_on frames when
	// none is configured.
	DefaultPFCRepeat = int64(time.Millisecond)
)

// holdOr is hold, or DefaultHold when hold is not positive.
func holdOr(hold int64) int64 {
	if hold <= 0 {
		return DefaultHold
	}
	return hold
}

// setOwed sets *slot, a count of repetitions one signal still owes, to n
// and keeps *pending, how many signals owe any, in step.
func setOwed(slot *uint8, pending *int, n uint8) {
	switch was := *slot; {
	case was == 0 && n > 0:
		*pending++
	case was > 0 && n == 0:
		*pending--
	}
	*slot = n
}

// refresh is the refresh timer of a set of signalled states: how many
// are signalled, how many Resumes still owe repetitions (setOwed keeps
// it), and when the next refresh is due. It runs while either count is
// above 0.
type refresh struct {
	active, owed int
	next         int64
}

func (r *refresh) idle() bool { return r.active == 0 && r.owed == 0 }

// arm starts the timer, due one period after now, if it is not running.
func (r *refresh) arm(now, period int64) {
	if r.idle() {
		r.next = now + period
	}
}

// nextTick is when the next refresh is due, or -1 when the timer is not
// running.
func (r *refresh) nextTick() int64 {
	if r.idle() {
		return -1
	}
	return r.next
}

// due reports whether a refresh is due at now and, if so, schedules the
// one after it.
func (r *refresh) due(now, period int64) bool {
	if r.idle() || now < r.next {
		return false
	}
	r.next = now + period
	return true
}
