package lab

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
)

// SampleHealth samples the emulation health of lab name: every daemon's
// CPU time, XSK ring drops and shaper lag, and the machine's CPU time.
// A daemon that does not answer is recorded with its error, not failed
// on: that is itself a finding. runRoot "" means DefaultRunRoot.
func SampleHealth(runRoot, name string) (*HealthSample, error) {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return nil, err
	}
	s, _ := snapshot(st)
	return s, nil
}

// snapshot samples the health of the lab of st and returns the stats of
// the nodes that answered, by node.
func snapshot(st *State) (*HealthSample, map[string]*api.Stats) {
	return snapshotWithin(st, 5*time.Second, false)
}

// snapshotWithin is snapshot with each node given timeout to answer;
// with sample, the nodes' stats are a periodic sample's (FetchSample).
func snapshotWithin(st *State, timeout time.Duration, sample bool) (*HealthSample, map[string]*api.Stats) {
	s := &HealthSample{At: time.Now(), CPUs: runtime.NumCPU(), Nodes: make([]NodeSample, len(st.Nodes))}
	if st.Spec.ProbeInterval >= 0 && !st.Spec.Target.IsZero() {
		s.ModelRTT = st.Spec.Model().OneHopRTT()
		s.Judge = st.Spec.Target.Name != scale.NativeName
	}
	stats := make([]*api.Stats, len(st.Nodes))
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		s.Busy, s.Total, _ = parseMachineCPU(b)
	}
	// A sample's stats come from each worker in one answer for all its
	// nodes; a node that is not in it is asked on its own socket.
	batch := map[string]*api.Stats{}
	for _, w := range st.Workers {
		p := sampleProc(w.Name, w.Pid, w.Config)
		if p.Err == "" {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			if r, err := FetchWorker(ctx, w.Control); err == nil {
				p.Yields, p.Skipped = r.Yields, time.Duration(r.SkippedNs)
			}
			if sample {
				if ss, err := FetchSamples(ctx, w.Control); err == nil {
					for i := range ss {
						batch[ss[i].Node] = &ss[i]
					}
				}
			}
			cancel()
		}
		s.Procs = append(s.Procs, p)
	}
	eachNode(st.Nodes, func(i int, n NodeState) { s.Nodes[i], stats[i] = sampleNode(st, n, timeout, sample, batch[n.Name]) })
	m := make(map[string]*api.Stats, len(stats))
	for i, x := range stats {
		if x != nil {
			m[st.Nodes[i].Name] = x
		}
	}
	for i, n := range st.Nodes {
		if n.Worker == "" {
			p := sampleProc(n.Name, n.Pid, n.Config)
			s.Procs = append(s.Procs, p)
			if p.Err == "" && s.Nodes[i].Err == "" {
				// A daemon of its own: the node's CPU is its process's.
				s.Nodes[i].CPU = p.CPU
			}
		}
	}
	return s, m
}

// sampleProc reads the CPU time of the process pid, which hosts nodes
// while its command line names config.
func sampleProc(name string, pid int, config string) ProcSample {
	p := ProcSample{Name: name, Pid: pid}
	if !cmdlineHas(pid, config) {
		p.Err = procNotRunning
		return p
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err == nil {
		p.CPU, err = parseProcCPU(b)
	}
	if err != nil {
		p.Err = "cpu time: " + err.Error()
	}
	return p
}

// sampleNode samples node n of the lab of st, which has timeout to
// answer; with sample, its stats are a periodic sample's, those of got
// when its worker gave them already.
func sampleNode(st *State, n NodeState, timeout time.Duration, sample bool, got *api.Stats) (NodeSample, *api.Stats) {
	fail := func(format string, args ...any) (NodeSample, *api.Stats) {
		return NodeSample{Node: n.Name, Pid: n.Pid, Worker: n.Worker, Err: fmt.Sprintf(format, args...)}, nil
	}
	if !cmdlineHas(n.Pid, st.procConfig(n)) {
		if n.Worker != "" {
			return fail("worker %s (pid %d) is not running", n.Worker, n.Pid)
		}
		if stoppedOnRequest(st, n.Name) {
			return fail("daemon stopped (lab node stop)")
		}
		return fail("daemon not running")
	}
	stats := got
	if stats == nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		fetch := FetchStats
		if sample {
			fetch = FetchSample
		}
		var err error
		if stats, err = fetch(ctx, n.Control); err != nil {
			return fail("%v", err)
		}
	}
	out := nodeSample(stats)
	out.Node, out.Pid, out.Worker = n.Name, n.Pid, n.Worker
	return out, stats
}
