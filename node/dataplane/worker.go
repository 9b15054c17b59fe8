package dataplane

// A worker runs the engines of many nodes on one locked OS thread, the way
// a userspace switch's polling thread serves many ports. One round:
//
//  1. apply engines added or removed since the last round;
//  2. step every engine that has work: one of its ports is readable (the
//     poller said so, or a patched cable reached it during this round),
//     it moved frames in its last step (it may have more), a control
//     request poked it, or its next deadline (shaper, delay line, pause
//     expiry, timer, watchdog) has come; each step is the engine's
//     receive -> forward -> egress -> transmit pass. The steps go in the
//     order of when each engine got its work, each as of that time
//     (serve, order.go): deadlines that came while the worker slept are
//     replayed as a punctual worker would have served them, and an
//     engine a cable reached steps as of the step that sent the frame;
//  3. if frames moved, ask the poller (without blocking) which ports became
//     readable and go round again;
//  4. otherwise, while frames arrive from the kernel (a port with a file
//     descriptor was readable within the last KernelQuiet), keep polling
//     without blocking for the poll budget after the last work found (a
//     stream of frames rarely pauses for longer, and a wake-up costs far
//     more than a poll); frames over patched cables arrive only during
//     the worker's own steps, so a worker whose kernel ports are quiet
//     has nothing to poll for; then
//  5. sleep in the poller until a port is readable, a control request
//     comes, or the earliest deadline plus the slack: deadlines that fall
//     within the slack of each other are served by one wake-up.
//
// An idle worker (no traffic, nothing paused, no timers) sleeps without a
// timeout and costs nothing.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// Defaults of a worker's scheduling.
const (
	// DefaultSlack lets a worker serve deadlines up to this late, so that
	// deadlines close together cost one wake-up. A shaped port may run a
	// burst ahead and catch up on lateness (see Options), so the link
	// keeps its rate.
	DefaultSlack = 50 * time.Microsecond
	// DefaultPollBudget is how long a worker keeps polling after it last
	// found work before it sleeps.
	DefaultPollBudget = 10 * time.Microsecond
	// KernelQuiet is how long after a port with a file descriptor was
	// last found readable the worker still polls for the kernel's frames
	// (the poll budget); after that it sleeps as soon as it has no work.
	KernelQuiet = time.Millisecond
)

// WorkerOptions configure a worker.
type WorkerOptions struct {
	// Name names the worker in its stats.
	Name string
	// Slack is how late the worker may serve a deadline so that deadlines
	// close together share a wake-up (0: DefaultSlack; negative: none).
	Slack time.Duration
	// PollBudget is how long the worker polls without blocking after it
	// last found work (0: DefaultPollBudget; negative: never).
	PollBudget time.Duration
	// Priority is the SCHED_FIFO priority, 1-99, at which the worker's
	// thread keeps time (0: DefaultPriority; negative: an ordinary
	// thread). A saturated worker yields it (YieldAfter). If the kernel
	// refuses it (no CAP_SYS_NICE), the thread stays ordinary and the
	// worker's stats say why.
	Priority int
}

// DefaultPriority is a worker thread's real-time priority: above every
// ordinary thread, below the kernel's threaded interrupt handlers (50).
//
// A worker keeps its engines' time by sleeping until their next
// deadline. As an ordinary thread it comes back from such a sleep as
// soon as the scheduler gives it a CPU: on a machine with two CPUs and a
// lab's other processes (a workload generator, captures, the kernel's
// own threads) that was often more than 100 us late and up to 5 ms,
// longer than a shaped port's catch-up bound, so the port lost link
// time. As a real-time thread it preempts them when it wakes.
const DefaultPriority = 10

// YieldAfter is how long a real-time worker may go without sleeping
// before it gives up its priority until its next sleep. Such a worker is
// saturated: it keeps no deadline by waking on time, and as a real-time
// thread that never sleeps it would take its CPU from every other
// process of the machine, the kernel's deferred network work included.
const YieldAfter = 5 * time.Millisecond

