//go:build !linux

package patch

func lowerPriority() {}
