//go:build linux

// Command lab brings up, inspects and removes emulated BCube fabrics: a
// network namespace per node, veth pairs for the cables, the nodes'
// engines on worker processes or a daemon per node. See package lab.
//
// The commands are a cobra tree, one file per command group: up.go (up),
// down.go (down, list), inspect.go (inspect, graph), node.go (node
// stop|start), status.go (status, stats), health.go, metrics.go, exec.go
// (exec, capture), traffic.go (gen, link), workload.go, bench.go,
// experiment.go, ns3.go (ns3 export|compare); progress.go holds
// --progress, the bar of the runs that take long. Every command's help is
// generated from its flags; `lab -h` lists the whole tree.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bcfab/bcfab/internal/buildinfo"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/units"
)

// defaultRate is config.DefaultRateBps as the flag reads it (a test
// keeps the two equal).
const defaultRate = "500M"

func main() {
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lab: %v\n", err)
	}
	os.Exit(code)
}

// Exit statuses, as `lab -h` documents them.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitInvalid = 3
	exitDied    = 4
)

// usageError is a malformed command line: exit 2, with a hint to the
// command's help.
type usageError struct {
	cmd    *cobra.Command
	err    error
	noHint bool // an error in a file the command read: its line says it all
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef is a usageError of cmd.
func usagef(cmd *cobra.Command, format string, a ...any) error {
	return usageError{cmd: cmd, err: fmt.Errorf(format, a...)}
}

// inputUsage is an error found before anything is done, in cmd's flags,
// its arguments or the file it read (file, "" when none): a usage error
// (exit 2), unless a file could not be read at all (exit 1). An error in
// a file names the file and line, with no hint to the flags.
func inputUsage(cmd *cobra.Command, file string, err error) error {
	if errors.As(err, new(*fs.PathError)) {
		return err
	}
	return usageError{cmd: cmd, err: err, noHint: file != ""}
}

// errInvalidRun is returned when a run's emulation health is invalid: the
// report was printed, flagged, and the exit status is 3.
var errInvalidRun = errors.New("invalid run")

// run is lab with args, writing to stdout and stderr; it returns the exit
// status and the error to print (nil when there is nothing to add).
func run(args []string, stdout, stderr io.Writer) (int, error) {
	root := newRoot(stdout, stderr)
	if len(args) == 0 {
		root.SetOut(stderr)
		_ = root.Help()
		return exitUsage, nil
	}
	root.SetArgs(args)
	err := root.Execute()
	var (
		ue   usageError
		exit *exec.ExitError
	)
	switch {
	case err == nil:
		return exitOK, nil
	case errors.As(err, &ue) && ue.noHint:
		return exitUsage, ue.err
	case errors.As(err, &ue):
		hint := "lab -h"
		if ue.cmd != nil && ue.cmd != root {
			hint = ue.cmd.CommandPath() + " -h"
		}
		return exitUsage, fmt.Errorf("%w (see %s)", ue.err, hint)
	case strings.HasPrefix(err.Error(), "unknown command"):
		return exitUsage, fmt.Errorf("%w (see lab -h)", err)
	case errors.Is(err, lab.ErrNodeDown):
		return exitDied, err // one line: the process and its nodes, or the node stopped; when
	case errors.Is(err, errInvalidRun):
		return exitInvalid, err // the report was printed, flagged invalid
	case errors.As(err, &exit):
		// exec: the command's own status, with no word of ours.
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return exit.ExitCode(), nil
	}
	return exitError, err
}

// newRoot builds the command tree.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	cobra.EnableCommandSorting = false // the order below is the help's
	root := &cobra.Command{
		Use:   "lab",
		Short: "bring up, inspect and remove emulated BCube fabrics",
		Long: `lab brings up, inspects and removes emulated BCube fabrics: a network
namespace per node, veth pairs for the cables, and the nodes' engines on
worker processes (bcfabd) or a daemon per node (swd, hostd).`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Completion scripts are generated for bash, zsh and fish (and
		// PowerShell); no per-shell description toggles.
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	// --version only: -v is every command's --verbose.
	root.Version = buildinfo.Read().Line("lab")
	root.SetVersionTemplate("{{.Version}}\n")
	root.Flags().Bool("version", false, "print the build: version, revision, Go")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{cmd: c, err: err} })
	root.AddGroup(
		&cobra.Group{ID: groupLab, Title: "Labs:"},
		&cobra.Group{ID: groupLook, Title: "Looking inside:"},
		&cobra.Group{ID: groupTraffic, Title: "Traffic and links:"},
		&cobra.Group{ID: groupBench, Title: "Experiments:"},
	)
	root.AddCommand(
		upCmd(), downCmd(), listCmd(), inspectCmd(), graphCmd(), nodeCmd(),
		statusCmd(), statsCmd(), healthCmd(), metricsCmd(), captureCmd(), execCmd(),
		genCmd(), linkCmd(), workloadCmd(), modelCmd(), calibrateCmd(),
		benchCmd(), experimentCmd(), ns3Cmd(),
	)
	root.SetHelpCommandGroupID(groupLab)
	root.SetCompletionCommandGroupID(groupLab)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Use = "completion bash|zsh|fish|powershell"
			c.Short = "a shell completion script (see lab completion SHELL -h)"
			c.Annotations = map[string]string{annotOneRow: "yes"}
		}
	}
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root {
			rootHelp(c)
			return
		}
		defaultHelp(c, args)
	})
	return root
}