// Worker runs engines on one locked OS thread. Add and Remove are safe from
// any goroutine, before or while Run runs.
type Worker struct {
	opts   WorkerOptions
	poll   poller
	epoch  time.Time
	ord    order // its engines; worker goroutine only (before Run: under mu)
	ready  []int32
	budget int64
	slack  int64
	reach  int64 // how far back the worker replays (serve)

	mu      sync.Mutex
	ops     []workerOp
	hasOps  atomic.Bool
	running atomic.Bool
	stop    atomic.Bool

	tid     atomic.Int64
	disarms atomic.Uint64 // the poller's, published each round
	// prio is the real-time priority the worker's thread keeps time at
	// (0: none, or refused: prioErr); rt is set while the thread has it,
	// wokeAt is when the worker last came back from a sleep.
	prio    int
	prioErr string // under mu
	class   threadClass
	rt      bool
	wokeAt  int64
	engines atomic.Int64 // served in the last round
	st      workerCounters
}

// workerOp adds (add) or removes an engine on the worker goroutine; done
// receives the result.
type workerOp struct {
	e    *Engine
	add  bool
	done chan error
}

// workerCounters are read by Stats from any goroutine.
type workerCounters struct {
	rounds, steps, polls, sleeps atomic.Uint64
	busyNs                       atomic.Int64 // in engines' steps
	maxStepNs                    atomic.Int64
	controlNs, maxControlNs      atomic.Int64 // answering snapshots and calls
	maxRoundNs                   atomic.Int64
	lateWakes                    atomic.Uint64
	maxWakeLateNs                atomic.Int64
	replays                      atomic.Uint64
	maxReplayNs                  atomic.Int64
	skips                        atomic.Uint64
	skippedNs                    atomic.Int64
	yields                       atomic.Uint64
	priority                     atomic.Int64
}

// WorkerStats are a worker's counters.
type WorkerStats struct {
	Name    string `json:"name"`
	Tid     int    `json:"tid"`
	Engines int    `json:"engines"`
	api.WorkerCounters
}

// LateWake is how late after its deadline a worker's wake-up counts in
// WorkerStats.LateWakes.
const LateWake = 100 * time.Microsecond

// NewWorker returns a worker with no engines.
func NewWorker(opts WorkerOptions) (*Worker, error) {
	k, err := newKernelPoller()
	if err != nil {
		return nil, err
	}
	w := &Worker{opts: opts, poll: poller{k: k}, epoch: time.Now(), ready: make([]int32, 0, 256)}
	w.budget = int64(opts.PollBudget)
	if opts.PollBudget == 0 {
		w.budget = int64(DefaultPollBudget)
	}
	w.slack = int64(opts.Slack)
	if opts.Slack == 0 {
		w.slack = int64(DefaultSlack)
	}
	w.reach = replayReach(max(w.slack, 0))
	switch w.prio = opts.Priority; {
	case opts.Priority == 0:
		w.prio = DefaultPriority
	case opts.Priority < 0:
		w.prio = 0
	case opts.Priority > 99:
		k.Close()
		return nil, fmt.Errorf("dataplane: worker %s: priority %d: want 1-99, or negative for an ordinary thread", opts.Name, opts.Priority)
	}
	return w, nil
}

// Now is the worker's clock: ns since NewWorker. Its engines share it.
func (w *Worker) Now() int64 { return int64(time.Since(w.epoch)) }

// Add puts e on the worker: its ports' readiness is watched and, once the
// worker runs, its clock starts and its ports get their receive frames
// (e.Ready closes). It returns once e is served (or, before Run, once it
// will be).
func (w *Worker) Add(e *Engine) error { return w.do(workerOp{e: e, add: true}) }

