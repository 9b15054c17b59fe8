//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/units"
)

func execCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exec NODE -- CMD [ARG...]",
		Short: "run CMD inside NODE's namespace (h<i> or s<l>.<w>)",
		Long: `Runs CMD inside NODE's network namespace, with this terminal. Flags of lab
come before NODE; everything after NODE (a "--" first is dropped) is the
command. The exit status is the command's.`,
		Example: "  lab exec --name t1 h3 -- ip -br addr\n  lab exec h0 -- ping -c3 198.18.0.15",
		GroupID: groupTraffic,
	}
	c := addCommon(cmd)
	// Everything after NODE belongs to CMD, its flags included.
	cmd.Flags().SetInterspersed(false)
	cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, s string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nodeArgs(c, false)(cmd, args, s)
		}
		return nil, cobra.ShellCompDirectiveDefault
	}
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef(cmd, "exec: want NODE -- CMD [ARG...]")
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		node, rest := args[0], args[1:]
		if len(rest) > 0 && rest[0] == "--" {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			return usagef(cmd, "exec %s: no command (lab exec %s -- CMD [ARG...])", node, node)
		}
		return lab.Exec(c.name, node, rest)
	}
	return cmd
}

func captureCmd() *cobra.Command {
	var (
		file  string
		count int
		all   bool
	)
	cmd := &cobra.Command{
		Use:   "capture NODE PORT",
		Short: "what PORT of NODE transmits: signal frames decoded, -w pcap",
		Long: `Prints the flow-control frames (PortFC, BFC and ICI signals, PFC) on PORT of
NODE, decoded, as tcpdump in NODE's namespace sees them: what the port
transmits, and on a patched cable (lab up --links patch) what it receives
too; with --all every frame. MACs print as the node and port that own them (s0.0.p1,
h1.eth0), from the ethers file lab up writes in the lab's run directory.
-w also writes them to a pcap file, and the lab's ethers file beside it
(FILE.wireshark/ethers, a Wireshark configuration directory of the
capture's own), and prints the tshark command that reads the file with
the nodes named and the lab's frames decoded (scripts/bcfab.lua): it
works after lab down too.

With --all and no --count, the capture ends with its tally: the frames it
holds from each end of the cable, against the increase of each end's
tx_packets over the same window (two snapshots of both daemons, taken on
their worker threads once the port is reported captured and just before
the capture stops).`,
		Example: "  lab capture --name pf s0.0 p1 -c 10\n  lab capture --name pf h0 eth0 --all -w h0.pcap --duration 5s",
		GroupID: groupLook,
		Args:    exactArgs(2, "NODE PORT"),
	}
	c := addCommon(cmd)
	cmd.ValidArgsFunction = nodeArgs(c, true)
	fs := cmd.Flags()
	fs.StringVarP(&file, "write", "w", "", "also write the capture to this pcap `file`")
	fs.IntVarP(&count, "count", "c", 0, "stop after `count` printed frames (0: no limit)")
	dur := durationFlag(fs, "duration", "", "0s", "stop after this duration (0: until Ctrl-C)")
	fs.BoolVar(&all, "all", false, "print every frame, not only PortFC, BFC and ICI signals and PFC (the file then holds every frame too)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		node, port := args[0], args[1]
		if err := checkNodePort(cmd, c, node, port); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		what := "PortFC, BFC and ICI signals and PFC"
		if all {
			what = "every frame"
		}
		stderr := cmd.ErrOrStderr()
		// The lab's MACs by node and port; a lab from before the ethers
		// file prints MACs.
		ethers := lab.EthersPath(c.runRoot, c.name)
		names, err := lab.ReadEthers(ethers)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		var tally *lab.Tally
		if all && count == 0 && names != nil {
			if tally, err = lab.NewTally(c.runRoot, c.name, node, port, names); err != nil {
				tally = nil // a port without a cable (bc0): nothing to tally
			}
		}
		opts := lab.CaptureOptions{File: file, Count: count, Duration: dur.D(), All: all, Names: names,
			OnListening: func() {
				fmt.Fprintf(stderr, "capturing %s on %s %s (lab %s); Ctrl-C stops\n", what, node, port, c.name)
				if tally != nil {
					go tally.Start(ctx) //nolint:errcheck // Result reports it
				}
			}}
		var res lab.CaptureResult
		opts.Result = &res
		if tally != nil {
			opts.OnFrame = tally.Frame
			opts.BeforeStop = func() { _ = tally.Stop() }
		}
		// Printing every frame is work too: it yields to the daemons,
		// as tcpdump does (lab.Capture lowers its priority).
		_ = lab.LowerOwnPriority()
		err = lab.Capture(ctx, c.name, node, port, opts, cmd.OutOrStdout())
		if errors.Is(err, context.Canceled) {
			err = nil // Ctrl-C or SIGTERM: the user's way to stop
		}
		if err == nil && res.DroppedByKernel > 0 {
			fmt.Fprintf(stderr, "tcpdump: the kernel dropped %s its buffer could not hold (%d captured)\n", units.Count(res.DroppedByKernel, "frame", "frames"), res.Captured)
		}
		if err == nil && tally != nil {
			if r, terr := tally.Result(); terr != nil {
				fmt.Fprintf(stderr, "no tally: %v\n", terr)
			} else {
				fmt.Fprintln(stderr, r)
			}
		}
		if err == nil && file != "" && names != nil {
			// The names go with the file, to outlive the lab.
			dir, kerr := lab.KeepNames(c.runRoot, c.name, file)
			if kerr != nil {
				return fmt.Errorf("wrote %s, but not its names: %w", file, kerr)
			}
			dissector := lab.Dissector()
			fmt.Fprintf(stderr, "wrote %s, and its nodes' names in %s/ethers; read it, after lab down too, with\n  %s\n",
				file, dir, lab.TsharkCommand(file, dir, dissector))
			if dissector == "" {
				fmt.Fprintf(stderr, "  (and -X lua_script:<the source tree>/%s to decode the lab's 0x88B5 frames)\n", lab.DissectorScript)
			}
		}
		return err
	}
	return cmd
}
