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
	"testing"
)

// RequireRoot skips the test unless it runs as root.
func RequireRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root: creates network namespaces and AF_XDP sockets")
	}
}
