package lab

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The lab's servers by name inside its namespaces. ip netns exec
// bind-mounts every file of /etc/netns/<namespace>/ over the file of the
// same name in /etc, so Up writes /etc/netns/<namespace>/hosts for every
// namespace of the lab, naming each server's bc0 address h<i>, and
//
//	ip netns exec <lab>-h0 ping -c1 h15
//
// resolves h15 as /etc/hosts would. Switches have no address a user
// reaches, so they have no line. Down removes the files, and the
// directories Up created for them: a directory that was there before
// (the user's own files for that namespace) is left as it was.

// etcNetnsDir is where ip netns exec looks for a namespace's files
// (a variable for the tests).
var etcNetnsDir = "/etc/netns"

// hostsMark begins the first line of every hosts file a lab writes:
// "# bcfab lab <name>" then, when Up created the directory for it,
// hostsMarkDir. Down removes only files that begin so.
const (
	hostsMark    = "# bcfab lab "
	hostsMarkDir = " (lab up created this directory)"
)

// HostsPath is the hosts file ip netns exec gives namespace ns.
func HostsPath(ns string) string {
	return filepath.Join(etcNetnsDir, ns, "hosts")
}

// HostName is a name of the lab and its address.
type HostName struct {
	Addr string // 198.18.0.3
	Name string // h3
}

// Hosts are the lab's servers by name: h<i> at its bc0 address.
func (p *Plan) Hosts() []HostName {
	var out []HostName
	for _, l := range p.AppLinks {
		out = append(out, HostName{l.A.Addr.Addr().String(), l.A.Node})
	}
	return out
}

// WriteHosts writes names as a hosts(5) file for lab (its name and
// fabric), after localhost; created says that the file's directory was
// created for it (Down then removes the directory too).
func WriteHosts(w io.Writer, lab, name string, created bool, names []HostName) error {
	b := bufio.NewWriter(w)
	mark := ""
	if created {
		mark = hostsMarkDir
	}
	fmt.Fprintf(b, "%s%s%s\n", hostsMark, name, mark)
	fmt.Fprintf(b, "# The servers of lab %s by name, for ip netns exec (over /etc/hosts); lab down removes this file.\n", lab)
	fmt.Fprintf(b, "127.0.0.1 localhost\n::1 localhost\n")
	for _, n := range names {
		fmt.Fprintf(b, "%s %s\n", n.Addr, n.Name)
	}
	return b.Flush()
}

// writeHosts writes the hosts file of every namespace of p. A namespace
// whose directory already holds a hosts file not of this lab's is left
// alone: that file is the user's.
func writeHosts(p *Plan) error {
	if err := os.MkdirAll(etcNetnsDir, 0o755); err != nil {
		return fmt.Errorf("hosts: %w", err)
	}
	names := p.Hosts()
	lab := fmt.Sprintf("%s (%s)", p.Spec.Name, p.Spec.TopologyText())
	for _, ns := range p.Namespaces() {
		dir := filepath.Join(etcNetnsDir, ns)
		created := true
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, os.ErrNotExist) { // another lab's down removed etcNetnsDir
			if err = os.MkdirAll(etcNetnsDir, 0o755); err == nil {
				err = os.Mkdir(dir, 0o755)
			}
		}
		if errors.Is(err, os.ErrExist) {
			created = false
			if dirMark, ok := hostsOwner(HostsPath(ns), p.Spec.Name); !ok {
				if _, err := os.Lstat(HostsPath(ns)); err == nil {
					continue // the user's
				}
			} else {
				created = dirMark // a file of a lab of this name left behind
			}
		} else if err != nil {
			return fmt.Errorf("hosts: %w", err)
		}
		var buf bytes.Buffer
		if err := WriteHosts(&buf, lab, p.Spec.Name, created, names); err != nil {
			return fmt.Errorf("hosts: %w", err)
		}
		if err := os.WriteFile(HostsPath(ns), buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("hosts: %w", err)
		}
	}
	return nil
}

// hostsOwner reads the first line of the hosts file at path: ok when a
// lab named name wrote it, dir when Up created its directory for it.
func hostsOwner(path, name string) (dir, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	line = strings.TrimSuffix(line, "\n")
	rest, found := strings.CutPrefix(line, hostsMark+name)
	if !found || (rest != "" && rest != hostsMarkDir) {
		return false, false
	}
	return rest == hostsMarkDir, true
}

// removeHosts removes the hosts files lab name wrote for its namespaces
// (those given, and any other under etcNetnsDir with its prefix), the
// directories Up created for them, and etcNetnsDir if it is then empty.
func removeHosts(name string, namespaces []string) error {
	prefix := name + "-"
	seen := map[string]bool{}
	all := append([]string(nil), namespaces...)
	if ents, err := os.ReadDir(etcNetnsDir); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), prefix) {
				all = append(all, e.Name())
			}
		}
	}
	var errs []error
	for _, ns := range all {
		if seen[ns] || !strings.HasPrefix(ns, prefix) || strings.ContainsRune(ns, '/') {
			continue
		}
		seen[ns] = true
		dir, ok := hostsOwner(HostsPath(ns), name)
		if !ok {
			continue
		}
		if err := os.Remove(HostsPath(ns)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		if dir {
			// Only if empty: what someone put there since stays.
			if err := os.Remove(filepath.Join(etcNetnsDir, ns)); err != nil && !errors.Is(err, os.ErrNotExist) {
				if ents, _ := os.ReadDir(filepath.Join(etcNetnsDir, ns)); len(ents) == 0 {
					errs = append(errs, err)
				}
			}
		}
	}
	// etcNetnsDir itself when nothing is left in it: ip netns creates it
	// for no one, and a lab up makes it again.
	_ = os.Remove(etcNetnsDir)
	return errors.Join(errs...)
}
