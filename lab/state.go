package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Phases of a lab in its state file.
const (
	PhaseCreating = "creating" // namespaces and links being created
	PhaseStarting = "starting" // daemons being started
	PhaseUp       = "up"       // every daemon answered /healthz
)

// State is a lab's state file, <RunRoot>/<Name>/state.json. Up writes it
// before creating anything (the intent: name, spec, every namespace it will
// create) and rewrites it as daemons start, so Down can remove whatever
// exists from this file alone, after any crash.
type State struct {
	Lab        string      `json:"lab"`
	Spec       Spec        `json:"spec"`
	RunDir     string      `json:"run_dir"`
	Phase      string      `json:"phase"`
	Created    time.Time   `json:"created"`
	Namespaces []string    `json:"namespaces"`
	Nodes      []NodeState `json:"nodes"`
	// Workers are the worker processes that host the nodes (none when
	// every node has a daemon of its own).
	Workers []WorkerState `json:"workers,omitempty"`
	// Calibration is the emulator's own latency, measured once the
	// daemons were up (nil: the lab does not probe its links).
	Calibration *Calibration `json:"calibration,omitempty"`

	path string
	// procs are the processes this process started (a node's daemon or
	// the worker that hosts it), by node.
	procs map[string]*proc
}

// proc is a child process started by this process, reaped by a
// goroutine so it never lingers as a zombie.
type proc struct {
	done chan struct{} // closed once reaped
	err  error         // Wait's result, set before done closes
}

// NodeState is one node of a running lab.
type NodeState struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Config    string `json:"config"`
	Control   string `json:"control"`
	Log       string `json:"log"`
	// Worker names the worker process that hosts the node ("": a daemon
	// of its own).
	Worker string `json:"worker,omitempty"`
	// Pid of the process that hosts the node, 0 until started: its
	// worker's, or its own daemon's (the pid of ip netns exec, which execs
	// the daemon in place).
	Pid int `json:"pid"`
}

// WorkerState is one worker process of a running lab.
type WorkerState struct {
	Name    string   `json:"name"`
	Config  string   `json:"config"`
	Control string   `json:"control"`
	Log     string   `json:"log"`
	Pid     int      `json:"pid"`
	Nodes   []string `json:"nodes"`
}

// Worker returns the worker named name.
func (s *State) Worker(name string) (*WorkerState, bool) {
	for i := range s.Workers {
		if s.Workers[i].Name == name {
			return &s.Workers[i], true
		}
	}
	return nil, false
}

// procConfig is the config file on the command line of the process that
// hosts n: its worker's config, or its own. A pid is that process while
// its command line names this file.
func (s *State) procConfig(n NodeState) string {
	if n.Worker != "" {
		if w, ok := s.Worker(n.Worker); ok {
			return w.Config
		}
	}
	return n.Config
}

// procLog is the log of the process that hosts n.
func (s *State) procLog(n NodeState) string {
	if n.Worker != "" {
		if w, ok := s.Worker(n.Worker); ok {
			return w.Log
		}
	}
	return n.Log
}

// Node returns the node named name.
func (s *State) Node(name string) (*NodeState, bool) {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			return &s.Nodes[i], true
		}
	}
	return nil, false
}

// StatePath is where lab name keeps its state.
func StatePath(runRoot, name string) string {
	if runRoot == "" {
		runRoot = DefaultRunRoot
	}
	return filepath.Join(runRoot, name, "state.json")
}

// ErrNoLab is wrapped by LoadState (and so by Status and Stats) when a lab
// has no state file.
var ErrNoLab = errors.New("no such lab")

// LoadState reads the state of lab name under runRoot ("" means
// DefaultRunRoot).
func LoadState(runRoot, name string) (*State, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	path := StatePath(runRoot, name)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("lab %s: %w (no %s)", name, ErrNoLab, path)
	}
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", name, err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("lab %s: parse %s: %w", name, path, err)
	}
	s.path = path
	return &s, nil
}

// save writes the state atomically (write a temporary file, then rename),
// so a crash leaves either the old or the new state, never a torn one.
func (s *State) save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// newState is the intent recorded before anything is created.
func newState(p *Plan) *State {
	s := &State{
		Lab:        p.Spec.Name,
		Spec:       p.Spec,
		RunDir:     p.RunDir,
		Phase:      PhaseCreating,
		Created:    time.Now().UTC().Truncate(time.Millisecond),
		Namespaces: p.Namespaces(),
		path:       p.StatePath,
	}
	for _, n := range p.Nodes {
		ns := NodeState{
			Name:      n.Name,
			Kind:      n.Kind,
			Namespace: n.Namespace,
			Config:    n.ConfigPath,
			Control:   n.Config.Control,
			Log:       n.LogPath,
		}
		if n.Worker >= 0 {
			ns.Worker = p.Workers[n.Worker].Name
		}
		s.Nodes = append(s.Nodes, ns)
	}
	for _, w := range p.Workers {
		ws := WorkerState{Name: w.Name, Config: w.ConfigPath, Control: w.Config.Control, Log: w.LogPath}
		for _, i := range w.Nodes {
			ws.Nodes = append(ws.Nodes, p.Nodes[i].Name)
		}
		s.Workers = append(s.Workers, ws)
	}
	return s
}

// loadDefault loads the state of lab name ("": DefaultName).
func loadDefault(runRoot, name string) (*State, error) {
	if name == "" {
		name = DefaultName
	}
	return LoadState(runRoot, name)
}
