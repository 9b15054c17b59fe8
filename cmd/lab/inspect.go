//go:build linux

package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/lab"
)

// inspectCmd prints a running lab as the lab file that reproduces it, or
// its state.
func inspectCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "inspect",
		Short: "a running lab as its lab file (-o yaml) or its state (-o json)",
		Long: `Prints a running lab, from its state.json: -o yaml (the default) as the lab
file that brings the same lab up again (lab up -f), -o json as its state
(spec, nodes, pids, sockets). The file is the lab as brought up: changes
made later with lab link are not in it.`,
		Example: "  lab inspect --name pf > pf.yaml\n  lab down --name pf && lab up -f pf.yaml\n  lab inspect --name pf -o json",
		GroupID: groupLab,
		Args:    noArgs,
	}
	c := addCommon(cmd)
	cmd.Flags().StringVarP(&format, "output", "o", "yaml", "`format`: yaml (a lab file) or json (the state)")
	completeWords(cmd, "output", "yaml", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		st, err := lab.LoadState(c.runRoot, c.name)
		if err != nil {
			return err
		}
		switch format {
		case "yaml":
			return writeLabFile(cmd.OutOrStdout(), st)
		case "json":
			return writeJSON(cmd.OutOrStdout(), st)
		}
		return usagef(cmd, "-o %q: want yaml or json", format)
	}
	return cmd
}

// writeLabFile writes the lab file of a running lab: every knob it runs
// with that is not the default.
func writeLabFile(w io.Writer, st *lab.State) error {
	comment := fmt.Sprintf("lab %s, up since %s; lab up -f FILE brings it up again", st.Lab, st.Created.Local().Format(time.DateTime))
	return lab.FileOf(st.Spec).WriteYAML(w, comment)
}

// graphCmd draws a fabric: a running lab's, a lab file's or BCube(n,k).
func graphCmd() *cobra.Command {
	var (
		file, dot, svg string
		n, k           int
	)
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "the fabric as a picture: Graphviz DOT and SVG",
		Long: `Draws a fabric: a running lab's (--name), a lab file's (-f) or a bare
BCube(n,k) (--n, --k). --svg writes SVG drawn by lab itself (no Graphviz
needed): servers in a row, each level's switches above them, cables
coloured by level, overridden cables labelled (rate, loss; down dashed);
a leaf-spine, fat-tree or expander by tiers (servers, then each switch
at its distance from them), cables within a tier as arcs, cables faster
than the lab's rate labelled. --dot writes Graphviz DOT, for those who install Graphviz (apt-get install graphviz; then dot -Tpng fabric.dot > fabric.png). With
neither, DOT goes to stdout.`,
		Example: "  lab graph --name pf --svg pf.svg --dot pf.dot\n  lab graph -f examples/bcube21-pfc-lossy.yaml --svg lossy.svg\n  lab graph --n 4 --k 1 --svg bcube41.svg",
		GroupID: groupLab,
		Args:    noArgs,
	}
	c := addCommon(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&file, "file", "f", "", "draw the lab of this lab `file`")
	fs.IntVarP(&n, "n", "n", 0, "draw a bare BCube(`n`,k)")
	fs.IntVarP(&k, "k", "k", 0, "draw a bare BCube(n,`k`)")
	fs.StringVar(&dot, "dot", "", "write Graphviz DOT to this `file` (-: stdout)")
	fs.StringVar(&svg, "svg", "", "write SVG to this `file` (-: stdout)")
	_ = cmd.MarkFlagFilename("file", "yaml", "yml")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var spec lab.Spec
		var err error
		switch {
		case file != "":
			spec, err = lab.ReadFile(file)
		case cmd.Flags().Changed("n") || cmd.Flags().Changed("k"):
			spec = lab.Defaults()
			spec.Name, spec.N, spec.K = c.name, n, k
			_, err = lab.NewPlan(spec)
		default:
			var st *lab.State
			if st, err = lab.LoadState(c.runRoot, c.name); err == nil {
				spec = st.Spec
			}
		}
		if err != nil {
			return err
		}
		if dot == "" && svg == "" {
			dot = "-"
		}
		for _, out := range []struct {
			path  string
			write func(io.Writer, lab.Spec) error
		}{{dot, lab.WriteDOT}, {svg, lab.WriteSVG}} {
			switch out.path {
			case "":
			case "-":
				if err := out.write(cmd.OutOrStdout(), spec); err != nil {
					return err
				}
			default:
				if err := writeFile(out.path, func(w io.Writer) error { return out.write(w, spec) }); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return cmd
}
