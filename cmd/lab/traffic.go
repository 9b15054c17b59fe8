//go:build linux

package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/api"
)

// genCmd starts a generated flow and, with --wait, reports what arrived.
func genCmd() *cobra.Command {
	var (
		frame        int
		order        string
		wait, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "gen SRC DST",
		Short: "a generated flow from server SRC to DST (obeys flow control)",
		Long: `Starts a flow of hostd's traffic generator from server SRC to server DST:
UDP frames that obey pauses and never overrun the NIC. With --wait, waits
for it to end and reports what arrived: rate, frames missing, one-way delay,
on the target's clock (the lab's time / D, its rate x D) with the lab's
rate beside. --duration is lab time.`,
		Example: "  lab gen --name pf h1 h0 --duration 5s\n  lab gen --name pf h2 h0 --bytes 10M --wait\n  lab gen --name dl h0 h3 --order 0,1 --duration 15s",
		GroupID: groupTraffic,
		Args:    exactArgs(2, "SRC DST"),
	}
	c := addCommon(cmd)
	cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, s string) ([]string, cobra.ShellCompDirective) {
		if len(args) >= 2 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return nodeArgs(c, false)(cmd, nil, s)
	}
	fs := cmd.Flags()
	dur := durationFlag(fs, "duration", "", "0s", "how long the flow sends, in lab time (10s at D = 5,000 is 2ms of the target)")
	size := sizeFlag(fs, "bytes", "0", "how many bytes the flow sends (with no --duration)")
	fs.IntVar(&frame, "frame", api.DefaultGenFrame, "frame length on the wire, without FCS")
	fs.StringVar(&order, "order", "", "fix the flow's level order (e.g. 1,0: correct level 1 first)")
	fs.BoolVar(&wait, "wait", false, "wait for the flow to finish and report what arrived")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		stdout := cmd.OutOrStdout()
		src, dst, t, m, err := genEnds(cmd, c, args)
		if err != nil {
			return err
		}
		if order != "" {
			if p, err := t.ParsePolicy(order); err != nil || p.Fixed == nil {
				return usagef(cmd, "--order %q: want a permutation of the levels 0..%d, such as %s", order, t.K(), exampleOrder(t))
			}
		}
		if frame < 64 || frame > api.DefaultGenFrame {
			return usagef(cmd, "--frame %d: want 64..%d bytes (on the wire, without FCS)", frame, api.DefaultGenFrame)
		}
		// The emulation's health over the flow (--wait): frames the flow
		// misses because the rings dropped them are not the fabric's.
		var before *lab.HealthSample
		if wait {
			before, _ = lab.SampleHealth(c.runRoot, c.name)
		}
		req := api.GenRequest{Dst: dst, Duration: int64(*dur), FrameLen: frame, Order: order, Bytes: int64(*size)}
		f, err := lab.StartFlow(c.runRoot, c.name, args[0], req)
		if err != nil {
			return err
		}
		if !wait {
			if asJSON {
				return writeJSON(stdout, f)
			}
			fmt.Fprintf(stdout, "flow %d: %s -> %s, udp %d -> %d, leaves %s queue %s, level order %s\n",
				f.ID, args[0], args[1], f.SPort, api.GenPort, bcube.HostPort(f.Port), f.Queue, f.Order)
			return nil
		}
		for !f.Done {
			time.Sleep(100 * time.Millisecond)
			r, err := lab.Flows(c.runRoot, c.name, args[0])
			if err != nil {
				return err
			}
			for i := range r.Flows {
				if r.Flows[i].ID == f.ID {
					f = &r.Flows[i]
				}
			}
		}
		time.Sleep(200 * time.Millisecond) // the last frames' way
		r, err := lab.Flows(c.runRoot, c.name, args[1])
		if err != nil {
			return err
		}
		var sink *api.SinkReport
		for i := range r.Sink {
			if r.Sink[i].Src == src && r.Sink[i].SPort == f.SPort {
				sink = &r.Sink[i]
			}
		}
		var health *lab.Health
		if before != nil {
			if after, err := lab.SampleHealth(c.runRoot, c.name); err == nil {
				h := after.Since(before, 0, lab.HealthLimits{})
				health = &h
			}
		}
		if asJSON {
			if err := writeJSON(stdout, map[string]any{"flow": f, "sink": sink, "model": m, "target": genTarget(m, f, sink), "emulation_health": health}); err != nil {
				return err
			}
			return invalidHealth(health)
		}
		if err := printGen(stdout, args, m, f, sink); err != nil && invalidHealth(health) == nil {
			return err
		}
		if health != nil {
			fmt.Fprintf(stdout, "  %s\n", health.Short())
		}
		return invalidHealth(health)
	}
	return cmd
}

