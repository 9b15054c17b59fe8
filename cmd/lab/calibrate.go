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
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/scale"
)

// calibrateCmd measures this machine's capacity on the reference point
// and stores it for --rate auto.
func calibrateCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "measure this machine's capacity for --rate auto: CPU per frame-hop, jitter",
		Long: `Measures what this machine carries: it brings up the reference lab (BCube(4,1),
PortFC with ECN), runs WebSearch at load 0.5 for --duration, reads how much
of its worker thread's CPU a frame-hop cost, the links' p99 one-hop RTT
error and the flows' start lag, takes the lab down, and stores the result
in --file (one per machine). --rate auto (lab up, lab experiment run) reads
it: a point runs at the smallest D whose frame-hops cost a worker at most
` + fmt.Sprintf("%.0f%%", 100*scale.MaxWorkerLoad) + ` of a CPU. A run that was INVALID is not stored: measure
again on a quieter machine.`,
		Example: "  lab calibrate\n  lab calibrate --duration 40s",
		GroupID: groupLab,
		Args:    noArgs,
	}
	ef := addExperimentFlags(cmd, "100M")
	dur := durationFlag(cmd.Flags(), "duration", "", lab.CalibrateDuration.String(), "how long the reference workload runs, lab time")
	cmd.Flags().StringVar(&file, "file", lab.DefaultCapacityFile, "where the capacity is stored")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		spec := ef.spec(cmd.Flags(), "calib")
		if dur.D() < 5*time.Second {
			return usagef(cmd, "--duration %v: want at least 5s", dur.D())
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		c, err := lab.Calibrate(ctx, lab.CalibrateOptions{Name: spec.Name, RunRoot: spec.RunRoot, BinDir: spec.BinDir, RateBps: spec.RateBps,
			Duration: dur.D(), Log: ef.c.logger(cmd.ErrOrStderr())})
		if err != nil {
			return err
		}
		if ef.asJSON {
			if err := writeJSON(cmd.OutOrStdout(), c); err != nil {
				return err
			}
		} else {
			writeCapacity(cmd.OutOrStdout(), c)
		}
		if err := c.Save(file); err != nil {
			return err
		}
		if !ef.asJSON {
			fmt.Fprintf(cmd.OutOrStdout(), "stored in %s\n", file)
		}
		return nil
	}
	return cmd
}

// writeCapacity prints c and the D it gives the reference point.
func writeCapacity(w io.Writer, c lab.Capacity) {
	health := "valid"
	if !c.Valid {
		health = "INVALID: " + strings.Join(c.Problems, "; ")
	}
	fmt.Fprintf(w, "machine %s (%s, %d CPUs, kernel %s), %s\n", c.Machine.Host, c.Machine.CPU, c.Machine.CPUs, c.Machine.Kernel, c.Measured.Format(time.DateTime))
	fmt.Fprintf(w, "reference run at D = %.0f: %s; %d frame-hops in %v of lab time (%v of the target)\n", c.D, health, c.FrameHops, c.Wall.Round(time.Millisecond), c.TargetElapsed.Round(time.Microsecond))
	fmt.Fprintf(w, "  worker: %v of CPU per frame-hop, %.0f%% of a CPU busiest\n", c.WorkerPerHop.Round(10*time.Nanosecond), 100*c.WorkerLoad)
	fmt.Fprintf(w, "  latency: %v per hop idle; p99 one-hop RTT %+.0f%% of the model's; flows started %v of the target late at p99\n",
		c.IdlePerHop.Round(time.Microsecond), 100*c.RTTErrorP99, c.StartLagP99.Round(time.Nanosecond))
	if c.Valid {
		d, why := c.AutoDilation(c.DataFramesPerTargetMs)
		fmt.Fprintf(w, "the reference point at --rate auto: %s links (%s)\n", lab.FormatRate(uint64(float64(scale.Papers().LinkRateBps)/d)), why)
	}
}
