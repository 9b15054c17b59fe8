//go:build linux

// Command lab brings up, inspects and removes emulated BCube fabrics: one
// network namespace and one daemon (swd or hostd) per node, veth pairs for
// the cables. See package lab.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/bcfab/bcfab/api"
	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/bench"
	"github.com/bcfab/bcfab/config"
	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/lab"
)

const usage = `usage: lab COMMAND [flags]

Commands:
  up bcube --n N --k K [flags]   create the namespaces and links, start the daemons
  down                           stop the daemons, delete the namespaces and run dir
  status                         per node: pid, alive, healthy, rx/tx packets, drops
  list                           the labs on this machine
  exec NODE -- CMD [ARG...]      run CMD inside NODE's namespace (h<i> or s<l>.<w>)
  stats NODE                     per-port and per-queue counters of NODE's daemon (--json: raw)
  capture NODE PORT              what PORT of NODE transmits: signal frames decoded, -w pcap
  gen SRC DST                    a generated flow from server SRC to DST (obeys flow control)
  link NODE PORT                 injected loss and link down on the cable at NODE's PORT
  workload                       RDMA flows from a workload (flow-size CDF, load, incast,
                                 patterns): per-flow FCTs, summary, emulation health
  health                         emulation health: daemon CPU, XSK ring drops, shaper lag
  node stop|start NODE           take one node down and up again while the fabric runs
  bench datapath                 forwarding rate of swd vs the Linux bridge and a bare
                                 AF_XDP forwarder, on namespaces of its own
  bench fairness                 two flows into one egress in two queues; ping via the HQ
  bench hol                      head-of-line blocking of a victim flow, per flow-control scheme

Every command takes --name L (default bc), --run-root DIR (default /run/bcfab)
and -v (debug logs). 'lab COMMAND -h' lists a command's flags.

Exit status: 0 done, 1 an error, 2 bad usage, 3 a run whose emulation
health is invalid (the daemons did not keep up; its report says so).

Example:
  lab up bcube --n 4 --k 1 --fc portfc
  ip netns exec bc-h0 ping -c3 198.18.0.15
  lab status
  lab down
`

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

// errUsage is returned for a malformed command line: exit 2, usage printed.
var errUsage = errors.New("usage")

func run(args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return 2, nil
		}
		return 0, nil
	}
	cmds := map[string]func([]string, io.Writer, io.Writer) error{
		"up":       cmdUp,
		"down":     cmdDown,
		"status":   cmdStatus,
		"list":     cmdList,
		"exec":     cmdExec,
		"stats":    cmdStats,
		"bench":    cmdBench,
		"capture":  cmdCapture,
		"gen":      cmdGen,
		"link":     cmdLink,
		"workload": cmdWorkload,
		"health":   cmdHealth,
		"node":     cmdNode,
	}
	f, ok := cmds[args[0]]
	if !ok {
		fmt.Fprint(stderr, usage)
		return 2, fmt.Errorf("unknown command %q", args[0])
	}
	err := f(args[1:], stdout, stderr)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.Is(err, flag.ErrHelp):
		return 0, nil
	case errors.Is(err, errUsage):
		return 2, nil // the flag package has printed why
	case errors.Is(err, errInvalidRun):
		return 3, err // the report was printed, flagged invalid
	case errors.As(err, &exit):
		// exec: the command's own status, with no word of ours.
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return exit.ExitCode(), nil
	}
	return 1, err
}

// common are the flags every command takes.
type common struct {
	name, runRoot string
	verbose       bool
}

func newFlags(cmd, args string, stderr io.Writer) (*flag.FlagSet, *common) {
	fs := flag.NewFlagSet("lab "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &common{}
	fs.StringVar(&c.name, "name", lab.DefaultName, "lab name: namespaces are `L`-h<i> and L-s<l>.<w>")
	fs.StringVar(&c.runRoot, "run-root", lab.DefaultRunRoot, "`dir`ectory of the labs' state, configs, sockets and logs")
	fs.BoolVar(&c.verbose, "v", false, "debug logs")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: lab %s %s\n\nFlags:\n", cmd, args)
		fs.PrintDefaults()
	}
	return fs, c
}

func (c *common) logger(stderr io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if c.verbose {
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

// parse parses flags that may come before and after positional words
// ("up bcube --n 4" and "up --n 4 bcube" both work). After maxPos
// positional words (maxPos < 0: no limit), or after "--", the remaining
// arguments are returned verbatim in rest, a leading "--" dropped.
func parse(fs *flag.FlagSet, args []string, maxPos int) (pos, rest []string, err error) {
	for {
		if len(args) > 0 && args[0] == "--" {
			return pos, args[1:], nil
		}
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, nil, err
			}
			return nil, nil, errUsage
		}
		left := fs.Args()
		if consumed := args[:len(args)-len(left)]; len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			return pos, left, nil
		}
		if len(left) == 0 {
			return pos, nil, nil
		}
		pos = append(pos, left[0])
		args = left[1:]
		if maxPos >= 0 && len(pos) == maxPos {
			if len(args) > 0 && args[0] == "--" {
				args = args[1:]
			}
			return pos, args, nil
		}
	}
}

// noMore rejects arguments a command does not take.
func noMore(cmd string, pos, rest []string) error {
	if extra := append(pos, rest...); len(extra) > 0 {
		return fmt.Errorf("%s: unexpected arguments %q", cmd, extra)
	}
	return nil
}

