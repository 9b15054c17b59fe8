//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/internal/buildinfo"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/ns3"
	"github.com/bcfab/bcfab/lab/workload"
)

// ns3Cmd bridges a lab to the HPCC ns-3 simulator (package ns3): export
// writes the sim's input for a lab and a workload, compare reads its
// output beside bcfab's records of the same schedule.
func ns3Cmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ns3 export|compare",
		Short: "the HPCC ns-3 simulator's input for a lab and a workload; its output beside bcfab's",
		Long: `Bridges a lab to the ns-3 simulator of the HPCC lineage
(github.com/alibaba-edu/High-Precision-Congestion-Control): 'export' writes
the simulator's input directory for a lab's fabric and the flows lab
workload would run, in the target network's units, with maps back to
bcfab's nodes, ports and flows; 'compare' reads the simulator's fct.txt
there beside bcfab's records of the same schedule. Neither needs root
nor a lab up. docs/VALIDATION.md says what the two model differently;
scripts/ns3/README.md how to build and run the simulator.`,
		GroupID: groupBench,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef(cmd, "ns3: want export or compare (lab ns3 export -f LAB.yaml -o DIR)")
		},
	}
	cmd.AddCommand(ns3ExportCmd(), ns3CompareCmd())
	return cmd
}

func ns3ExportCmd() *cobra.Command {
	var (
		file, out string
		force     bool
		hostLink  string
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "write the simulator's input for a lab (-f FILE or --name) and a workload",
		Long: `Writes the input directory of the HPCC ns-3 simulator for the lab of a lab
file (-f) or a lab up (--name; read from its state, nothing is sent to it)
and the schedule lab workload would run on it with the same flags (the
flows of lab workload --dry-run; with --flows, the file's hand-made
flows, which lab workload --flows runs): config.txt, topology.txt,
flow.txt and trace.txt for the simulator, in the target's units (times
/ D, rates x D); nodes.csv, ports.csv and flows.csv to map its ids back
to bcfab's nodes, ports and flows; and a README.md that names this
build and command and says, with this export's numbers, what the two
tools model differently. A BCube server, which relays, is a relay switch
in front of a host of one NIC there, its link to the relay at the rate
of the server's fastest port (--host-link port) or at the sum of its
ports (--host-link ports, every flow still at one port's rate: a key
only a sim from scripts/ns3/qp-rate.sh reads).`,
		Example: `  lab ns3 export --name pf --cdf websearch --load 0.5 --duration 10s --seed 1 -o /tmp/ns3/ws
  lab ns3 export -f examples/bcube41-portfc.yaml --incast 8 --load 0 --duration 5s -o /tmp/ns3/incast
  lab ns3 export -f examples/bcube41-portfc.yaml --flows flows.csv -o /tmp/ns3/hand`,
		Args: noArgs,
	}
	c := addCommon(cmd)
	sf := addScheduleFlags(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&file, "file", "f", "", "export the lab of this lab `file` (default: the lab up as --name)")
	fs.StringVarP(&out, "out", "o", "", "write the simulator's input to `dir` (created; it must be empty)")
	fs.BoolVar(&force, "force", false, "write over an export in --out")
	fs.StringVar(&hostLink, "host-link", string(ns3.HostLinkPort), "a BCube server's host link in the sim: `port` (its fastest port's rate) or ports (their sum; needs scripts/ns3/qp-rate.sh's sim)")
	_ = cmd.MarkFlagFilename("file", "yaml", "yml")
	_ = cmd.MarkFlagDirname("out")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if out == "" {
			return usagef(cmd, "export: want -o DIR")
		}
		hl, err := ns3.ParseHostLink(hostLink)
		if err != nil {
			return usagef(cmd, "--host-link: %w", err)
		}
		cfg, err := sf.config(cmd)
		if err != nil {
			return err
		}
		var spec lab.Spec
		if file != "" {
			if spec, err = lab.ReadFile(file); err != nil {
				return inputUsage(cmd, file, err)
			}
		} else {
			st, err := lab.LoadState(c.runRoot, c.name)
			if err != nil {
				return err
			}
			spec = st.Spec
		}
		plan, err := lab.NewPlan(spec)
		if err != nil {
			return inputUsage(cmd, file, err)
		}
		cc, err := lab.WorkloadOptions{CC: sf.flowCC, NoDCQCN: sf.noDCQCN}.FlowCC(spec.CC)
		if err != nil {
			return usagef(cmd, "--cc: %w", err)
		}
		var flows []workload.Flow
		if sf.flows != nil {
			if cfg, err = lab.SpecFlows(plan.Spec, cfg, sf.flows); err != nil {
				if errors.As(err, new(*lab.FlowError)) {
					return sf.flowsError(cmd, err)
				}
				return usagef(cmd, "%w", err)
			}
			for i, f := range sf.flows {
				if f.After != 0 {
					return inputUsage(cmd, sf.flowsFile, fmt.Errorf("%s:%d: flow %d: after %d: the sim starts every flow at its time, and waits for no group", sf.flowsFile, sf.lines[i], i, f.After))
				}
			}
			flows = sf.flows
		} else if cfg, flows, err = lab.SpecSchedule(plan.Spec, cfg); err != nil {
			return usagef(cmd, "%w", err)
		}
		sim, err := ns3.New(ns3.Input{Plan: plan, Flows: flows, Duration: cfg.Duration, CC: cc, MTU: sf.mtu, Drain: sf.drain.D(), HostLink: hl,
			Build: buildinfo.Read().Line("lab"), Command: "lab " + strings.Join(os.Args[1:], " ")})
		if err != nil {
			return usagef(cmd, "%w", err)
		}
		if err := sim.Write(out, force); err != nil {
			return err
		}
		relays := 0
		for _, n := range sim.Nodes {
			if n.Role == ns3.RoleRelay {
				relays++
			}
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %s as %d sim nodes (%d relays), %d links; %d flows of %s, the sim stopping at %v of its clock; %s says what differs\n",
			out, sim.Topology, len(sim.Nodes), relays, len(sim.Links), len(sim.Flows), sim.CC, sim.Stop, ns3.ReadmeFile)
		return nil
	}
	return cmd
}

