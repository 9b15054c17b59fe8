// Package golden compares a test's output with a file of what it printed
// before (a golden file, under the package's testdata), so that a change
// in behaviour shows as the first line that differs. A change meant to
// change the output writes the files again with the test binary's
// -update flag: go test ./swd -run TestWire -update.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write the golden files in testdata again, from what the tests get")

// Check fails t at the first line where got differs from the file at
// path, or writes got to path under -update.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (-update writes it)", err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s differs at line %d (-update writes what the test gets, for a change meant to change it):\n got %s\nwant %s", path, i+1, g, w)
		}
	}
}
