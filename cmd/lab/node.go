//go:build linux

package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/lab"
)

// nodeCmd takes one node down and up again while the fabric runs.
func nodeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "node stop|start NODE",
		Short:   "take one node down and up again while the fabric runs",
		GroupID: groupLab,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef(cmd, "node: want stop or start and a node: lab node stop|start NODE")
		},
	}
	for _, verb := range []string{"stop", "start"} {
		sub := &cobra.Command{
			Use:   verb + " NODE",
			Short: map[string]string{"stop": "take NODE down: its engine, sockets and programs (namespace and cables stay)", "start": "bring NODE up again after a stop"}[verb],
			Args:  exactArgs(1, "NODE"),
		}
		c := addCommon(sub)
		sub.ValidArgsFunction = nodeArgs(c, false)
		sub.RunE = func(cmd *cobra.Command, args []string) error {
			var err error
			if verb == "stop" {
				err = lab.StopNode(c.runRoot, c.name, args[0], c.logger(cmd.ErrOrStderr()))
			} else {
				err = lab.StartNode(context.Background(), c.runRoot, c.name, args[0], c.logger(cmd.ErrOrStderr()))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", args[0], map[string]string{"stop": "stopped", "start": "started"}[verb])
			return nil
		}
		cmd.AddCommand(sub)
	}
	return cmd
}