// Remove stops serving e and returns once the worker no longer touches it;
// calls queued for e then run, and later ones run directly on the caller's
// goroutine. e keeps its frames and counters and may be added to this
// worker again.
func (w *Worker) Remove(e *Engine) error { return w.do(workerOp{e: e}) }

func (w *Worker) do(op workerOp) error {
	w.mu.Lock()
	if !w.running.Load() {
		err := w.apply(op)
		w.mu.Unlock()
		return err
	}
	op.done = make(chan error, 1)
	w.ops = append(w.ops, op)
	w.hasOps.Store(true)
	w.mu.Unlock()
	w.poll.k.Wake()
	return <-op.done
}

// applyOps runs the queued adds and removes (worker goroutine).
func (w *Worker) applyOps() {
	w.mu.Lock()
	ops := w.ops
	w.ops = nil
	w.hasOps.Store(false)
	w.mu.Unlock()
	for _, op := range ops {
		op.done <- w.apply(op)
	}
}

// apply adds or removes op.e; it runs on the worker goroutine, or under
// mu while the worker does not run.
func (w *Worker) apply(op workerOp) error {
	e := op.e
	if !op.add {
		for i, s := range w.ord.slots {
			if s != nil && s.e == e {
				var errs []error
				for _, p := range e.ports {
					errs = append(errs, w.poll.unwatch(p.io))
				}
				w.ord.remove(i)
				e.detach()
				return errors.Join(errs...)
			}
		}
		return fmt.Errorf("dataplane: remove: the engine is not on worker %s", w.opts.Name)
	}
	if e.w != nil {
		return fmt.Errorf("dataplane: add: the engine is on a worker already")
	}
	if len(e.ports) > MaxPorts {
		return fmt.Errorf("dataplane: add: %d ports, a worker serves engines of at most %d", len(e.ports), MaxPorts)
	}
	if e.begun && e.epoch != w.epoch {
		return fmt.Errorf("dataplane: add: the engine ran on another worker (its clock is that worker's)")
	}
	i := w.ord.free()
	for j, p := range e.ports {
		if err := w.poll.watch(p.io, token(i, j), p.held != nil); err != nil {
			for _, q := range e.ports[:j] {
				_ = w.poll.unwatch(q.io)
			}
			return err
		}
	}
	e.attach(w)
	// Frames may have arrived before the ports were watched.
	e.readableAll()
	w.ord.set(i, &slot{e: e, deadline: -1, hot: true, at: w.Now()})
	return nil
}

// A poller token names an engine's slot and one of its ports.
const portBits = 10

// MaxPorts is the most ports an engine on a worker may have.
const MaxPorts = 1 << portBits

func token(slot, port int) int32 { return int32(slot<<portBits | port) }

func fromToken(t int32) (slot, port int) { return int(t) >> portBits, int(t) & (MaxPorts - 1) }

// markReady marks the engines whose ports the poller found readable, or
// a cable reached since, as having frames from v (serve).
func (w *Worker) markReady(v int64) {
	w.ready = w.poll.takePending(w.ready)
	for _, tok := range w.ready {
		i, port := fromToken(tok)
		if i < len(w.ord.slots) && w.ord.slots[i] != nil {
			w.ord.mark(i, v)
			w.ord.slots[i].e.readable(port)
		}
	}
	w.ready = w.ready[:0]
	// A held port's frames are due when they arrive in the model: its
	// engine steps then, not when the cable carried them.
	for _, a := range w.poll.arrivals {
		i, _ := fromToken(a.token)
		if i < len(w.ord.slots) && w.ord.slots[i] != nil {
			w.ord.arrive(i, a.stamp, v)
		}
	}
	w.poll.arrivals = w.poll.arrivals[:0]
}

// stepsPerEngine bounds a round's steps (serve's limit) to this many per
// engine: a round that replays more leaves the rest to the next, after
// the poller has been looked at.
const stepsPerEngine = 4