func cmdNode(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("node", "stop|start [--name L] NODE", stderr)
	pos, rest, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(rest) > 0 || len(pos) != 2 || (pos[0] != "stop" && pos[0] != "start") {
		return errors.New("node: want stop or start and a node: lab node stop|start NODE")
	}
	switch pos[0] {
	case "stop":
		err = lab.StopNode(c.runRoot, c.name, pos[1], c.logger(stderr))
	default:
		err = lab.StartNode(context.Background(), c.runRoot, c.name, pos[1], c.logger(stderr))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s\n", pos[1], map[string]string{"stop": "stopped", "start": "started"}[pos[0]])
	return nil
}

func cmdUp(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("up", "bcube --n N --k K [flags]", stderr)
	n := fs.Int("n", -1, "BCube `n`: ports per switch (servers per level-0 group)")
	k := fs.Int("k", -1, "BCube `k`: levels above 0 (servers have k+1 ports)")
	rate := fs.String("rate", defaultRate, "link `rate` in bit/s: 500M, 1G, 2.5G, 1000000000; 0 = unshaped")
	delay := fs.Duration("delay", 0, "propagation `delay` of every link")
	buffer := fs.String("buffer", "4MiB", "shared buffer of each node, for all its egress queues: 4MiB, 512KiB, 100000")
	xdpMode := fs.String("xdp-mode", "native", "XDP attach `mode`: native, generic or auto")
	levelOrder := fs.String("level-order", "hash", "servers' routing `policy`: hash, ascending, descending or a permutation like 1,0")
	binDir := fs.String("bin-dir", "", "`dir`ectory with swd and hostd (default: the directory of lab)")
	maxNodes := fs.Int("max-nodes", lab.DefaultMaxNodes, "refuse fabrics with more than `count` servers + switches")
	timeout := fs.Duration("health-timeout", lab.DefaultHealthTimeout, "how long to wait for every daemon's /healthz")
	fc := fs.String("fc", "none", "flow control of every node: none, portfc, pfc, pfcstar (PFC with priority +1 at every relay) or bfc")
	bfcQueues := fs.Int("bfc-queues", 0, "BFC: queues per fabric port, the HQ included (0: 32; 2: a single data queue)")
	bfcTable := fs.Int("bfc-table", 0, "BFC: flow-table `entries` per egress port (0: 100 x queues)")
	oneHop := fs.Duration("one-hop-rtt", 0, "NIC-switch round trip that thresholds count BDPs of (default: measured on the reference machine, 250us)")
	xoff := fs.String("xoff", "0", "X_off in `bytes`: PortFC's for both classes, PFC's per ingress port and priority (0: 6 one-hop BDPs)")
	xon := fs.String("xon", "0", "X_on in `bytes` (0: 4 one-hop BDPs)")
	wdDetect := fs.Duration("watchdog-detect", config.DefaultWatchdogDetect, "report a queue paused, not empty and sending nothing for this `long`; 0 turns the watchdog off")
	wdAction := fs.String("watchdog-action", "none", "what the watchdog does to a stalled queue: none (report), forward (ignore pauses) or drop (discard its frames)")
	wdRestore := fs.Duration("watchdog-restore", config.DefaultWatchdogRestore, "how `long` a watchdog action lasts before the queue obeys pauses again")
	loss := fs.String("loss", "0", "injected loss on every fabric link, each direction dropped on receive: a `probability` like 0.01, 1% or 100ppm")
	ecn := fs.Bool("ecn", false, "ECN marking at every egress, K_min/K_max/P_max scaled from 100 KB/400 KB/0.2 at 100 Gb/s to the rate and one-hop RTT")
	ecnKmin := fs.String("ecn-kmin", "0", "ECN K_min in `bytes` (implies --ecn; 0: scaled default)")
	ecnKmax := fs.String("ecn-kmax", "0", "ECN K_max in `bytes` (implies --ecn; 0: scaled default)")
	ecnPmax := fs.Float64("ecn-pmax", 0, "ECN P_max, the marking `probability` at K_max (implies --ecn; 0: 0.2)")
	workers := fs.Int("workers", lab.DefaultWorkers, "worker processes that host the nodes, one engine thread each; 0: a daemon process per node (swd, hostd)")
	wSlack := fs.Duration("worker-slack", 0, "how late a worker may serve a deadline so that close ones share a wake-up (0: 50us)")
	wPoll := fs.Duration("worker-poll", 0, "how long a worker polls without sleeping after it last found work (0: 10us; negative: never)")
	framesPerPort := fs.Int("frames-per-port", 0, "UMEM `frames` per port of every node (0: 4096, 1024 above 100 nodes)")
	ringSize := fs.Int("ring-size", 0, "`entries` of every AF_XDP ring (0: 256 on workers, 1024 with a process per node)")
	pos, rest, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return fmt.Errorf("up: unexpected arguments %q", rest)
	case len(pos) == 0:
		return errors.New("up: name the topology: lab up bcube --n N --k K")
	case pos[0] != "bcube":
		return fmt.Errorf("up: unknown topology %q: only bcube is supported", pos[0])
	case len(pos) > 1:
		return fmt.Errorf("up: unexpected arguments %q", pos[1:])
	case *n == -1 || *k == -1:
		return errors.New("up bcube: --n and --k are required (e.g. --n 4 --k 1)")
	}
	spec := lab.Spec{
		Name: c.name, N: *n, K: *k, Delay: *delay,
		XDPMode: *xdpMode, LevelOrder: *levelOrder, FC: *fc, OneHopRTT: *oneHop, BFCQueues: *bfcQueues, BFCTable: *bfcTable,
		BinDir: *binDir, RunRoot: c.runRoot, MaxNodes: *maxNodes, HealthTimeout: *timeout,
		WatchdogDetect: *wdDetect, WatchdogAction: *wdAction, WatchdogRestore: *wdRestore,
		ECN: *ecn, ECNPmax: *ecnPmax, Workers: *workers, WorkerSlack: *wSlack, WorkerPollBudget: *wPoll,
		FramesPerPort: *framesPerPort, RingSize: *ringSize,
	}
	if *workers == 0 {
		spec.Workers = lab.PerNode
	}
	if spec.LossPPM, err = lab.ParseLoss(*loss); err != nil {
		return err
	}
	if spec.ECNKminBytes, err = lab.ParseSize(*ecnKmin); err != nil {
		return fmt.Errorf("--ecn-kmin: %w", err)
	}
	if spec.ECNKmaxBytes, err = lab.ParseSize(*ecnKmax); err != nil {
		return fmt.Errorf("--ecn-kmax: %w", err)
	}
	if *wdDetect == 0 {
		spec.WatchdogDetect = -1 // off
	}
	if spec.Xoff, err = lab.ParseSize(*xoff); err != nil {
		return err
	}
	if spec.Xon, err = lab.ParseSize(*xon); err != nil {
		return err
	}
	if spec.RateBps, err = lab.ParseRate(*rate); err != nil {
		return err
	}
	if spec.BufferBytes, err = lab.ParseSize(*buffer); err != nil {
		return err
	}
	if spec.BufferBytes == 0 {
		return errors.New("buffer 0: an egress port needs room for at least two frames")
	}
	plan, err := lab.NewPlan(spec)
	if err != nil {
		return err
	}

	// Ctrl-C during up removes what was created; the daemons themselves
	// run in their own sessions and never see the terminal's signals.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	st, err := lab.Up(ctx, spec, c.logger(stderr))
	if err != nil {
		return err
	}
	printUp(stdout, plan, st, time.Since(start))
	return nil
}

