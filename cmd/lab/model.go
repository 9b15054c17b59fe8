//go:build linux

package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/scale"
)

// modelCmd prints the scale model of a lab: every parameter of the target
// network and its value in the lab at a rate or dilation.
func modelCmd() *cobra.Command {
	var (
		target   string
		dilation float64
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "model",
		Short: "the scale model: every parameter of the target network and its value in a lab",
		Long: `Prints the scale model a lab runs: the target network it emulates (--target:
the papers' 100 Gb/s network by default) at dilation D = the target's link
rate / --rate (or --dilation), and every parameter the nodes and flows use,
with its value in the target and in the lab. Every time of the lab is the
target's x D, every rate / D, every amount of data the same bytes; the
pause hold alone keeps a floor of the emulator's (a pause must outlast a
descheduled daemon). Nothing is created.`,
		Example: "  lab model --rate 20M\n  lab model --dilation 1000\n  lab model --target native --rate 100M",
		GroupID: groupLab,
		Args:    cobra.NoArgs,
	}
	fs := cmd.Flags()
	rate := rateFlag(fs, "rate", "500M", "the lab's link rate")
	fs.StringVar(&target, "target", scale.PapersName, "the `network` emulated: papers, native or a target file")
	fs.Float64Var(&dilation, "dilation", 0, "the dilation `D` in place of --rate")
	fs.BoolVar(&asJSON, "json", false, "print the model and its parameters as JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if fs.Changed("dilation") && fs.Changed("rate") {
			return usageError{cmd: cmd, err: fmt.Errorf("--dilation and --rate: give one")}
		}
		t, err := lab.ResolveTarget(target, uint64(*rate))
		if err != nil {
			return usageError{cmd: cmd, err: fmt.Errorf("--target: %w", err)}
		}
		var m scale.Model
		if fs.Changed("dilation") {
			m, err = scale.WithDilation(t, dilation)
		} else {
			m, err = scale.Dilate(t, uint64(*rate))
		}
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(cmd.OutOrStdout(), struct {
				Model  scale.Model   `json:"model"`
				Params []scale.Param `json:"params"`
			}{m, m.Params()})
		}
		return writeModel(cmd.OutOrStdout(), m)
	}
	return cmd
}

// writeModel writes m's parameters as a table: name, the target's value,
// the lab's, and how it scales.
func writeModel(w io.Writer, m scale.Model) error {
	fmt.Fprintf(w, "%s\n\n", m)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "parameter\ttarget\tlab\tscaling")
	for _, p := range m.Params() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, paramValue(p.Kind, p.Target), paramValue(p.Kind, p.Lab), p.Kind)
	}
	return tw.Flush()
}

// paramValue prints a parameter's value in its unit.
func paramValue(k scale.Kind, v float64) string {
	switch k {
	case scale.KindTime, scale.KindFloored, scale.KindBounded:
		return time.Duration(math.Round(v)).String()
	case scale.KindRate:
		return strings.TrimSpace(lab.FormatRate(uint64(math.Round(v))))
	case scale.KindBytes:
		return fmt.Sprintf("%.0f B", v)
	}
	return fmt.Sprintf("%g", v)
}