// genClock is a generated flow's times and rates in the lab and on the
// target's clock: --json's "target" (the flow's and the sink's own
// fields are the lab's).
type genClock struct {
	SendLabNs      int64   `json:"send_lab_ns"`
	SendTargetNs   int64   `json:"send_target_ns"`
	RxRateLabBps   float64 `json:"rx_rate_lab_bps,omitempty"`
	RxRateTarget   float64 `json:"rx_rate_target_bps,omitempty"`
	AvgDelayLabNs  int64   `json:"avg_delay_lab_ns,omitempty"`
	AvgDelayTarget int64   `json:"avg_delay_target_ns,omitempty"`
	MaxDelayLabNs  int64   `json:"max_delay_lab_ns,omitempty"`
	MaxDelayTarget int64   `json:"max_delay_target_ns,omitempty"`
}

// genTarget is f's and sink's genClock under model m.
func genTarget(m scale.Model, f *api.GenFlow, sink *api.SinkReport) genClock {
	send := time.Duration(f.EndNs - f.StartNs)
	g := genClock{SendLabNs: int64(send), SendTargetNs: int64(m.TargetTime(send))}
	if sink != nil {
		g.RxRateLabBps = sinkRate(sink)
		g.RxRateTarget = m.TargetRate(g.RxRateLabBps)
		g.AvgDelayLabNs, g.MaxDelayLabNs = sink.AvgDelayNs, sink.MaxDelayNs
		g.AvgDelayTarget = int64(m.TargetTime(time.Duration(sink.AvgDelayNs)))
		g.MaxDelayTarget = int64(m.TargetTime(time.Duration(sink.MaxDelayNs)))
	}
	return g
}

// sinkRate is the rate at which sink received, in the lab (bit/s).
func sinkRate(sink *api.SinkReport) float64 {
	rx := float64(sink.LastNs-sink.FirstNs) / 1e9
	return float64(sink.Bytes) * 8 / max(rx, 1e-9)
}

// printGen reports a generated flow and what its sink counted, on the
// target's clock of model m with the lab's rate and send time beside.
func printGen(stdout io.Writer, args []string, m scale.Model, f *api.GenFlow, sink *api.SinkReport) error {
	send := time.Duration(f.EndNs - f.StartNs)
	fmt.Fprintf(stdout, "flow %d %s -> %s (%s queue %s, order %s): sent %s, %s in %s\n",
		f.ID, args[0], args[1], bcube.HostPort(f.Port), f.Queue, f.Order, units.Count(f.Packets, "frame", "frames"), units.Count(f.Bytes, "byte", "bytes"),
		m.TimeBoth(send))
	if sink == nil {
		return fmt.Errorf("gen: %s heard nothing of flow %d", args[1], f.ID)
	}
	fmt.Fprintf(stdout, "  received %s, %s, %s; %d missing; one-way delay avg %s, max %s\n",
		units.Count(sink.Packets, "frame", "frames"), units.Count(sink.Bytes, "byte", "bytes"), m.RateBoth(sinkRate(sink)), sink.Gaps,
		m.TimeText(time.Duration(sink.AvgDelayNs)), m.TimeText(time.Duration(sink.MaxDelayNs)))
	return nil
}

