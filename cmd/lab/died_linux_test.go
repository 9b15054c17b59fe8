//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testns"
	"github.com/bcfab/bcfab/lab"
)

// kill -9 of a worker during lab workload: the command exits within 5 s
// of the kill with status 4 and one line naming the worker, its pid and
// its nodes; lab status says it in one line, not one per node; lab down
// leaves no namespace and no process of the lab. The same for the daemon
// of a node of its own.
func TestWorkloadWorkerDies(t *testing.T) {
	testns.RequireRoot(t)
	bins := testns.Bins(t, "swd", "hostd", lab.WorkerBin, "lab")
	for _, workers := range []string{"2", "0"} {
		t.Run("workers="+workers, func(t *testing.T) { workloadProcessDies(t, bins, workers) })
	}
}

func workloadProcessDies(t *testing.T, bins, workers string) {
	root := t.TempDir()
	name := fmt.Sprintf("wd%04d", rand.IntN(10000))
	cmd := func(args ...string) *exec.Cmd {
		return exec.Command(filepath.Join(bins, "lab"), append(args, "--name", name, "--run-root", root)...)
	}
	run := func(args ...string) (int, string) {
		out, err := cmd(args...).CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("lab %v: %v", args, err)
		}
		code := 0
		if ee != nil {
			code = ee.ExitCode()
		}
		return code, string(out)
	}
	if code, out := run("up", "bcube", "--n", "2", "--k", "1", "--rate", "10M", "--fc", "portfc", "--workers", workers); code != 0 {
		t.Fatalf("up: exit %d\n%s", code, out)
	}
	down := false
	t.Cleanup(func() {
		if !down {
			_ = lab.Down(root, name, nil)
		}
	})
	st, err := lab.LoadState(root, name)
	if err != nil {
		t.Fatal(err)
	}
	// The victim: worker w0, or the daemon of s0.0.
	var (
		pid    int
		prefix string
		nodes  []string
		worker = workers != "0"
	)
	if worker {
		w := st.Workers[0]
		pid, prefix, nodes = w.Pid, "lab: worker "+w.Name+" (pid ", w.Nodes
	} else {
		n, _ := st.Node("s0.0")
		pid, prefix, nodes = n.Pid, "lab: daemon of s0.0 (pid ", []string{"s0.0"}
	}

	wl := cmd("workload", "--cdf", "hadoop", "--load", "0.5", "--incast", "2", "--duration", "10s", "-i", "0")
	var stdout, stderr bytes.Buffer
	wl.Stdout, wl.Stderr = &stdout, &stderr
	if err := wl.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- wl.Wait() }()
	// Kill once the NICs of both workers have started flows.
	started := func() bool {
		for _, h := range []string{"h0", "h3"} {
			if r, err := lab.RDMAFlows(root, name, h); err != nil || len(r.Flows) == 0 {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(10 * time.Second); !started(); {
		select {
		case err := <-exited:
			t.Fatalf("workload ended before the kill: %v\n%s%s", err, stdout.String(), stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no flows at h0 and h3 after 10 s")
		}
	}
	time.Sleep(500 * time.Millisecond)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	select {
	case err = <-exited:
	case <-time.After(60 * time.Second):
		_ = wl.Process.Kill()
		<-exited
		t.Fatalf("workload still running 60 s after its worker was killed")
	}
	took := time.Since(killed)
	t.Logf("lab workload exited %v after the kill: %v", took.Round(time.Millisecond), err)
	if took >= 5*time.Second {
		t.Errorf("lab workload exited %v after its worker was killed, want < 5s", took.Round(time.Millisecond))
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitDied {
		t.Errorf("exit: %v, want status %d", err, exitDied)
	}
	if stdout.Len() > 0 {
		t.Errorf("stdout of an aborted workload:\n%s", stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("stderr has %d lines, want 1:\n%s", len(lines), stderr.String())
	}
	line := lines[0]
	t.Logf("its line: %s", line)
	for _, want := range []string{prefix + strconv.Itoa(pid), " died at ", "; workload aborted"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
	for _, n := range nodes {
		if !strings.Contains(line, n) {
			t.Errorf("%q does not name node %s", line, n)
		}
	}

	code, out := run("status")
	t.Logf("lab status:\n%s", out)
	if worker {
		if code == 0 || strings.Count(out, "worker w0") != 1 {
			t.Errorf("status: exit %d, want one line for the dead worker:\n%s", code, out)
		}
		for _, n := range nodes {
			if strings.Contains(out, "\n"+n+": ") {
				t.Errorf("status has a line for %s of the dead worker:\n%s", n, out)
			}
		}
	} else if code == 0 || strings.Count(out, "s0.0: daemon not running") != 1 {
		t.Errorf("status: exit %d, want one line for the dead daemon:\n%s", code, out)
	}

	if code, out := run("down"); code != 0 {
		t.Errorf("down: exit %d\n%s", code, out)
	}
	down = true
	ns, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(ns), "\n") {
		if strings.HasPrefix(l, name+"-") {
			t.Errorf("namespace left: %s", l)
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(b, []byte(filepath.Join(root, name)+"/")) {
			t.Errorf("process left: pid %s %q", e.Name(), bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
}