func printUp(w io.Writer, p *lab.Plan, st *lab.State, took time.Duration) {
	t, s, L := p.Topology, p.Spec, p.Spec.Name
	last := t.Servers() - 1
	lastSw := bcube.SwitchName(t.K(), t.SwitchesPerLevel()-1)
	fmt.Fprintf(w, "lab %s: %v up in %v\n", L, t, took.Round(time.Millisecond))
	fmt.Fprintf(w, "  namespaces  %d: %s .. %s (servers), %s .. %s (switches)\n", len(p.Nodes),
		lab.Namespace(L, "h0"), lab.Namespace(L, bcube.HostName(last)), lab.Namespace(L, "s0.0"), lab.Namespace(L, lastSw))
	fmt.Fprintf(w, "  links       %d fabric veth pairs + %d bc0 pairs; rate %s, delay %v, buffer %s per node\n",
		len(p.Links), len(p.AppLinks), lab.FormatRate(s.RateBps), s.Delay, lab.FormatSize(s.BufferBytes))
	if s.LossPPM > 0 {
		fmt.Fprintf(w, "  loss        %s injected on every fabric link, each direction, on receive (lab status: INJECTED)\n", lab.FormatLoss(s.LossPPM))
	}
	if s.ECN {
		fmt.Fprintf(w, "  ecn         marking at every egress: K_min %d B, K_max %d B, P_max %g\n", s.ECNKminBytes, s.ECNKmaxBytes, s.ECNPmax)
	}
	if len(st.Workers) > 0 {
		fmt.Fprintf(w, "  nodes       %d servers + %d switches on %d worker processes (bcfabd), all healthy; xdp mode %s, level order %s\n",
			t.Servers(), t.Switches(), len(st.Workers), s.XDPMode, s.LevelOrder)
	} else {
		fmt.Fprintf(w, "  daemons     %d hostd + %d swd, a process each, all healthy; xdp mode %s, level order %s\n",
			t.Servers(), t.Switches(), s.XDPMode, s.LevelOrder)
	}
	fmt.Fprintf(w, "  addresses   h<i> is %s + i on its bc0 (%v .. %v)\n", bcube.Base, bcube.ServerIP(0), bcube.ServerIP(last))
	fmt.Fprintf(w, "  run dir     %s (state.json, configs, sockets, logs/)\n", st.RunDir)
	nameFlag := ""
	if L != lab.DefaultName {
		nameFlag = " --name " + L
	}
	fmt.Fprintf(w, "\nTry:\n")
	fmt.Fprintf(w, "  ip netns exec %s ping -c3 %v    # h0 -> h1, %d hops\n", lab.Namespace(L, "h0"), bcube.ServerIP(1), t.Hops(0, 1))
	fmt.Fprintf(w, "  ip netns exec %s ping -c3 %v    # h0 -> %s, %d hops\n", lab.Namespace(L, "h0"), bcube.ServerIP(last), bcube.HostName(last), t.Hops(0, last))
	fmt.Fprintf(w, "  lab exec%s h0 -- ip -br addr\n", nameFlag)
	fmt.Fprintf(w, "  lab status%s\n", nameFlag)
	fmt.Fprintf(w, "  lab stats%s s0.0\n", nameFlag)
	fmt.Fprintf(w, "  lab down%s\n", nameFlag)
}

