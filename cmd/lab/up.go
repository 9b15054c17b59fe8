//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/config"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/units"
)

// upFlags are lab up's flags: a lab.Spec, field by field.
type upFlags struct {
	c                                   *common
	n, k                                int
	rate                                *units.Rate
	delay, oneHop, timeout              *units.Duration
	wdDetect, wdRestore                 *units.Duration
	buffer, xoff, xon, ecnKmin, ecnKmax *units.Size
	loss                                *units.Loss
	xdpMode, levelOrder, binDir, fc     string
	wdAction                            string
	maxNodes, bfcQueues, bfcTable       int
	ecn                                 bool
	ecnPmax                             float64
	asJSON                              bool
}

func upCmd() *cobra.Command {
	f := &upFlags{}
	cmd := &cobra.Command{
		Use:   "up bcube --n N --k K [flags]",
		Short: "create the namespaces and links, start the daemons",
		Long: `Creates a lab: a network namespace per node, veth pairs for the cables, and a
daemon per node (hostd for servers, swd for switches); returns once every
daemon answers. The only TOPOLOGY is bcube.`,
		Example: `  lab up bcube --n 4 --k 1
  lab up bcube --n 4 --k 1 --name pf --fc portfc --rate 100M
  lab up bcube --n 2 --k 1 --name ls --loss 0.5%`,
		GroupID:   groupLab,
		ValidArgs: []string{"bcube"},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUp(cmd, f, args)
		},
	}
	f.c = addCommon(cmd)
	fs := cmd.Flags()
	fs.IntVarP(&f.n, "n", "n", 0, "BCube `n`: ports per switch (servers per level-0 group)")
	fs.IntVarP(&f.k, "k", "k", 0, "BCube `k`: levels above 0 (servers have k+1 ports)")
	f.rate = rateFlag(fs, "rate", defaultRate, "link rate in bit/s: 500M, 1G, 2.5G, 1000000000; 0 = unshaped")
	f.delay = durationFlag(fs, "delay", "", "0s", "propagation delay of every link")
	f.buffer = sizeFlag(fs, "buffer", "4M", "shared buffer of each node, for all its egress queues: 4M, 512K, 100000")
	fs.StringVar(&f.xdpMode, "xdp-mode", "native", "XDP attach `mode`: native, generic or auto")
	fs.StringVar(&f.levelOrder, "level-order", "hash", "servers' routing `policy`: hash, ascending, descending or a permutation like 1,0")
	fs.StringVar(&f.binDir, "bin-dir", "", "`dir`ectory with swd and hostd (default: the directory of lab)")
	fs.IntVar(&f.maxNodes, "max-nodes", lab.DefaultMaxNodes, "refuse fabrics with more than `count` servers + switches")
	f.timeout = durationFlag(fs, "health-timeout", "", lab.DefaultHealthTimeout.String(), "how long to wait for every daemon's /healthz")
	fs.StringVar(&f.fc, "fc", "none", "flow control of every node: none, portfc, pfc, pfcstar (PFC with priority +1 at every relay) or bfc")
	fs.IntVar(&f.bfcQueues, "bfc-queues", 0, "BFC: queues per fabric port, the HQ included (0: 32; 2: a single data queue)")
	fs.IntVar(&f.bfcTable, "bfc-table", 0, "BFC: flow-table `entries` per egress port (0: 100 x queues)")
	f.oneHop = durationFlag(fs, "one-hop-rtt", "", "0s", "NIC-switch round trip that thresholds count BDPs of (0: measured on the reference machine, 250us)")
	f.xoff = sizeFlag(fs, "xoff", "0", "X_off in bytes: PortFC's for both classes, PFC's per ingress port and priority (0: 6 one-hop BDPs)")
	f.xon = sizeFlag(fs, "xon", "0", "X_on in bytes (0: 4 one-hop BDPs)")
	f.wdDetect = durationFlag(fs, "watchdog-detect", "", config.DefaultWatchdogDetect.String(), "report a queue paused, not empty and sending nothing for this long; 0 turns the watchdog off")
	fs.StringVar(&f.wdAction, "watchdog-action", "none", "what the watchdog does to a stalled queue: none (report), forward (ignore pauses) or drop (discard its frames)")
	f.wdRestore = durationFlag(fs, "watchdog-restore", "", config.DefaultWatchdogRestore.String(), "how long a watchdog action lasts before the queue obeys pauses again")
	f.loss = lossFlag(fs, "loss", "0", "injected loss on every fabric link, each direction dropped on receive: a probability like 0.01, 1% or 100ppm")
	fs.BoolVar(&f.ecn, "ecn", false, "ECN marking at every egress, K_min/K_max/P_max scaled from 100 KB/400 KB/0.2 at 100 Gb/s to the rate and one-hop RTT")
	f.ecnKmin = sizeFlag(fs, "ecn-kmin", "0", "ECN K_min in bytes (implies --ecn; 0: scaled default)")
	f.ecnKmax = sizeFlag(fs, "ecn-kmax", "0", "ECN K_max in bytes (implies --ecn; 0: scaled default)")
	fs.Float64Var(&f.ecnPmax, "ecn-pmax", 0, "ECN P_max, the marking `probability` at K_max (implies --ecn; 0: 0.2)")
	fs.BoolVar(&f.asJSON, "json", false, "print the lab's state (nodes, pids, sockets) as JSON instead of the summary")
	completeWords(cmd, "fc", config.FCNone, config.FCPortFC, config.FCPFC, config.FCPFCStar, config.FCBFC)
	completeWords(cmd, "xdp-mode", "native", "generic", "auto")
	completeWords(cmd, "level-order", "hash", "ascending", "descending")
	completeWords(cmd, "watchdog-action", "none", "forward", "drop")
	_ = cmd.MarkFlagDirname("bin-dir")
	return cmd
}

