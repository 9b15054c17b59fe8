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
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/internal/progress"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/study/experiment"
)

func experimentCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "experiment list|show|run|rerun|replot",
		Short: "the papers' experiments from files: labs, runs, plots and a report",
		Long: `Each experiment is a YAML file (topology, rates, schemes, workload, loads,
seeds, repetitions, and a quick section): the built-in ones are listed by
'lab experiment list' and printed by 'lab experiment show NAME'; 'run -f
FILE' runs an edited copy. A run brings every point's lab up and down
itself and writes one directory: the config, the build, every lab's spec,
raw per-flow records and time series, summary.csv, plots (PNG and SVG) and
a README.md report. A point whose emulation health is not valid is marked
INVALID and left out of the plots (exit 3); 'rerun DIR' runs a run's
INVALID points again in place.`,
		GroupID: groupBench,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef(cmd, "experiment: want list, show, run, rerun or replot (lab experiment run NAME [--quick])")
		},
	}
	cmd.AddCommand(experimentListCmd(), experimentShowCmd(), experimentRunCmd(), experimentRerunCmd(), experimentReplotCmd())
	return cmd
}

func experimentNames(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return experiment.List(), cobra.ShellCompDirectiveNoFileComp
}

func experimentListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "the built-in experiments and the figures they answer",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tPOINTS\tQUICK\tFIGURE\tTITLE")
			for _, name := range experiment.List() {
				c, _, err := experiment.Load(name, "", false)
				if err != nil {
					return err
				}
				q, _, err := experiment.Load(name, "", true)
				quick := "-"
				if err == nil {
					quick = fmt.Sprint(len(q.Points()))
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", name, c.Kind, len(c.Points()), quick, c.Figure, c.Title)
			}
			return tw.Flush()
		},
	}
}

func experimentShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "show NAME",
		Short:             "print a built-in experiment's file (to edit a copy and run it with -f)",
		Args:              exactArgs(1, "NAME"),
		ValidArgsFunction: experimentNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := experiment.Builtin(args[0])
			if err != nil {
				return usagef(cmd, "%w", err)
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
}

func experimentRunCmd() *cobra.Command {
	var (
		file, out, binDir, rate, capacity string
		quick, dryRun                     bool
	)
	cmd := &cobra.Command{
		Use:   "run NAME | -f FILE",
		Short: "run an experiment: every point's lab, the results, plots and README.md",
		Long: `Runs every point of the experiment (scheme x CDF x load x seed x repetition)
on a lab of its own, one at a time, and writes the output directory
(default results/<name>-<UTC time>). Progress goes to stderr: a line per
point, and on a terminal a bar redrawn in place (points done, the
target's time, the ETA, D, the health so far), elsewhere the running
point's progress every 5 s (--progress).
Ctrl-C stops the point running, takes its lab down and writes what was
measured. A point whose run fails (a worker of its lab died, say) is
INVALID with the reason; its lab is taken down and the next point runs
on a fresh lab. Exit 3 when a point is INVALID.`,
		Example: `  lab experiment run loop --quick
  lab experiment run fct --out results/fct-full
  lab experiment show fct > my.yaml && lab experiment run -f my.yaml --dry-run`,
		Args:              atMostArgs(1, "NAME"),
		ValidArgsFunction: experimentNames,
	}
	c := addCommon(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&file, "file", "f", "", "run the experiment in `FILE` instead of a built-in one")
	fs.StringVar(&out, "out", "", "output `dir`ectory (default results/<name>-<UTC time>)")
	fs.BoolVar(&quick, "quick", false, "apply the file's quick section: fewer schemes and loads, shorter runs")
	fs.BoolVar(&dryRun, "dry-run", false, "check the file and list its points, run nothing")
	fs.StringVar(&binDir, "bin-dir", "", "`dir`ectory with the daemons (default: the directory of lab)")
	fs.StringVar(&rate, "rate", "", "every point's link `rate` in place of the file's (lab.rate, workload.cdf_rates), or auto: each point at the smallest D this machine keeps it faithful at")
	fs.StringVar(&capacity, "capacity", lab.DefaultCapacityFile, "this machine's capacity (lab calibrate), which rate auto reads; measured first when missing")
	simDir := ns3Flag(cmd)
	mode := progressFlag(cmd)
	_ = cmd.MarkFlagFilename("file", "yaml", "yml")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
		var name string
		switch {
		case len(args) == 1 && file != "":
			return usagef(cmd, "run: name a built-in experiment or give -f FILE, not both")
		case len(args) == 1:
			name = args[0]
		case file == "":
			return usagef(cmd, "run: want NAME or -f FILE (lab experiment list)")
		}
		cfg, src, err := experiment.Load(name, file, quick)
		if err != nil {
			return inputUsage(cmd, file, err)
		}
		if fs.Changed("rate") {
			if err := cfg.SetRate(rate); err != nil {
				return usagef(cmd, "--rate: %w", err)
			}
		}
		if cfg.Lab.Auto && dryRun {
			// The D each point would run at, when the machine was measured.
			if cp, err := lab.LoadCapacity(capacity); err == nil {
				if err := cfg.ResolveAuto(cp); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(stdout, "rate auto: %v: the points' D are chosen when the run starts\n", err)
			}
		}
		points := cfg.Points()
		if dryRun {
			var est time.Duration
			for _, p := range points {
				est += cfg.Estimate(p)
			}
			fmt.Fprintf(stdout, "experiment %s (%s): %s, about %v\n", cfg.Name, cfg.Kind, units.Count(len(points), "point", "points"), est.Round(time.Minute))
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			for _, p := range points {
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", p.ID, p.Label(), cfg.Describe(p))
			}
			return tw.Flush()
		}
		if out == "" {
			out = experiment.DefaultOut(cfg.Name, time.Now())
		}
		if fs.Changed("name") {
			cfg.Lab.Name = c.name
		}
		o := experiment.RunOptions{Out: out, Source: src, BinDir: binDir, RunRoot: c.runRoot, NS3: *simDir, Capacity: capacity}
		pr := experimentProgress(&o, stderr, *mode, c)
		defer pr.Close()
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		rep, err := experiment.Run(ctx, cfg, o)
		pr.Close() // the bar gone before the last line or the error
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %d of %d points valid; report %s/README.md\n", cfg.Name, rep.Valid(), len(rep.Results), out)
		return invalidPoints(rep)
	}
	return cmd
}