func cmdDown(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("down", "[--name L]", stderr)
	pos, rest, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if err := noMore("down", pos, rest); err != nil {
		return err
	}
	start := time.Now()
	if err := lab.Down(c.runRoot, c.name, c.logger(stderr)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "lab %s is down (%v)\n", c.name, time.Since(start).Round(time.Millisecond))
	return nil
}

func cmdStatus(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("status", "[--name L] [--json]", stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, rest, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if err := noMore("status", pos, rest); err != nil {
		return err
	}
	r, err := lab.Status(c.runRoot, c.name)
	if err != nil {
		return err
	}
	bad := 0
	for i := range r.Nodes {
		if !r.Nodes[i].OK() {
			bad++
		}
	}
	if *asJSON {
		if err := writeJSON(stdout, r); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "lab %s: BCube(%d,%d), %s, created %s\n", r.Lab, r.Spec.N, r.Spec.K, r.Phase, r.Created.Local().Format(time.DateTime))
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "NODE\tKIND\tWORKER\tPID\tALIVE\tHEALTHY\tRX PKTS\tTX PKTS\tDROPS\tINJECTED\t")
		var drops, injected uint64
		for _, n := range r.Nodes {
			rx, tx, d, inj := "-", "-", "-", "-"
			if n.Stats != nil {
				rx, tx, d, inj = fmt.Sprint(n.Stats.RxPackets), fmt.Sprint(n.Stats.TxPackets), fmt.Sprint(n.Stats.Drops), fmt.Sprint(n.Stats.Injected)
				drops += n.Stats.Drops
				injected += n.Stats.Injected
			}
			worker := n.Worker
			if worker == "" {
				worker = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", n.Name, n.Kind, worker, n.Pid, yesNo(n.Alive), yesNo(n.Healthy), rx, tx, d, inj)
		}
		tw.Flush()
		fmt.Fprintf(stdout, "drops: %d lost by the emulator (DROPS), %d dropped on purpose (INJECTED: injected loss, links down)\n", drops, injected)
		printImpaired(stdout, r)
		for _, n := range r.Nodes {
			if n.Err != "" {
				fmt.Fprintf(stdout, "%s: %s\n", n.Name, n.Err)
			}
		}
		if len(r.Stalls) > 0 {
			fmt.Fprintf(stdout, "watchdog: %d queues stalled (paused, not empty, sending nothing):\n", len(r.Stalls))
			for _, s := range r.Stalls {
				fmt.Fprintf(stdout, "  %v\n", s)
			}
		}
		if len(r.Cycle) > 0 {
			var hops []string
			for _, s := range r.Cycle {
				hops = append(hops, s.Node+" "+s.Port+" "+s.Queue)
			}
			fmt.Fprintf(stdout, "deadlock: a cycle of %d stalled queues, each paused by the next: %s -> back to %s\n",
				len(r.Cycle), strings.Join(hops, " -> "), r.Cycle[0].Node)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d nodes are not up", bad, len(r.Nodes))
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "all %d nodes up\n", len(r.Nodes))
	}
	return nil
}

