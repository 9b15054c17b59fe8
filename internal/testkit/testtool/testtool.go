// Package testtool finds the programs outside Go that tests call
// (tshark, tcpdump, iperf3): scripts/install-deps.sh installs every one,
// and `make test` runs it first.
package testtool

import (
	"os"
	"os/exec"
	"testing"
)

// Require returns the path of program name. When it is missing, a run in
// CI (the environment sets CI) fails: CI installs every tool, so a missing
// one is a broken setup, and a check that quietly does not run would pass
// for it. Elsewhere the test is skipped, saying what installs the tool.
// A skip in the middle of a test keeps the failures reported before it.
func Require(tb testing.TB, name, what string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := name + " not installed (scripts/install-deps.sh, run by make test, installs it): cannot " + what
	if os.Getenv("CI") != "" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}
