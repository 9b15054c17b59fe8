//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/study/bench"
)

func benchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench EXPERIMENT",
		Short: "experiments on labs of their own",
		Long: `Experiments, each on namespaces or labs of its own, removed afterwards:
datapath (forwarding rate), fairness (two flows into one egress), hol
(head-of-line blocking per flow-control scheme) and loop (the deadlock
scenario per scheme).`,
		GroupID: groupBench,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef(cmd, "bench: want datapath, fairness, hol or loop (lab bench datapath|fairness|hol|loop [flags])")
		},
	}
	cmd.AddCommand(benchDatapathCmd(), benchFairnessCmd(), benchHoLCmd(), benchLoopCmd(), benchFCLoopCmd())
	return cmd
}

// benchDatapathCmd runs bench.Datapath: swd against Open vSwitch's AF_XDP
// datapath, the Linux bridge and the bare AF_XDP forwarder.
func benchDatapathCmd() *cobra.Command {
	var (
		binDir, xdpMode, prefix string
		sizes, devices          []string
		asJSON, verbose         bool
	)
	cmd := &cobra.Command{
		Use:   "datapath",
		Short: "forwarding rate and CPU of swd vs Open vSwitch (AF_XDP), the Linux bridge and a bare AF_XDP forwarder",
		Long: `One run, the same namespaces for every device: a blaster (AF_XDP) sends one
UDP flow into p0 of the device's namespace, an XDP program behind p1 counts
what the device forwards. Devices: swd (the real daemon, unshaped), ovs
(Open vSwitch's userspace datapath with afxdp ports and one port-to-port
flow, a private ovsdb-server and ovs-vswitchd per run; skipped when Open
vSwitch is not installed), bridge (the Linux bridge), bare (xdpfwd).

CPU, one method for every device: the blaster's thread is pinned to one
core and the device's processes (and OVS's PMD) to the others. BUSY CORES
is, over the measurement window, the busy time (user, nice, system, irq,
softirq) from /proc/stat of every core but the blaster's, plus the irq and
softirq time of the blaster's core: on veth the receive side of p0 (the
whole bridge; XDP and the copy into the socket for the others) runs in
softirq inside the blaster's send. Mpps/CORE is forwarded Mpps per busy
core. PROC CORES is the utime+stime of the device's own processes
(/proc/<pid>/stat), where it has any.

Rounds: every device and size is measured --rounds times, the devices in
the opposite order every other round, since a shared machine's speed
drifts over tens of seconds. The table shows each quantity's median over
the rounds; the ratios pair swd with each other device round by round
(the one measured next to it) and give the median, with the lowest and
highest. --json prints every round's measurements.`,
		Example: "  lab bench datapath --devices swd,ovs,bridge,bare\n  lab bench datapath --sizes 60 --measure 5s",
		Args:    noArgs,
	}
	fs := cmd.Flags()
	fs.StringVar(&binDir, "bin-dir", "", "`dir`ectory with swd and xdpfwd (default: the directory of lab)")
	fs.StringSliceVar(&sizes, "sizes", []string{"60", "1514"}, "frame `sizes` in bytes without FCS, comma separated")
	fs.StringSliceVar(&devices, "devices", []string{"swd", "ovs", "bridge", "bare"}, "`devices` to measure: swd, ovs, bridge, bare")
	warmup := durationFlag(fs, "warmup", "", "500ms", "blast this long before measuring")
	measure := durationFlag(fs, "measure", "", "3s", "measurement time per device and size")
	rounds := fs.Int("rounds", 3, "measure every device and size this many times, alternating the devices' order")
	fs.StringVar(&xdpMode, "xdp-mode", "native", "XDP `mode` of swd, OVS's ports and the bare forwarder")
	fs.StringVar(&prefix, "prefix", "bcbench", "namespace `prefix` of the benchmark's namespaces")
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON")
	fs.BoolVarP(&verbose, "verbose", "v", false, "debug logs")
	completeWords(cmd, "xdp-mode", "native", "generic", "auto")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		stdout := cmd.OutOrStdout()
		o := bench.Options{BinDir: binDir, Prefix: prefix, Warmup: warmup.D(), Measure: measure.D(), XDPMode: xdpMode,
			Devices: devices, Rounds: *rounds, Log: newLogger(cmd.ErrOrStderr(), verbose)}
		if *rounds < 1 {
			return usagef(cmd, "--rounds %d: want at least 1", *rounds)
		}
		if o.BinDir == "" {
			var err error
			if o.BinDir, err = lab.DefaultBinDir(); err != nil {
				return err
			}
		}
		for _, f := range sizes {
			n, err := lab.ParseSize(f)
			if err != nil {
				return usagef(cmd, "--sizes: %w", err)
			}
			o.Sizes = append(o.Sizes, n)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		res, err := bench.Datapath(ctx, o)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(stdout, res)
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "DEVICE\tFRAME B\tSENT Mpps\tFWD Mpps\tFWD Gbit/s\tBUSY CORES\tMpps/CORE\tPROC CORES\t")
		var skipped []string
		for _, r := range res {
			if r.Skipped != "" {
				skipped = append(skipped, r.Device+": skipped: "+r.Skipped)
			}
		}
		for _, r := range bench.Medians(res) {
			proc := "-"
			if r.ProcCores != nil {
				proc = fmt.Sprintf("%.2f", *r.ProcCores)
			}
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.2f\t%.2f\t%.3f\t%s\t\n", r.Device, r.FrameLen, r.SentPps/1e6, r.FwdPps/1e6, r.FwdGbps,
				r.BusyCores, r.MppsPerCore, proc)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if *rounds > 1 {
			fmt.Fprintf(stdout, "(medians of %d rounds)\n", *rounds)
		}
		for _, line := range skipped {
			fmt.Fprintln(stdout, line)
		}
		for _, line := range bench.Ratios(res) {
			fmt.Fprintln(stdout, line)
		}
		return nil
	}
	return cmd
}

