package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// Worker is what lab writes for a worker process (bcfabd --worker FILE):
// one engine thread that hosts many nodes, each described by its own node
// config, and a control socket of its own for the nodes' lifecycle.
type Worker struct {
	Lab  string `json:"lab"`
	Name string `json:"name"` // w0, w1, ...
	// Control is the worker's control socket: GET /healthz, GET /worker,
	// POST /nodes/{node}/stop and /nodes/{node}/start.
	Control string `json:"control"`
	// Nodes are the node config files of the nodes it hosts.
	Nodes []string `json:"nodes"`
	// Slack lets the worker serve deadlines that late so that deadlines
	// close together share a wake-up; PollBudget is how long it polls
	// without sleeping after it last found work (0: the dataplane's
	// defaults; negative: none).
	Slack      Duration `json:"slack,omitempty"`
	PollBudget Duration `json:"poll_budget,omitempty"`
	// Priority is the real-time (SCHED_FIFO) priority at which the
	// worker's thread keeps time, 1-99 (0: the dataplane's default;
	// negative: an ordinary thread).
	Priority int `json:"priority,omitempty"`
}

// Validate checks w.
func (w *Worker) Validate() error {
	var errs []error
	if w.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if w.Control == "" {
		errs = append(errs, errors.New("control socket path is empty"))
	}
	if len(w.Nodes) == 0 {
		errs = append(errs, errors.New("no nodes"))
	}
	if w.Slack.D() > time.Millisecond {
		errs = append(errs, fmt.Errorf("slack %v: want at most 1ms", w.Slack.D()))
	}
	if w.PollBudget.D() > 10*time.Millisecond {
		errs = append(errs, fmt.Errorf("poll_budget %v: want at most 10ms", w.PollBudget.D()))
	}
	if w.Priority > 99 {
		errs = append(errs, fmt.Errorf("priority %d: want 1-99 (0: the default; negative: an ordinary thread)", w.Priority))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("worker config %s: %w", w.Name, err)
	}
	return nil
}

// LoadWorker reads and validates a worker config file.
func LoadWorker(path string) (*Worker, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read worker config: %w", err)
	}
	var w Worker
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("parse worker config %s: %w", path, err)
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return &w, nil
}
