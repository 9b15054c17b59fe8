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
					t.Errorf("the recipe says lab %s prints %q; it printed:\n%s", strings.Join(s.args, " "), m, out)
				}
				down = down || args[0] == "down"
			}
		})
	}
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
