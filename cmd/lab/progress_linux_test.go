//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bcfab/bcfab/internal/testkit/testns"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab"
)

// lab workload on a terminal draws its bar: in a tmux pane 120 columns
// wide it shows the flows ended, the target's time, the ETA and D while
// the run lasts, within the width, and nothing of it once the run has
// ended; the report on stdout gives the run's cost. The same command
// with stderr on a pipe prints plain lines with no terminal control,
// and its JSON the cost.
func TestWorkloadProgressBar(t *testing.T) {
	testns.RequireLab(t)
	tmux := testtool.Require(t, "tmux", "give lab workload a terminal")
	bins := testns.Bins(t, "swd", "hostd", lab.WorkerBin, "lab")
	l := upCLI(t, bins, "pb", "2")
	args := []string{"workload", "--cdf", "storage", "--load", "0.3", "--duration", "4s", "-i", "250ms", "--name", l.name, "--run-root", l.root}

	// A tmux server of the test's own, gone with the test whatever
	// happens (before the lab is taken down: cleanups run last first),
	// its socket in a directory of the test's, removed with it.
	sock := filepath.Join(t.TempDir(), "tmux")
	tm := func(a ...string) (string, error) {
		c := exec.Command(tmux, append([]string{"-S", sock}, a...)...)
		c.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMUX=") }) // not nested in a tmux the test runs in
		out, err := c.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = tm("kill-server") })
	dir := t.TempDir()
	report, codeFile, script := filepath.Join(dir, "report.txt"), filepath.Join(dir, "code"), filepath.Join(dir, "run.sh")
	quoted := []string{shellQuote(l.bin)}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	// stderr on the pane, the report to a file; the shell stays for the
	// pane to be read after the run.
	src := fmt.Sprintf("unset NO_COLOR\n%s >%s\necho $? >%s && mv %s %s\nexec sleep 600\n",
		strings.Join(quoted, " "), shellQuote(report), shellQuote(codeFile+".tmp"), shellQuote(codeFile+".tmp"), shellQuote(codeFile))
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := tm("new-session", "-d", "-x", "120", "-y", "10", "-s", "pb", "sh "+shellQuote(script)); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	var bar string
	for deadline := time.Now().Add(3 * time.Minute); ; {
		pane, err := tm("capture-pane", "-p", "-t", "pb")
		if err != nil {
			t.Fatalf("tmux capture-pane: %v\n%s", err, pane)
		}
		for _, line := range strings.Split(pane, "\n") {
			if strings.Contains(line, " flows") && strings.Contains(line, "target ") && strings.Contains(line, "ETA ") && strings.Contains(line, "D = ") {
				bar = line
			}
		}
		if _, err := os.Stat(codeFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lab workload still running after 3 min; the pane:\n%s", pane)
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, err := os.ReadFile(codeFile)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	pane, _ := tm("capture-pane", "-p", "-t", "pb")
	rep, _ := os.ReadFile(report)
	t.Logf("exit %d; the bar: %q\nthe pane at the end:\n%s\nthe report:\n%s", code, bar, pane, rep)
	if code != 0 && code != exitInvalid {
		t.Fatalf("lab workload on a terminal: exit %d", code)
	}
	if bar == "" {
		t.Error("no bar seen with the flows, the target's time, the ETA and D")
	} else if n := utf8.RuneCountInString(strings.TrimRight(bar, " ")); n > 119 {
		t.Errorf("the bar takes %d columns of 120", n)
	}
	if strings.Contains(pane, "ETA ") {
		t.Errorf("the bar is still on the pane after the run:\n%s", pane)
	}
	if !strings.Contains(string(rep), "cost: ") || !strings.Contains(string(rep), " of wall time per ms in the target (") {
		t.Errorf("the report does not give the run's cost:\n%s", rep)
	}

	// On a pipe: plain lines.
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(l.bin, append(args, "--json")...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != exitInvalid) {
		t.Fatalf("lab workload on a pipe: %v\n%s", err, stderr.String())
	}
	t.Logf("on a pipe: %v\n%s", err, stderr.String())
	plain := 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, " in the target (") && strings.Contains(line, " started, ") {
			plain++
		}
	}
	if plain == 0 || strings.ContainsAny(stderr.String(), "\r\x1b") {
		t.Errorf("on a pipe: %d progress lines, terminal control %v, want plain lines", plain, strings.ContainsAny(stderr.String(), "\r\x1b"))
	}
	if !strings.Contains(stdout.String(), `"wall_s_per_target_ms": `) {
		t.Errorf("the JSON report lacks wall_s_per_target_ms")
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
