package api

// WorkerReport is what a worker process answers on GET /worker: the
// nodes it hosts and its engine thread's counters.
type WorkerReport struct {
	Name  string       `json:"name"`
	Pid   int          `json:"pid"`
	Tid   int          `json:"tid"`
	Lab   string       `json:"lab"`
	Nodes []WorkerNode `json:"nodes"`
	// The engine thread: rounds of its loop, engine steps in them,
	// rounds that polled without sleeping after work, sleeps, and the
	// time spent in engines' steps.
	Rounds uint64 `json:"rounds"`
	Steps  uint64 `json:"steps"`
	Polls  uint64 `json:"polls"`
	Sleeps uint64 `json:"sleeps"`
	BusyNs int64  `json:"busy_ns"`
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
