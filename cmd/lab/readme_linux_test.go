//go:build linux

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testns"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab"
)

// The recipes of the README and docs/USAGE.md run as written (on a lab
// of the test's own name and run root) and print what their comments
// quote: the flow-control capture and the PFC deadlock, caught by the
// watchdog and captured (readmeRecipes, read by readmeRecipe).
func TestReadmeRecipes(t *testing.T) {
	testns.RequireRoot(t)
	bin := realBins(t)
	for _, title := range readmeRecipes {
		t.Run(strings.TrimSuffix(title, ":"), func(t *testing.T) {
			steps := readmeRecipe(t, title)
			testtool.RetryLate(t, 0, func(t *testing.T) string { return runRecipe(t, steps, bin) })
		})
	}
}

// runRecipe runs a recipe's steps on a lab of the test's own name and run
// root, checking what each prints. A step the machine was late for (exit
// 3, every problem the emulation falling behind) ends the attempt with
// the reason, for testtool.RetryLate to run it again on a fresh lab; any
// other failure fails t.
func runRecipe(t *testing.T, steps []recipe, bin string) (late string) {
	name := fmt.Sprintf("rm%05x", rand.IntN(1<<20))
	root := t.TempDir()
	down := false
	t.Cleanup(func() {
		if !down {
			run([]string{"down", "--name", name, "--run-root", root}, &bytes.Buffer{}, &bytes.Buffer{})
		}
	})
	for _, s := range steps {
		args := append([]string(nil), s.args...)
		for i := range args {
			if i > 0 && args[i-1] == "--name" {
				args[i] = name
			}
		}
		args = append(args, "--run-root", root)
		switch args[0] {
		case "up":
			args = append(args, "--bin-dir", bin)
		case "capture":
			args = append(args, "--duration", "10s") // never hang the suite
		}
		// What a recipe reports may take a moment to happen (a
		// deadlock forms, the watchdog's detection time passes):
		// a reader runs the next line a few seconds later.
		var out string
		for try := 0; ; try++ {
			var o, e bytes.Buffer
			code, err := run(args, &o, &e)
			out = o.String() + e.String()
			if why, ok := lateRun(code, err); ok {
				t.Logf("lab %s: exit %d, the run invalid because the emulation was late\n%s", strings.Join(args, " "), code, out)
				return why
			}
			if code != 0 {
				t.Fatalf("lab %s: exit %d, %v\n%s", strings.Join(args, " "), code, err, out)
			}
			if missing(out, s.want) == "" || try == 10 {
				break
			}
			time.Sleep(time.Second)
		}
		t.Logf("lab %s\n%s", strings.Join(args, " "), out)
		if m := missing(out, s.want); m != "" {
			t.Errorf("README says lab %s prints %q; it printed:\n%s", strings.Join(s.args, " "), m, out)
		}
		down = down || args[0] == "down"
	}
	return ""
}

// lateRun is why a lab command's run was invalid, and true, when it
// exited 3 only because the emulation fell behind (lab.Lateness); a run
// invalid for another reason (a daemon died) is a failure like any other.
func lateRun(code int, err error) (string, bool) {
	if code != exitInvalid || err == nil {
		return "", false
	}
	_, problems, ok := strings.Cut(err.Error(), "did not keep up: ")
	if !ok {
		return "", false
	}
	return lab.Lateness(strings.Split(problems, "; "))
}

// missing is the first of want that out lacks, or "".
func missing(out string, want []string) string {
	for _, w := range want {
		if !strings.Contains(out, w) {
			return w
		}
	}
	return ""
}