func ns3CompareCmd() *cobra.Command {
	var (
		simDir, records string
		asJSON          bool
	)
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "the simulator's FCTs beside bcfab's, by size bin and flow for flow",
		Long: `Reads the simulator's fct.txt in an export's directory (--sim), joins its
lines to the export's flows (flows.csv), and prints them beside bcfab's
records of a run of the same schedule (--bcfab: lab workload's --records
file, CSV or JSON lines, or its --json report): per size bin the flows
each completed, the mean FCT of each and their ratio, and the slowdown's
p50, p95 and p99 of each; then the ratio of the FCTs flow for flow. Times
are the target's; each tool's slowdown is against the flow's ideal FCT
in its own network (flows.csv: the sim's with its path, headers and ACKs).
Records of another schedule are refused.`,
		Example: "  lab ns3 compare --sim /tmp/ns3/ws --bcfab ws.csv",
		Args:    noArgs,
	}
	fs := cmd.Flags()
	fs.StringVar(&simDir, "sim", "", "the export's `dir`, where the simulator wrote fct.txt")
	fs.StringVar(&records, "bcfab", "", "bcfab's records of the run: lab workload's --records `file` or its --json report")
	fs.BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	_ = cmd.MarkFlagDirname("sim")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if simDir == "" || records == "" {
			return usagef(cmd, "compare: want --sim DIR and --bcfab FILE")
		}
		flows, sim, err := ns3.ReadSim(simDir)
		if err != nil {
			return err
		}
		ours, err := ns3.ReadRecords(records)
		if err != nil {
			return err
		}
		cmp, err := ns3.Compare(flows, ours, sim, workload.DefaultBins)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(cmd.OutOrStdout(), cmp)
		}
		return cmp.WriteText(cmd.OutOrStdout())
	}
	return cmd
}
