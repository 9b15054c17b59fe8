//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/api"
)

func statusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "status",
		Short:   "per node: pid, alive, healthy, rx/tx, drops; stalls and deadlocks",
		GroupID: groupLook,
		Args:    noArgs,
	}
	c := addCommon(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		err := runStatus(cmd.OutOrStdout(), c, asJSON)
		if errors.Is(err, lab.ErrNoLab) && !cmd.Flags().Changed("name") && !asJSON {
			return otherLabs(cmd.OutOrStdout(), c, err)
		}
		return err
	}
	return cmd
}

// otherLabs answers a status of the default lab, which does not exist,
// with the labs that do: err, and which --name to give.
func otherLabs(out io.Writer, c *common, err error) error {
	labs, lerr := lab.List(c.runRoot)
	if lerr != nil || len(labs) == 0 {
		return fmt.Errorf("no lab named %s (the default --name) and no other lab on this machine; lab up brings one up", c.name)
	}
	fmt.Fprintf(out, "no lab named %s (the default --name); the labs on this machine:\n", c.name)
	if err := printLabs(out, labs); err != nil {
		return err
	}
	example := labs[0].Name
	for _, l := range labs {
		if !l.Orphan {
			example = l.Name
			break
		}
	}
	return fmt.Errorf("lab %s: no such lab: give --name, as in lab status --name %s", c.name, example)
}

func runStatus(stdout io.Writer, c *common, asJSON bool) error {
	r, err := lab.Status(c.runRoot, c.name)
	if err != nil {
		return err
	}
	bad := 0
	for i := range r.Nodes {
		if !r.Nodes[i].OK() {
			bad++
		}
	}
	if asJSON {
		if err := writeJSON(stdout, r); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "lab %s: %s, %s, created %s\n", r.Lab, r.Spec.TopologyText(), r.Phase, r.Created.Local().Format(time.DateTime))
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "NODE\tKIND\tWORKER\tPID\tALIVE\tHEALTHY\tRX PKTS\tTX PKTS\tDROPS\tINJECTED\t")
		var drops, injected uint64
		for _, n := range r.Nodes {
			rx, tx, d, inj := "-", "-", "-", "-"
			if n.Stats != nil {
				rx, tx, d, inj = fmt.Sprint(n.Stats.RxPackets), fmt.Sprint(n.Stats.TxPackets), fmt.Sprint(n.Stats.Drops), fmt.Sprint(n.Stats.Injected)
				drops += n.Stats.Drops
				injected += n.Stats.Injected
			}
			worker := n.Worker
			if worker == "" {
				worker = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", n.Name, n.Kind, worker, n.Pid, yesNo(n.Alive), yesNo(n.Healthy), rx, tx, d, inj)
		}
		tw.Flush()
		fmt.Fprintf(stdout, "drops: %d lost by the emulator (DROPS), %d dropped on purpose (INJECTED: injected loss, links down)\n", drops, injected)
		printImpaired(stdout, r)
		// A dead worker is one line, not one per node it hosted.
		dead := map[string]bool{}
		for _, d := range r.Dead {
			fmt.Fprintln(stdout, d.Error())
			dead[d.Worker] = true
		}
		for _, n := range r.Nodes {
			if n.Err != "" && !(dead[n.Worker] && n.NamespaceExists && !n.Alive) {
				fmt.Fprintf(stdout, "%s: %s\n", n.Name, n.Err)
			}
		}
		if len(r.Stalls) > 0 {
			fmt.Fprintf(stdout, "watchdog: %s stalled (paused, not empty, sending nothing):\n", units.Count(len(r.Stalls), "queue", "queues"))
			for _, s := range r.Stalls {
				fmt.Fprintf(stdout, "  %v\n", s)
			}
		}
		if len(r.Cycle) > 0 {
			fmt.Fprintf(stdout, "deadlock: a cycle of %d stalled queues, each paused by the next: %s\n",
				len(r.Cycle), lab.CycleText(r.Cycle))
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d nodes %s not up", bad, len(r.Nodes), map[bool]string{true: "is", false: "are"}[bad == 1])
	}
	if !asJSON {
		fmt.Fprintf(stdout, "all %d nodes up\n", len(r.Nodes))
	}
	return nil
}

