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
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
)

// errInvalidRun is returned when a run's emulation health is invalid: the
// report was printed, flagged, and the exit status is 3.
var errInvalidRun = errors.New("invalid run")

// healthFlags are the thresholds of a valid run, for every command that
// judges one.
type healthFlags struct {
	maxLost  *string
	maxRings *int64
}

func addHealthFlags(fs interface {
	String(string, string, string) *string
	Int64(string, int64, string) *int64
}) healthFlags {
	return healthFlags{
		maxLost:  fs.String("max-lost", "1%", "largest share of the run a port may lose to a late daemon for the run to be valid (-1: no limit)"),
		maxRings: fs.Int64("max-ring-drops", 0, "most frames the kernel's XSK rings may drop for the run to be valid (-1: no limit)"),
	}
}

func (h healthFlags) limits() (lab.HealthLimits, error) {
	l := lab.HealthLimits{MaxRingDrops: *h.maxRings}
	s := strings.TrimSpace(*h.maxLost)
	if s == "-1" {
		l.MaxLostShare = -1
		return l, nil
	}
	var v float64
	var err error
	if p, ok := strings.CutSuffix(s, "%"); ok {
		_, err = fmt.Sscanf(p, "%g", &v)
		v /= 100
	} else {
		_, err = fmt.Sscanf(s, "%g", &v)
	}
	if err != nil || v <= 0 || v > 1 {
		return l, fmt.Errorf("--max-lost %q: want a share such as 1%% or 0.01, or -1", *h.maxLost)
	}
	l.MaxLostShare = v
	return l, nil
}

