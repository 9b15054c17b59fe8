//go:build linux

package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testns"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/api"
)

// cliLab is a lab of real daemons driven through the lab binary.
type cliLab struct {
	t          *testing.T
	bin        string
	name, root string
	down       bool
}

// upCLI brings up BCube(2,1) at 10 Mb/s under PortFC on workers (lab up
// --workers) with the lab binary in bins; the test's cleanup takes it
// down unless the test did.
func upCLI(t *testing.T, bins, prefix, workers string) *cliLab {
	l := &cliLab{t: t, bin: filepath.Join(bins, "lab"), root: t.TempDir(), name: fmt.Sprintf("%s%04d", prefix, rand.IntN(10000))}
	if code, out := l.run("up", "bcube", "--n", "2", "--k", "1", "--rate", "10M", "--fc", "portfc", "--workers", workers); code != 0 {
		t.Fatalf("up: exit %d\n%s", code, out)
	}
	t.Cleanup(func() {
		if !l.down {
			_ = lab.Down(l.root, l.name, nil)
		}
	})
	return l
}

func (l *cliLab) cmd(args ...string) *exec.Cmd {
	return exec.Command(l.bin, append(args, "--name", l.name, "--run-root", l.root)...)
}

// run runs lab with args and returns its exit status and output.
func (l *cliLab) run(args ...string) (int, string) {
	l.t.Helper()
	out, err := l.cmd(args...).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		l.t.Fatalf("lab %v: %v", args, err)
	}
	code := 0
	if ee != nil {
		code = ee.ExitCode()
	}
	return code, string(out)
}

// workload is a lab workload running in the background.
type runningWorkload struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	exited         chan error
}

