package lab

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/bcfab/bcfab/api"
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
// the daemons that answered, by node.
func snapshot(st *State) (*HealthSample, map[string]*api.Stats) {
	s := &HealthSample{At: time.Now(), CPUs: runtime.NumCPU(), Nodes: make([]NodeSample, len(st.Nodes))}
	stats := make([]*api.Stats, len(st.Nodes))
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		s.Busy, s.Total, _ = parseMachineCPU(b)
	}
	eachNode(st.Nodes, func(i int, n NodeState) { s.Nodes[i], stats[i] = sampleNode(n) })
	m := make(map[string]*api.Stats, len(stats))
	for i, x := range stats {
		if x != nil {
			m[st.Nodes[i].Name] = x
		}
	}
	return s, m
}

func sampleNode(n NodeState) (NodeSample, *api.Stats) {
	fail := func(format string, args ...any) (NodeSample, *api.Stats) {
		return NodeSample{Node: n.Name, Pid: n.Pid, Err: fmt.Sprintf(format, args...)}, nil
	}
	if !cmdlineHas(n.Pid, n.Config) {
		return fail("daemon not running")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stats, err := FetchStats(ctx, n.Control)
	if err != nil {
		return fail("%v", err)
	}
	out := nodeSample(stats)
	out.Node, out.Pid = n.Name, n.Pid
	b, err := os.ReadFile("/proc/" + strconv.Itoa(n.Pid) + "/stat")
	if err != nil {
		return fail("cpu time: %v", err)
	}
	if out.CPU, err = parseProcCPU(b); err != nil {
		return fail("cpu time: %v", err)
	}
	return out, stats
}
