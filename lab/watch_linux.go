package lab

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// watchInterval is how often a run looks at the processes that host its
// lab's nodes: a process that dies stops the run within about this.
// Reading two small /proc files per process costs a few microseconds.
const watchInterval = 200 * time.Millisecond

// hostProc is a process that hosts nodes of a lab: a worker, or a node's
// daemon of its own.
type hostProc struct {
	worker string
	pid    int
	config string // on its command line while the pid is ours
	nodes  map[string]bool
}

func (p hostProc) running() bool { return cmdlineHas(p.pid, p.config) }

// died is p's error, seen gone at at (zero: found not running).
func (p hostProc) died(st *State, at time.Time) *ProcessDiedError {
	order := make([]string, len(st.Nodes))
	for i, n := range st.Nodes {
		order[i] = n.Name
	}
	return deadProcess(p.worker, p.pid, order, p.nodes, at)
}

// hostProcs lists the processes that host st's nodes: its workers, and
// the daemons of nodes that run in a process of their own.
func hostProcs(st *State) []hostProc {
	var out []hostProc
	for _, w := range st.Workers {
		p := hostProc{worker: w.Name, pid: w.Pid, config: w.Config, nodes: map[string]bool{}}
		for _, n := range w.Nodes {
			p.nodes[n] = true
		}
		out = append(out, p)
	}
	for _, n := range st.Nodes {
		if n.Worker == "" {
			out = append(out, hostProc{pid: n.Pid, config: n.Config, nodes: map[string]bool{n.Name: true}})
		}
	}
	return out
}

// notRunning returns the first process hosting st's nodes that is not
// running, or nil when all are.
func notRunning(st *State) *ProcessDiedError {
	for _, p := range hostProcs(st) {
		if !p.running() {
			return p.died(st, time.Time{})
		}
	}
	return nil
}

// NotRunning returns a *ProcessDiedError for the first process hosting
// nodes of lab name that is not running, nil when every one runs (or the
// lab has no state): what a tool whose requests to the lab failed tells
// its user in place of each failure.
func NotRunning(runRoot, name string) error {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return nil
	}
	if d := notRunning(st); d != nil {
		return fmt.Errorf("lab %s: %w", st.Lab, d)
	}
	return nil
}

// hostOf returns the error of the process hosting node when it is not
// running, else nil: what a failed request to node's control socket
// means then.
func hostOf(st *State, node string) *ProcessDiedError {
	for _, p := range hostProcs(st) {
		if p.nodes[node] && !p.running() {
			return p.died(st, time.Time{})
		}
	}
	return nil
}

// watchLab returns a context that is cancelled when ctx is, or, with a
// *ProcessDiedError as its cause (context.Cause), when a process that
// hosts one of st's nodes dies. stop ends the watch and cancels the
// context. Processes already not running are not watched (the caller
// checks with notRunning first).
func watchLab(ctx context.Context, st *State) (wctx context.Context, stop func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	var live []hostProc
	for _, p := range hostProcs(st) {
		if p.running() {
			live = append(live, p)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(watchInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-wctx.Done():
				return
			case <-tick.C:
			}
			for _, p := range live {
				if !p.running() {
					cancel(p.died(st, time.Now()))
					return
				}
			}
		}
	})
	return wctx, func() {
		close(done)
		wg.Wait()
		cancel(nil)
	}
}

// diedCause is the *ProcessDiedError that cancelled ctx, if one did.
func diedCause(ctx context.Context) *ProcessDiedError {
	d, _ := context.Cause(ctx).(*ProcessDiedError)
	return d
}