// printImpaired lists the ports that drop what they receive on purpose;
// when the lab was brought up with loss on every port, only those that
// differ from it.
func printImpaired(w io.Writer, r *lab.Report) {
	if r.Spec.LossPPM == 0 {
		if len(r.Impaired) > 0 {
			fmt.Fprintf(w, "impaired: %s what they receive on purpose:\n", units.Count(len(r.Impaired), "port drops", "ports drop"))
			for _, im := range r.Impaired {
				fmt.Fprintf(w, "  %v\n", im)
			}
		}
		return
	}
	var differ []lab.Impairment
	for _, n := range r.Nodes {
		if n.Stats == nil {
			continue
		}
		for _, im := range n.Stats.Links {
			if im.Down || im.LossPPM != r.Spec.LossPPM {
				differ = append(differ, im)
			}
		}
	}
	fmt.Fprintf(w, "impaired: every fabric port loses %s of what it receives (lab up --loss)", lab.FormatLoss(r.Spec.LossPPM))
	if len(differ) == 0 {
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, ", but %s now:\n", units.Count(len(differ), "port", "ports"))
	for _, im := range differ {
		fmt.Fprintf(w, "  %v\n", im)
	}
}

func statsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "stats NODE",
		Short:   "per-port and per-queue counters of NODE's daemon (--json: raw)",
		Example: "  lab stats --name pf s0.0\n  lab stats --json h3",
		GroupID: groupLook,
		Args:    exactArgs(1, "NODE"),
	}
	c := addCommon(cmd)
	cmd.ValidArgsFunction = nodeArgs(c, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the daemon's /stats JSON as it is")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		st, err := lab.Stats(c.runRoot, c.name, args[0])
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(cmd.OutOrStdout(), st)
		}
		var m scale.Model // a lab without state: its own clock, D = 1
		if ls, err := lab.LoadState(c.runRoot, c.name); err == nil {
			m = ls.Spec.Model()
		}
		printStats(cmd.OutOrStdout(), m, st)
		if st.Kind == "hostd" {
			if cl, err := lab.Classifier(c.runRoot, c.name, args[0]); err == nil {
				printClassifier(cmd.OutOrStdout(), cl)
			}
		}
		return nil
	}
	return cmd
}

// printStats prints a daemon's counters; its rates and times on the
// target's clock of model m (a zero m: the lab's own), its uptime in
// both.
func printStats(stdout io.Writer, m scale.Model, st *api.Stats) {
	if m.D <= 0 {
		m.D = 1
	}
	up := time.Duration(st.UptimeNs).Round(time.Millisecond)
	fmt.Fprintf(stdout, "%s (%s, pid %d): up %v %s (%s), xdp mode %s, frames %d free of %d (%d B); rates and times below are the target's\n", st.Node, st.Kind, st.Pid,
		up, scale.LabWord, m.TimeText(up), st.XDPMode, st.Frames.Free, st.Frames.Total, st.Frames.Size)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PORT\tRATE (TARGET)\tRX PKTS\tRX BYTES\tTX PKTS\tTX BYTES\tQUEUE B\tMAX QUEUE B\tDROPS\tRX LOSS\tINJECTED\t")
	var notes []string
	for i := range st.Ports {
		p := &st.Ports[i]
		loss := "-"
		switch {
		case p.LinkDown:
			loss = "down"
		case p.LossPPM > 0:
			loss = lab.FormatLoss(p.LossPPM)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t\n", p.Name, lab.FormatRate(uint64(m.TargetRate(float64(p.RateBps)))), p.RxPackets, p.RxBytes,
			p.TxPackets, p.TxBytes, p.QueueBytes, p.MaxQueueBytes, p.TotalDrops(), loss, p.InjectedDrops())
		if d := nonZero(p.Drops, "") + nonZero(p.XSK, "xsk.") + nonZero(p.XDP, "xdp.") + nonZero(p.Copies, "copies."); d != "" {
			notes = append(notes, fmt.Sprintf("%s:%s", p.Name, d))
		}
		for _, q := range p.Queues {
			if d := nonZero(q.Drops, ""); d != "" {
				notes = append(notes, fmt.Sprintf("%s queue %s drops:%s", p.Name, q.Name, d))
			}
		}
		if d := nonZero(p.Signals, ""); d != "" {
			notes = append(notes, fmt.Sprintf("%s signals:%s", p.Name, d))
		}
	}
	tw.Flush()
	printQueues(stdout, m, st)
	if st.Host != nil && st.Host.ATE != nil {
		printATE(stdout, st.Host.ATE)
	}
	if len(notes) > 0 {
		fmt.Fprintln(stdout, "nonzero counters:")
		for _, n := range notes {
			fmt.Fprintln(stdout, " ", n)
		}
	}
}