// expFlags are the flags every lab experiment takes.
type expFlags struct {
	c      *common
	rate   *units.Rate
	binDir string
	asJSON bool
}

func addExperimentFlags(cmd *cobra.Command, rate string) *expFlags {
	ef := &expFlags{c: addCommon(cmd)}
	fs := cmd.Flags()
	ef.rate = rateFlag(fs, "rate", rate, "link rate")
	fs.StringVar(&ef.binDir, "bin-dir", "", "`dir`ectory with swd and hostd (default: the directory of lab)")
	fs.BoolVar(&ef.asJSON, "json", false, "print the result as JSON")
	return ef
}

// spec is the experiment's lab, named name unless --name says otherwise.
func (ef *expFlags) spec(fs *pflag.FlagSet, name string) lab.Spec {
	spec := lab.Spec{Name: ef.c.name, RunRoot: ef.c.runRoot, BinDir: ef.binDir, RateBps: uint64(*ef.rate)}
	if !fs.Changed("name") {
		spec.Name = name
	}
	return spec
}

// benchFairnessCmd runs bench.Fairness: two flows into one egress in two
// queues, and ping through the HQ meanwhile.
func benchFairnessCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fairness",
		Short: "two flows into one egress in two queues; ping via the HQ",
		Args:  noArgs,
	}
	ef := addExperimentFlags(cmd, defaultRate)
	dur := durationFlag(cmd.Flags(), "duration", "", "10s", "how long the two flows run")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		stdout := cmd.OutOrStdout()
		spec := ef.spec(cmd.Flags(), "fair")
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		r, err := bench.Fairness(ctx, bench.FairnessOptions{Lab: spec, Duration: dur.D(), Log: ef.c.logger(cmd.ErrOrStderr())})
		if err != nil {
			return err
		}
		if ef.asJSON {
			return writeJSON(stdout, r)
		}
		m := benchModel(spec)
		fmt.Fprintf(stdout, "two TCP flows into s0.0 p0 (toward h0) at %s in the lab for %s, level order 0,1:\n", lab.FormatRate(r.RateBps), m.LabTimeText(dur.D()))
		fmt.Fprintf(stdout, "  h1 -> h0 (queue B)   %s  %5.1f%%\n", m.RateText(r.FlowB), 100*r.ShareB)
		fmt.Fprintf(stdout, "  h2 -> h4 (queue A0)  %s  %5.1f%%\n", m.RateText(r.FlowA), 100*(1-r.ShareB))
		fmt.Fprintf(stdout, "  deepest data queue   B %d B, A0 %d B (%s at the link rate)\n", r.MaxQueueB, r.MaxQueueA0, m.TimeText(msDur(r.DataDelayMs)))
		fmt.Fprintf(stdout, "ping h1 -> h0 through the HQ: idle %s, under load avg %s, max %s (%s)\n",
			m.TimeText(msDur(r.PingIdleMs)), m.TimeText(msDur(r.PingLoadMs)), m.TimeText(msDur(r.PingLoadMax)), units.Count(r.HQPackets, "HQ frame", "HQ frames"))
		fmt.Fprintf(stdout, "drops in the fabric: %d\n", r.FabricDrops)
		return healthLines(stdout, []bench.FairnessResult{r}, func(int) (string, lab.Health) { return "fairness", r.Health })
	}
	return cmd
}

