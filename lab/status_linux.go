package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// Status reports every node of lab name: namespace present, daemon alive,
// /healthz, and a summary of /stats. runRoot "" means DefaultRunRoot; an
// empty name means DefaultName.
func Status(runRoot, name string) (*Report, error) {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return nil, err
	}
	r := &Report{Lab: st.Lab, Spec: st.Spec, Phase: st.Phase, Created: st.Created, Nodes: make([]NodeStatus, len(st.Nodes))}
	workers := workerReports(st)
	for _, p := range hostProcs(st) {
		if p.worker != "" && p.pid != 0 && !p.running() {
			r.Dead = append(r.Dead, *p.died(st, time.Time{}))
		}
	}
	eachNode(st.Nodes, func(i int, n NodeState) { r.Nodes[i] = nodeStatus(st, workers, n) })
	for _, n := range r.Nodes {
		if n.Stats != nil {
			r.Impaired = append(r.Impaired, n.Stats.Impaired...)
		}
	}
	if peer, err := st.Spec.PeerFunc(); err == nil {
		for _, n := range r.Nodes {
			if n.Stats == nil {
				continue
			}
			for i := range n.Stats.Stalled {
				s := &n.Stats.Stalled[i]
				s.Peer, _, _ = peer(s.Node, s.Port)
				r.Stalls = append(r.Stalls, *s)
			}
		}
		r.Cycle = FindCycle(r.Stalls)
	}
	return r, nil
}

