//go:build !linux

package testns

import "testing"

// NsHandle stands in for netns.NsHandle where network namespaces do not exist.
type NsHandle int

// New skips the test: network namespaces are Linux-only.
func New(tb testing.TB) NsHandle {
	tb.Helper()
	tb.Skip("needs Linux network namespaces")
	return 0
}