// benchHoLCmd runs bench.HoL and prints one line per scheme.
func benchHoLCmd() *cobra.Command {
	var (
		fcs        []string
		groupFlows int
	)
	cmd := &cobra.Command{
		Use:   "hol",
		Short: "head-of-line blocking of a victim flow, per flow-control scheme",
		Args:  noArgs,
	}
	ef := addExperimentFlags(cmd, "100M")
	fs := cmd.Flags()
	fs.StringSliceVar(&fcs, "fc", []string{scheme.NamePortFC, scheme.NameNone}, "flow-control `schemes` to compare (bfc:Q: BFC with Q queues per port, bfc:2 a single data queue)")
	phase := durationFlag(fs, "phase", "", "5s", "length of each phase")
	fs.IntVar(&groupFlows, "group-flows", 4, "flows of the victim group whose FCT is measured in each phase")
	groupSize := sizeFlag(fs, "group-size", "256K", "bytes of each flow of the victim group")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		stdout := cmd.OutOrStdout()
		spec := ef.spec(fs, "hol")
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		res, err := bench.HoL(ctx, bench.HoLOptions{Lab: spec, FC: fcs, Phase: phase.D(),
			FCTFlows: groupFlows, FCTBytes: int64(*groupSize), Log: ef.c.logger(cmd.ErrOrStderr())})
		if err != nil {
			return err
		}
		if ef.asJSON {
			return writeJSON(stdout, res)
		}
		m := benchModel(spec)
		fmt.Fprintf(stdout, "victim h1 -> h2 shares h1's eth0 with h1 -> h0; then h2, h3 -> h0 congest s0.0's port to h0 (%s links in the lab; phases of %s)\n", lab.FormatRate(spec.RateBps), m.LabTimeText(phase.D()))
		fmt.Fprintf(stdout, "victim group: %d flows of %s from h1 to h2 and h3, mean FCT in each phase\n", groupFlows, units.FormatSize(int64(*groupSize)))
		fmt.Fprintf(stdout, "rates in Gb/s and times in µs of the target (the lab's rate x D, its time / D; D = %g):\n", m.D)
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "FC\tVICTIM ALONE Gb/s\tVICTIM CONGESTED Gb/s\tRATIO\th1->h0 Gb/s\tVICTIM PAUSED µs\tGROUP FCT ALONE µs\tGROUP FCT CONGESTED µs\tFCT RATIO\tDROPS\tMISSING\t")
		for _, r := range res {
			gbps := func(bps float64) float64 { return m.TargetRate(bps) / 1e9 }
			us := func(ms float64) float64 { return ms * 1e3 / m.D }
			paused := "-"
			if r.VictimPausedMs >= 0 {
				paused = fmt.Sprintf("%.0f", us(r.VictimPausedMs))
			}
			lost := func(v float64, format string) string {
				if v < 0 {
					return "lost"
				}
				return fmt.Sprintf(format, v)
			}
			fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.2f\t%.1f\t%s\t%s\t%s\t%s\t%d\t%d\t\n", r.FC, gbps(r.VictimAloneBps), gbps(r.VictimBps), r.Ratio,
				gbps(r.CongestedBps), paused, lost(us(r.FCTAloneMs), "%.1f"), lost(us(r.FCTMs), "%.1f"), lost(r.FCTRatio, "%.2f"), r.Drops, r.Missing)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, r := range res {
			fmt.Fprintf(stdout, "%s victim per second of lab time (%s each, Gb/s in the target; incast from %s): %s\n", r.FC, m.TimeText(time.Second),
				m.LabTimeText(time.Duration(r.IncastT*1e9).Round(time.Millisecond)), perSecond(r.SeriesT, r.VictimSeries, m.D))
		}
		return healthLines(stdout, res, func(i int) (string, lab.Health) { return res[i].FC, res[i].Health })
	}
	return cmd
}

