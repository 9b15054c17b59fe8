// Package buildinfo says which build of the project is running: the
// module version, the VCS revision and whether the tree was modified, and
// the Go release. Reports name it so that a result can be traced to the
// code that produced it.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set by the Makefile with -ldflags -X, for builds the Go tool cannot
// stamp itself (a git worktree, whose .git is a file, or GOFLAGS
// -buildvcs=false): the output of git rev-parse HEAD, git log -1
// --format=%cI, and "true" when git status --porcelain listed anything.
var (
	revision string
	vcsTime  string
	modified string
)

// Info is a build.
type Info struct {
	// Module is the main module's path and Version its version ("(devel)"
	// for a build from a checkout).
	Module  string `json:"module"`
	Version string `json:"version"`
	// Revision, Time and Modified are the VCS commit, its time and whether
	// the tree had uncommitted changes; Source says where they came from:
	// "go" (the Go tool's vcs.* stamps), "ldflags" (the Makefile), or
	// "unknown" (neither: built without either stamp).
	Revision string `json:"vcs_revision,omitempty"`
	Time     string `json:"vcs_time,omitempty"`
	Modified bool   `json:"vcs_modified"`
	Source   string `json:"vcs_source"`
	// GoVersion is the Go release that built the binary.
	GoVersion string `json:"go_version"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
}

// Read returns the running binary's build.
func Read() Info {
	in := Info{GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Source: "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		in.Module, in.Version = bi.Main.Path, bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Revision, in.Source = s.Value, "go"
			case "vcs.time":
				in.Time = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
	}
	if in.Source == "unknown" && revision != "" {
		in.Revision, in.Time, in.Modified, in.Source = revision, vcsTime, modified == "true", "ldflags"
	}
	return in
}

// String is the build on one line: "github.com/bcfab/bcfab (devel) rev
// 3e64424 (modified) go1.26.8".
func (in Info) String() string {
	s := in.Module + " " + in.Version
	switch {
	case in.Revision == "":
		s += " rev unknown"
	default:
		r := in.Revision
		if len(r) > 12 {
			r = r[:12]
		}
		s += " rev " + r
		if in.Modified {
			s += " (modified)"
		}
	}
	return s + " " + in.GoVersion
}

// Line is what a program's --version prints: its name, the build
// (module, version, revision and its commit time) and the Go release and
// platform that built it, on one line: "swd github.com/bcfab/bcfab
// (devel) rev 3e64424a1b2c (2026-11-28T19:46:36Z) go1.26.8 linux/amd64".
func (in Info) Line(prog string) string {
	s := prog + " " + in.Module + " " + in.Version
	switch {
	case in.Revision == "":
		s += " rev unknown"
	default:
		r := in.Revision
		if len(r) > 12 {
			r = r[:12]
		}
		s += " rev " + r
		if in.Time != "" {
			s += " (" + in.Time + ")"
		}
		if in.Modified {
			s += " modified"
		}
	}
	return s + " " + in.GoVersion + " " + in.GOOS + "/" + in.GOARCH
}
