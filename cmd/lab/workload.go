//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
)

func workloadCmd() *cobra.Command {
	var (
		cdfName, basis, pattern, mode, records, queues string
		load                                           float64
		seed                                           uint64
		incast, maxFlows, mtu                          int
		noDCQCN, asJSON, dryRun, patternWait           bool
	)
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "RDMA flows from a workload (CDF, load, incast, patterns): FCTs, health",
		Long: `Runs RDMA flows from a flow-size distribution at a load, an incast, or a
collective pattern, through every server's hostd, and reports per-flow FCTs,
a summary by size bin and the emulation health (exit 3 when invalid).
Progress goes to stderr every -i.`,
		Example: `  lab workload --name wl --cdf websearch --load 0.5 --incast 8 --duration 10s --seed 1 --records wl.csv
  lab workload --name wl --cdf storage --load 0.3 --pattern moe --mode irn --json > run.json
  lab workload --name wl --cdf hadoop --load 0.4 --dry-run`,
		GroupID: groupTraffic,
		Args:    noArgs,
	}
	c := addCommon(cmd)
	fs := cmd.Flags()
	fs.StringVar(&cdfName, "cdf", "websearch", "flow sizes of the background: "+strings.Join(workload.BuiltinCDFs(), ", ")+", or a CDF `file`")
	fs.Float64Var(&load, "load", 0.5, "offered load of the Poisson background, a `fraction` of the host links (0: none)")
	fs.StringVar(&basis, "basis", "link", "what the load is a fraction of: one host link (link) or all of a host's links (host)")
	dur := durationFlag(fs, "duration", "", "10s", "the window in which flows start")
	fs.Uint64Var(&seed, "seed", 1, "seed of every random choice: the same seed gives the same flows")
	fs.IntVar(&incast, "incast", 0, "senders of a periodic N-to-1 incast (0: none)")
	incastSize := sizeFlag(fs, "incast-size", "1MB", "bytes each incast sender sends")
	incastPeriod := durationFlag(fs, "incast-period", "", "0s", "time between two incasts (0: the incast takes 25% of one host link on average: 2.56s for 8 x 1MB at 100 Mb/s)")
	incastStart := durationFlag(fs, "incast-start", "", "0s", "time of the first incast")
	fs.StringVar(&pattern, "pattern", "", "a periodic collective: ps (parameter server) or moe (mixture of experts)")
	patternSize := sizeFlag(fs, "pattern-size", "256KB", "bytes of every flow of the pattern")
	patternPeriod := durationFlag(fs, "pattern-period", "", "1s", "time between two events of the pattern")
	patternGap := durationFlag(fs, "pattern-gap", "", "0s", "time from a pattern's first phase to its second (0: half the period)")
	fs.BoolVar(&patternWait, "pattern-wait", false, "start a pattern's second phase when every flow of its first has ended (the pull when the push ends), not --pattern-gap after it")
	fs.IntVar(&maxFlows, "max-flows", 0, "refuse schedules longer than this (0: the library's bound)")
	fs.StringVar(&mode, "mode", "lossless", "loss recovery of the flows: lossless, gbn or irn")
	fs.BoolVar(&noDCQCN, "no-dcqcn", false, "no DCQCN rate control")
	fs.IntVar(&mtu, "mtu", 0, "payload per packet (0: 1024)")
	drain := durationFlag(fs, "drain", "", "0s", "how long to wait for flows after the last start (0: the largest of 10s, --duration and 4 x the slowest flow's ideal FCT)")
	interval := durationFlag(fs, "interval", "i", "1s", "time between progress lines (on stderr)")
	fs.StringVar(&records, "records", "", "write the per-flow records to `file`: CSV, or JSON lines if it ends in .jsonl or .json")
	fs.StringVar(&queues, "queues", "", "write the queue-length time series (bytes queued at every node, every -i) to `file` as CSV")
	fs.BoolVar(&asJSON, "json", false, "print the report (records and queue series included) as JSON")
	fs.BoolVar(&dryRun, "dry-run", false, "print the schedule (CSV: id,src,dst,size,start_ns,kind,group) and run nothing")
	hf := addHealthFlags(fs)
	completeWords(cmd, "basis", "link", "host")
	completeWords(cmd, "pattern", "ps", "moe")
	completeWords(cmd, "mode", "lossless", "gbn", "irn")
	_ = cmd.RegisterFlagCompletionFunc("cdf", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return workload.BuiltinCDFs(), cobra.ShellCompDirectiveDefault
	})
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
		cfg := workload.Config{Load: load, Duration: dur.D(), Seed: seed, MaxFlows: maxFlows}
		var err error
		if cfg.Basis, err = workload.ParseBasis(basis); err != nil {
			return err
		}
		if load > 0 {
			if cfg.CDF, err = workload.OpenCDF(cdfName); err != nil {
				return err
			}
		}
		if incast > 0 {
			cfg.Incast = &workload.Incast{Senders: incast, Size: int64(*incastSize), Period: incastPeriod.D(), Start: incastStart.D()}
		}
		if pattern != "" {
			k, err := workload.ParseKind(pattern)
			if err != nil || (k != workload.KindPS && k != workload.KindMoE) {
				return fmt.Errorf("--pattern %q: want ps or moe", pattern)
			}
			cfg.Pattern = &workload.Pattern{Kind: k, Size: int64(*patternSize), Period: patternPeriod.D(), Gap: patternGap.D()}
		}
		limits, err := hf.limits()
		if err != nil {
			return err
		}
		if dryRun {
			return dryRunWorkload(c, cfg, stdout)
		}
		if patternWait && pattern == "" {
			return errors.New("--pattern-wait: no --pattern")
		}
		o := lab.WorkloadOptions{Config: cfg, Mode: mode, NoDCQCN: noDCQCN, MTU: mtu, Drain: drain.D(), Interval: interval.D(),
			PhaseWait: patternWait, Limits: limits}
		if *interval > 0 {
			o.Progress = func(p lab.WorkloadProgress) { fmt.Fprintln(stderr, p) }
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
	fmt.Fprintln(stdout, "id,src,dst,size,start_ns,kind,group")
	for _, f := range flows {
		fmt.Fprintf(stdout, "%d,%d,%d,%d,%d,%s,%d\n", f.ID, f.Src, f.Dst, f.Size, int64(f.Start), f.Kind, f.Group)
	}
	return nil
}