// defaultHelp is cobra's help function, kept before SetHelpFunc replaces
// the root's.
var defaultHelp = (&cobra.Command{}).HelpFunc()

// Command groups of the root's help.
const (
	groupLab     = "lab"
	groupLook    = "look"
	groupTraffic = "traffic"
	groupBench   = "bench"
)

// rootHelp prints the whole tree, nested commands included, from the
// commands themselves: nothing here can drift from them.
func rootHelp(root *cobra.Command) {
	w := root.OutOrStdout()
	fmt.Fprintf(w, "%s\n\nUsage:\n  lab COMMAND [flags]\n", root.Long)
	for _, g := range root.Groups() {
		fmt.Fprintf(w, "\n%s\n", g.Title)
		var rows [][2]string
		for _, c := range root.Commands() {
			if c.GroupID == g.ID && c.IsAvailableCommand() {
				rows = append(rows, commandRows(c)...)
			}
		}
		for _, r := range rows {
			if len(r[0]) > helpWidth {
				fmt.Fprintf(w, "  %s\n  %-*s  %s\n", r[0], helpWidth, "", r[1])
				continue
			}
			fmt.Fprintf(w, "  %-*s  %s\n", helpWidth, r[0], r[1])
		}
	}
	fmt.Fprint(w, `
Every command on a lab takes --name L (default bc) and --run-root DIR
(default /run/bcfab); -v gives debug logs. 'lab COMMAND -h' lists a
command's flags. Sizes take iperf3's units (64K, 1M: 1024-based; 1MB:
1000-based), rates 1000-based bit/s (100M, 2.5G), durations Go's syntax
or seconds (200ms, 1.5s, 10). lab --version prints the build.

Exit status: 0 done, 1 an error, 2 bad usage (a command, flag, argument
or lab file that is wrong: nothing was done), 3 a run whose emulation
health is invalid (the daemons did not keep up; its report says so), 4 a
node of the lab is down: a process hosting nodes (a worker, or a node's
daemon) died or is not running, or a node was stopped (lab node stop). A
run is stopped within a second, and one line names the process and its
nodes, or the node, when, and what became of the run's flows.

Example:
  lab up bcube --n 4 --k 1 --fc portfc
  ip netns exec bc-h0 ping -c3 198.18.0.15
  lab status
  lab down
`)
}

// helpWidth is the width of the root help's command column; longer
// commands get a line of their own.
const helpWidth = 26

// commandRows are c and its subcommands as "path args" and short lines;
// a command with subcommands is listed through them.
func commandRows(c *cobra.Command) [][2]string {
	var rows [][2]string
	if c.Annotations[annotOneRow] != "" {
		return [][2]string{{c.Use, c.Short}}
	}
	if c.Runnable() && (!c.HasAvailableSubCommands() || c.Annotations[annotListSelf] != "") {
		path := strings.TrimPrefix(c.CommandPath(), "lab ")
		use := path
		if _, args, ok := strings.Cut(c.Use, " "); ok {
			use += " " + args
		}
		rows = append(rows, [2]string{use, c.Short})
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			rows = append(rows, commandRows(sub)...)
		}
	}
	return rows
}

// annotOneRow marks a command the root's help lists as one row, without
// its subcommands.
const annotOneRow = "one-row"

// annotListSelf marks a command with subcommands that the root's help
// lists itself as well.
const annotListSelf = "list-self"

// common are the flags every command on a lab takes.
type common struct {
	name, runRoot string
	verbose       bool
}