// startWorkload starts lab workload with args and waits until the NICs of
// every server in busy have started flows.
func (l *cliLab) startWorkload(busy []string, args ...string) *runningWorkload {
	l.t.Helper()
	w := &runningWorkload{cmd: l.cmd(append([]string{"workload"}, args...)...), exited: make(chan error, 1)}
	w.cmd.Stdout, w.cmd.Stderr = &w.stdout, &w.stderr
	if err := w.cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	go func() { w.exited <- w.cmd.Wait() }()
	l.t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			_ = w.cmd.Process.Kill()
		}
	})
	started := func() bool {
		for _, h := range busy {
			if r, err := lab.RDMAFlows(l.root, l.name, h); err != nil || len(r.Flows) == 0 {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(10 * time.Second); !started(); {
		select {
		case err := <-w.exited:
			l.t.Fatalf("workload ended before the fault: %v\n%s%s", err, w.stdout.String(), w.stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("no flows at %v after 10 s", busy)
		}
	}
	return w
}

// wait waits for the workload to exit after a fault begun at at: it
// returns its exit status, and fails the test unless it exited within
// 5 s of at, with nothing on stdout and one line on stderr, which it
// returns.
func (w *runningWorkload) wait(t *testing.T, at time.Time) (code int, line string) {
	t.Helper()
	var err error
	select {
	case err = <-w.exited:
	case <-time.After(60 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.exited
		t.Fatalf("workload still running 60 s after the fault")
	}
	took := time.Since(at)
	t.Logf("lab workload exited %v after the fault: %v", took.Round(time.Millisecond), err)
	if took >= 5*time.Second {
		t.Errorf("lab workload exited %v after the fault, want < 5s", took.Round(time.Millisecond))
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	if w.stdout.Len() > 0 {
		t.Errorf("stdout of an aborted workload:\n%s", w.stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(w.stderr.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("stderr has %d lines, want 1:\n%s", len(lines), w.stderr.String())
	}
	t.Logf("its line: %s", lines[0])
	return code, lines[0]
}

// downClean takes the lab down with lab down and fails the test if a
// namespace or a process of the lab is left.
func (l *cliLab) downClean() {
	t := l.t
	t.Helper()
	if code, out := l.run("down"); code != 0 {
		t.Errorf("down: exit %d\n%s", code, out)
	}
	l.down = true
	gone(t, l.root, l.name)
}

// The workload of these tests: at 10 Mb/s, flows still start and run
// for seconds after the fault.
var faultWorkload = []string{"--cdf", "hadoop", "--load", "0.5", "--incast", "2", "--duration", "10s"}

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
	l := upCLI(t, bins, "wd", workers)
	st, err := lab.LoadState(l.root, l.name)
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

	// Kill once the NICs of both workers have started flows.
	wl := l.startWorkload([]string{"h0", "h3"}, append(faultWorkload, "-i", "0")...)
	time.Sleep(500 * time.Millisecond)
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	code, line := wl.wait(t, killed)
	if code != exitDied {
		t.Errorf("exit %d, want %d", code, exitDied)
	}
	for _, want := range []string{prefix + strconv.Itoa(pid), " died at ", "; workload aborted: "} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
	for _, n := range nodes {
		if !strings.Contains(line, n) {
			t.Errorf("%q does not name node %s", line, n)
		}
	}

	code, out := l.run("status")
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
	l.downClean()
}

// tallyRE reads an aborted run's count of its flows.
var tallyRE = regexp.MustCompile(`(\d+) of (\d+) flows completed, (\d+) failed, (\d+) stopped unfinished, (\d+) not started$`)

// lab node stop h1 during lab workload, on workers and with a daemon per
// node: the command exits within 5 s of the stop with status 4 and one
// line naming h1 and counting every flow of the schedule once; no flow
// counts as completed that its NIC did not complete, and every flow the
// run stopped at a live NIC is counted unfinished; no NIC left runs a
// flow; lab status names h1 stopped; lab down leaves no namespace and no
// process of the lab.
func TestWorkloadNodeStopped(t *testing.T) {
	testns.RequireRoot(t)
	bins := testns.Bins(t, "swd", "hostd", lab.WorkerBin, "lab")
	for _, workers := range []string{"2", "0"} {
		t.Run("workers="+workers, func(t *testing.T) { workloadNodeStopped(t, bins, workers) })
	}
}

func workloadNodeStopped(t *testing.T, bins, workers string) {
	l := upCLI(t, bins, "ns", workers)
	st, err := lab.LoadState(l.root, l.name)
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := st.Node("h1")
	code, out := l.run(append([]string{"workload", "--dry-run"}, faultWorkload...)...)
	if code != 0 {
		t.Fatalf("workload --dry-run: exit %d\n%s", code, out)
	}
	scheduled := strings.Count(strings.TrimSpace(out), "\n") // less the header

	wl := l.startWorkload([]string{"h0", "h1", "h3"}, append(faultWorkload, "-i", "0")...)
	time.Sleep(500 * time.Millisecond)
	// What h1's NIC has done and is doing just before the stop: the most
	// of its flows the run can have seen complete.
	r1, err := lab.RDMAFlows(l.root, l.name, "h1")
	if err != nil {
		t.Fatal(err)
	}
	h1Done := 0
	for _, f := range r1.Flows {
		if f.State == api.RDMADone || f.State == api.RDMARunning {
			h1Done++
		}
	}
	stopAt := time.Now()
	if code, out := l.run("node", "stop", "h1"); code != 0 {
		t.Fatalf("node stop h1: exit %d\n%s", code, out)
	}
	t.Logf("lab node stop h1 took %v", time.Since(stopAt).Round(time.Millisecond))
	code, line := wl.wait(t, stopAt)
	if code != exitDied {
		t.Errorf("exit %d, want %d", code, exitDied)
	}
	prefix := "lab: node h1 was stopped (lab node stop) at "
	if h1.Worker != "" {
		prefix = "lab: node h1 (worker " + h1.Worker + ") was stopped (lab node stop) at "
	}
	if !strings.HasPrefix(line, prefix) || !strings.Contains(line, "; workload aborted: ") {
		t.Errorf("%q: want it to start %q and say the workload was aborted", line, prefix)
	}
	m := tallyRE.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("%q counts no flows", line)
	}
	n := make([]int, len(m))
	for i := 1; i < len(m); i++ {
		n[i], _ = strconv.Atoi(m[i])
	}
	completed, total, failed, stopped, notStarted := n[1], n[2], n[3], n[4], n[5]
	if total != scheduled || completed+failed+stopped+notStarted != total {
		t.Errorf("%d flows counted (%d+%d+%d+%d) of %d, the schedule has %d", total, completed, failed, stopped, notStarted, total, scheduled)
	}
	if completed == total {
		t.Errorf("every flow completed: the stop came too late to test anything")
	}

	// The NICs left: nothing runs; what they completed and what the run
	// stopped bound the line's counts.
	var liveDone, liveAborted int
	for _, h := range []string{"h0", "h2", "h3"} {
		r, err := lab.RDMAFlows(l.root, l.name, h)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Flows {
			switch f.State {
			case api.RDMARunning:
				t.Errorf("%s: flow %d still running after the abort: %+v", h, f.ID, f)
			case api.RDMADone:
				liveDone++
			case api.RDMAAborted:
				if f.StartNs != 0 { // not one aborted while scheduled, before its time
					liveAborted++
				}
			}
		}
	}
	t.Logf("the live NICs completed %d flows and had %d stopped; h1 had %d done or running before the stop", liveDone, liveAborted, h1Done)
	if completed > liveDone+h1Done {
		t.Errorf("%d flows counted completed, but the NICs completed at most %d", completed, liveDone+h1Done)
	}
	if stopped < liveAborted {
		t.Errorf("%d flows counted stopped unfinished, but the live NICs had %d stopped", stopped, liveAborted)
	}

	code, out = l.run("status")
	t.Logf("lab status:\n%s", out)
	if code == 0 || !regexp.MustCompile(`(?m)^h1\b.*stopped`).MatchString(out) {
		t.Errorf("status: exit %d, want a line saying h1 is stopped:\n%s", code, out)
	}
	l.downClean()
}

// gone fails the test if a namespace, a run directory or a process of
// lab name under root is left.
func gone(t *testing.T, root, name string) {
	t.Helper()
	ns, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(ns), "\n") {
		if strings.HasPrefix(line, name+"-") {
			t.Errorf("namespace left: %s", line)
		}
	}
	if _, err := os.Stat(filepath.Join(root, name)); !os.IsNotExist(err) {
		t.Errorf("run directory of lab %s left: %v", name, err)
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

// kill -9 of the worker of an experiment's first point, mid-point: that
// point is INVALID with the reason (the worker, its pid, its nodes) in
// summary.csv and README.md, its lab is taken down, the second point
// runs on a lab brought up fresh and is valid, lab experiment run exits
// 3, and nothing of either lab is left. A second point that was INVALID
// only because the machine was late is no verdict: the experiment runs
// again (testtool.RetryLate).
func TestExperimentWorkerDies(t *testing.T) {
	testns.RequireRoot(t)
	bins := testns.Bins(t, "swd", "hostd", lab.WorkerBin, "lab")
	testtool.RetryLate(t, 0, func(t *testing.T) string { return experimentWorkerDies(t, bins) })
}

func experimentWorkerDies(t *testing.T, bins string) (late string) {
	root, name := t.TempDir(), fmt.Sprintf("xf%04d", rand.IntN(10000))
	file := filepath.Join(t.TempDir(), "fault.yaml")
	src := `name: fault
kind: workload
topology: {n: 2, k: 1}
lab: {rate: 10M}
schemes: [portfc]
seeds: [1, 2]
workload: {loads: [0.3], cdfs: [storage], duration: 3s}
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fault")
	cmd := exec.Command(filepath.Join(bins, "lab"), "experiment", "run", "-f", file, "--name", name, "--run-root", root, "--bin-dir", bins, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			_ = lab.Down(root, name, nil)
		}
	})

	// Every lab the experiment brings up, told apart by when it was
	// created, with its workers' pids.
	labs := map[time.Time][]int{}
	look := func() *lab.State {
		st, err := lab.LoadState(root, name)
		if err != nil || st.Phase != lab.PhaseUp {
			return nil
		}
		var pids []int
		for _, w := range st.Workers {
			pids = append(pids, w.Pid)
		}
		labs[st.Created] = pids
		return st
	}
	// The first point's lab, once its NICs run flows.
	var first *lab.State
	for deadline := time.Now().Add(2 * time.Minute); first == nil; {
		select {
		case err := <-exited:
			t.Fatalf("experiment ended before the fault: %v\n%s%s", err, stdout.String(), stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no flows in the first point's lab after 2 min")
		}
		if st := look(); st != nil {
			if r, err := lab.RDMAFlows(root, name, "h0"); err == nil && len(r.Flows) > 0 {
				first = st
			}
		}
	}
	time.Sleep(300 * time.Millisecond)
	victim := first.Workers[0]
	if err := syscall.Kill(victim.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed worker %s (pid %d) of the first point's lab", victim.Name, victim.Pid)
	var err error
	for deadline, done := time.Now().Add(3*time.Minute), false; !done; {
		select {
		case err = <-exited:
			done = true
		case <-time.After(100 * time.Millisecond):
			look()
		}
		if !done && time.Now().After(deadline) {
			t.Fatalf("experiment still running 3 min after the kill\n%s", stderr.String())
		}
	}
	t.Logf("lab experiment run: %v\n%s%s", err, stdout.String(), stderr.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInvalid {
		t.Errorf("exit: %v, want status %d", err, exitInvalid)
	}
	if len(labs) != 2 {
		t.Errorf("%d labs seen up, want 2 (one per point): %v", len(labs), labs)
	}
	for created, pids := range labs {
		if !created.Equal(first.Created) && slices.Contains(pids, victim.Pid) {
			t.Errorf("the second point's lab has the killed worker's pid %d", victim.Pid)
		}
	}

	reason := fmt.Sprintf("run failed: worker %s (pid %d; nodes ", victim.Name, victim.Pid)
	f, err := os.Open(filepath.Join(out, "summary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 3 {
		t.Fatalf("summary.csv: %v, %d rows, want a header and 2 points", err, len(rows))
	}
	col := func(n string) int { return slices.Index(rows[0], n) }
	if p := rows[1][col("problems")]; rows[1][col("valid")] != "false" || !strings.HasPrefix(p, reason) || !strings.Contains(p, "; workload aborted: ") {
		t.Errorf("first point: valid %s, problems %q, want INVALID starting %q", rows[1][col("valid")], p, reason)
	}
	if rows[2][col("valid")] != "true" {
		if why, ok := lab.Lateness(strings.Split(rows[2][col("problems")], "; ")); ok {
			late = "second point: " + why
		} else {
			t.Errorf("second point: valid %s, problems %q", rows[2][col("valid")], rows[2][col("problems")])
		}
	}
	readme, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil || !strings.Contains(string(readme), "**INVALID**") || !strings.Contains(string(readme), reason) {
		t.Errorf("README.md does not give the first point INVALID with its reason: %v\n%s", err, readme)
	}
	if b, err := os.ReadFile(filepath.Join(out, "runs", rows[2][col("point")], "report.json")); err != nil || len(b) == 0 {
		t.Errorf("no report of the second point: %v", err)
	}
	gone(t, root, name)
	return late
}