// printATE prints a source's ATE choices and its in-flight bytes now.
func printATE(w io.Writer, a *api.ATEStats) {
	fmt.Fprintf(w, "ate: p %g of B_H %d B (level 0 full at %d B in flight)\n", a.P, a.CapHBDBytes, a.LimitBytes)
	fmt.Fprintf(w, "  flows placed: level 0 (HBD) %d, network %d, choice changed %s; not placed: no choice %d, order asked %d\n",
		a.HBD, a.Network, units.Count(a.Switches, "time", "times"), a.Fixed, a.Ordered)
	fmt.Fprintf(w, "  in flight now: level 0 %d B, network %d B\n", a.InFlightHBD, a.InFlightNetwork)
}

// printClassifier prints what the bc0 classifier counted, per class.
func printClassifier(w io.Writer, cl *api.ClassifierStats) {
	if !cl.Attached {
		fmt.Fprintln(w, "bc0 classifier: not attached (kernel traffic rides priority 3, ICMP 6)")
		return
	}
	fmt.Fprintf(w, "bc0 classifier: kernel traffic by DSCP %s; unmapped: priority 0, ICMP 6\n", cl.DSCPMap)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PRIORITY\tPKTS\tBYTES\t")
	for p, c := range cl.Classes {
		if c.Packets > 0 {
			fmt.Fprintf(tw, "%d\t%d\t%d\t\n", p, c.Packets, c.Bytes)
		}
	}
	fmt.Fprintf(tw, "untagged\t%d\t%d\t\n", cl.Untagged.Packets, cl.Untagged.Bytes)
	tw.Flush()
}

// printQueues prints, per port with more than one queue, a line per queue:
// traffic in and out, depth now and at most, time paused, ECN marks,
// drops; times on the target's clock of m.
func printQueues(w io.Writer, m scale.Model, st *api.Stats) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := false
	for i := range st.Ports {
		p := &st.Ports[i]
		if len(p.Queues) < 2 {
			continue
		}
		if !header {
			fmt.Fprintln(tw, "PORT\tQUEUE\tIN PKTS\tIN BYTES\tOUT PKTS\tOUT BYTES\tDEPTH B\tMAX B\tPAUSED\tPAUSED FOR (TARGET)\tECN MARKS\tDROPS\tSTALLS\tSTALLED (TARGET)\t")
			header = true
		}
		for _, q := range p.Queues {
			var drops uint64
			for _, v := range q.Drops {
				drops += v
			}
			paused := "-"
			switch {
			case q.Paused:
				paused = "yes"
			case q.Recovering:
				paused = "overridden"
			}
			stalled := "-"
			if q.Stalled {
				stalled = "for " + scale.RoundTime(m.TargetTime(time.Duration(q.StalledForNs))).String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%v\t%d\t%d\t%d\t%s\t\n", p.Name, q.Name, q.EnqPackets, q.EnqBytes,
				q.DeqPackets, q.DeqBytes, q.Bytes, q.MaxBytes, paused, scale.RoundTime(m.TargetTime(time.Duration(q.PausedNs))), q.ECNMarks, drops,
				q.Stalls, stalled)
		}
	}
	if header {
		fmt.Fprintln(w)
		tw.Flush()
	}
}

// nonZero lists a counter map's nonzero entries, sorted: " a=1 b=2".
func nonZero(m map[string]uint64, prefix string) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s%s=%d", prefix, k, m[k])
	}
	return b.String()
}
