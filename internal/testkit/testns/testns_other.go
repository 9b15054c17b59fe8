//go:build !linux

package testns

import (
	"testing"

	"github.com/vishvananda/netns"
)

// New skips the test: network namespaces are Linux-only.
func New(tb testing.TB) netns.NsHandle {
	tb.Helper()
	tb.Skip("needs Linux network namespaces")
	return netns.None()
}