// Stop asks Run to return; safe from any goroutine.
func (w *Worker) Stop() {
	w.stop.Store(true)
	w.poll.k.Wake()
}

// Close releases the poller. Call after Run has returned.
func (w *Worker) Close() error { return w.poll.k.Close() }

// Stats returns the worker's counters; safe from any goroutine.
func (w *Worker) Stats() WorkerStats {
	w.mu.Lock()
	n := int(w.engines.Load())
	if !w.running.Load() {
		n = 0
		for _, s := range w.ord.slots {
			if s != nil {
				n++
			}
		}
	}
	prioErr := w.prioErr
	w.mu.Unlock()
	return WorkerStats{Name: w.opts.Name, Tid: int(w.tid.Load()), Engines: n,
		WorkerCounters: api.WorkerCounters{
			Rounds: w.st.rounds.Load(), Steps: w.st.steps.Load(), Polls: w.st.polls.Load(), Sleeps: w.st.sleeps.Load(),
			BusyNs: w.st.busyNs.Load(), MaxStepNs: w.st.maxStepNs.Load(), MaxRoundNs: w.st.maxRoundNs.Load(),
			LateWakes: w.st.lateWakes.Load(), MaxWakeLateNs: w.st.maxWakeLateNs.Load(),
			Replays: w.st.replays.Load(), MaxReplayNs: w.st.maxReplayNs.Load(),
			Skips: w.st.skips.Load(), SkippedNs: w.st.skippedNs.Load(), Disarms: w.disarms.Load(),
			ControlNs: w.st.controlNs.Load(), MaxControlNs: w.st.maxControlNs.Load(),
			Priority: int(w.st.priority.Load()), PriorityError: prioErr, Yields: w.st.yields.Load()}}
}

// Run serves the engines until ctx is done or Stop is called. It locks
// its goroutine to one OS thread. When it returns, every engine is
// detached (as by Remove) but stays in the worker's list: Run may be
// called again.
func (w *Worker) Run(ctx context.Context) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid, err := prepareThread()
	if err != nil {
		return err
	}
	w.tid.Store(int64(tid))
	if w.class, err = currentClass(); err != nil {
		return err
	}
	defer w.ordinary()
	w.realtime()
	stopCtx := context.AfterFunc(ctx, w.Stop)
	defer stopCtx()

	w.mu.Lock()
	w.running.Store(true)
	for _, s := range w.ord.slots {
		if s != nil {
			s.e.start()
		}
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.running.Store(false)
		ops := w.ops
		w.ops = nil
		w.hasOps.Store(false)
		for _, s := range w.ord.slots {
			if s != nil {
				s.e.halt()
			}
		}
		w.mu.Unlock()
		for _, op := range ops {
			op.done <- w.apply(op)
		}
	}()
	return w.loop()
}

// realtime gives the worker's thread its real-time priority, if it has
// one. If the kernel refuses, the worker goes on as an ordinary thread
// and says why in its stats.
func (w *Worker) realtime() {
	if w.prio == 0 || w.rt {
		return
	}
	if err := setRealtime(w.prio); err != nil {
		w.prio = 0
		w.mu.Lock()
		w.prioErr = err.Error()
		w.mu.Unlock()
		return
	}
	w.rt = true
	w.st.priority.Store(int64(w.prio))
}

// ordinary makes the worker's thread an ordinary thread again.
func (w *Worker) ordinary() {
	if !w.rt {
		return
	}
	w.rt = false
	if err := w.class.restore(); err != nil {
		// Never asked again: the kernel left the thread as it was.
		w.prio = 0
		w.st.priority.Store(0)
		w.mu.Lock()
		w.prioErr = err.Error()
		w.mu.Unlock()
	}
}

