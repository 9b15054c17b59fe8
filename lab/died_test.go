package lab

import (
	"errors"
	"testing"
	"time"
)

// A dead process is one line: runs of consecutive nodes of one kind are
// written first..last, and a run seen dying says when.
func TestProcessDiedError(t *testing.T) {
	order := []string{"h0", "h1", "h2", "h3", "h4", "h5", "s0.0", "s0.1", "s1.0", "s1.1"}
	set := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	for _, c := range []struct {
		nodes []string
		span  string
	}{
		{[]string{"h0", "h1", "h2", "h3", "h4", "h5", "s0.0", "s0.1", "s1.0", "s1.1"}, "h0..h5, s0.0..s1.1"},
		{[]string{"h0", "h1", "s0.0", "s1.0"}, "h0, h1, s0.0, s1.0"},
		{[]string{"h2", "h3", "h4", "s1.1"}, "h2..h4, s1.1"},
		{[]string{"h5", "s0.0"}, "h5, s0.0"},
	} {
		if got := nodeSpan(order, set(c.nodes...)); got != c.span {
			t.Errorf("%v: %q, want %q", c.nodes, got, c.span)
		}
	}
	at := time.Date(2026, 1, 2, 13, 2, 11, 0, time.Local)
	e := deadProcess("w0", 1234, order, set("h0", "h1", "h2", "s0.0"), at)
	if got, want := e.Error(), "worker w0 (pid 1234; nodes h0..h2, s0.0) died at 13:02:11"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	a := &AbortedError{Run: "workload", Down: deadProcess("", 99, order, set("h3"), time.Time{})}
	if got, want := a.Error(), "daemon of h3 (pid 99) is not running; workload aborted"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if !errors.Is(a, ErrNodeDown) {
		t.Errorf("%v is not ErrNodeDown", a)
	}
}

// A node stopped on request is one line naming it (and its worker), and
// an aborted run counts every flow once.
func TestNodeStoppedError(t *testing.T) {
	at := time.Date(2026, 1, 2, 13, 2, 11, 0, time.Local)
	for _, c := range []struct {
		err  *NodeStoppedError
		want string
	}{
		{&NodeStoppedError{Node: "h1", Worker: "w0", At: at}, "node h1 (worker w0) was stopped (lab node stop) at 13:02:11"},
		{&NodeStoppedError{Node: "h1"}, "node h1 is stopped (lab node stop)"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
	a := &AbortedError{Run: "workload", Down: &NodeStoppedError{Node: "h3", At: at},
		Flows: FlowTally{Total: 40, Completed: 12, Failed: 1, Stopped: 8, NotStarted: 19}}
	want := "node h3 was stopped (lab node stop) at 13:02:11; workload aborted: 12 of 40 flows completed, 1 failed, 8 stopped unfinished, 19 not started"
	if got := a.Error(); got != want {
		t.Errorf("%q, want %q", got, want)
	}
	var stopped *NodeStoppedError
	if !errors.Is(a, ErrNodeDown) || !errors.As(a, &stopped) || stopped.Node != "h3" {
		t.Errorf("%v: not ErrNodeDown, or not its *NodeStoppedError", a)
	}
}