func cmdWorkload(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("workload", "[--name L] [--cdf websearch|hadoop|storage|FILE] [--load L] [--incast N] [--pattern ps|moe] [--duration D] [--seed S] [flags]", stderr)
	cdfName := fs.String("cdf", "websearch", "flow sizes of the background: "+strings.Join(workload.BuiltinCDFs(), ", ")+", or a CDF file")
	load := fs.Float64("load", 0.5, "offered load of the Poisson background, a fraction of the host links (0: none)")
	basis := fs.String("basis", "link", "what the load is a fraction of: one host link (link) or all of a host's links (host)")
	dur := fs.Duration("duration", 10*time.Second, "the window in which flows start")
	seed := fs.Uint64("seed", 1, "seed of every random choice: the same seed gives the same flows")
	incast := fs.Int("incast", 0, "senders of a periodic N-to-1 incast (0: none)")
	incastSize := fs.String("incast-size", "1MB", "bytes each incast sender sends")
	incastPeriod := fs.Duration("incast-period", 0, "time between two incasts (0: the incast takes 25% of one host link on average: 2.56s for 8 x 1MB at 100 Mb/s)")
	incastStart := fs.Duration("incast-start", 0, "time of the first incast")
	pattern := fs.String("pattern", "", "a periodic collective: ps (parameter server) or moe (mixture of experts)")
	patternSize := fs.String("pattern-size", "256KB", "bytes of every flow of the pattern")
	patternPeriod := fs.Duration("pattern-period", time.Second, "time between two events of the pattern")
	patternGap := fs.Duration("pattern-gap", 0, "time from a pattern's first phase to its second (0: half the period)")
	maxFlows := fs.Int("max-flows", 0, "refuse schedules longer than this (0: the library's bound)")
	mode := fs.String("mode", "lossless", "loss recovery of the flows: lossless, gbn or irn")
	noDCQCN := fs.Bool("no-dcqcn", false, "no DCQCN rate control")
	mtu := fs.Int("mtu", 0, "payload per packet (0: 1024)")
	drain := fs.Duration("drain", 0, "how long to wait for flows after the last start (0: the largest of 10s, --duration and 4 x the slowest flow's ideal FCT)")
	interval := fs.Duration("i", time.Second, "time between progress lines (on stderr)")
	records := fs.String("records", "", "write the per-flow records to `file`: CSV, or JSON lines if it ends in .jsonl or .json")
	queues := fs.String("queues", "", "write the queue-length time series (bytes queued at every node, every -i) to `file` as CSV")
	asJSON := fs.Bool("json", false, "print the report (records and queue series included) as JSON")
	dryRun := fs.Bool("dry-run", false, "print the schedule (CSV: id,src,dst,size,start_ns,kind,group) and run nothing")
	hf := addHealthFlags(fs)
	pos, rest, err := parse(fs, args, 0)
	if err != nil {
		return err
	}
	if err := noMore("workload", pos, rest); err != nil {
		return err
	}
	cfg := workload.Config{Load: *load, Duration: *dur, Seed: *seed, MaxFlows: *maxFlows}
	if cfg.Basis, err = workload.ParseBasis(*basis); err != nil {
		return err
	}
	if *load > 0 {
		if cfg.CDF, err = workload.OpenCDF(*cdfName); err != nil {
			return err
		}
	}
	if *incast > 0 {
		n, err := lab.ParseSize(*incastSize)
		if err != nil {
			return fmt.Errorf("--incast-size: %w", err)
		}
		cfg.Incast = &workload.Incast{Senders: *incast, Size: int64(n), Period: *incastPeriod, Start: *incastStart}
	}
	if *pattern != "" {
		k, err := workload.ParseKind(*pattern)
		if err != nil || (k != workload.KindPS && k != workload.KindMoE) {
			return fmt.Errorf("--pattern %q: want ps or moe", *pattern)
		}
		n, err := lab.ParseSize(*patternSize)
		if err != nil {
			return fmt.Errorf("--pattern-size: %w", err)
		}
		cfg.Pattern = &workload.Pattern{Kind: k, Size: int64(n), Period: *patternPeriod, Gap: *patternGap}
	}
	limits, err := hf.limits()
	if err != nil {
		return err
	}
	if *dryRun {
		return dryRunWorkload(c, cfg, stdout)
	}
	o := lab.WorkloadOptions{Config: cfg, Mode: *mode, NoDCQCN: *noDCQCN, MTU: *mtu, Drain: *drain, Interval: *interval, Limits: limits}
	if *interval > 0 {
		o.Progress = func(p lab.WorkloadProgress) { fmt.Fprintln(stderr, p) }
	}
	// Check the records file can be written before running.
	var recOut *os.File
	if *records != "" {
		if recOut, err = os.Create(*records); err != nil {
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
			os.Remove(*records)
		}
		return err
	}
	if recOut != nil {
		write := workload.WriteCSV
		if ext := filepath.Ext(*records); ext == ".jsonl" || ext == ".json" {
			write = workload.WriteJSONL
		}
		if err := write(recOut, rep.Records); err != nil {
			return err
		}
		if err := recOut.Close(); err != nil {
			return err
		}
	}
	if *queues != "" {
		if err := writeFile(*queues, rep.WriteQueuesCSV); err != nil {
			return err
		}
	}
	if *asJSON {
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

// cmdHealth reports the emulation health of a lab since its daemons
// started, or over a window of --for.
func cmdHealth(args []string, stdout, stderr io.Writer) error {
	fs, c := newFlags("health", "[--name L] [--for D] [--json]", stderr)
	window := fs.Duration("for", 0, "judge a window of this length from now, instead of everything since the daemons started")
	asJSON := fs.Bool("json", false, "print JSON")
	hf := addHealthFlags(fs)
	pos, rest, err := parse(fs, args, 0)
	if err != nil {
		return err
	}
	if err := noMore("health", pos, rest); err != nil {
		return err
	}
	limits, err := hf.limits()
	if err != nil {
		return err
	}
	var h lab.Health
	if *window > 0 {
		before, err := lab.SampleHealth(c.runRoot, c.name)
		if err != nil {
			return err
		}
		time.Sleep(*window)
		after, err := lab.SampleHealth(c.runRoot, c.name)
		if err != nil {
			return err
		}
		h = after.Since(before, 0, limits)
	} else {
		st, err := lab.LoadState(c.runRoot, c.name)
		if err != nil {
			return err
		}
		s, err := lab.SampleHealth(c.runRoot, c.name)
		if err != nil {
			return err
		}
		h = s.Since(nil, time.Since(st.Created), limits)
	}
	if *asJSON {
		err = writeJSON(stdout, h)
	} else {
		err = h.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if !h.Valid {
		return fmt.Errorf("%w: %s", errInvalidRun, strings.Join(h.Problems, "; "))
	}
	return nil
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
