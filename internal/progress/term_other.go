//go:build !linux

package progress

// isTerminal: off Linux, progress is plain lines unless asked for a bar.
func isTerminal(uintptr) bool { return false }

// terminalWidth: not known off Linux.
func terminalWidth(uintptr) int { return 0 }
