package dataplane

// The storm and deadlock watchdog (DESIGN §5), for every flow-control
// scheme, after SONiC's PFC watchdog: a queue that is paused, holds frames
// and has sent none for the detection time is stalled. The engine checks
// every quarter of the detection time while any queue is paused (and
// once after any activity, so an idle daemon does not wake for it), logs
// a stall when it is found and when it ends, and reports it in the
// queue's stats.
//
// Recovery, off by default: "forward" makes the queue ignore pauses for
// the restoration time (its frames go on, and may be dropped downstream);
// "drop" discards what it holds and what arrives for it for the
// restoration time. Then the queue obeys pauses again, and a stall that
// persists is detected and acted on again.

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
)

type watchdog struct {
	cfg    config.Watchdog
	period int64
	next   int64 // next check, -1: none due
	log    *slog.Logger
}

// wdQueue is the watchdog's view of one queue.
type wdQueue struct {
	lastDeq   uint64
	since     int64 // when it was first seen stuck; -1: it is not
	stalled   bool  // reported stalled and not over yet
	restoring int64 // end of the recovery action; 0: none
	stalls    uint64
	stalledNs int64 // in finished stalls
}

func (e *Engine) initWatchdog() error {
	c := e.opts.Watchdog
	if err := c.Validate(); err != nil {
		return fmt.Errorf("dataplane: %w", err)
	}
	e.wd = watchdog{cfg: c, period: int64(c.Detect) / 4, next: -1, log: e.opts.Log}
	if e.wd.log == nil {
		e.wd.log = slog.New(slog.DiscardHandler)
	}
	if c.Detect == 0 {
		return nil
	}
	for _, p := range e.ports {
		p.wd = make([]wdQueue, p.egress.Queues())
		for q := range p.wd {
			p.wd[q].since = -1
		}
	}
	return nil
}

// watchdog runs the check when it is due; active says the pass moved
// frames, which arms a check if none is due.
func (e *Engine) watchdog(active bool, now int64) {
	w := &e.wd
	if w.cfg.Detect == 0 {
		return
	}
	if w.next < 0 {
		if active {
			w.next = now + w.period
		}
		return
	}
	if now < w.next {
		return
	}
	if e.checkStalls(now) {
		w.next = now + w.period
	} else {
		w.next = -1
	}
}

// checkStalls looks at every queue and reports whether any is paused or
// under a recovery action (so the next check must come).
func (e *Engine) checkStalls(now int64) (watch bool) {
	w := &e.wd
	for pi, p := range e.ports {
		eg := p.egress
		eg.Eligible(now) // lift the pauses that expired
		for q := range p.wd {
			st := &p.wd[q]
			if st.restoring > 0 {
				watch = true
				if now < st.restoring {
					continue
				}
				st.restoring = 0
				eg.Override(q, now, false)
				p.wdDrop &^= 1 << q
				w.log.Info("watchdog: recovery over, queue obeys pauses again", "port", p.spec.Name, "queue", eg.Name(q))
			}
			paused := eg.Paused(q)
			watch = watch || paused
			deq := eg.Stats(q).DeqPackets
			stuck := paused && eg.QueueLen(q) > 0 && deq == st.lastDeq
			st.lastDeq = deq
			if !stuck {
				if st.stalled {
					d := now - st.since
					st.stalledNs += d
					w.log.Info("watchdog: stall over", "port", p.spec.Name, "queue", eg.Name(q), "after", time.Duration(d).Round(time.Millisecond))
				}
				st.stalled, st.since = false, -1
				continue
			}
			if st.since < 0 {
				st.since = now
			}
			if st.stalled || now-st.since < int64(w.cfg.Detect) {
				continue
			}
			st.stalled = true
			st.stalls++
			w.log.Warn("watchdog: queue stalled: paused, not empty, nothing sent", "port", p.spec.Name, "queue", eg.Name(q),
				"for", time.Duration(now-st.since).Round(time.Millisecond), "frames", eg.QueueLen(q), "bytes", eg.QueueBytes(q),
				"action", w.action())
			e.recover(pi, q, now)
		}
	}
	return watch
}

func (w *watchdog) action() string {
	if w.cfg.Action == "" {
		return config.WatchdogNone
	}
	return w.cfg.Action
}

// recover applies the configured action to queue q of port pi.
func (e *Engine) recover(pi, q int, now int64) {
	p := e.ports[pi]
	st := &p.wd[q]
	switch e.wd.cfg.Action {
	case config.WatchdogForward:
		p.egress.Override(q, now, true)
	case config.WatchdogDrop:
		p.wdDrop |= 1 << q
		for {
			pk, ok := p.egress.Discard(q)
			if !ok {
				break
			}
			p.egress.CountDrop(q, int(DropWatchdog))
			e.queued--
			e.buffered -= int(pk.Len)
			e.release(pk.Addr)
		}
	default:
		return
	}
	st.restoring = now + int64(e.wd.cfg.Restore)
}

// stallStats fills the watchdog's fields of a queue's stats.
func (e *Engine) stallStats(p *port, q int, now int64, s *api.QueueStats) {
	if p.wd == nil {
		return
	}
	st := &p.wd[q]
	s.Stalls = st.stalls
	s.StalledNs = st.stalledNs
	if st.stalled {
		s.Stalled = true
		s.StalledForNs = now - st.since
		s.StalledNs += s.StalledForNs
	}
	s.Recovering = st.restoring > 0
}
