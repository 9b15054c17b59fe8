// Command fabricanalyze compares the throughput FC+ (DF-KSP with one and
// two lossless priorities), FC and plain KSP routing allow on expander
// fabrics, without packets: the maximum concurrent flow of each traffic
// pattern over each routing's paths (package fabric/throughput/compare). It
// prints a Markdown table; with -v, each row on stderr as it is solved.
//
//	fabricanalyze --tors 32 --ports 10 --virtual 3,4,6 --k 8
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/bcfab/bcfab/fabric/fcplus"
	"github.com/bcfab/bcfab/fabric/throughput/compare"
	"github.com/bcfab/bcfab/fabric/topo"
)

func main() {
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fabricanalyze: %v\n", err)
	}
	os.Exit(code)
}

// run is the command with args: 0 on success, 2 for a bad command line
// or parameters no fabric can have, 1 for anything else.
func run(args []string, stdout, stderr io.Writer) (int, error) {
	fs := pflag.NewFlagSet("fabricanalyze", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		c        compare.Config
		routings []string
		fcLayers []int
		verbose  bool
	)
	fs.IntVar(&c.ToRs, "tors", 8, "ToR switches")
	fs.IntVar(&c.Ports, "ports", 4, "fabric ports per ToR (s)")
	fs.IntVar(&c.Hosts, "hosts", 0, "servers per ToR (0: ports/2); λ scales as 1/hosts, the routings' ratios do not")
	fs.IntSliceVar(&c.Virtual, "virtual", nil, "FC+ virtual switches per ToR (v), one fabric each (default: every v the ports and ToRs allow)")
	fs.IntSliceVar(&fcLayers, "fc-layers", nil, "virtual layers of the FC fabrics, one fabric each (default: every count the ports allow)")
	fs.IntVar(&c.Permutations, "perms", 1, "random permutations to average")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the cabling, the tie-breaks and the random permutation")
	fs.IntVar(&c.K, "k", 8, "paths per ToR pair")
	fs.IntVar(&c.Slack, "slack", 0, "longest path considered, in hops past the pair's shortest (0: the default, 4)")
	fs.StringSliceVar(&routings, "routings", routingNames(fcplus.Routings), "routings")
	fs.StringSliceVar(&c.Traffics, "traffic", compare.Traffics, "traffic patterns")
	fs.Float64Var(&c.Eps, "eps", 0.02, "tolerance of the approximation: it stops when λ is within eps of its upper bound")
	fs.BoolVar(&c.Exact, "exact", false, "solve the LP exactly with a dense simplex (small fabrics only)")
	fs.IntVar(&c.Workers, "workers", 0, "goroutines computing routes (0: one per CPU)")
	fs.BoolVarP(&verbose, "verbose", "v", false, "print each row on stderr as it is solved")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0, nil
		}
		return 2, err
	}
	if fs.NArg() > 0 {
		return 2, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.Hosts == 0 {
		c.Hosts = max(c.Ports/2, 1)
	}
	if len(c.Virtual) == 0 {
		for v := 3; v-2 <= (c.Ports-2)/2; v++ {
			if (fcplus.Params{ToRs: c.ToRs, Ports: c.Ports, Virtual: v, Hosts: c.Hosts}).Validate() == nil {
				c.Virtual = append(c.Virtual, v)
			}
		}
		if len(c.Virtual) == 0 {
			return 2, fmt.Errorf("no FC+ virtual-switch count fits %d ToRs of %d ports", c.ToRs, c.Ports)
		}
	}
	c.FCLayers = fcLayers
	if len(c.FCLayers) == 0 {
		for k := 2; k-1 <= c.Ports/2; k++ {
			if (fcplus.FCParams{ToRs: c.ToRs, Ports: c.Ports, Layers: k, Hosts: c.Hosts}).Validate() == nil {
				c.FCLayers = append(c.FCLayers, k)
			}
		}
	}
	for _, s := range routings {
		x, err := fcplus.ParseRouting(s)
		if err != nil {
			return 2, err
		}
		c.Routings = append(c.Routings, x)
	}
	var progress func(compare.Row)
	if verbose {
		progress = func(r compare.Row) {
			fmt.Fprintf(stderr, "%s %s %s: λ %.4f (bound %.4f), %d phases, routes %v, solve %v\n",
				r.Fabric, r.Routing, r.Traffic, r.Lambda, r.Upper, r.Phases, r.Route.Round(1e6), r.Solve.Round(1e6))
		}
	}
	rows, err := compare.Run(c, progress)
	if errors.Is(err, topo.ErrInvalid) || errors.Is(err, compare.ErrConfig) {
		return 2, err
	}
	if err != nil {
		return 1, err
	}
	compare.Markdown(stdout, rows)
	return 0, nil
}

func routingNames(s []fcplus.Routing) []string {
	n := make([]string, len(s))
	for i, x := range s {
		n[i] = string(x)
	}
	return n
}
