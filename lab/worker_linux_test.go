package lab

// Workers with the real daemons: a node stops and starts while the fabric
// runs, in both process modes; a worker killed with kill -9 is reported
// with every node it hosted; nothing of a lab touches the root namespace.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/config"
)

func TestNodeStopStart(t *testing.T) {
	// One worker: every cable patched; two: some patched, some veths.
	for _, tc := range []struct {
		workers int
		links   string
	}{{1, config.LinksPatch}, {2, config.LinksPatch}, {2, config.LinksVeth}, {PerNode, config.LinksPatch}} {
		workers := tc.workers
		t.Run(fmt.Sprintf("workers=%d,links=%s", workers, tc.links), func(t *testing.T) {
			s := realSpec(t, 2, 1)
			s.Workers, s.LinkMode = workers, tc.links
			if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
				t.Fatal(err)
			}
			if err := ping(s.Name, "h0", "198.18.0.1"); err != nil {
				t.Fatal(err)
			}
			before, err := SampleHealth(s.RunRoot, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			if err := StopNode(s.RunRoot, s.Name, "h1", testLogger(t)); err != nil {
				t.Fatal(err)
			}
			rep, err := Status(s.RunRoot, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range rep.Nodes {
				if (n.Name == "h1") == n.OK() {
					t.Errorf("after stopping h1: %s ok=%v (%s)", n.Name, n.OK(), n.Err)
				}
				if n.Name == "h1" && !n.Stopped {
					t.Errorf("h1 not reported stopped: %+v", n)
				}
			}
			if err := ping(s.Name, "h0", "198.18.0.1"); err == nil {
				t.Error("h0 reached the stopped h1")
			}
			if err := ping(s.Name, "h0", "198.18.0.2"); err != nil {
				t.Errorf("the rest of the fabric stopped with h1: %v", err)
			}
			if err := StartNode(t.Context(), s.RunRoot, s.Name, "h1", testLogger(t)); err != nil {
				t.Fatal(err)
			}
			if err := StartNode(t.Context(), s.RunRoot, s.Name, "h1", testLogger(t)); workers == PerNode && err == nil {
				t.Error("starting a running node succeeded")
			}
			if err := ping(s.Name, "h0", "198.18.0.1"); err != nil {
				t.Errorf("after starting h1 again: %v", err)
			}
			after, err := SampleHealth(s.RunRoot, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			h := after.Since(before, 0, HealthLimits{})
			if h.Valid || !slices.ContainsFunc(h.Problems, func(p string) bool { return strings.HasPrefix(p, "h1: ") && strings.Contains(p, "restarted") }) {
				t.Errorf("health across the restart: valid %v, problems %v", h.Valid, h.Problems)
			}
			if rep, err := Status(s.RunRoot, s.Name); err != nil || !allOK(rep) {
				t.Errorf("status after the restart: %v %+v", err, rep)
			}
		})
	}
}

func allOK(r *Report) bool {
	for i := range r.Nodes {
		if !r.Nodes[i].OK() {
			return false
		}
	}
	return true
}

// kill -9 of a worker: status and health name every node it hosted, the
// other worker's nodes go on, and down leaves nothing (realSpec's
// cleanup).
func TestWorkerKill9(t *testing.T) {
	s := realSpec(t, 2, 1)
	s.Workers = 2
	st, err := Up(t.Context(), s, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	before, err := SampleHealth(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	dead := st.Workers[1]
	p, err := os.FindProcess(dead.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for cmdlineHas(dead.Pid, dead.Config) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	rep, err := Status(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range rep.Nodes {
		hosted := slices.Contains(dead.Nodes, n.Name)
		if hosted && (n.Alive || !strings.Contains(n.Err, "worker w1")) {
			t.Errorf("%s of the killed worker: alive %v, %q", n.Name, n.Alive, n.Err)
		}
		if !hosted && !n.OK() {
			t.Errorf("%s of the live worker: %s", n.Name, n.Err)
		}
	}
	after, err := SampleHealth(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	h := after.Since(before, 0, HealthLimits{})
	// A late moment of the machine beside the death is not this test's
	// subject: it is logged, and the death must be the one other problem.
	var problems []string
	for _, p := range h.Problems {
		if LateProblem(p) {
			t.Logf("health: the machine was late too: %s", p)
			continue
		}
		problems = append(problems, p)
	}
	if len(problems) != 1 || !strings.HasPrefix(problems[0], fmt.Sprintf("worker w1 (pid %d; nodes ", dead.Pid)) {
		t.Fatalf("health: want one problem for the dead worker, got %q", h.Problems)
	}
	for _, name := range dead.Nodes {
		if !strings.Contains(problems[0], name) {
			t.Errorf("health does not name %s: %q", name, problems[0])
		}
	}
}

// rootXDP lists what of XDP the root namespace has: interfaces with an
// XDP program attached and AF_XDP sockets.
func rootXDP(t *testing.T) (progs []string, sockets int) {
	t.Helper()
	out, err := exec.Command("ip", "-j", "-d", "link", "show").Output()
	if err != nil {
		t.Fatal(err)
	}
	var links []map[string]any
	if err := json.Unmarshal(out, &links); err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if _, ok := l["xdp"]; ok {
			progs = append(progs, fmt.Sprint(l["ifname"]))
		}
	}
	out, err = exec.Command("ss", "-H", "-a", "--xdp").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" {
			sockets++
		}
	}
	return progs, sockets
}

// A worker lives in the root namespace and enters its nodes' namespaces
// to bring them up: nothing of XDP may land in the root namespace.
func TestWorkerLeavesRootNamespace(t *testing.T) {
	s := realSpec(t, 2, 1)
	progs, sockets := rootXDP(t)
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	if err := ping(s.Name, "h0", "198.18.0.3"); err != nil {
		t.Fatal(err)
	}
	p, n := rootXDP(t)
	if !slices.Equal(p, progs) || n != sockets {
		t.Errorf("root namespace: XDP on %v and %d AF_XDP sockets with the lab up, %v and %d before", p, n, progs, sockets)
	}
}
