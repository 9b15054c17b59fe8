package node

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// inNetns runs f with the calling goroutine's thread inside the network
// namespace mounted at path, where sockets, XDP attachments, ethtool calls
// and /sys/class/net then act. When the thread is there already (a daemon
// started by ip netns exec, or path is empty), f runs in place.
// Otherwise f runs on a thread of its own that enters the namespace, and a
// private mount namespace with that network namespace's sysfs (as ip
// netns exec gives a process), and dies with the goroutine: no other
// goroutine ever runs there by accident.
func inNetns(path string, f func() error) error {
	if path == "" {
		return f()
	}
	var want, have unix.Stat_t
	if err := unix.Stat(path, &want); err != nil {
		return fmt.Errorf("network namespace %s: %w", path, err)
	}
	if err := unix.Stat("/proc/thread-self/ns/net", &have); err == nil && have.Ino == want.Ino && have.Dev == want.Dev {
		return f()
	}
	done := make(chan error, 1)
	go func() {
		// Never unlocked: the runtime ends the thread with the goroutine.
		runtime.LockOSThread()
		if err := enterNetns(path); err != nil {
			done <- err
			return
		}
		done <- f()
	}()
	return <-done
}

// enterNetns moves the calling, locked thread into the network namespace
// at path and mounts that namespace's sysfs over /sys in a mount
// namespace of the thread's own.
func enterNetns(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("network namespace %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("enter network namespace %s: %w", path, err)
	}
	// sysfs shows the network namespace of whoever mounted it.
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("mount namespace: make / a slave: %w", err)
	}
	if err := unix.Unmount("/sys", unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("unmount /sys: %w", err)
	}
	if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
		return fmt.Errorf("mount sysfs of %s: %w", path, err)
	}
	return nil
}
