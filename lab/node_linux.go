package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"
)

// StopNode takes node down in lab name while the rest of the fabric goes
// on: its worker stops serving it and closes its sockets, XDP programs and
// control socket (its namespace and veths stay; frames that reach it are
// lost as at a dead node), or, when it has a daemon of its own, that
// daemon is stopped (SIGTERM, then SIGKILL after StopGrace) and the stop
// recorded (stoppedMark). Either way a run on the lab (a workload) sees
// a *NodeStoppedError and stops.
func StopNode(runRoot, name, node string, log *slog.Logger) error {
	st, n, err := loadNode(runRoot, name, node)
	if err != nil {
		return err
	}
	if n.Worker != "" {
		return workerNodeOp(st, n, "stop")
	}
	// Recorded first, so that whoever sees the daemon gone knows it was
	// asked to go.
	mark := stoppedMark(st, n.Name)
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		return fmt.Errorf("stop %s: %w", node, err)
	}
	if _, err := stopAll([]victim{procVictim(n.Pid, n.Config, fmt.Sprintf("%s (%s)", n.Name, n.Kind))}, StopGrace, orDiscard(log)); err != nil {
		if cmdlineHas(n.Pid, n.Config) {
			os.Remove(mark)
		}
		return fmt.Errorf("stop %s: %w", node, err)
	}
	return nil
}

// StartNode brings node up again in lab name after StopNode: on its
// worker, or as a daemon of its own (recorded in the state file), and
// waits until it answers /healthz.
func StartNode(ctx context.Context, runRoot, name, node string, log *slog.Logger) error {
	st, n, err := loadNode(runRoot, name, node)
	if err != nil {
		return err
	}
	if n.Worker != "" {
		return workerNodeOp(st, n, "start")
	}
	if cmdlineHas(n.Pid, n.Config) {
		return fmt.Errorf("%s is running (pid %d)", node, n.Pid)
	}
	p, err := NewPlan(st.Spec)
	if err != nil {
		return err
	}
	np, ok := p.Node(node)
	if !ok {
		return fmt.Errorf("lab %s has no node %q", st.Lab, node)
	}
	ip, err := preflight(p)
	if err != nil {
		return err
	}
	d, pid, err := startProcess(p, n.Name, n.Log, ip, "netns", "exec", n.Namespace, np.Binary, "--config", n.Config)
	if err != nil {
		return fmt.Errorf("start %s: %w", node, err)
	}
	n.Pid = pid
	if err := st.save(); err != nil {
		return err
	}
	if err := os.Remove(stoppedMark(st, n.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	orDiscard(log).Debug("daemon started", "node", node, "pid", pid)
	st.procs = map[string]*proc{n.Name: d}
	one := *st
	one.Nodes = []NodeState{*n}
	return waitHealthy(ctx, &one, st.Spec.HealthTimeout)
}

// loadNode loads lab name's state and its node named node.
func loadNode(runRoot, name, node string) (*State, *NodeState, error) {
	if euid() != 0 {
		return nil, nil, errors.New("not root: stopping and starting nodes needs root")
	}
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return nil, nil, err
	}
	n, ok := st.Node(node)
	if !ok {
		return nil, nil, fmt.Errorf("lab %s has no node %q (%s: h0..h%d, s<level>.<index>)",
			st.Lab, node, topoString(st.Spec), serverCount(st.Spec)-1)
	}
	return st, n, nil
}

// workerNodeOp asks n's worker to stop or start it; start waits until the
// node answers /healthz.
func workerNodeOp(st *State, n *NodeState, op string) error {
	w, ok := st.Worker(n.Worker)
	if !ok || !cmdlineHas(w.Pid, w.Config) {
		return fmt.Errorf("%s: its worker %s (pid %d) is not running", n.Name, n.Worker, n.Pid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), st.Spec.HealthTimeout)
	defer cancel()
	if _, err := controlDo(ctx, w.Control, http.MethodPost, "/nodes/"+n.Name+"/"+op, nil); err != nil {
		return fmt.Errorf("%s %s: %w", op, n.Name, err)
	}
	if op != "start" {
		return nil
	}
	for {
		hctx, hcancel := context.WithTimeout(ctx, time.Second)
		err := Healthz(hctx, n.Control)
		hcancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("start %s: no answer on %s: %w", n.Name, n.Control, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