// genEnds reads SRC and DST, two servers of the lab, from its state
// (before anything reaches a daemon), and the lab's scale model.
func genEnds(cmd *cobra.Command, c *common, args []string) (src, dst int, t bcube.Topology, m scale.Model, err error) {
	st, err := lab.LoadState(c.runRoot, c.name)
	if err != nil {
		return 0, 0, t, m, err
	}
	if t, err = st.Spec.ServerTopology(); err != nil {
		return 0, 0, t, m, err
	}
	var ends [2]int
	for i, what := range []string{"SRC", "DST"} {
		n, ok := st.Node(args[i])
		if _, err := fmt.Sscanf(args[i], "h%d", &ends[i]); err != nil || !ok || n.Kind != lab.KindServer {
			return 0, 0, t, m, usagef(cmd, "%s %q: lab %s has servers h0..h%d", what, args[i], st.Lab, t.Servers()-1)
		}
	}
	if ends[0] == ends[1] {
		return 0, 0, t, m, usagef(cmd, "SRC and DST are both %s: want two servers", args[0])
	}
	return ends[0], ends[1], t, st.Spec.Model(), nil
}

// exampleOrder is a level order of t: k, ..., 0.
func exampleOrder(t bcube.Topology) string {
	var o []string
	for l := t.K(); l >= 0; l-- {
		o = append(o, fmt.Sprint(l))
	}
	return strings.Join(o, ",")
}

// invalidHealth is errInvalidRun with h's problems when h is invalid.
func invalidHealth(h *lab.Health) error {
	if h == nil || h.Valid {
		return nil
	}
	return fmt.Errorf("%w: the emulation did not keep up: %s", errInvalidRun, strings.Join(h.Problems, "; "))
}

// linkCmd changes, or with no change flag reports, the injected loss and
// link state of the cable at a node's port (lab.SetLink).
func linkCmd() *cobra.Command {
	var (
		down, up, asJSON bool
		dir              string
	)
	cmd := &cobra.Command{
		Use:   "link NODE PORT",
		Short: "injected loss and link down on the cable at NODE's PORT",
		Long: `Changes the cable at NODE's PORT while the lab runs: --loss P, --down or --up,
in --dir both (default), rx (what NODE receives there) or tx (what it
sends, dropped where the peer receives it). With none of them it reports
both ends.`,
		Example: "  lab link --name ls h1 eth0 --loss 1% --dir rx\n  lab link --name ls s0.1 p1 --down\n  lab link --name ls h1 eth0",
		GroupID: groupTraffic,
		Args:    exactArgs(2, "NODE PORT"),
	}
	c := addCommon(cmd)
	cmd.ValidArgsFunction = nodeArgs(c, true)
	fs := cmd.Flags()
	loss := lossFlag(fs, "loss", "0", "injected loss: a probability like 0.01, 1% or 100ppm; 0 stops it")
	fs.BoolVar(&down, "down", false, "drop every frame, as if the cable were cut")
	fs.BoolVar(&up, "up", false, "undo --down")
	fs.StringVar(&dir, "dir", "both", "`direction`s to change: both, rx (what NODE receives on PORT) or tx (what it sends)")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	completeWords(cmd, "dir", "both", "rx", "tx")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var lc lab.LinkConfig
		var err error
		if lc.Dir, err = lab.ParseLinkDir(dir); err != nil {
			return usagef(cmd, "%w", err)
		}
		if cmd.Flags().Changed("loss") {
			ppm := int(*loss)
			lc.LossPPM = &ppm
		}
		switch {
		case down && up:
			return usagef(cmd, "link: --down and --up together")
		case down, up:
			lc.Down = &down
		}
		ends, err := lab.SetLink(c.runRoot, c.name, args[0], args[1], lc)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(cmd.OutOrStdout(), ends)
		}
		for _, e := range ends {
			mark := ""
			if e.Changed {
				mark = "  (changed)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%v%s\n", e, mark)
		}
		return nil
	}
	return cmd
}
