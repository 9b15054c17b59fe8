//go:build linux

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

// The lines of lab up's summary that say what the lab emulates: its flow
// control with the thresholds the daemons were configured with (read
// from the nodes' configs, never recomputed), ECN, the cables that differ
// from the rest, and what this machine can emulate at the lab's rates.
// Each is a function of its own so that the summary can grow lines beside
// them.

// perLevel is one text per level of p's switches (a switch's port p0
// stands for its level: every port of a level runs at one rate unless a
// cable says otherwise), joined, and prefixed by their level only when
// levels differ.
func perLevel(p *lab.Plan, text func(c *config.Node, port string) string) string {
	if p.Graph != nil {
		// A graph fabric's switches are alike but for their cables'
		// rates: its first switch's first port (toward servers) speaks
		// for them.
		n := &p.Nodes[len(p.AppLinks)]
		return text(&n.Config, n.Config.Fabric.Ports[0].Name)
	}
	t := p.Topology
	var out, plain []string
	for l := range t.Levels() {
		n, ok := p.Node(bcube.SwitchName(l, 0))
		if !ok {
			continue
		}
		s := text(&n.Config, bcube.SwitchPort(0))
		plain = append(plain, s)
		out = append(out, fmt.Sprintf("level %d %s", l, s))
	}
	if len(plain) > 0 && !slices.ContainsFunc(plain, func(s string) bool { return s != plain[0] }) {
		return plain[0]
	}
	return strings.Join(out, "; ")
}

// printFlowControl prints the scheme and its thresholds.
func printFlowControl(w io.Writer, p *lab.Plan) {
	n, ok := p.Node(bcube.HostName(0))
	if !ok {
		return
	}
	text := scheme.Describe(&n.Config, func(text func(c *config.Node, port string) string) string { return perLevel(p, text) })
	fmt.Fprintf(w, "  flow ctl    %s\n", text)
}

// printECN prints the marking of every egress, or that there is none,
// and the servers' congestion control when it is not the default.
func printECN(w io.Writer, p *lab.Plan) {
	switch p.Spec.CC {
	case "dctcp":
		fmt.Fprintf(w, "  cc          dctcp: windows cut on echoed marks, every egress marks at one threshold\n")
	case "hpcc":
		fmt.Fprintf(w, "  cc          hpcc: windows from the INT records every egress stamps\n")
	case "dcqcn-win":
		fmt.Fprintf(w, "  cc          dcqcn-win: DCQCN's rate with a window of one BDP\n")
	case "dcqcn-mlx":
		fmt.Fprintf(w, "  cc          dcqcn-mlx: DCQCN as Mellanox NICs run it (CNPs noted, the rate cut on a 50 µs clock, cuts in a row keep the target, the timer alone raises the rate)\n")
	case "none":
		fmt.Fprintf(w, "  cc          none: flows paced at their line rate\n")
	}
	if !p.Spec.ECN && p.Spec.CC != "dctcp" {
		fmt.Fprintf(w, "  ecn         off (--ecn marks CE at every egress; DCQCN then slows flows)\n")
		return
	}
	fmt.Fprintf(w, "  ecn         marking at every egress: %s\n", perLevel(p, func(c *config.Node, port string) string {
		e := c.PortECN(port)
		return fmt.Sprintf("K_min %d B, K_max %d B, P_max %g", e.KminBytes, e.KmaxBytes, e.Pmax)
	}))
}

// printCables prints the cables whose rate, loss or state differ from
// the lab's (lab files' links), as both of their ends were configured.
func printCables(w io.Writer, p *lab.Plan) {
	var cables []string
	for _, l := range p.Links {
		n, ok := p.Node(l.A.Node)
		if !ok {
			continue
		}
		c := &n.Config
		var what []string
		if r := c.PortRate(l.A.Ifname); r != c.RateBps {
			what = append(what, "rate "+units.CompactRate(r))
		}
		loss, down := c.PortImpairment(l.A.Ifname)
		if down {
			what = append(what, "down")
		} else if loss != c.LossPPM {
			what = append(what, "loss "+lab.FormatLoss(loss)+" each way")
		}
		if len(what) > 0 {
			cables = append(cables, fmt.Sprintf("%s:%s-%s:%s %s", l.A.Node, l.A.Ifname, l.B.Node, l.B.Ifname, strings.Join(what, ", ")))
		}
	}
	if len(cables) == 0 {
		fmt.Fprintf(w, "  cables      all alike (lab link or a lab file's links impair one)\n")
		return
	}
	fmt.Fprintf(w, "  cables      %d impaired: %s\n", len(cables), strings.Join(cables, "; "))
}