func experimentRerunCmd() *cobra.Command {
	var (
		binDir string
		ids    []string
	)
	cmd := &cobra.Command{
		Use:   "rerun DIR",
		Short: "run a run's INVALID points again, in place: fresh labs, the run's own config",
		Long: `Runs again, one at a time on a fresh lab each, the points of the run in
DIR that are INVALID or that a stopped run never reached (or, with
--points, the points named), from the run's own config.yaml. Each new
result takes its point's place in summary.csv, results.json, the plots
and README.md; the attempt before's files move to
runs/<point>.attempt<N>, and README.md lists every rerun with its build
and why the attempt before was not kept. Exit 3 when a point is still
INVALID.`,
		Example: `  lab experiment rerun results/fct-full
  lab experiment rerun results/loop-full --points bcube21-pfc-r2`,
		Args: exactArgs(1, "DIR"),
	}
	c := addCommon(cmd)
	fs := cmd.Flags()
	fs.StringSliceVar(&ids, "points", nil, "run these `point`s again (their directory names under runs/), valid or not")
	fs.StringVar(&binDir, "bin-dir", "", "`dir`ectory with the daemons (default: the directory of lab)")
	simDir := ns3Flag(cmd)
	mode := progressFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		dir := args[0]
		if st, err := os.Stat(filepath.Join(dir, "results.json")); err != nil || st.IsDir() {
			return usagef(cmd, "rerun: %s is not a run directory of lab experiment run (no results.json)", dir)
		}
		o := experiment.RunOptions{Out: dir, BinDir: binDir, RunRoot: c.runRoot, NS3: *simDir}
		pr := experimentProgress(&o, cmd.ErrOrStderr(), *mode, c)
		defer pr.Close()
		name := ""
		if fs.Changed("name") {
			name = c.name
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		rep, err := experiment.RunAgain(ctx, o, ids, name)
		pr.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %d of %d points valid; report %s/README.md\n", rep.Experiment, rep.Valid(), len(rep.Results), dir)
		return invalidPoints(rep)
	}
	return cmd
}

// experimentProgress is the printer of an experiment's progress on
// stderr in mode m, set in o: its lines per point and, with -v, the
// labs' logs go above the bar; its state every update (a bar) or every
// 5 s (plain lines). With none, only the logs are shown.
func experimentProgress(o *experiment.RunOptions, stderr io.Writer, m progress.Mode, c *common) *progress.Printer {
	pr := newProgress(stderr, m, 5*time.Second)
	if pr.Mode() != progress.None {
		o.Progress, o.Status = pr, pr.Update
	}
	if c.verbose {
		o.Log = c.logger(pr) // the labs' own logs
	}
	return pr
}

// invalidPoints is the error (exit 3) of a run with INVALID points,
// naming them, or nil.
func invalidPoints(rep *experiment.Report) error {
	var bad []string
	for _, r := range rep.Results {
		if !r.Valid {
			bad = append(bad, r.ID)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s (marked in the report, not plotted)", errInvalidRun, strings.Join(bad, ", "))
}

func experimentReplotCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "replot DIR",
		Short: "draw a run's plots and README again from its files (config.yaml, results.json, queues.csv)",
		Args:  exactArgs(1, "DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := experiment.Replot(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d plots; report %s/README.md\n", rep.Experiment, len(rep.Plots), args[0])
			return nil
		},
	}
}

// ns3Flag adds --ns3, the simulator checkout that runs an experiment's
// ns3: schemes, defaulting to $BCFAB_NS3.
func ns3Flag(cmd *cobra.Command) *string {
	dir := new(string)
	cmd.Flags().StringVar(dir, "ns3", os.Getenv("BCFAB_NS3"), "`dir`ectory of the ns-3 simulator (scripts/ns3/fetch.sh, build.sh) that runs the ns3: schemes (default $BCFAB_NS3)")
	_ = cmd.MarkFlagDirname("ns3")
	return dir
}