// addCommon adds --name, --run-root and -v to cmd.
func addCommon(cmd *cobra.Command) *common {
	c := &common{}
	fs := cmd.Flags()
	c.name = lab.DefaultName
	fs.Var((*labName)(&c.name), "name", "lab name: namespaces are `L`-h<i> and L-s<l>.<w>")
	rr, _ := lab.KnobByName("run-root") // every command's flag, the knob table's
	fs.StringVar(&c.runRoot, rr.Name, rr.Default, rr.Help)
	fs.BoolVarP(&c.verbose, "verbose", "v", false, "debug logs")
	_ = cmd.RegisterFlagCompletionFunc("name", func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		return labNames(c.runRoot), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.MarkFlagDirname("run-root")
	return c
}

// labName is --name: a bad name is a bad flag (exit 2), whatever the
// command.
type labName string

func (n *labName) String() string { return string(*n) }
func (n *labName) Type() string   { return "string" }
func (n *labName) Set(s string) error {
	if err := lab.CheckName(s); err != nil {
		return err
	}
	*n = labName(s)
	return nil
}

func (c *common) logger(stderr io.Writer) *slog.Logger {
	return newLogger(stderr, c.verbose)
}

func newLogger(stderr io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{} // a terminal user has a clock
			}
			return a
		},
	}))
}

// Flags of the units package's types, with their defaults.

func sizeFlag(fs *pflag.FlagSet, name, def, usage string) *units.Size {
	v := new(units.Size)
	if err := v.Set(def); err != nil {
		panic(err)
	}
	fs.Var(v, name, usage)
	return v
}

func rateFlag(fs *pflag.FlagSet, name, def, usage string) *units.Rate {
	v := new(units.Rate)
	if err := v.Set(def); err != nil {
		panic(err)
	}
	fs.Var(v, name, usage)
	return v
}

func durationFlag(fs *pflag.FlagSet, name, short string, def string, usage string) *units.Duration {
	v := new(units.Duration)
	if err := v.Set(def); err != nil {
		panic(err)
	}
	fs.VarP(v, name, short, usage)
	return v
}

func lossFlag(fs *pflag.FlagSet, name, def, usage string) *units.Loss {
	v := new(units.Loss)
	if err := v.Set(def); err != nil {
		panic(err)
	}
	fs.Var(v, name, usage)
	return v
}

// completeWords completes a flag from a fixed list.
func completeWords(cmd *cobra.Command, flag string, words ...string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp))
}

// labNames lists the labs under runRoot, for completion.
func labNames(runRoot string) []string {
	labs, err := lab.List(runRoot)
	if err != nil {
		return nil
	}
	var names []string
	for _, l := range labs {
		names = append(names, l.Name)
	}
	return names
}

// nodeArgs completes the positional arguments of a command on NODE
// [PORT]: the lab's nodes, then that node's ports.
func nodeArgs(c *common, withPort bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		st, err := lab.LoadState(c.runRoot, c.name)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		switch {
		case len(args) == 0:
			var names []string
			for _, n := range st.Nodes {
				names = append(names, n.Name)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		case len(args) == 1 && withPort:
			return st.Spec.NodePorts(args[0]), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// exactArgs wants n positional arguments, named by what (for the
// error).
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef(cmd, "%s: want %s, got %d arguments", cmd.Name(), what, len(args))
		}
		return nil
	}
}

// atMostArgs wants at most n positional arguments, named by what.
func atMostArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usagef(cmd, "%s: want at most %s, got %d arguments", cmd.Name(), what, len(args))
		}
		return nil
	}
}

// noArgs refuses positional arguments.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef(cmd, "%s: unexpected arguments %q", cmd.Name(), args)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeFile writes path with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// checkNodePort checks that node is a node of the lab and port one of
// its ports (fabric ports, and a server's bc0 and bc0nic), from the lab's
// state, before anything reaches a daemon or a tool.
func checkNodePort(cmd *cobra.Command, c *common, node, port string) error {
	st, err := lab.LoadState(c.runRoot, c.name)
	if err != nil {
		return err
	}
	if _, ok := st.Node(node); !ok {
		servers := len(slices.DeleteFunc(slices.Clone(st.Nodes), func(n lab.NodeState) bool { return n.Kind != lab.KindServer }))
		return usagef(cmd, "node %q: lab %s has servers h0..h%d and switches %s..%s", node, st.Lab,
			servers-1, st.Nodes[servers].Name, st.Nodes[len(st.Nodes)-1].Name)
	}
	ports := st.Spec.NodePorts(node)
	if strings.HasPrefix(node, "h") {
		ports = append(ports, "bc0", "bc0nic")
	}
	if !slices.Contains(ports, port) {
		return usagef(cmd, "port %q: %s's ports are %s", port, node, strings.Join(ports, ", "))
	}
	return nil
}
