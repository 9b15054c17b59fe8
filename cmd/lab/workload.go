//go:build linux

package main

import (
	"cmp"
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

	"github.com/bcfab/bcfab/internal/progress"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/wire/transport"
)

func workloadCmd() *cobra.Command {
	var (
		mode, records, queues, series, ports string
		asJSON, dryRun                       bool
	)
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "RDMA flows from a workload (CDF, load, incast, patterns): FCTs, health",
		Long: `Runs RDMA flows from a flow-size distribution at a load, an incast, a
collective pattern, or a file of hand-made flows (--flows, in the format
--dry-run prints), through every server's hostd, and reports per-flow FCTs,
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
  lab workload --name ro --load 0 --pattern moe --moe-experts 4 --moe-topk 2 --moe-skew 1.2 --pattern-size 64KB --duration 5s
  lab workload --name wl --flows flows.csv --records hand.csv`,
		GroupID: groupTraffic,
		Args:    noArgs,
	}
	c := addCommon(cmd)
	sf := addScheduleFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&mode, "mode", "lossless", "loss recovery of the flows: lossless, gbn or irn")
	interval := durationFlag(fs, "interval", "i", "1s", "time between progress updates (on stderr) and queue samples, in lab time (0: no progress unless --progress is given, samples at the target's 200µs x D)")
	shownMode := progressFlag(cmd)
	fs.StringVar(&records, "records", "", "write the per-flow records to `file`: CSV, or JSON lines if it ends in .jsonl or .json")
	fs.StringVar(&queues, "queues", "", "write the queue-length time series (bytes queued at every node, every -i; times on the target's clock and the lab's) to `file` as CSV")
	fs.StringVar(&series, "series", "", "write every running flow's acknowledged bytes at every poll (every -i, at most 250ms of lab time apart; times on the target's clock and the lab's) to `file` as CSV: the flows' rates over time")
	fs.StringVar(&ports, "ports", "", "write every port's transmitted and queued bytes, and each of its egress queues' dequeued and queued bytes, at every queue sample (every -i; times of each node's counters on the target's clock and the lab's) to `file` as CSV: each link's utilisation and each queue's share of it over time")
	fs.BoolVar(&asJSON, "json", false, "print the report (records and queue series included) as JSON")
	fs.BoolVar(&dryRun, "dry-run", false, "print the schedule (CSV: "+workload.FlowsHeader+"; with --flows, the file's, checked on the lab) and run nothing")
	hf := addHealthFlags(fs)
	completeWords(cmd, "mode", "lossless", "gbn", "irn")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
		cfg, err := sf.config(cmd)
		if err != nil {
			return err
		}
		limits, err := hf.limits()
		if err != nil {
			return usagef(cmd, "%w", err)
		}
		if dryRun {
			return dryRunWorkload(cmd, c, sf, cfg, stdout)
		}
		if sf.flows != nil {
			// The file's errors at its lines, before anything runs.
			if _, err := lab.WorkloadFlows(c.runRoot, c.name, cfg, sf.flows); err != nil {
				return sf.flowsError(cmd, err)
			}
		}
		o := lab.WorkloadOptions{Config: cfg, Flows: sf.flows, Mode: mode, NoDCQCN: sf.noDCQCN, CC: sf.flowCC, MTU: sf.mtu, Drain: sf.drain.D(), Interval: interval.D(), Limits: limits,
			FlowSeries: series != "", PortSeries: ports != ""}
		shown := *shownMode
		if *interval == 0 && !cmd.Flags().Changed("progress") {
			shown = progress.None // -i 0: no progress lines, as it always was
		}
		pr := newProgress(stderr, shown, 0) // updates come every -i
		defer pr.Close()
		if pr.Mode() != progress.None {
			o.Progress = func(p lab.WorkloadProgress) { pr.Update(p.State()) }
		}
		// Check the records and series files can be written before
		// running.
		var recOut, seriesOut, portsOut *os.File
		if records != "" {
			if recOut, err = os.Create(records); err != nil {
				return err
			}
			defer recOut.Close()
		}
		if series != "" {
			if seriesOut, err = os.Create(series); err != nil {
				return err
			}
			defer seriesOut.Close()
		}
		if ports != "" {
			if portsOut, err = os.Create(ports); err != nil {
				return err
			}
			defer portsOut.Close()
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		rep, err := lab.RunWorkload(ctx, c.runRoot, c.name, o)
		pr.Close() // the bar gone before the report or the error
		if err != nil {
			for _, f := range []*os.File{recOut, seriesOut, portsOut} {
				if f != nil {
					f.Close()
					os.Remove(f.Name())
				}
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
		if seriesOut != nil {
			if err := rep.WriteSeriesCSV(seriesOut); err != nil {
				return err
			}
			if err := seriesOut.Close(); err != nil {
				return err
			}
		}
		if portsOut != nil {
			if err := rep.WritePortsCSV(portsOut); err != nil {
				return err
			}
			if err := portsOut.Close(); err != nil {
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

// scheduleFlags are the flags of lab workload that make its schedule
// and its flows' transport; lab ns3 export takes them too, so that it
// writes the flows lab workload would run.
type scheduleFlags struct {
	cdfName, basis, pattern, pairing, flowCC string
	load                                     float64
	seed                                     uint64
	incast, maxFlows, mtu                    int
	noDCQCN, patternWait                     bool
	moeExperts, moeSenders, moeTopK          int
	moeSkew                                  float64

	dur, incastPeriod, incastStart, patternPeriod, patternGap, drain *units.Duration
	incastSize, patternSize                                          *units.Size

	// flowsFile is --flows; flows its schedule once config has read it,
	// lines[i] the line of flows[i] in it.
	flowsFile string
	flows     []workload.Flow
	lines     []int
}

// generating are the flags of the schedule that --flows replaces: those
// that make a generated schedule.
var generating = []string{"cdf", "load", "pairing", "basis", "seed", "incast", "incast-size", "incast-period", "incast-start",
	"pattern", "pattern-size", "pattern-period", "pattern-gap", "pattern-wait", "moe-experts", "moe-senders", "moe-topk", "moe-skew"}

// addScheduleFlags adds the schedule's and the flows' flags to cmd.
func addScheduleFlags(cmd *cobra.Command) *scheduleFlags {
	f := &scheduleFlags{}
	fs := cmd.Flags()
	fs.StringVar(&f.cdfName, "cdf", "websearch", "flow sizes of the background: "+strings.Join(workload.BuiltinCDFs(), ", ")+", or a CDF `file`")
	fs.Float64Var(&f.load, "load", 0.5, "offered load of the Poisson background, a `fraction` of the host links (0: none)")
	fs.StringVar(&f.pairing, "pairing", "uniform", "how the background pairs servers: uniform pairs, or a permutation of a graph fabric's racks, random (seeded) or near-worst (the ToRs' longest matching by hop distance)")
	fs.StringVar(&f.basis, "basis", "link", "what the load is a fraction of: one host link (link) or all of a host's links (host)")
	f.dur = durationFlag(fs, "duration", "", "10s", "the window in which flows start, in lab time (reports give the target's beside it: 8s at D = 5,000 is 1.6ms of the target)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of every random choice: the same seed gives the same flows")
	fs.IntVar(&f.incast, "incast", 0, "senders of a periodic N-to-1 incast (0: none)")
	f.incastSize = sizeFlag(fs, "incast-size", "1MB", "bytes each incast sender sends")
	f.incastPeriod = durationFlag(fs, "incast-period", "", "0s", "time between two incasts, in lab time (0: the incast takes 25% of one host link on average: 2.56s for 8 x 1MB at 100 Mb/s)")
	f.incastStart = durationFlag(fs, "incast-start", "", "0s", "time of the first incast, in lab time")
	fs.StringVar(&f.pattern, "pattern", "", "a periodic collective: ps (parameter server) or moe (mixture of experts)")
	f.patternSize = sizeFlag(fs, "pattern-size", "256KB", "bytes of every flow of the pattern")
	f.patternPeriod = durationFlag(fs, "pattern-period", "", "1s", "time between two events of the pattern, in lab time")
	f.patternGap = durationFlag(fs, "pattern-gap", "", "0s", "time from a pattern's first phase to its second, in lab time (0: half the period, or none with --pattern-wait)")
	fs.BoolVar(&f.patternWait, "pattern-wait", false, "a pattern's second phase starts when every flow of its first has ended, and --pattern-gap after it at the earliest (default on for moe)")
	fs.IntVar(&f.moeExperts, "moe-experts", 0, "moe: experts per event (0: a quarter of the servers)")
	fs.IntVar(&f.moeSenders, "moe-senders", 0, "moe: token senders per event (0: every server not an expert)")
	fs.IntVar(&f.moeTopK, "moe-topk", 0, "moe: experts each sender dispatches a token group (--pattern-size bytes) to (0: 2)")
	fs.Float64Var(&f.moeSkew, "moe-skew", 0, "moe: Zipf `exponent` of the experts' popularity: expert r of an event is drawn with weight 1/r^s (0: uniform)")
	fs.StringVar(&f.flowsFile, "flows", "", "run the flows of this CSV `file` instead of a generated schedule: lab workload --dry-run's format ("+workload.FlowsHeader+
		"; sizes in bytes, starts in ns of lab time, # comments), ids 0, 1, ... in order of start; no --load, --incast, --pattern, --seed or other flag of a generated schedule with it; --duration is the window its starts must fall in (default: just past the last start, at it + 1ns)")
	fs.IntVar(&f.maxFlows, "max-flows", 0, "refuse schedules longer than this (0: the library's bound)")
	fs.BoolVar(&f.noDCQCN, "no-dcqcn", false, "no DCQCN rate control")
	// The lab's cc knob: the flows take it unless told otherwise.
	ccKnob, _ := lab.KnobByName("cc")
	fs.StringVar(&f.flowCC, "cc", "", "the flows' congestion control (default: the lab's --cc; dctcp and hpcc need a lab up with them): "+ccKnob.Help)
	fs.IntVar(&f.mtu, "mtu", 0, "payload per packet (0: 1024)")
	f.drain = durationFlag(fs, "drain", "", "0s", "how long to wait for flows after the last start, in lab time (0: the largest of the target's 2 ms x D, --duration and 10 x the slowest flow's ideal FCT)")
	_ = cmd.MarkFlagFilename("flows", "csv")
	completeWords(cmd, "basis", "link", "host")
	completeWords(cmd, "pairing", "uniform", "random", "near-worst")
	completeWords(cmd, "pattern", "ps", "moe")
	completeWords(cmd, "cc", transport.CCNames[:]...)
	_ = cmd.RegisterFlagCompletionFunc("cdf", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return workload.BuiltinCDFs(), cobra.ShellCompDirectiveDefault
	})
	return f
}

// config is the workload the flags describe (a usage error when they
// are wrong); the lab fills in the rest (lab.SpecSchedule). With
// --flows it reads the file into f.flows, and the workload is its
// window: lab.SpecFlows checks the flows on the lab.
func (f *scheduleFlags) config(cmd *cobra.Command) (workload.Config, error) {
	if f.flowsFile != "" {
		return f.handMade(cmd)
	}
	cfg := workload.Config{Load: f.load, Duration: f.dur.D(), Seed: f.seed, MaxFlows: f.maxFlows}
	var err error
	if cfg.Basis, err = workload.ParseBasis(f.basis); err != nil {
		return cfg, usagef(cmd, "%w", err)
	}
	if cfg.Pairing, err = workload.ParsePairing(f.pairing); err != nil {
		return cfg, usagef(cmd, "--pairing: %w", err)
	}
	if f.load > 0 {
		if cfg.CDF, err = workload.OpenCDF(f.cdfName); err != nil {
			return cfg, usagef(cmd, "--cdf: %w", err)
		}
	}
	if f.incast > 0 {
		cfg.Incast = &workload.Incast{Senders: f.incast, Size: int64(*f.incastSize), Period: f.incastPeriod.D(), Start: f.incastStart.D()}
	}
	if f.pattern != "" {
		k, err := workload.ParseKind(f.pattern)
		if err != nil || (k != workload.KindPS && k != workload.KindMoE) {
			return cfg, usagef(cmd, "--pattern %q: want ps or moe", f.pattern)
		}
		wait := f.patternWait
		if k == workload.KindMoE && !cmd.Flags().Changed("pattern-wait") {
			wait = true // the paper's MoE: combine once dispatch is complete
		}
		cfg.Pattern = &workload.Pattern{Kind: k, Size: int64(*f.patternSize), Period: f.patternPeriod.D(), Gap: f.patternGap.D(), Wait: wait}
		if k == workload.KindMoE {
			cfg.Pattern.Few, cfg.Pattern.Many, cfg.Pattern.TopK, cfg.Pattern.Skew = f.moeExperts, f.moeSenders, f.moeTopK, f.moeSkew
		}
	}
	for _, name := range []string{"moe-experts", "moe-senders", "moe-topk", "moe-skew"} {
		if cmd.Flags().Changed(name) && (cfg.Pattern == nil || cfg.Pattern.Kind != workload.KindMoE) {
			return cfg, usagef(cmd, "--%s needs --pattern moe", name)
		}
	}
	return cfg, nil
}

// handMade reads --flows: the workload is the file's flows' window,
// --duration or just past the last start.
func (f *scheduleFlags) handMade(cmd *cobra.Command) (workload.Config, error) {
	var cfg workload.Config
	var set []string
	for _, name := range generating {
		if cmd.Flags().Changed(name) && (name != "load" || f.load != 0) {
			set = append(set, "--"+name)
		}
	}
	if len(set) > 0 {
		return cfg, usagef(cmd, "--flows and %s: the file is the whole schedule, give one", strings.Join(set, ", "))
	}
	r, err := os.Open(f.flowsFile)
	if err != nil {
		return cfg, err
	}
	defer r.Close()
	f.flows, f.lines, err = workload.ReadFlows(r)
	var le *workload.LineError
	switch {
	case errors.As(err, &le):
		return cfg, inputUsage(cmd, f.flowsFile, fmt.Errorf("%s:%d: %w", f.flowsFile, le.Line, le.Err))
	case err != nil:
		return cfg, fmt.Errorf("%s: %w", f.flowsFile, err)
	case len(f.flows) == 0:
		return cfg, inputUsage(cmd, f.flowsFile, fmt.Errorf("%s: no flows, only the header", f.flowsFile))
	}
	if limit := cmp.Or(f.maxFlows, workload.DefaultMaxFlows); len(f.flows) > limit {
		return cfg, usagef(cmd, "--flows %s: %d flows, more than --max-flows %d", f.flowsFile, len(f.flows), limit)
	}
	cfg.Duration = f.dur.D()
	if !cmd.Flags().Changed("duration") {
		cfg.Duration = f.flows[len(f.flows)-1].Start + 1 // the file's starts are in order
	}
	return cfg, nil
}

// flowsError names the line of --flows of the flow a lab's check of
// the file's flows (lab.SpecFlows) refused: a usage error. Other errors
// are returned as they are.
func (f *scheduleFlags) flowsError(cmd *cobra.Command, err error) error {
	var fe *lab.FlowError
	if f.flowsFile != "" && errors.As(err, &fe) && fe.Flow < len(f.lines) {
		return inputUsage(cmd, f.flowsFile, fmt.Errorf("%s:%d: flow %d: %w", f.flowsFile, f.lines[fe.Flow], fe.Flow, fe.Err))
	}
	return err
}

// dryRunWorkload prints the schedule of cfg for the lab's fabric, or
// the flows of --flows, checked on it.
func dryRunWorkload(cmd *cobra.Command, c *common, sf *scheduleFlags, cfg workload.Config, stdout io.Writer) error {
	flows := sf.flows
	if flows != nil {
		if _, err := lab.WorkloadFlows(c.runRoot, c.name, cfg, flows); err != nil {
			return sf.flowsError(cmd, err)
		}
	} else {
		var err error
		if _, flows, err = lab.WorkloadSchedule(c.runRoot, c.name, cfg); err != nil {
			return err
		}
	}
	return workload.WriteFlows(stdout, flows)
}