// spec is the lab.Spec the flags describe.
func (f *upFlags) spec(cmd *cobra.Command, args []string) (lab.Spec, error) {
	switch {
	case len(args) == 0:
		return lab.Spec{}, errors.New("up: name the topology: lab up bcube --n N --k K")
	case args[0] != "bcube":
		return lab.Spec{}, fmt.Errorf("up: unknown topology %q: only bcube is supported", args[0])
	case len(args) > 1:
		return lab.Spec{}, fmt.Errorf("up: unexpected arguments %q", args[1:])
	case !cmd.Flags().Changed("n") || !cmd.Flags().Changed("k"):
		return lab.Spec{}, errors.New("up bcube: --n and --k are required (e.g. --n 4 --k 1)")
	}
	spec := lab.Spec{
		Name: f.c.name, N: f.n, K: f.k, RateBps: uint64(*f.rate), Delay: f.delay.D(), BufferBytes: int(*f.buffer),
		XDPMode: f.xdpMode, LevelOrder: f.levelOrder, FC: f.fc, OneHopRTT: f.oneHop.D(), BFCQueues: f.bfcQueues, BFCTable: f.bfcTable,
		Xoff: int(*f.xoff), Xon: int(*f.xon),
		BinDir: f.binDir, RunRoot: f.c.runRoot, MaxNodes: f.maxNodes, HealthTimeout: f.timeout.D(),
		WatchdogDetect: f.wdDetect.D(), WatchdogAction: f.wdAction, WatchdogRestore: f.wdRestore.D(),
		LossPPM: int(*f.loss),
		ECN:     f.ecn, ECNKminBytes: int(*f.ecnKmin), ECNKmaxBytes: int(*f.ecnKmax), ECNPmax: f.ecnPmax,
	}
	if spec.WatchdogDetect == 0 {
		spec.WatchdogDetect = -1 // off
	}
	if spec.BufferBytes == 0 {
		return spec, errors.New("--buffer 0: an egress port needs room for at least two frames")
	}
	for _, s := range []struct {
		flag string
		v    *units.Size
	}{{"buffer", f.buffer}, {"xoff", f.xoff}, {"xon", f.xon}, {"ecn-kmin", f.ecnKmin}, {"ecn-kmax", f.ecnKmax}} {
		if *s.v > 1<<31-1 {
			return spec, fmt.Errorf("--%s %s: at most 2 GiB", s.flag, s.v)
		}
	}
	return spec, nil
}

func runUp(cmd *cobra.Command, f *upFlags, args []string) error {
	spec, err := f.spec(cmd, args)
	if err != nil {
		return err
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
	st, err := lab.Up(ctx, spec, f.c.logger(cmd.ErrOrStderr()))
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSON(cmd.OutOrStdout(), st)
	}
	printUp(cmd.OutOrStdout(), plan, st, time.Since(start))
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
	fmt.Fprintf(w, "  daemons     %d hostd + %d swd, all healthy; xdp mode %s, level order %s\n",
		t.Servers(), t.Switches(), s.XDPMode, s.LevelOrder)
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
