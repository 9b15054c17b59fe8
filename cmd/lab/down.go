//go:build linux

package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/lab"
)

func downCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "down",
		Short:   "stop the daemons, delete the namespaces and run dir",
		Long:    "Removes everything of the lab: its daemons, namespaces, veths and run directory, from its state file (also after a crash or kill -9).",
		GroupID: groupLab,
		Args:    noArgs,
	}
	c := addCommon(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		start := time.Now()
		if err := lab.Down(c.runRoot, c.name, c.logger(cmd.ErrOrStderr())); err != nil {
			return err
		}
		took := time.Since(start)
		if asJSON {
			return writeJSON(cmd.OutOrStdout(), map[string]any{"lab": c.name, "down": true, "took_ns": took.Nanoseconds()})
		}
		fmt.Fprintf(cmd.OutOrStdout(), "lab %s is down (%v)\n", c.name, took.Round(time.Millisecond))
		return nil
	}
	return cmd
}

func listCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "the labs on this machine",
		GroupID: groupLab,
		Args:    noArgs,
	}
	c := addCommon(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		labs, err := lab.List(c.runRoot)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if asJSON {
			if labs == nil {
				labs = []lab.LabInfo{}
			}
			return writeJSON(out, labs)
		}
		if len(labs) == 0 {
			fmt.Fprintln(out, "no labs")
			return nil
		}
		return printLabs(out, labs)
	}
	return cmd
}

// printLabs prints labs as a table, as lab list does.
func printLabs(out io.Writer, labs []lab.LabInfo) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTOPOLOGY\tPHASE\tNODES\tNAMESPACES\tDAEMONS ALIVE\tCREATED")
	for _, l := range labs {
		if l.Orphan {
			fmt.Fprintf(tw, "%s\t?\torphan\t?\t%d\t?\tno state; lab down --name %s removes it\n", l.Name, l.Namespaces, l.Name)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", l.Name, listTopology(l), l.Phase, l.Nodes, l.Namespaces, l.Alive,
			l.Created.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

// listTopology is a lab's fabric for lab list: its state's name for it,
// or BCube(n,k) for an orphan's (and a state written before it had one).
func listTopology(l lab.LabInfo) string {
	if l.Topology != "" {
		return l.Topology
	}
	return fmt.Sprintf("BCube(%d,%d)", l.N, l.K)
}
