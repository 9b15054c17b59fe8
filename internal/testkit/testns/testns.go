// Package testns gives privileged tests a private network namespace.
//
// A test that calls New runs the rest of its body, and its cleanups, on a
// locked OS thread inside a fresh, unnamed network namespace. Nothing is
// left behind: the namespace has no name under /run/netns, so it goes away
// with the last file descriptor or socket that refers to it, and the devices
// in it, with their XDP programs, go with it.
//
// Only the test goroutine is inside the namespace. Goroutines it starts run
// on other threads, in the namespace of the process; sockets, however, keep
// the namespace they were created in, so create them on the test goroutine
// and use them from anywhere.
package testns

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireRoot skips the test unless it runs as root.
func RequireRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root: creates network namespaces and AF_XDP sockets")
	}
}

// RequireLab skips a test that brings up a lab of real daemons unless it
// runs as root and in full, not -short: a -short run (make test-unit) is
// the unit tests, run with other packages' tests side by side, and a lab
// beside another lab or a compile takes the CPU that lab's workers wait
// for, so both runs come out late (INVALID). make test runs the labs one
// package at a time.
func RequireLab(tb testing.TB) {
	tb.Helper()
	RequireRoot(tb)
	if testing.Short() {
		tb.Skip("short: brings up a lab of real daemons (make test runs it)")
	}
}

// Bins builds the project's commands cmds (swd, hostd, bcfabd, ...) into
// a directory of the test's, removed after it, and returns the directory:
// the BinDir of a lab the test brings up.
func Bins(tb testing.TB, cmds ...string) string {
	tb.Helper()
	dir := tb.TempDir()
	for _, c := range cmds {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, c), "github.com/bcfab/bcfab/cmd/"+c).CombinedOutput()
		if err != nil {
			tb.Fatalf("build %s: %v\n%s", c, err, out)
		}
	}
	return dir
}