// perSecond averages a throughput series (rates between sample times t,
// in seconds of the lab) over whole seconds, in Gb/s of the target at
// dilation d.
func perSecond(t, bps []float64, d float64) string {
	var out []string
	sum, prev, from, sec := 0.0, 0.0, 0.0, 1.0
	for i := range t {
		sum += bps[i] * (t[i] - prev)
		prev = t[i]
		if t[i] >= sec && t[i] > from {
			out = append(out, fmt.Sprintf("%.1f", sum/(t[i]-from)*d/1e9))
			sum, from = 0, t[i]
			for sec <= t[i] {
				sec++
			}
		}
	}
	return strings.Join(out, " ")
}

func benchLoopCmd() *cobra.Command {
	var fcs []string
	cmd := &cobra.Command{
		Use:   "loop",
		Short: "the deadlock scenario (routes that close a loop) per flow-control scheme",
		Long: `BCube(2,1): background flows h0->h1, h1->h3, h3->h2, h2->h0, then four loop
flows whose routes close a cycle of buffers (h0->h3 via h1, h3->h0 via h2,
h1->h2 via h3, h2->h1 via h0); throughput, stalled queues and deadlock
cycles per scheme; the pauses each class sent and the time each queue was
paused in the measured window; every flow's throughput over time (--json).

--scenario bcube41-over runs the same cycle on BCube(4,1) with two more
one-hop flows into each switch egress of the cycle (h2, h3 -> h1; h9, h13
-> h5; h6, h7 -> h4; h8, h12 -> h0): the loop with oversubscribed switches.`,
		Example: "  lab bench loop\n  lab bench loop --fc bfc,bfc:2\n  lab bench loop --fc portfc,portfc:drr --xoff 60K --xon 40K\n  lab bench loop --scenario bcube41-over --json",
		Args:    noArgs,
	}
	ef := addExperimentFlags(cmd, "100M")
	fs := cmd.Flags()
	fs.StringSliceVar(&fcs, "fc", []string{scheme.NamePFC, scheme.NamePFCStar, scheme.NamePortFC}, "flow-control `schemes` to compare, each run in turn (bfc:Q: BFC with Q queues per port; bfc:hash: flows hashed to queues; portfc:drr: the relay queue in the round robin)")
	scenario := fs.String("scenario", bench.LoopBCube21, "bcube21 (DESIGN §9) or bcube41-over (the cycle on BCube(4,1) with oversubscribed switch egresses)")
	interval := durationFlag(fs, "interval", "", "250ms", "period of every flow's throughput series")
	xoff := sizeFlag(fs, "xoff", "0", "X_off in bytes: PortFC's for both classes, PFC's per ingress port and priority (0: 6 one-hop BDPs)")
	xon := sizeFlag(fs, "xon", "0", "X_on in bytes (0: 4 one-hop BDPs)")
	transport := fs.String("transport", bench.LoopGen, "what carries the flows: gen (the traffic generator) or rdma (lossless RDMA flows of the NICs, DCQCN on)")
	ecn := fs.Bool("ecn", false, "ECN marking at every egress (with --transport rdma, DCQCN slows the flows down)")
	warmup := durationFlag(fs, "warmup", "", "1s", "background flows alone this long before the loop flows start")
	settle := durationFlag(fs, "settle", "", "1s", "wait this long after the loop flows start")
	measure := durationFlag(fs, "measure", "", "5s", "measure throughput over this long")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		stdout := cmd.OutOrStdout()
		spec := ef.spec(fs, "loop")
		spec.Xoff, spec.Xon, spec.ECN = int(*xoff), int(*xon), *ecn
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		iv := interval.D()
		if iv == 0 {
			iv = -1 // --interval 0: no series
		}
		res, err := bench.Loop(ctx, bench.LoopOptions{Lab: spec, FC: fcs, Warmup: warmup.D(), Settle: settle.D(),
			Measure: measure.D(), Log: ef.c.logger(cmd.ErrOrStderr()), Scenario: *scenario, Interval: iv, Transport: *transport})
		if err != nil {
			return err
		}
		if ef.asJSON {
			return writeJSON(stdout, res)
		}
		printLoop(stdout, spec, res, warmup.D(), settle.D(), measure.D())
		return healthLines(stdout, res, func(i int) (string, lab.Health) { return res[i].FC, res[i].Health })
	}
	return cmd
}

