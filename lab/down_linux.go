package lab

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// StopGrace is how long Down waits after SIGTERM before SIGKILL.
const StopGrace = 3 * time.Second

// Down removes lab name under runRoot ("" means DefaultRunRoot) from its
// state file alone, so it works after a crash of the lab process, after
// kill -9 of any daemon, and on a partial state left by a failed Up:
//
//  1. Stop every recorded worker or daemon whose /proc/<pid>/cmdline still
//     names its config file, and every other process inside one of the
//     lab's namespaces: SIGTERM, up to StopGrace, then SIGKILL.
//  2. Delete every namespace named in the state, and any other namespace
//     whose name starts with <name>- (the veths in them go with them).
//  3. Remove the namespaces' hosts files /etc/netns/<namespace>/hosts
//     (and the directories Up created for them), then the run directory
//     <runRoot>/<name>.
//
// Down is idempotent: removing a lab that does not exist succeeds. log may
// be nil.
func Down(runRoot, name string, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if runRoot == "" {
		runRoot = DefaultRunRoot
	}
	if name == "" {
		name = DefaultName
	}
	if err := checkName(name); err != nil {
		return err
	}
	if euid() != 0 {
		return errors.New("not root: removing a lab deletes network namespaces and stops root's daemons; run as root")
	}
	st, err := LoadState(runRoot, name)
	if err != nil {
		if !errors.Is(err, ErrNoLab) {
			log.Warn("state unreadable; removing what the name prefix finds", "lab", name, "err", err)
		}
		st = &State{Lab: name}
	}
	if err := downState(runRoot, name, st, log); err != nil {
		return fmt.Errorf("lab %s down: %w", name, err)
	}
	return nil
}

// downState removes what st records and what the name finds. Paths to
// remove are derived from runRoot and name, never read from the file.
func downState(runRoot, name string, st *State, log *slog.Logger) error {
	start := time.Now()
	prefix := name + "-"
	var errs []error

	// Every namespace of the lab: the recorded ones and any stray with
	// the prefix.
	namespaces := []string{}
	for _, ns := range st.Namespaces {
		if strings.HasPrefix(ns, prefix) && !strings.ContainsRune(ns, '/') {
			namespaces = append(namespaces, ns)
		}
	}
	found, err := labNamespaces(name)
	if err != nil {
		errs = append(errs, err)
	}
	for _, ns := range found {
		if !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}

	// 1. Processes: the recorded daemons, any daemon started but not yet
	// recorded when a lab process died (its command line names its config
	// file), and anything else running inside the lab's namespaces. A
	// child a dying lab process forked an instant before is not yet
	// either (it still runs the parent's image in the root namespace): it
	// shows up within milliseconds, so look again until a look finds
	// nothing new.
	seen := map[int]bool{}
	stopped := 0
	for round := 0; round < downRounds; round++ {
		if round > 0 {
			time.Sleep(downRecheck)
		}
		victims := findVictims(st, namespaces, seen)
		if len(victims) == 0 && round > 0 {
			break
		}
		n, err := stopAll(victims, StopGrace, log)
		stopped += n
		if err != nil {
			errs = append(errs, err)
		}
	}

	// 2. Namespaces.
	deleted := 0
	for _, ns := range namespaces {
		existed := namespaceExists(ns)
		if err := deleteNamespace(ns); err != nil {
			errs = append(errs, err)
		} else if existed {
			deleted++
		}
	}

	// The namespaces' hosts files (and the directories created for them).
	if err := removeHosts(name, namespaces); err != nil {
		errs = append(errs, fmt.Errorf("hosts files: %w", err))
	}

	// 3. Run directory, and the connections this process kept open to
	// its control sockets.
	dir := filepath.Join(runRoot, name)
	forgetControl(dir)
	_, statErr := os.Lstat(dir)
	if err := os.RemoveAll(dir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", dir, err))
	}

	if stopped == 0 && deleted == 0 && statErr != nil {
		log.Info("nothing to remove", "lab", name)
	} else {
		log.Info("lab removed", "lab", name, "processes", stopped, "namespaces", deleted,
			"took", time.Since(start).Round(time.Millisecond))
	}
	return errors.Join(errs...)
}

// Down looks for processes to stop up to downRounds times, downRecheck
// apart, until a look finds none it has not stopped yet.
const (
	downRounds  = 5
	downRecheck = 100 * time.Millisecond
)

// findVictims lists the lab's processes not in seen, and adds them to it.
func findVictims(st *State, namespaces []string, seen map[int]bool) []victim {
	var victims []victim
	// Every process that hosts nodes, by the config file on its command
	// line: the workers, or the nodes' own daemons.
	configs := map[string]string{}
	add := func(pid int, config, what string) {
		configs[config] = what
		if pid > 0 && !seen[pid] {
			seen[pid] = true
			victims = append(victims, procVictim(pid, config, what))
		}
	}
	for _, w := range st.Workers {
		if w.Config != "" {
			add(w.Pid, w.Config, "worker "+w.Name)
		}
	}
	for _, n := range st.Nodes {
		if n.Config != "" && n.Worker == "" {
			add(n.Pid, n.Config, fmt.Sprintf("%s (%s)", n.Name, n.Kind))
		}
	}
	for pid, cfg := range processesWithArg(configs) {
		if !seen[pid] {
			seen[pid] = true
			victims = append(victims, procVictim(pid, cfg, configs[cfg]))
		}
	}
	inodes := map[uint64]string{}
	for _, ns := range namespaces {
		if ino, ok := namespaceInode(ns); ok {
			inodes[ino] = ns
		}
	}
	for pid, ns := range residents(inodes) {
		if seen[pid] {
			continue
		}
		seen[pid] = true
		victims = append(victims, victim{
			pid:  pid,
			what: "process in " + ns,
			ours: func() bool {
				ino, ok := processNetns(pid)
				return ok && inodes[ino] == ns
			},
		})
	}
	return victims
}

// procVictim is the process at pid that hosts nodes: ours while its
// command line still names config.
func procVictim(pid int, config, what string) victim {
	return victim{
		pid:  pid,
		what: what,
		ours: func() bool { return cmdlineHas(pid, config) },
	}
}