// workerReports asks every live worker of st for its report, by worker
// name; a worker that is gone or does not answer is left out.
func workerReports(st *State) map[string]*api.WorkerReport {
	out := map[string]*api.WorkerReport{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, w := range st.Workers {
		if !cmdlineHas(w.Pid, w.Config) {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if rep, err := FetchWorker(ctx, w.Control); err == nil {
				mu.Lock()
				out[w.Name] = rep
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// workerNode is node's entry in its worker's report, if any.
func workerNode(workers map[string]*api.WorkerReport, n NodeState) *api.WorkerNode {
	rep := workers[n.Worker]
	if rep == nil {
		return nil
	}
	for i := range rep.Nodes {
		if rep.Nodes[i].Name == n.Name {
			return &rep.Nodes[i]
		}
	}
	return nil
}

func nodeStatus(st *State, workers map[string]*api.WorkerReport, n NodeState) NodeStatus {
	s := NodeStatus{
		Name:            n.Name,
		Kind:            n.Kind,
		Namespace:       n.Namespace,
		NamespaceExists: namespaceExists(n.Namespace),
		Worker:          n.Worker,
		Pid:             n.Pid,
		Alive:           cmdlineHas(n.Pid, st.procConfig(n)),
	}
	switch {
	case !s.NamespaceExists:
		s.Err = "namespace missing"
		return s
	case n.Pid == 0:
		s.Err = "not started"
		return s
	case !s.Alive && n.Worker != "":
		s.Err = fmt.Sprintf("worker %s (pid %d) is not running", n.Worker, n.Pid)
		return s
	case !s.Alive && stoppedOnRequest(st, n.Name):
		s.Stopped = true
		s.Err = "daemon stopped (lab node stop)"
		return s
	case !s.Alive:
		s.Err = "daemon not running"
		return s
	}
	if wn := workerNode(workers, n); wn != nil && wn.State != api.NodeRunning {
		s.Stopped = wn.State == api.NodeStopped
		s.Err = "node " + wn.State + " on worker " + n.Worker
		if wn.Error != "" {
			s.Err += ": " + wn.Error
		}
		return s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := Healthz(ctx, n.Control); err != nil {
		s.Err = err.Error()
	} else {
		s.Healthy = true
	}
	stats, err := FetchStats(ctx, n.Control)
	if err != nil {
		if s.Err == "" {
			s.Err = err.Error()
		}
		return s
	}
	sum := Summarize(stats)
	s.Stats = &sum
	return s
}

// Stats fetches GET /stats from the daemon of node in lab name.
func Stats(runRoot, name, node string) (*api.Stats, error) {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return nil, err
	}
	n, ok := st.Node(node)
	if !ok {
		return nil, fmt.Errorf("lab %s has no node %q (%s: h0..h%d, s<level>.<index>)",
			st.Lab, node, topoString(st.Spec), serverCount(st.Spec)-1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := FetchStats(ctx, n.Control)
	if err != nil {
		if d := hostOf(st, node); d != nil {
			return nil, fmt.Errorf("lab %s: %w", st.Lab, d)
		}
		return nil, fmt.Errorf("%s: %w", node, err)
	}
	return s, nil
}

// nodeFanout is how many daemons eachNode asks at once.
const nodeFanout = 8

// eachNode calls f for every node, nodeFanout at a time, and returns
// when every call has.
func eachNode(nodes []NodeState, f func(i int, n NodeState)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, nodeFanout)
	for i, n := range nodes {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			f(i, n)
		})
	}
	wg.Wait()
}

func topoString(s Spec) string { return s.TopologyText() }

func serverCount(s Spec) int { return s.Servers() }

// nodeNameRE matches the node part of a lab namespace name.
var nodeNameRE = regexp.MustCompile(`^(h[0-9]+|s[0-9]+\.[0-9]+|(leaf|spine|core|tor)[0-9]+|(edge|agg)[0-9]+\.[0-9]+)$`)

// List returns the labs under runRoot ("" means DefaultRunRoot), and, as
// orphans, lab-like namespaces (<name>-h<i>, <name>-s<l>.<w>) that no state
// file accounts for.
func List(runRoot string) ([]LabInfo, error) {
	if runRoot == "" {
		runRoot = DefaultRunRoot
	}
	var out []LabInfo
	known := map[string]bool{}
	ents, err := os.ReadDir(runRoot)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("list labs: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() || checkName(e.Name()) != nil {
			continue
		}
		st, err := LoadState(runRoot, e.Name())
		if err != nil {
			continue
		}
		known[st.Lab] = true
		li := LabInfo{Name: st.Lab, Phase: st.Phase, N: st.Spec.N, K: st.Spec.K, Topology: st.Spec.TopologyText(), Created: st.Created, Nodes: len(st.Nodes)}
		for _, ns := range st.Namespaces {
			if namespaceExists(ns) {
				li.Namespaces++
			}
		}
		for _, n := range st.Nodes {
			if cmdlineHas(n.Pid, st.procConfig(n)) {
				li.Alive++
			}
		}
		out = append(out, li)
	}
	nss, err := os.ReadDir(netnsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	orphans := map[string]int{}
	for _, e := range nss {
		lab, node, ok := strings.Cut(e.Name(), "-")
		if ok && !known[lab] && checkName(lab) == nil && nodeNameRE.MatchString(node) {
			orphans[lab]++
		}
	}
	for lab, count := range orphans {
		out = append(out, LabInfo{Name: lab, Namespaces: count, Orphan: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Command returns a command that runs args inside node's namespace of lab
// name (ip netns exec <name>-<node> args...), with no stdio attached.
func Command(name, node string, args ...string) (*exec.Cmd, error) {
	if name == "" {
		name = DefaultName
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	if !nodeNameRE.MatchString(node) {
		return nil, fmt.Errorf("node %q: want h<i>, s<level>.<index>, or a graph fabric's switch (leaf<i>, spine<j>, edge<p>.<i>, agg<p>.<j>, core<c>, tor<t>)", node)
	}
	if len(args) == 0 {
		return nil, errors.New("no command to run")
	}
	ns := Namespace(name, node)
	if !namespaceExists(ns) {
		return nil, fmt.Errorf("lab %s has no node %s (no namespace %s)", name, node, filepath.Join(netnsDir, ns))
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		return nil, fmt.Errorf("ip (iproute2) not found: %w", err)
	}
	return exec.Command(ip, append([]string{"netns", "exec", ns}, args...)...), nil
}

// Exec runs args inside node's namespace of lab name with this process's
// stdin, stdout and stderr. A command that fails returns an *exec.ExitError
// carrying its exit status.
func Exec(name, node string, args []string) error {
	cmd, err := Command(name, node, args...)
	if err != nil {
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd.Run()
}