func printLoop(stdout io.Writer, spec lab.Spec, res []bench.LoopResult, warmup, settle, measure time.Duration) {
	if len(res) == 0 {
		return
	}
	sc := bench.LoopScenarios[res[0].Scenario]
	name := func(fs []bench.LoopRoute, via bool) string {
		var out []string
		for _, f := range fs {
			s := fmt.Sprintf("h%d->h%d", f.Src, f.Dst)
			if via && f.Order != "" {
				s += " order " + f.Order
			}
			out = append(out, s)
		}
		return strings.Join(out, ", ")
	}
	m := benchModel(spec)
	fmt.Fprintf(stdout, "BCube(%d,%d), %s links in the lab: background %s; from %s on, loop flows %s\n",
		sc.N, sc.K, lab.FormatRate(spec.RateBps), name(sc.Background, false), m.LabTimeText(warmup), name(sc.Loop, true))
	if len(sc.Incast) > 0 {
		fmt.Fprintf(stdout, "incast into the cycle's switch egresses: %s\n", name(sc.Incast, false))
	}
	fmt.Fprintf(stdout, "%s flows; throughput over %s, %s after the loop flows started\n", res[0].Transport, m.LabTimeText(measure), m.LabTimeText(settle))
	fmt.Fprintf(stdout, "throughput in Gb/s of the target (the lab's rate x D; D = %g):\n", m.D)
	gbps := func(bps float64) float64 { return m.TargetRate(bps) / 1e9 }
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "FC\t")
	for _, f := range res[0].Background {
		fmt.Fprintf(tw, "%s\t", f.Flow)
	}
	incast := ""
	if len(sc.Incast) > 0 {
		incast = "INCAST AVG\t"
	}
	fmt.Fprintln(tw, "BACKGROUND AVG\tLOOP AVG\t"+incast+"STALLED QUEUES\tDEADLOCK\tDROPS\tMISSING\t")
	for _, r := range res {
		fmt.Fprintf(tw, "%s\t", r.FC)
		for _, f := range r.Background {
			fmt.Fprintf(tw, "%.1f\t", gbps(f.Bps))
		}
		dl := "no"
		if r.Deadlocked() {
			dl = fmt.Sprintf("yes (cycle of %d)", len(r.Cycle))
		}
		fmt.Fprintf(tw, "%.1f\t%.1f\t", gbps(r.BackgroundBps), gbps(r.LoopBps))
		if incast != "" {
			fmt.Fprintf(tw, "%.1f\t", gbps(r.IncastBps))
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t\n", len(r.Stalls), dl, r.Drops, r.Missing)
	}
	tw.Flush()
	for _, r := range res {
		var classes []string
		for _, c := range slices.Sorted(maps.Keys(r.PausesByClass)) {
			classes = append(classes, fmt.Sprintf("%s %d", c, r.PausesByClass[c]))
		}
		if len(classes) == 0 {
			classes = []string{"none"}
		}
		fmt.Fprintf(stdout, "%s pauses sent in the window: %s\n", r.FC, strings.Join(classes, ", "))
		var qs []string
		for _, q := range r.Queues {
			if strings.HasPrefix(q.Node, "h") && q.PausedFrac >= 0.01 {
				qs = append(qs, fmt.Sprintf("%s %s %s %.0f%%", q.Node, q.Port, q.Queue, 100*q.PausedFrac))
			}
		}
		if len(qs) > 0 {
			fmt.Fprintf(stdout, "%s servers' queues paused (share of the window): %s\n", r.FC, strings.Join(qs, ", "))
		}
	}
	for _, r := range res {
		if len(r.Cycle) > 0 {
			fmt.Fprintf(stdout, "%s deadlock cycle: %s\n", r.FC, lab.CycleText(r.Cycle))
		}
	}
}

// benchModel is the scale model of a bench's lab: its times and rates
// are read on the target's clock (D 1 when the spec has none).
func benchModel(spec lab.Spec) scale.Model {
	m := spec.Model()
	if m.D <= 0 {
		m.D = 1
	}
	return m
}

// msDur is a time in ms as a duration.
func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

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
