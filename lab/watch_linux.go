package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/bcfab/bcfab/node/api"
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
	// control is a worker's control socket ("": a node's daemon).
	control string
	nodes   map[string]bool
}

func (p hostProc) running() bool { return cmdlineHas(p.pid, p.config) }

// down is p's error, seen gone at at (zero: found not running): a node's
// daemon stopped on request (lab node stop) is a *NodeStoppedError, any
// other process gone a *ProcessDiedError.
func (p hostProc) down(st *State, at time.Time) error {
	if p.worker == "" {
		for n := range p.nodes {
			if stoppedOnRequest(st, n) {
				return &NodeStoppedError{Node: n, At: at}
			}
		}
	}
	return p.died(st, at)
}

// died is p's error as a dead process, seen gone at at (zero: found not
// running).
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
		p := hostProc{worker: w.Name, pid: w.Pid, config: w.Config, control: w.Control, nodes: map[string]bool{}}
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

// notRunning returns the error of the first process hosting st's nodes
// that is not running (an ErrNodeDown), or nil when all are.
func notRunning(st *State) error {
	for _, p := range hostProcs(st) {
		if !p.running() {
			return p.down(st, time.Time{})
		}
	}
	return nil
}

// NotRunning returns an ErrNodeDown for the first node of lab name that
// is down — its process not running, or the node stopped on its worker —
// and nil when every one runs (or the lab has no state): what a tool
// whose requests to the lab failed tells its user in place of each
// failure.
func NotRunning(runRoot, name string) error {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return nil
	}
	if d := notRunning(st); d != nil {
		return fmt.Errorf("lab %s: %w", st.Lab, d)
	}
	for _, p := range hostProcs(st) {
		if p.worker == "" {
			continue
		}
		if d := p.stoppedOn(time.Time{}, ""); d != nil {
			return fmt.Errorf("lab %s: %w", st.Lab, d)
		}
	}
	return nil
}

// hostOf returns an ErrNodeDown when node is down — the process hosting
// it not running, or node stopped on its worker — else nil: what a
// failed request to node's control socket means then.
func hostOf(st *State, node string) error {
	for _, p := range hostProcs(st) {
		switch {
		case !p.nodes[node]:
		case !p.running():
			return p.down(st, time.Time{})
		case p.worker != "":
			if d := p.stoppedOn(time.Time{}, node); d != nil {
				return d
			}
		}
	}
	return nil
}

// stoppedOn returns a *NodeStoppedError for the first node (or only
// node only, if not "") that worker p reports stopped, nil when it runs
// them or does not answer within a second (its liveness is watched
// apart).
func (p hostProc) stoppedOn(at time.Time, only string) *NodeStoppedError {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rep, err := FetchWorker(ctx, p.control)
	if err != nil {
		return nil
	}
	for _, n := range rep.Nodes {
		if p.nodes[n.Name] && (only == "" || n.Name == only) && n.State == api.NodeStopped {
			return &NodeStoppedError{Node: n.Name, Worker: p.worker, At: at}
		}
	}
	return nil
}

// stoppedMark is the file that says node's daemon of its own was stopped
// on request: such a daemon leaves no process to ask, so StopNode
// records it, and StartNode removes it.
func stoppedMark(st *State, node string) string {
	return filepath.Join(st.RunDir, node+".stopped")
}

// stoppedOnRequest reports whether node's daemon of its own was stopped
// by StopNode and not started since.
func stoppedOnRequest(st *State, node string) bool {
	_, err := os.Stat(stoppedMark(st, node))
	return err == nil
}

// watchLab returns a context that is cancelled when ctx is, or, with an
// ErrNodeDown as its cause (context.Cause), when a node of st goes down:
// a process that hosts nodes dies (*ProcessDiedError), or a node is
// stopped (*NodeStoppedError). stop ends the watch and cancels the
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
					cancel(p.down(st, time.Now()))
					return
				}
			}
			for _, p := range live {
				if p.worker == "" {
					continue
				}
				if d := p.stoppedOn(time.Now(), ""); d != nil {
					cancel(d)
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

// downCause is the error of the node that went down and cancelled ctx
// (an ErrNodeDown), if one did.
func downCause(ctx context.Context) error {
	if err := context.Cause(ctx); errors.Is(err, ErrNodeDown) {
		return err
	}
	return nil
}
