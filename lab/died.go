package lab

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ProcessDiedError is a process that hosts nodes of a lab — a worker, or
// a node's daemon of its own — found not running. Commands that drive a
// lab (a workload, rperf, lab gen) report it as one line in place of
// one failure per node, and a workload run stops when it happens.
type ProcessDiedError struct {
	// Worker names the worker ("": the daemon of Nodes[0]).
	Worker string `json:"worker,omitempty"`
	Pid    int    `json:"pid"`
	// Nodes are every node the process hosted, in the lab's order.
	Nodes []string `json:"nodes"`
	// Span is Nodes with runs written first..last: "h0..h15, s0.0..s1.3".
	Span string `json:"span"`
	// At is when it was seen gone during a run; zero when it was found
	// not running (before the run, or by a command that does not watch).
	At time.Time `json:"at,omitzero"`
}

func (e *ProcessDiedError) Error() string {
	var who string
	if e.Worker != "" {
		who = fmt.Sprintf("worker %s (pid %d; nodes %s)", e.Worker, e.Pid, e.Span)
	} else {
		who = fmt.Sprintf("daemon of %s (pid %d)", e.Span, e.Pid)
	}
	if e.At.IsZero() {
		return who + " is not running"
	}
	return who + " died at " + e.At.Local().Format(time.TimeOnly)
}

// nodeSpan writes the nodes in set in the lab's node order (order, the
// names of every node), consecutive nodes of one kind (server h, switch
// s) as first..last: "h0..h7, s0.0..s1.1".
func nodeSpan(order []string, set map[string]bool) string {
	var parts []string
	first, last := -1, -1
	flush := func() {
		switch {
		case first < 0:
		case first == last:
			parts = append(parts, order[first])
		case first+1 == last:
			parts = append(parts, order[first], order[last])
		default:
			parts = append(parts, order[first]+".."+order[last])
		}
		first, last = -1, -1
	}
	for i, n := range order {
		if !set[n] {
			flush()
			continue
		}
		if first >= 0 && order[last][0] != n[0] {
			flush()
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	flush()
	return strings.Join(parts, ", ")
}

// deadProcess is the error of a process that hosted the nodes in set,
// found not running (at zero) or seen gone at at.
func deadProcess(worker string, pid int, order []string, set map[string]bool, at time.Time) *ProcessDiedError {
	e := &ProcessDiedError{Worker: worker, Pid: pid, Span: nodeSpan(order, set), At: at}
	for _, n := range order {
		if set[n] {
			e.Nodes = append(e.Nodes, n)
		}
	}
	return e
}

// ErrNodeDown is what a *ProcessDiedError and a *NodeStoppedError are
// (errors.Is): a node of the lab went down, one way or the other. A
// command reports it as one line and exits 4.
var ErrNodeDown = errors.New("a node of the lab is down")

// Is makes a *ProcessDiedError an ErrNodeDown.
func (e *ProcessDiedError) Is(target error) bool { return target == ErrNodeDown }

// NodeStoppedError is a node taken down on request while its lab runs
// (lab node stop): its worker goes on serving the other nodes, or its
// daemon of its own exited as told. A run on the lab stops when it
// happens, as when a process died: the node's flows can neither end nor
// be measured.
type NodeStoppedError struct {
	Node string `json:"node"`
	// Worker names the worker that hosts the node ("": a daemon of its
	// own).
	Worker string `json:"worker,omitempty"`
	// At is when it was seen stopped during a run; zero when it was found
	// stopped.
	At time.Time `json:"at,omitzero"`
}

func (e *NodeStoppedError) Error() string {
	who := "node " + e.Node
	if e.Worker != "" {
		who += " (worker " + e.Worker + ")"
	}
	if e.At.IsZero() {
		return who + " is stopped (lab node stop)"
	}
	return who + " was stopped (lab node stop) at " + e.At.Local().Format(time.TimeOnly)
}

// Is makes a *NodeStoppedError an ErrNodeDown.
func (e *NodeStoppedError) Is(target error) bool { return target == ErrNodeDown }

// AbortedError is a run (Run: "workload") stopped because a node of its
// lab went down (Down: a *ProcessDiedError or a *NodeStoppedError); the
// flows still running were stopped and there is no report. Flows says
// what became of the run's flows, so that none that did not end is taken
// for done.
type AbortedError struct {
	Run   string
	Down  error
	Flows FlowTally
}

// FlowTally is what became of a run's flows when it was aborted. Every
// flow is in exactly one count.
type FlowTally struct {
	// Total is the flows of the schedule.
	Total int `json:"total"`
	// Completed: its NIC reported every byte acknowledged before the
	// abort.
	Completed int `json:"completed"`
	// Failed: its transport gave up (a lossless flow's gap), or its NIC
	// refused to start it (a node that was down).
	Failed int `json:"failed"`
	// Stopped: running when the run was aborted, stopped unfinished (or
	// lost with its NIC).
	Stopped int `json:"stopped"`
	// NotStarted: its start was still ahead.
	NotStarted int `json:"not_started"`
}

func (f FlowTally) String() string {
	return fmt.Sprintf("%d of %d flows completed, %d failed, %d stopped unfinished, %d not started",
		f.Completed, f.Total, f.Failed, f.Stopped, f.NotStarted)
}

func (e *AbortedError) Error() string {
	s := e.Down.Error() + "; " + e.Run + " aborted"
	if e.Flows.Total > 0 {
		s += ": " + e.Flows.String()
	}
	return s
}

func (e *AbortedError) Unwrap() error { return e.Down }
