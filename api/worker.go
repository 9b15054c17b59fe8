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
	// The longest step of one node, the longest round of all, and the
	// time spent answering control requests (snapshots, calls) and its
	// longest: every node of the worker waits while one is answered.
	MaxStepNs    int64 `json:"max_step_ns"`
	MaxRoundNs   int64 `json:"max_round_ns"`
	ControlNs    int64 `json:"control_ns"`
	MaxControlNs int64 `json:"max_control_ns"`
	// Sleeps the thread came back from over 100 us after their deadline
	// (the kernel, the CPU or the Go scheduler kept it), and the largest
	// such delay.
	LateWakes     uint64 `json:"late_wakes"`
	MaxWakeLateNs int64  `json:"max_wake_late_ns"`
	// Times the engine thread, busy for 5 ms without sleeping, took its
	// sockets out of its epoll set (they go back before it sleeps).
	Disarms uint64 `json:"disarms"`
	// The real-time (SCHED_FIFO) priority the engine thread keeps time
	// at (0: an ordinary thread; PriorityError says why, if the kernel
	// refused it), and the times it went 5 ms without sleeping and
	// yielded it until its next sleep.
	Priority      int    `json:"priority"`
	PriorityError string `json:"priority_error,omitempty"`
	Yields        uint64 `json:"yields"`
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
