package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// netnsDir is where ip netns keeps the names of network namespaces.
const netnsDir = "/run/netns"

// netnsName is the name of this process's network namespace, as ip netns
// identify finds it: the entry of netnsDir that is the same namespace
// (device and inode) as /proc/self/ns/net.
func netnsName() (string, error) {
	var self syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/net", &self); err != nil {
		return "", fmt.Errorf("network namespace: %w", err)
	}
	ents, err := os.ReadDir(netnsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("network namespaces: %w", err)
	}
	for _, e := range ents {
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(netnsDir, e.Name()), &st) == nil && st.Dev == self.Dev && st.Ino == self.Ino {
			return e.Name(), nil
		}
	}
	return "", errors.New("not in a named network namespace (run it with ip netns exec <lab>-h<i>)")
}
