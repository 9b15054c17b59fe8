package lab

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cmdlineHas reports whether pid is a live process (not a zombie) whose
// command line has arg as one of its words. Down signals a recorded pid
// only when this holds for the daemon's config path, so a pid reused by
// an unrelated process is never touched.
//
// A live process caught in the middle of execve (ip netns exec becoming
// the daemon) shows an empty command line for an instant; that is read
// again, for up to 200 ms, rather than taken for a stranger.
func cmdlineHas(pid int, arg string) bool {
	if pid <= 0 || arg == "" {
		return false
	}
	var b []byte
	for try := 0; ; try++ {
		var err error
		b, err = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			return false
		}
		if len(b) > 0 {
			break
		}
		if gone(pid) || try == 100 { // a zombie has an empty command line
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	for _, w := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
		if string(w) == arg {
			return true
		}
	}
	return false
}

// processesWithArg returns the live processes whose command line has one
// of args (a set) as a word, with that word.
func processesWithArg[V any](args map[string]V) map[int]string {
	out := map[int]string{}
	if len(args) == 0 {
		return out
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, w := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
			if _, ok := args[string(w)]; ok {
				out[pid] = string(w)
				break
			}
		}
	}
	return out
}

// gone reports whether pid is gone, or has exited and waits to be reaped.
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// Field 3, after the parenthesised command name, is the state.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return true
	}
	st := b[i+2]
	return st == 'Z' || st == 'X'
}

// victim is a process Down stops.
type victim struct {
	pid  int
	what string      // for logs: "h3 (hostd)" or "process in bc-h3"
	ours func() bool // still the process we mean to stop
}

// stopAll sends SIGTERM to every victim that is still ours, waits up to
// grace for all of them to exit, then sends SIGKILL to those left, still
// only if they are still ours. It returns how many it signalled.
func stopAll(vs []victim, grace time.Duration, log *slog.Logger) (int, error) {
	var live []victim
	for _, v := range vs {
		if !v.ours() {
			continue
		}
		if err := syscall.Kill(v.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return len(live), fmt.Errorf("stop %s pid %d: %w", v.what, v.pid, err)
		}
		log.Debug("sent SIGTERM", "pid", v.pid, "process", v.what)
		live = append(live, v)
	}
	n := len(live)
	if n == 0 {
		return 0, nil
	}
	waitGone := func(d time.Duration) []victim {
		deadline := time.Now().Add(d)
		for {
			left := live[:0:0]
			for _, v := range live {
				if !gone(v.pid) && v.ours() {
					left = append(left, v)
				}
			}
			if len(left) == 0 || time.Now().After(deadline) {
				return left
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	live = waitGone(grace)
	for _, v := range live {
		log.Warn("process did not exit after SIGTERM; sending SIGKILL", "pid", v.pid, "process", v.what, "grace", grace)
		if err := syscall.Kill(v.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return n, fmt.Errorf("kill %s pid %d: %w", v.what, v.pid, err)
		}
	}
	live = waitGone(2 * time.Second)
	if len(live) > 0 {
		var names []string
		for _, v := range live {
			names = append(names, fmt.Sprintf("%s pid %d", v.what, v.pid))
		}
		return n, fmt.Errorf("still running after SIGKILL: %s", strings.Join(names, ", "))
	}
	return n, nil
}