// printImpaired lists the ports that drop what they receive on purpose;
// when the lab was brought up with loss on every port, only those that
// differ from it.
func printImpaired(w io.Writer, r *lab.Report) {
	if r.Spec.LossPPM == 0 {
		if len(r.Impaired) > 0 {
			fmt.Fprintf(w, "impaired: %d ports drop what they receive on purpose:\n", len(r.Impaired))
			for _, im := range r.Impaired {
				fmt.Fprintf(w, "  %v\n", im)
			}
		}
		return
	}
	var differ []lab.Impairment
	for _, n := range r.Nodes {
		if n.Stats == nil {
			continue
		}
		for _, im := range n.Stats.Links {
			if im.Down || im.LossPPM != r.Spec.LossPPM {
				differ = append(differ, im)
			}
		}
	}
	fmt.Fprintf(w, "impaired: every fabric port loses %s of what it receives (lab up --loss)", lab.FormatLoss(r.Spec.LossPPM))
	if len(differ) == 0 {
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, ", but %d ports now:\n", len(differ))
	for _, im := range differ {
		fmt.Fprintf(w, "  %v\n", im)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

func cmdList(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("list", "", stderr)
	pos, rest, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if err := noMore("list", pos, rest); err != nil {
		return err
	}
	labs, err := lab.List(c.runRoot)
	if err != nil {
		return err
	}
	if len(labs) == 0 {
		fmt.Fprintln(stdout, "no labs")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTOPOLOGY\tPHASE\tNODES\tNAMESPACES\tDAEMONS ALIVE\tCREATED")
	for _, l := range labs {
		if l.Orphan {
			fmt.Fprintf(tw, "%s\t?\torphan\t?\t%d\t?\tno state; lab down --name %s removes it\n", l.Name, l.Namespaces, l.Name)
			continue
		}
		fmt.Fprintf(tw, "%s\tBCube(%d,%d)\t%s\t%d\t%d\t%d\t%s\n", l.Name, l.N, l.K, l.Phase, l.Nodes, l.Namespaces, l.Alive,
			l.Created.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

func cmdExec(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("exec", "[--name L] NODE -- CMD [ARG...]", stderr)
	pos, rest, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fs.Usage()
		return errUsage
	}
	node := pos[0]
	if len(rest) == 0 {
		return fmt.Errorf("exec %s: no command (lab exec %s -- CMD [ARG...])", node, node)
	}
	return lab.Exec(c.name, node, rest)
}

func cmdStats(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("stats", "[--name L] [--json] NODE", stderr)
	asJSON := fs.Bool("json", false, "print the daemon's /stats JSON as it is")
	pos, rest, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(pos) != 1 || len(rest) > 0 {
		fs.Usage()
		return errUsage
	}
	st, err := lab.Stats(c.runRoot, c.name, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, st)
	}
	fmt.Fprintf(stdout, "%s (%s, pid %d): up %v, xdp mode %s, frames %d free of %d (%d B)\n", st.Node, st.Kind, st.Pid,
		time.Duration(st.UptimeNs).Round(time.Millisecond), st.XDPMode, st.Frames.Free, st.Frames.Total, st.Frames.Size)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PORT\tRATE\tRX PKTS\tRX BYTES\tTX PKTS\tTX BYTES\tQUEUE B\tMAX QUEUE B\tDROPS\tRX LOSS\tINJECTED\t")
	var notes []string
	for i := range st.Ports {
		p := &st.Ports[i]
		loss := "-"
		switch {
		case p.LinkDown:
			loss = "down"
		case p.LossPPM > 0:
			loss = lab.FormatLoss(p.LossPPM)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t\n", p.Name, lab.FormatRate(p.RateBps), p.RxPackets, p.RxBytes,
			p.TxPackets, p.TxBytes, p.QueueBytes, p.MaxQueueBytes, p.TotalDrops(), loss, p.InjectedDrops())
		if d := nonZero(p.Drops, "") + nonZero(p.XSK, "xsk.") + nonZero(p.XDP, "xdp."); d != "" {
			notes = append(notes, fmt.Sprintf("%s:%s", p.Name, d))
		}
		for _, q := range p.Queues {
			if d := nonZero(q.Drops, ""); d != "" {
				notes = append(notes, fmt.Sprintf("%s queue %s drops:%s", p.Name, q.Name, d))
			}
		}
		if d := nonZero(p.Signals, ""); d != "" {
			notes = append(notes, fmt.Sprintf("%s signals:%s", p.Name, d))
		}
	}
	tw.Flush()
	printQueues(stdout, st)
	if len(notes) > 0 {
		fmt.Fprintln(stdout, "nonzero counters:")
		for _, n := range notes {
			fmt.Fprintln(stdout, " ", n)
		}
	}
	return nil
}

// printQueues prints, per port with more than one queue, a line per queue:
// traffic in and out, depth now and at most, time paused, ECN marks, drops.
func printQueues(w io.Writer, st *api.Stats) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := false
	for i := range st.Ports {
		p := &st.Ports[i]
		if len(p.Queues) < 2 {
			continue
		}
		if !header {
			fmt.Fprintln(tw, "PORT\tQUEUE\tIN PKTS\tIN BYTES\tOUT PKTS\tOUT BYTES\tDEPTH B\tMAX B\tPAUSED\tPAUSED FOR\tECN MARKS\tDROPS\tSTALLS\tSTALLED\t")
			header = true
		}
		for _, q := range p.Queues {
			var drops uint64
			for _, v := range q.Drops {
				drops += v
			}
			paused := "-"
			switch {
			case q.Paused:
				paused = "yes"
			case q.Recovering:
				paused = "overridden"
			}
			stalled := "-"
			if q.Stalled {
				stalled = "for " + time.Duration(q.StalledForNs).Round(time.Millisecond).String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%v\t%d\t%d\t%d\t%s\t\n", p.Name, q.Name, q.EnqPackets, q.EnqBytes,
				q.DeqPackets, q.DeqBytes, q.Bytes, q.MaxBytes, paused, time.Duration(q.PausedNs).Round(time.Microsecond), q.ECNMarks, drops,
				q.Stalls, stalled)
		}
	}
	if header {
		fmt.Fprintln(w)
		tw.Flush()
	}
}

// nonZero lists a counter map's nonzero entries, sorted: " a=1 b=2".
func nonZero(m map[string]uint64, prefix string) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s%s=%d", prefix, k, m[k])
	}
	return b.String()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func cmdBench(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "fairness" {
		return cmdBenchFairness(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "hol" {
		return cmdBenchHoL(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "loop" {
		return cmdBenchLoop(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("lab bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	binDir := fs.String("bin-dir", "", "`dir`ectory with swd and xdpfwd (default: the directory of lab)")
	sizes := fs.String("sizes", "60,1514", "frame `sizes` in bytes without FCS, comma separated")
	devices := fs.String("devices", "swd,bridge,bare", "`devices` to measure: swd, bridge, bare")
	warmup := fs.Duration("warmup", 500*time.Millisecond, "blast this long before measuring")
	measure := fs.Duration("measure", 3*time.Second, "measurement time per device and size")
	xdpMode := fs.String("xdp-mode", "native", "XDP `mode` of swd and the bare forwarder")
	prefix := fs.String("prefix", "bcbench", "namespace `prefix` of the benchmark's namespaces")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	verbose := fs.Bool("v", false, "debug logs")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: lab bench datapath [flags]\n\nFlags:\n")
		fs.PrintDefaults()
	}
	pos, rest, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "datapath" || len(rest) > 0 {
		return errors.New("bench: want datapath, fairness, hol or loop (lab bench datapath|fairness|hol|loop [flags])")
	}
	o := bench.Options{BinDir: *binDir, Prefix: *prefix, Warmup: *warmup, Measure: *measure, XDPMode: *xdpMode,
		Devices: strings.Split(*devices, ","), Log: (&common{verbose: *verbose}).logger(stderr)}
	if o.BinDir == "" {
		if o.BinDir, err = lab.DefaultBinDir(); err != nil {
			return err
		}
	}
	for _, f := range strings.Split(*sizes, ",") {
		n, err := lab.ParseSize(f)
		if err != nil {
			return err
		}
		o.Sizes = append(o.Sizes, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Datapath(ctx, o)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "DEVICE\tFRAME B\tSENT Mpps\tFWD Mpps\tFWD Gbit/s\t")
	for _, r := range res {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.2f\t\n", r.Device, r.FrameLen, r.SentPps/1e6, r.FwdPps/1e6, r.FwdGbps)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range bench.Ratios(res) {
		fmt.Fprintln(stdout, line)
	}
	return nil
}

// cmdBenchFairness runs bench.Fairness: two flows into one egress in two
// queues, and ping through the HQ meanwhile.
func cmdBenchFairness(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("bench fairness", "[--rate R] [--duration D]", stderr)
	ef := experimentFlags(fs, defaultRate)
	dur := fs.Duration("duration", 10*time.Second, "how long the two flows run")
	spec, err := ef.spec(fs, c, args, "fair")
	if err != nil {
		return err
	}
	asJSON := ef.asJSON
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := bench.Fairness(ctx, bench.FairnessOptions{Lab: spec, Duration: *dur, Log: c.logger(stderr)})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, r)
	}
	fmt.Fprintf(stdout, "two TCP flows into s0.0 p0 (toward h0) at %s for %v, level order 0,1:\n", lab.FormatRate(r.RateBps), *dur)
	fmt.Fprintf(stdout, "  h1 -> h0 (queue B)   %7.1f Mbit/s  %5.1f%%\n", r.FlowB/1e6, 100*r.ShareB)
	fmt.Fprintf(stdout, "  h2 -> h4 (queue A0)  %7.1f Mbit/s  %5.1f%%\n", r.FlowA/1e6, 100*(1-r.ShareB))
	fmt.Fprintf(stdout, "  deepest data queue   B %d B, A0 %d B (%.1f ms at the link rate)\n", r.MaxQueueB, r.MaxQueueA0, r.DataDelayMs)
	fmt.Fprintf(stdout, "ping h1 -> h0 through the HQ: idle %.3f ms, under load avg %.3f ms max %.3f ms (%d HQ frames)\n",
		r.PingIdleMs, r.PingLoadMs, r.PingLoadMax, r.HQPackets)
	fmt.Fprintf(stdout, "drops in the fabric: %d\n", r.FabricDrops)
	return healthLines(stdout, []bench.FairnessResult{r}, func(int) (string, lab.Health) { return "fairness", r.Health })
}

// cmdCapture prints the flow-control frames a node's port transmits, as
// tcpdump in the node's namespace sees them (lab.Capture).
func cmdCapture(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("capture", "[--name L] NODE PORT [-w file.pcap] [-c COUNT] [--duration D] [--all]", stderr)
	file := fs.String("w", "", "also write the capture to this pcap `file`")
	count := fs.Int("c", 0, "stop after `count` printed frames (0: no limit)")
	dur := fs.Duration("duration", 0, "stop after this `duration` (0: until Ctrl-C)")
	all := fs.Bool("all", false, "print every frame, not only PortFC/BFC signals and PFC (the file then holds every frame too)")
	pos, rest, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(pos) != 2 || len(rest) > 0 {
		fs.Usage()
		return errUsage
	}
	node, port := pos[0], pos[1]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	what := "PortFC/BFC signals and PFC"
	if *all {
		what = "every frame"
	}
	opts := lab.CaptureOptions{File: *file, Count: *count, Duration: *dur, All: *all,
		OnListening: func() {
			fmt.Fprintf(stderr, "capturing %s transmitted by %s %s (lab %s); Ctrl-C stops\n", what, node, port, c.name)
		}}
	err = lab.Capture(ctx, c.name, node, port, opts, stdout)
	if errors.Is(err, context.Canceled) {
		return nil // Ctrl-C or SIGTERM: the user's way to stop
	}
	return err
}

// cmdGen starts a generated flow and, with --wait, reports what arrived.
func cmdGen(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("gen", "[--name L] SRC DST [--duration D | --bytes N] [--order 0,1] [--wait]", stderr)
	dur := fs.Duration("duration", 0, "how long the flow sends")
	size := fs.String("bytes", "0", "how many bytes the flow sends (with no --duration)")
	frame := fs.Int("frame", hostd.DefaultGenFrame, "frame length on the wire, without FCS")
	order := fs.String("order", "", "fix the flow's level order (e.g. 1,0: correct level 1 first)")
	wait := fs.Bool("wait", false, "wait for the flow to finish and report what arrived")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, rest, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(pos) != 2 || len(rest) > 0 {
		fs.Usage()
		return errUsage
	}
	var src, dst int
	if _, err := fmt.Sscanf(pos[0], "h%d", &src); err != nil {
		return fmt.Errorf("gen: source %q: want a server h<i>", pos[0])
	}
	if _, err := fmt.Sscanf(pos[1], "h%d", &dst); err != nil {
		return fmt.Errorf("gen: destination %q: want a server h<i>", pos[1])
	}
	req := hostd.GenRequest{Dst: dst, Duration: int64(*dur), FrameLen: *frame, Order: *order}
	n, err := lab.ParseSize(*size)
	if err != nil {
		return err
	}
	req.Bytes = int64(n)
	f, err := lab.StartFlow(c.runRoot, c.name, pos[0], req)
	if err != nil {
		return err
	}
	if !*wait {
		if *asJSON {
			return writeJSON(stdout, f)
		}
		fmt.Fprintf(stdout, "flow %d: %s -> %s, udp %d -> %d, leaves %s queue %s, level order %s\n",
			f.ID, pos[0], pos[1], f.SPort, hostd.GenPort, bcube.HostPort(f.Port), f.Queue, f.Order)
		return nil
	}
	for !f.Done {
		time.Sleep(100 * time.Millisecond)
		r, err := lab.Flows(c.runRoot, c.name, pos[0])
		if err != nil {
			return err
		}
		for i := range r.Flows {
			if r.Flows[i].ID == f.ID {
				f = &r.Flows[i]
			}
		}
	}
	time.Sleep(200 * time.Millisecond) // the last frames' way
	r, err := lab.Flows(c.runRoot, c.name, pos[1])
	if err != nil {
		return err
	}
	var sink *hostd.SinkReport
	for i := range r.Sink {
		if r.Sink[i].Src == src && r.Sink[i].SPort == f.SPort {
			sink = &r.Sink[i]
		}
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"flow": f, "sink": sink})
	}
	secs := float64(f.EndNs-f.StartNs) / 1e9
	fmt.Fprintf(stdout, "flow %d %s -> %s (%s queue %s, order %s): sent %d frames, %d bytes in %.2fs\n",
		f.ID, pos[0], pos[1], bcube.HostPort(f.Port), f.Queue, f.Order, f.Packets, f.Bytes, secs)
	if sink == nil {
		return fmt.Errorf("gen: %s heard nothing of flow %d", pos[1], f.ID)
	}
	rx := float64(sink.LastNs-sink.FirstNs) / 1e9
	fmt.Fprintf(stdout, "  received %d frames, %d bytes, %.1f Mbit/s; %d missing; one-way delay avg %v max %v\n",
		sink.Packets, sink.Bytes, float64(sink.Bytes)*8/max(rx, 1e-9)/1e6, sink.Gaps,
		time.Duration(sink.AvgDelayNs).Round(time.Microsecond), time.Duration(sink.MaxDelayNs).Round(time.Microsecond))
	return nil
}

// cmdLink changes, or with no change flag reports, the injected loss and
// link state of the cable at a node's port (lab.SetLink).
func cmdLink(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("link", "[--name L] NODE PORT [--loss P] [--down | --up] [--dir both|rx|tx]", stderr)
	loss := fs.String("loss", "", "injected loss: a `probability` like 0.01, 1% or 100ppm; 0 stops it")
	down := fs.Bool("down", false, "drop every frame, as if the cable were cut")
	up := fs.Bool("up", false, "undo --down")
	dir := fs.String("dir", "both", "`direction`s to change: both, rx (what NODE receives on PORT) or tx (what it sends)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, rest, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(pos) != 2 || len(rest) > 0 {
		fs.Usage()
		return errUsage
	}
	var lc lab.LinkConfig
	if lc.Dir, err = lab.ParseLinkDir(*dir); err != nil {
		return err
	}
	if *loss != "" {
		ppm, err := lab.ParseLoss(*loss)
		if err != nil {
			return err
		}
		lc.LossPPM = &ppm
	}
	switch {
	case *down && *up:
		return errors.New("link: --down and --up together")
	case *down, *up:
		lc.Down = down
	}
	ends, err := lab.SetLink(c.runRoot, c.name, pos[0], pos[1], lc)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, ends)
	}
	for _, e := range ends {
		mark := ""
		if e.Changed {
			mark = "  (changed)"
		}
		fmt.Fprintf(stdout, "%v%s\n", e, mark)
	}
	return nil
}

// cmdBenchHoL runs bench.HoL and prints one line per scheme.
func cmdBenchHoL(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("bench hol", "[--rate R] [--fc portfc,none] [--phase D]", stderr)
	ef := experimentFlags(fs, "100M")
	fcs := fs.String("fc", "portfc,none", "flow-control `schemes` to compare (bfc:Q: BFC with Q queues per port, bfc:2 a single data queue)")
	phase := fs.Duration("phase", 5*time.Second, "length of each phase")
	groupFlows := fs.Int("group-flows", 4, "flows of the victim group whose FCT is measured in each phase")
	groupSize := fs.String("group-size", "256KiB", "`bytes` of each flow of the victim group")
	spec, err := ef.spec(fs, c, args, "hol")
	if err != nil {
		return err
	}
	size, err := lab.ParseSize(*groupSize)
	if err != nil {
		return err
	}
	asJSON := ef.asJSON
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.HoL(ctx, bench.HoLOptions{Lab: spec, FC: strings.Split(*fcs, ","), Phase: *phase,
		FCTFlows: *groupFlows, FCTBytes: int64(size), Log: c.logger(stderr)})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "victim h1 -> h2 shares h1's eth0 with h1 -> h0; then h2, h3 -> h0 congest s0.0's port to h0 (%s links)\n", lab.FormatRate(spec.RateBps))
	fmt.Fprintf(stdout, "victim group: %d flows of %s from h1 to h2 and h3, mean FCT in each phase\n", *groupFlows, lab.FormatSize(int(size)))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "FC\tVICTIM ALONE Mb/s\tVICTIM CONGESTED Mb/s\tRATIO\th1->h0 Mb/s\tVICTIM PAUSED ms\tGROUP FCT ALONE ms\tGROUP FCT CONGESTED ms\tFCT RATIO\tDROPS\tMISSING\t")
	for _, r := range res {
		paused := "-"
		if r.VictimPausedMs >= 0 {
			paused = fmt.Sprintf("%.0f", r.VictimPausedMs)
		}
		ms := func(v float64, format string) string {
			if v < 0 {
				return "lost"
			}
			return fmt.Sprintf(format, v)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.2f\t%.1f\t%s\t%s\t%s\t%s\t%d\t%d\t\n", r.FC, r.VictimAloneBps/1e6, r.VictimBps/1e6, r.Ratio,
			r.CongestedBps/1e6, paused, ms(r.FCTAloneMs, "%.1f"), ms(r.FCTMs, "%.1f"), ms(r.FCTRatio, "%.2f"), r.Drops, r.Missing)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return healthLines(stdout, res, func(i int) (string, lab.Health) { return res[i].FC, res[i].Health })
}

// healthLines prints each scheme's emulation health on a line, and an
// error (exit 3) when one is invalid: its numbers are not the fabric's.
func healthLines[R any](w io.Writer, res []R, get func(int) (string, lab.Health)) error {
	var bad []string
	for i := range res {
		fc, h := get(i)
		fmt.Fprintf(w, "%s: %s\n", fc, h.Short())
		if !h.Valid {
			bad = append(bad, fc)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: the emulation did not keep up under %s; those rows are not results", errInvalidRun, strings.Join(bad, ", "))
	}
	return nil
}

func cmdBenchLoop(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("bench loop", "[--fc pfc,pfcstar,portfc] [--measure D] [--rate R]", stderr)
	ef := experimentFlags(fs, "100M")
	fcs := fs.String("fc", "pfc,pfcstar,portfc", "flow-control `schemes` to compare (bfc:Q: BFC with Q queues per port)")
	warmup := fs.Duration("warmup", time.Second, "background flows alone this `long` before the loop flows start")
	settle := fs.Duration("settle", time.Second, "wait this `long` after the loop flows start")
	measure := fs.Duration("measure", 5*time.Second, "measure throughput over this `long`")
	spec, err := ef.spec(fs, c, args, "loop")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Loop(ctx, bench.LoopOptions{Lab: spec, FC: strings.Split(*fcs, ","), Warmup: *warmup, Settle: *settle,
		Measure: *measure, Log: c.logger(stderr)})
	if err != nil {
		return err
	}
	if *ef.asJSON {
		return writeJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "BCube(2,1), %s links: background h0->h1, h1->h3, h3->h2, h2->h0; from %v on, loop flows h0->h3 via h1, h3->h0 via h2, h1->h2 via h3, h2->h1 via h0\n",
		lab.FormatRate(spec.RateBps), *warmup)
	fmt.Fprintf(stdout, "throughput over %v, %v after the loop flows started (Mb/s)\n", *measure, *settle)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "FC\t")
	for _, f := range res[0].Background {
		fmt.Fprintf(tw, "%s\t", f.Flow)
	}
	fmt.Fprintln(tw, "BACKGROUND AVG\tLOOP AVG\tSTALLED QUEUES\tDEADLOCK\tDROPS\tMISSING\t")
	for _, r := range res {
		fmt.Fprintf(tw, "%s\t", r.FC)
		for _, f := range r.Background {
			fmt.Fprintf(tw, "%.1f\t", f.Bps/1e6)
		}
		dl := "no"
		if r.Deadlocked() {
			dl = fmt.Sprintf("yes (cycle of %d)", len(r.Cycle))
		}
		fmt.Fprintf(tw, "%.1f\t%.1f\t%d\t%s\t%d\t%d\t\n", r.BackgroundBps/1e6, r.LoopBps/1e6, len(r.Stalls), dl, r.Drops, r.Missing)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range res {
		if len(r.Cycle) > 0 {
			var hops []string
			for _, s := range r.Cycle {
				hops = append(hops, s.Node+" "+s.Port+" "+s.Queue)
			}
			fmt.Fprintf(stdout, "%s deadlock cycle: %s\n", r.FC, strings.Join(hops, " -> "))
		}
	}
	return healthLines(stdout, res, func(i int) (string, lab.Health) { return res[i].FC, res[i].Health })
}

// expFlags are the flags every lab experiment takes.
type expFlags struct {
	rate, binDir *string
	asJSON       *bool
}

func experimentFlags(fs *flag.FlagSet, rate string) expFlags {
	return expFlags{
		rate:   fs.String("rate", rate, "link `rate`"),
		binDir: fs.String("bin-dir", "", "`dir`ectory with swd and hostd (default: the directory of lab)"),
		asJSON: fs.Bool("json", false, "print the result as JSON"),
	}
}

// spec parses args (no positional ones) and returns the experiment's lab,
// named name unless --name says otherwise.
func (ef expFlags) spec(fs *flag.FlagSet, c *common, args []string, name string) (lab.Spec, error) {
	pos, rest, err := parse(fs, args, -1)
	if err != nil {
		return lab.Spec{}, err
	}
	if len(pos) > 0 || len(rest) > 0 {
		fs.Usage()
		return lab.Spec{}, errUsage
	}
	spec := lab.Spec{Name: c.name, RunRoot: c.runRoot, BinDir: *ef.binDir}
	if c.name == lab.DefaultName {
		spec.Name = name
	}
	spec.RateBps, err = lab.ParseRate(*ef.rate)
	return spec, err
}