func (w *Worker) loop() error {
	lastWork := w.Now()
	w.wokeAt = lastWork
	lastKernel := lastWork
	wakeDue := int64(-1) // the deadline (plus slack) of the last sleep
	for !w.stop.Load() {
		if w.hasOps.Load() {
			w.applyOps()
		}
		w.st.rounds.Add(1)
		now := w.Now()
		w.markReady(now)
		if w.wokeAt < 0 {
			w.wokeAt = now
		}
		if wakeDue >= 0 {
			if late := now - wakeDue; late > int64(LateWake) {
				w.st.lateWakes.Add(1)
				if late > w.st.maxWakeLateNs.Load() {
					w.st.maxWakeLateNs.Store(late)
				}
			}
			wakeDue = -1
		}
		t := now
		moved, engines := 0, 0
		for i, s := range w.ord.slots {
			if s != nil {
				engines++
				if s.e.poked.Load() {
					w.ord.mark(i, now) // a control request
				}
			}
		}
		// The round's counters, published once it ends: an atomic add per
		// step is a locked instruction.
		var steps, replays uint64
		var busy, maxStep, maxReplay int64
		skipped := w.ord.serve(now, w.reach, stepsPerEngine*engines+1, func(s *slot, at int64) {
			e := s.e
			replay := at < now
			if replay {
				replays++
				maxReplay = max(maxReplay, t-at)
			} else {
				at = t // the worker's clock: a step with nothing older
			}
			poked := e.poked.Load()
			m := e.stepAt(at, replay)
			end := w.Now()
			e.busyNs += end - t
			busy += end - t
			maxStep = max(maxStep, end-t)
			steps++
			t = end
			s.stepped(m, at)
			if poked || !replay {
				// Its control calls, and a step at the worker's clock,
				// read the clock: the engine has seen that time.
				s.last = end
			}
			if replay {
				s.deadline = e.deadline(at)
			} else {
				s.deadline = e.deadline(end)
			}
			moved += m
		}, w.markReady)
		w.st.steps.Add(steps)
		w.st.busyNs.Add(busy)
		if skipped > 0 {
			w.st.skips.Add(1)
			w.st.skippedNs.Add(skipped)
		}
		if replays > 0 {
			w.st.replays.Add(replays)
			if maxReplay > w.st.maxReplayNs.Load() {
				w.st.maxReplayNs.Store(maxReplay)
			}
		}
		if maxStep > w.st.maxStepNs.Load() {
			w.st.maxStepNs.Store(maxStep)
		}
		next := int64(-1)
		for _, s := range w.ord.slots {
			if s != nil && s.deadline >= 0 && (next < 0 || s.deadline < next) {
				next = s.deadline
			}
		}
		w.engines.Store(int64(engines))
		if t-now > w.st.maxRoundNs.Load() {
			w.st.maxRoundNs.Store(t - now)
		}
		var err error
		if w.poll.kernelTraffic() {
			lastKernel = t
		}
		switch {
		case moved > 0:
			lastWork = t
			w.ready, err = w.poll.look(t, w.ready)
		case w.budget > 0 && t-lastWork < w.budget && t-lastKernel < int64(KernelQuiet):
			w.st.polls.Add(1)
			w.ready, err = w.poll.look(t, w.ready)
		default:
			timeout := time.Duration(-1)
			if next >= 0 {
				timeout = time.Duration(max(next+w.slack-t, 0))
				wakeDue = t + int64(timeout)
			}
			if timeout != 0 {
				// A sleep: the worker keeps time again.
				w.realtime()
				w.wokeAt = -1 // the next round's clock
			}
			w.st.sleeps.Add(1)
			w.ready, err = w.poll.wait(timeout, w.ready)
		}
		if w.rt && w.wokeAt >= 0 && t-w.wokeAt >= int64(YieldAfter) {
			w.st.yields.Add(1)
			w.ordinary()
		}
		if err != nil {
			return fmt.Errorf("dataplane: worker %s: %w", w.opts.Name, err)
		}
		if w.poll.disarms != w.disarms.Load() {
			w.disarms.Store(w.poll.disarms)
		}
	}
	return nil
}
