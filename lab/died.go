package lab

import (
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

// AbortedError is a run (Run: "workload") stopped because a process that
// hosts nodes of its lab died; the flows still running were stopped and
// there is no report.
type AbortedError struct {
	Run  string
	Died *ProcessDiedError
}

func (e *AbortedError) Error() string { return e.Died.Error() + "; " + e.Run + " aborted" }
func (e *AbortedError) Unwrap() error { return e.Died }
