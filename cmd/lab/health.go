//go:build linux

package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/scale"
)

// healthFlags are the thresholds of a valid run, for every command that
// judges one.
type healthFlags struct {
	maxLost  string
	maxRTT   string
	maxRTT99 string
	maxSkip  string
	maxRings int64
	startLag time.Duration
}

func addHealthFlags(fs *pflag.FlagSet) *healthFlags {
	h := &healthFlags{}
	fs.StringVar(&h.maxLost, "max-lost", "1%", "largest `share` of the run a port may lose to a late daemon for the run to be valid (-1: no limit)")
	fs.Int64Var(&h.maxRings, "max-ring-drops", 0, "most `frames` the kernel's XSK rings may drop for the run to be valid (-1: no limit)")
	fs.StringVar(&h.maxRTT, "max-rtt-error", "10%", "largest `share` by which the links' median one-hop RTT may miss the model's (the target's x D) for the run to be valid (-1: no limit)")
	fs.StringVar(&h.maxRTT99, "max-rtt-error-p99", "200%", "largest `share` by which the links' p99 one-hop RTT may exceed the model's for the run to be valid (-1: no limit)")
	fs.StringVar(&h.maxSkip, "max-skipped", fmt.Sprintf("%g%%", 100*scale.MaxSkippedShare), "largest `share` of the run a worker may skip, later than its replay reaches, for the run to be valid (-1: no limit)")
	fs.DurationVar(&h.startLag, "max-start-lag", scale.MaxStartLag, "largest p99 start lag of a workload's flows, in the target's `time`, for the run to be valid (-1ns: no limit)")
	return h
}

// share reads a share flag: "1%", "0.01", or -1 (no limit).
func share(flag, s string) (float64, error) { return parseShare(flag, s, 1, "1% or 0.01") }

// ratio reads a share flag that may pass 100%: "200%", "2", or -1 (no
// limit).
func ratio(flag, s string) (float64, error) { return parseShare(flag, s, 1000, "200% or 2") }

// parseShare reads a share above 0 and at most most, in percent or as a
// fraction, or -1 (no limit); example is what the error suggests.
func parseShare(flag, s string, most float64, example string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "-1" {
		return -1, nil
	}
	var v float64
	var err error
	if p, ok := strings.CutSuffix(s, "%"); ok {
		_, err = fmt.Sscanf(p, "%g", &v)
		v /= 100
	} else {
		_, err = fmt.Sscanf(s, "%g", &v)
	}
	if err != nil || v <= 0 || v > most {
		return 0, fmt.Errorf("--%s %q: want a share such as %s, or -1", flag, s, example)
	}
	return v, nil
}

func (h *healthFlags) limits() (lab.HealthLimits, error) {
	l := lab.HealthLimits{MaxRingDrops: h.maxRings}
	var err error
	if l.MaxLostShare, err = share("max-lost", h.maxLost); err != nil {
		return l, err
	}
	if l.MaxRTTError, err = share("max-rtt-error", h.maxRTT); err != nil {
		return l, err
	}
	if l.MaxRTTErrorP99, err = ratio("max-rtt-error-p99", h.maxRTT99); err != nil {
		return l, err
	}
	if l.MaxSkippedShare, err = share("max-skipped", h.maxSkip); err != nil {
		return l, err
	}
	switch {
	case h.startLag < 0:
		l.MaxStartLag = -1
	case h.startLag == 0:
		return l, fmt.Errorf("--max-start-lag 0: want a time in the target such as 5us, or -1ns")
	default:
		l.MaxStartLag = h.startLag
	}
	return l, nil
}

// healthCmd reports the emulation health of a lab since its daemons
// started, or over a window of --for.
func healthCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "health",
		Short: "emulation health: daemon CPU, XSK ring drops, shaper lag",
		Long: `Judges whether the emulation keeps up: the daemons' CPU time, the frames the
kernel's XSK rings dropped, each shaped port's lost link time and the links'
achieved one-hop RTT against the model's (the fidelity monitor), since the
daemons started or over the next --for. Exits 3 when invalid.`,
		Example: "  lab health --name wl\n  lab health --name wl --for 5s",
		GroupID: groupLook,
		Args:    noArgs,
	}
	c := addCommon(cmd)
	fs := cmd.Flags()
	window := durationFlag(fs, "for", "", "0s", "judge a window of this length from now, instead of everything since the daemons started")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	hf := addHealthFlags(fs)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		limits, err := hf.limits()
		if err != nil {
			return usagef(cmd, "%w", err)
		}
		var h lab.Health
		if *window > 0 {
			before, err := lab.SampleHealth(c.runRoot, c.name)
			if err != nil {
				return err
			}
			time.Sleep(window.D())
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
		if asJSON {
			err = writeJSON(cmd.OutOrStdout(), h)
		} else {
			err = h.WriteText(cmd.OutOrStdout())
		}
		if err != nil {
			return err
		}
		if !h.Valid {
			return fmt.Errorf("%w: %s", errInvalidRun, strings.Join(h.Problems, "; "))
		}
		return nil
	}
	return cmd
}
