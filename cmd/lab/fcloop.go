//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/fabric/fcplus"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/scale"
)

// benchFCLoopCmd runs FC+'s deadlock scenario under each routing.
func benchFCLoopCmd() *cobra.Command {
	var (
		routings []string
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "fcloop",
		Short: "FC+'s deadlock scenario (fcplus-loop) under KSP and DF-KSP, PFC on",
		Long: `The fcplus-loop fabric (FC+, 8 ToRs of 4 fabric ports, 3 virtual switches,
2 servers each) with PFC, once per routing, the same four flows each time:
h4->h8, h12->h10, h8->h4, h10->h12 at line rate. Routed by plain K shortest
paths (ksp) their paths chase each other around tor6 -> tor4 -> tor5 ->
tor2 -> tor6, each holding one cable of the ring while it waits for the
next: PFC pauses the ring for ever and the watchdog names the cycle.
DF-KSP keeps only paths with at most N_lp - 1 down-up turns: with one
lossless priority (dfksp1) they never turn, with two (dfksp2) the ToRs
move a frame from priority 3 to 4 at its turn; neither can close a cycle.
Each routing's lab comes up, carries the flows for --duration, reports
each flow's throughput over the second half, the stalled queues and any
cycle, and goes down before the next. --target native (the default here)
runs the emulator's own network, whose X_off is a few frames, so the
loop's queues reach it at once.`,
		Example: "  lab bench fcloop\n  lab bench fcloop --routing ksp,dfksp2 --duration 10s --json",
		Args:    noArgs,
	}
	c := addCommon(cmd)
	fs := cmd.Flags()
	fs.StringSliceVar(&routings, "routing", []string{lab.RoutingKSP, lab.RoutingDFKSP1, lab.RoutingDFKSP2}, "routings to compare, each run in turn: ksp, dfksp1, dfksp2, fc")
	rate := rateFlag(fs, "rate", "100M", "link rate in bit/s")
	target := fs.String("target", scale.NativeName, "the `network` emulated: native (X_off a few frames) or papers")
	d := fs.Duration("duration", 6*time.Second, "how long the flows run in each lab")
	binDir := fs.String("bin-dir", "", "`dir`ectory with bcfabd, swd and hostd (default: the directory of lab)")
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if *d < 2*time.Second {
			return usagef(cmd, "--duration %v: want at least 2s (throughput is measured over the second half)", *d)
		}
		for _, r := range routings {
			if _, err := fcplus.ParseRouting(r); err != nil {
				return usagef(cmd, "--routing %q: want ksp, dfksp1, dfksp2 or fc", r)
			}
		}
		s := lab.Defaults()
		s.Name, s.RunRoot, s.RateBps, s.BinDir = c.name, c.runRoot, uint64(*rate), *binDir
		t, err := lab.ResolveTarget(*target, s.RateBps)
		if err != nil {
			return usagef(cmd, "--target: %v", err)
		}
		s.Target = t
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		res, err := lab.RunFCLoop(ctx, s, routings, *d, c.logger(cmd.ErrOrStderr()))
		if asJSON {
			if werr := writeJSON(cmd.OutOrStdout(), res); werr != nil {
				return werr
			}
		} else {
			printFCLoop(cmd.OutOrStdout(), s, res)
		}
		return err
	}
	return cmd
}

func printFCLoop(w io.Writer, s lab.Spec, res []lab.FCLoopResult) {
	sc := fcplus.Loop()
	m := benchModel(s)
	fmt.Fprintf(w, "%s: %s; PFC, %s links in the lab (%s network at D = %g)\n", sc.Name, sc.About, lab.FormatRate(s.RateBps), s.Target.Name, m.D)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"ROUTING", "PRIORITIES"}
	for _, f := range sc.Flows {
		head = append(head, f.Src+"->"+f.Dst)
	}
	fmt.Fprintln(tw, strings.Join(append(head, "DROPS", "STALLED", "DEADLOCK"), "\t"))
	for _, r := range res {
		row := []string{r.Routing, fmt.Sprint(r.Lossless)}
		for _, f := range r.Flows {
			row = append(row, fmt.Sprintf("%.1f Gb/s in the target", m.TargetRate(f.Bps)/1e9))
		}
		dl := "no"
		if r.Deadlocked() {
			dl = "yes: " + lab.CycleText(r.Cycle)
		}
		fmt.Fprintln(tw, strings.Join(append(row, fmt.Sprint(r.Drops), fmt.Sprint(len(r.Stalled)), dl), "\t"))
	}
	tw.Flush()
}
