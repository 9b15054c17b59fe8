//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/internal/progress"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/wire/transport"
)

func workloadCmd() *cobra.Command {
	var (
		cdfName, basis, pattern, mode, records, queues, pairing, flowCC string
		load                                                            float64
		seed                                                            uint64
		incast, maxFlows, mtu                                           int
		noDCQCN, asJSON, dryRun, patternWait                            bool
		moeExperts, moeSenders, moeTopK                                 int
		moeSkew                                                         float64
	)
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "RDMA flows from a workload (CDF, load, incast, patterns): FCTs, health",
		Long: `Runs RDMA flows from a flow-size distribution at a load, an incast, or a
collective pattern, through every server's hostd, and reports per-flow FCTs,
a summary by size bin and the emulation health (exit 3 when invalid).
Every duration it is given is lab time; every time and rate it reports
is the target's ("in the target": the lab's time / D, its rate x D), with
the lab's beside it where it helps, but for the emulation health, which
is the emulator's own, in lab time. Progress goes to stderr: on a terminal
a bar redrawn in place (flows ended, the target's time, the ETA, D, the
emulation health so far), elsewhere a line every -i (--progress). When a node of the lab goes down
mid-run (a process hosting nodes dies, or lab node stop takes a node
down), the run stops within a second, with no report and one line naming
the process and its nodes, or the node, when, and what became of the
flows: completed, failed, stopped unfinished, not started (exit 4).`,
		Example: `  lab workload --name wl --cdf websearch --load 0.5 --incast 8 --duration 10s --seed 1 --records wl.csv
  lab workload --name wl --cdf storage --load 0.3 --pattern moe --mode irn --json > run.json
  lab workload --name wl --cdf hadoop --load 0.4 --dry-run
  lab workload --name fp --cdf websearch --load 0.6 --pairing near-worst --duration 20s
  lab workload --name ro --load 0 --pattern moe --moe-experts 4 --moe-topk 2 --moe-skew 1.2 --pattern-size 64KB --duration 5s`,
		GroupID: groupTraffic,
		Args:    noArgs,
	}
	c := addCommon(cmd)
	fs := cmd.Flags()
	fs.StringVar(&cdfName, "cdf", "websearch", "flow sizes of the background: "+strings.Join(workload.BuiltinCDFs(), ", ")+", or a CDF `file`")
	fs.Float64Var(&load, "load", 0.5, "offered load of the Poisson background, a `fraction` of the host links (0: none)")
	fs.StringVar(&pairing, "pairing", "uniform", "how the background pairs servers: uniform pairs, or a permutation of a graph fabric's racks, random (seeded) or near-worst (the ToRs' longest matching by hop distance)")
	fs.StringVar(&basis, "basis", "link", "what the load is a fraction of: one host link (link) or all of a host's links (host)")
	dur := durationFlag(fs, "duration", "", "10s", "the window in which flows start, in lab time (reports give the target's beside it: 8s at D = 5,000 is 1.6ms of the target)")
	fs.Uint64Var(&seed, "seed", 1, "seed of every random choice: the same seed gives the same flows")
	fs.IntVar(&incast, "incast", 0, "senders of a periodic N-to-1 incast (0: none)")
	incastSize := sizeFlag(fs, "incast-size", "1MB", "bytes each incast sender sends")
	incastPeriod := durationFlag(fs, "incast-period", "", "0s", "time between two incasts, in lab time (0: the incast takes 25% of one host link on average: 2.56s for 8 x 1MB at 100 Mb/s)")
	incastStart := durationFlag(fs, "incast-start", "", "0s", "time of the first incast, in lab time")
	fs.StringVar(&pattern, "pattern", "", "a periodic collective: ps (parameter server) or moe (mixture of experts)")
	patternSize := sizeFlag(fs, "pattern-size", "256KB", "bytes of every flow of the pattern")
	patternPeriod := durationFlag(fs, "pattern-period", "", "1s", "time between two events of the pattern, in lab time")
	patternGap := durationFlag(fs, "pattern-gap", "", "0s", "time from a pattern's first phase to its second, in lab time (0: half the period, or none with --pattern-wait)")
	fs.BoolVar(&patternWait, "pattern-wait", false, "a pattern's second phase starts when every flow of its first has ended, and --pattern-gap after it at the earliest (default on for moe)")
	fs.IntVar(&moeExperts, "moe-experts", 0, "moe: experts per event (0: a quarter of the servers)")
	fs.IntVar(&moeSenders, "moe-senders", 0, "moe: token senders per event (0: every server not an expert)")
	fs.IntVar(&moeTopK, "moe-topk", 0, "moe: experts each sender dispatches a token group (--pattern-size bytes) to (0: 2)")
	fs.Float64Var(&moeSkew, "moe-skew", 0, "moe: Zipf `exponent` of the experts' popularity: expert r of an event is drawn with weight 1/r^s (0: uniform)")
	fs.IntVar(&maxFlows, "max-flows", 0, "refuse schedules longer than this (0: the library's bound)")
	fs.StringVar(&mode, "mode", "lossless", "loss recovery of the flows: lossless, gbn or irn")
	fs.BoolVar(&noDCQCN, "no-dcqcn", false, "no DCQCN rate control")
	// The lab's cc knob: the flows take it unless told otherwise.
	ccKnob, _ := lab.KnobByName("cc")
	fs.StringVar(&flowCC, "cc", "", "the flows' congestion control (default: the lab's --cc; dctcp and hpcc need a lab up with them): "+ccKnob.Help)
	fs.IntVar(&mtu, "mtu", 0, "payload per packet (0: 1024)")
	drain := durationFlag(fs, "drain", "", "0s", "how long to wait for flows after the last start, in lab time (0: the largest of the target's 2 ms x D, --duration and 10 x the slowest flow's ideal FCT)")
	interval := durationFlag(fs, "interval", "i", "1s", "time between progress updates (on stderr) and queue samples, in lab time (0: no progress unless --progress is given, samples at the target's 200µs x D)")
	shownMode := progressFlag(cmd)
	fs.StringVar(&records, "records", "", "write the per-flow records to `file`: CSV, or JSON lines if it ends in .jsonl or .json")
	fs.StringVar(&queues, "queues", "", "write the queue-length time series (bytes queued at every node, every -i; times on the target's clock and the lab's) to `file` as CSV")
	fs.BoolVar(&asJSON, "json", false, "print the report (records and queue series included) as JSON")
	fs.BoolVar(&dryRun, "dry-run", false, "print the schedule (CSV: id,src,dst,size,start_ns,kind,group,phase,after) and run nothing")
	hf := addHealthFlags(fs)
	completeWords(cmd, "basis", "link", "host")
	completeWords(cmd, "pairing", "uniform", "random", "near-worst")
	completeWords(cmd, "pattern", "ps", "moe")
	completeWords(cmd, "mode", "lossless", "gbn", "irn")
	completeWords(cmd, "cc", transport.CCNames[:]...)
	_ = cmd.RegisterFlagCompletionFunc("cdf", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return workload.BuiltinCDFs(), cobra.ShellCompDirectiveDefault
	})
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
		cfg := workload.Config{Load: load, Duration: dur.D(), Seed: seed, MaxFlows: maxFlows}
		var err error
		if cfg.Basis, err = workload.ParseBasis(basis); err != nil {
			return usagef(cmd, "%w", err)
		}
		if cfg.Pairing, err = workload.ParsePairing(pairing); err != nil {
			return usagef(cmd, "--pairing: %w", err)
		}
		if load > 0 {
			if cfg.CDF, err = workload.OpenCDF(cdfName); err != nil {
				return usagef(cmd, "--cdf: %w", err)
			}
		}
		if incast > 0 {
			cfg.Incast = &workload.Incast{Senders: incast, Size: int64(*incastSize), Period: incastPeriod.D(), Start: incastStart.D()}
		}
		if pattern != "" {
			k, err := workload.ParseKind(pattern)
			if err != nil || (k != workload.KindPS && k != workload.KindMoE) {
				return usagef(cmd, "--pattern %q: want ps or moe", pattern)
			}
			wait := patternWait
			if k == workload.KindMoE && !cmd.Flags().Changed("pattern-wait") {
				wait = true // the paper's MoE: combine once dispatch is complete
			}
			cfg.Pattern = &workload.Pattern{Kind: k, Size: int64(*patternSize), Period: patternPeriod.D(), Gap: patternGap.D(), Wait: wait}
			if k == workload.KindMoE {
				cfg.Pattern.Few, cfg.Pattern.Many, cfg.Pattern.TopK, cfg.Pattern.Skew = moeExperts, moeSenders, moeTopK, moeSkew
			}
		}
		for _, name := range []string{"moe-experts", "moe-senders", "moe-topk", "moe-skew"} {
			if cmd.Flags().Changed(name) && (cfg.Pattern == nil || cfg.Pattern.Kind != workload.KindMoE) {
				return usagef(cmd, "--%s needs --pattern moe", name)
			}
		}
		limits, err := hf.limits()
		if err != nil {
			return usagef(cmd, "%w", err)
		}
		if dryRun {
			return dryRunWorkload(c, cfg, stdout)
		}
		o := lab.WorkloadOptions{Config: cfg, Mode: mode, NoDCQCN: noDCQCN, CC: flowCC, MTU: mtu, Drain: drain.D(), Interval: interval.D(), Limits: limits}
		shown := *shownMode
		if *interval == 0 && !cmd.Flags().Changed("progress") {
			shown = progress.None // -i 0: no progress lines, as it always was
		}
		pr := newProgress(stderr, shown, 0) // updates come every -i
		defer pr.Close()
		if pr.Mode() != progress.None {
			o.Progress = func(p lab.WorkloadProgress) { pr.Update(p.State()) }
		}
		// Check the records file can be written before running.
		var recOut *os.File
		if records != "" {
			if recOut, err = os.Create(records); err != nil {
				return err
			}
			defer recOut.Close()
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		rep, err := lab.RunWorkload(ctx, c.runRoot, c.name, o)
		pr.Close() // the bar gone before the report or the error
		if err != nil {
			if recOut != nil {
				recOut.Close()
				os.Remove(records)
			}
			return err
		}
		if recOut != nil {
			write := workload.WriteCSV
			if ext := filepath.Ext(records); ext == ".jsonl" || ext == ".json" {
				write = workload.WriteJSONL
			}
			if err := write(recOut, rep.Records); err != nil {
				return err
			}
			if err := recOut.Close(); err != nil {
				return err
			}
		}
		if queues != "" {
			if err := writeFile(queues, rep.WriteQueuesCSV); err != nil {
				return err
			}
		}
		if asJSON {
			err = writeJSON(stdout, rep)
		} else {
			err = rep.WriteText(stdout)
		}
		if err != nil {
			return err
		}
		if !rep.Valid() {
			return fmt.Errorf("%w: %s", errInvalidRun, strings.Join(rep.Health.Problems, "; "))
		}
		return nil
	}
	return cmd
}

// dryRunWorkload prints the schedule of cfg for the lab's fabric.
func dryRunWorkload(c *common, cfg workload.Config, stdout io.Writer) error {
	_, flows, err := lab.WorkloadSchedule(c.runRoot, c.name, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "id,src,dst,size,start_ns,kind,group,phase,after")
	for _, f := range flows {
		fmt.Fprintf(stdout, "%d,%d,%d,%d,%d,%s,%d,%d,%d\n", f.ID, f.Src, f.Dst, f.Size, int64(f.Start), f.Kind, f.Group, f.Phase, f.After)
	}
	return nil
}
