package api

import "encoding/json"

// WorkerReport is what a worker process answers on GET /worker: the
// nodes it hosts and its engine thread's counters.
type WorkerReport struct {
	Name  string       `json:"name"`
	Pid   int          `json:"pid"`
	Tid   int          `json:"tid"`
	Lab   string       `json:"lab"`
	Nodes []WorkerNode `json:"nodes"`
	// The engine thread's counters.
	WorkerCounters
	// The process's memory as its Go runtime sees it (the UMEM of its
	// nodes is mapped outside it, populated at start): live heap
	// objects, all memory the runtime holds, goroutines and OS threads.
	// A process whose RSS grows while these stay flat grows outside the
	// Go heap.
	HeapBytes  uint64 `json:"heap_bytes"`
	GoMemBytes uint64 `json:"go_mem_bytes"`
	Goroutines int    `json:"goroutines"`
	Threads    int    `json:"threads"`
}

// WorkerCounters are a worker's engine thread's counters, as its worker
// (dataplane.Worker.Stats) reports them and GET /worker answers them.
type WorkerCounters struct {
	// Rounds of the thread's loop, engine steps in them, rounds that
	// polled without blocking after work (the poll budget), and sleeps.
	Rounds uint64 `json:"rounds"`
	Steps  uint64 `json:"steps"`
	Polls  uint64 `json:"polls"`
	Sleeps uint64 `json:"sleeps"`
	// BusyNs is the time spent in engines' steps (their frames' work),
	// measured around each step; MaxStepNs the longest step of one node,
	// MaxRoundNs the longest round of all (every node waits for it).
	BusyNs     int64 `json:"busy_ns"`
	MaxStepNs  int64 `json:"max_step_ns"`
	MaxRoundNs int64 `json:"max_round_ns"`
	// ControlNs is the part of BusyNs spent answering control requests
	// (snapshots, calls) on the thread, MaxControlNs the longest: every
	// node of the worker waits while one is answered.
	ControlNs    int64 `json:"control_ns"`
	MaxControlNs int64 `json:"max_control_ns"`
	// LateWakes counts the sleeps the thread came back from more than
	// dataplane.LateWake (100 us) after the deadline it slept for (plus
	// the slack), however the delay arose: the kernel waking the thread
	// late, the thread waiting for a CPU, or the Go scheduler making it
	// wait for a P; MaxWakeLateNs is the largest such delay. A shaped
	// port loses link time when the worker is late past its catch-up
	// bound.
	LateWakes     uint64 `json:"late_wakes"`
	MaxWakeLateNs int64  `json:"max_wake_late_ns"`
	// Replays counts the steps the thread took as of a time before its
	// clock: a deadline or a frame it got to late, stepped in the order
	// of the model's time (up to twice its slack back); MaxReplayNs is the
	// furthest back one went.
	Replays     uint64 `json:"replays"`
	MaxReplayNs int64  `json:"max_replay_ns"`
	// SkippedNs is the time of the model the thread skipped: later than
	// its replay reaches, it stepped the work that came in between as
	// of its reach ago, at once (rounds that did: Skips). Its share of
	// a run is what the replay did not absorb of the machine's
	// lateness; a run is judged by it (lab.Health).
	Skips     uint64 `json:"skips"`
	SkippedNs int64  `json:"skipped_ns"`
	// Disarms counts the times the thread, busy for dataplane.DisarmAfter
	// (5 ms) without sleeping, took its sockets out of its epoll set
	// (they go back before it sleeps).
	Disarms uint64 `json:"disarms"`
	// Priority is the real-time (SCHED_FIFO) priority the thread keeps
	// time at, 0 for an ordinary thread; PriorityError says why the
	// kernel refused the one asked for. Yields counts the times the
	// thread went dataplane.YieldAfter (5 ms) without sleeping and gave
	// the priority up until its next sleep.
	Priority      int    `json:"priority"`
	PriorityError string `json:"priority_error,omitempty"`
	Yields        uint64 `json:"yields"`
}

// Node states in a WorkerReport.
const (
	NodeRunning = "running"
	NodeStopped = "stopped" // by POST /nodes/{node}/stop
	NodeFailed  = "failed"  // its bring-up failed (Error says why)
)

// WorkerNode is one node of a WorkerReport.
type WorkerNode struct {
	Name          string `json:"name"`
	Kind          string `json:"kind"`
	State         string `json:"state"`
	Error         string `json:"error,omitempty"`
	StartedUnixNs int64  `json:"started_unix_ns,omitempty"`
}

// NodeGet is one GET of a worker's POST /get: the path, with its query,
// on the control socket of a node the worker hosts.
type NodeGet struct {
	Node string `json:"node"`
	Path string `json:"path"`
}

// NodeAnswer is a node's answer to one NodeGet, in the order asked:
// the HTTP status and the body as the node's own socket would have
// answered, JSON where the status is 200. A node the worker does not
// host answers 404, one starting or stopping 503.
type NodeAnswer struct {
	Node   string          `json:"node"`
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body,omitempty"`
	Error  string          `json:"error,omitempty"`
}
