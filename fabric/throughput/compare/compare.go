// Package compare runs the throughput comparison of FC+ against FC and
// plain KSP: it builds the fabrics, routes them with each routing, builds
// the traffic matrices and solves the maximum concurrent flow of each
// (package throughput). cmd/fabricanalyze is its command line; a lab
// command can call Run the same way.
//
// The stages of Run:
//
//  1. Build one FC+ fabric per virtual-switch count asked for, and one
//     FC fabric (uniform layering) per layer count, all from the same
//     seed.
//  2. Route each: DF-KSP with 1 and 2 lossless priorities and plain KSP
//     on the FC+ fabrics, FC's edge-disjoint up-down paths on the FC one.
//  3. Build the traffic between ToRs: all-to-all, random permutations
//     (seeded derangements of the ToRs, the same ones for every fabric)
//     and the near-worst permutation (the longest matching of each
//     fabric's own hop distances).
//  4. Solve each (fabric, routing, traffic) for λ, the fraction of its
//     line rate every server gets, with the bound that comes with it;
//     random permutations report the mean over the draws.
package compare

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/bcfab/bcfab/fabric/fcplus"
	"github.com/bcfab/bcfab/fabric/throughput"
	"github.com/bcfab/bcfab/fabric/topo"
)

// Traffic patterns.
const (
	AllToAll    = "all-to-all"
	Permutation = "permutation"
	NearWorst   = "near-worst"
)

// Traffics lists the patterns.
var Traffics = []string{AllToAll, Permutation, NearWorst}

// Config is one comparison.
type Config struct {
	ToRs, Ports, Hosts int
	// Virtual are the FC+ virtual-switch counts to run (one fabric each).
	Virtual []int
	// FCLayers are the FC fabrics' layer counts (one fabric each).
	FCLayers []int
	Seed     uint64
	// Permutations is how many random permutations to average (0: 1).
	Permutations int
	// K paths per ToR pair; Slack as fcplus.RouteOptions.
	K, Slack int
	Routings []fcplus.Routing
	Traffics []string
	// Eps is the approximation's tolerance; Exact solves the LP instead.
	Eps   float64
	Exact bool
	// Workers compute routes (0: one per CPU).
	Workers int
}

// ErrConfig is wrapped by every error of Config.Validate; the fabrics'
// own parameters fail with topo.ErrInvalid.
var ErrConfig = errors.New("invalid comparison")

// Validate checks what the fabrics' own validation does not.
func (c Config) Validate() error {
	switch {
	case c.K < 1:
		return fmt.Errorf("%w: k = %d, need at least 1 path per ToR pair", ErrConfig, c.K)
	case c.Hosts < 1:
		return fmt.Errorf("%w: hosts = %d, need at least 1 server per ToR", ErrConfig, c.Hosts)
	case !c.Exact && !(c.Eps > 0 && c.Eps < 1):
		return fmt.Errorf("%w: eps = %v, need 0 < eps < 1", ErrConfig, c.Eps)
	case len(c.Routings) == 0 || len(c.Traffics) == 0:
		return fmt.Errorf("%w: nothing to run (%d routings, %d traffic patterns)", ErrConfig, len(c.Routings), len(c.Traffics))
	}
	for _, t := range c.Traffics {
		if !slices.Contains(Traffics, t) {
			return fmt.Errorf("%w: traffic %q, want one of %v", ErrConfig, t, Traffics)
		}
	}
	return nil
}

// Row is one solved (fabric, routing, traffic).
type Row struct {
	Fabric  string
	Routing fcplus.Routing
	Traffic string
	// Lambda is every server's throughput as a fraction of its link
	// rate, over the fabric alone (a server's own link caps it at 1);
	// Upper bounds the optimum for these paths. Over several random
	// permutations both are means, and LambdaMin is the smallest λ.
	Lambda, Upper, LambdaMin float64
	Samples                  int
	// PathsPerPair and Hops average over ToR pairs and paths; TurnsMax
	// is the largest T_du of any path.
	PathsPerPair, Hops float64
	TurnsMax           int
	// Unroutable is the most pairs without a path in one draw, and
	// UnroutableDraws the draws that had any (their λ is 0).
	Unroutable, UnroutableDraws int
	Phases                      int
	Route, Solve                time.Duration
}

type routed struct {
	fabric  *fcplus.Fabric
	routing fcplus.Routing
	routes  *topo.Routes
	took    time.Duration
}

// Run performs the comparison, calling progress (if set) after each row.
func Run(c Config, progress func(Row)) ([]Row, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	// 1, 2.
	var work []routed
	ro := fcplus.RouteOptions{K: c.K, Slack: c.Slack, Seed: c.Seed, Workers: c.Workers}
	for _, v := range c.Virtual {
		f, err := fcplus.Params{ToRs: c.ToRs, Ports: c.Ports, Virtual: v, Hosts: c.Hosts, Seed: c.Seed}.Build()
		if err != nil {
			return nil, err
		}
		for _, s := range c.Routings {
			if s != fcplus.FC {
				work = append(work, routed{fabric: f, routing: s})
			}
		}
	}
	for _, k := range c.FCLayers {
		if !slices.Contains(c.Routings, fcplus.FC) {
			break
		}
		f, err := fcplus.FCParams{ToRs: c.ToRs, Ports: c.Ports, Layers: k, Hosts: c.Hosts, Seed: c.Seed}.Build()
		if err != nil {
			return nil, err
		}
		work = append(work, routed{fabric: f, routing: fcplus.FC})
	}
	// 3, 4.
	var perms [][]int
	for i := range max(c.Permutations, 1) {
		perms = append(perms, throughput.RandomDerangement(c.ToRs, c.Seed+uint64(i)))
	}
	var rows []Row
	for _, w := range work {
		start := time.Now()
		r, err := w.fabric.Routes(w.routing, ro)
		if err != nil {
			return nil, err
		}
		w.routes, w.took = r, time.Since(start)
		paths, hops, pairs, turns := 0, 0, 0, 0
		r.Pairs(func(_, _ int, ps []topo.Path) {
			pairs++
			paths += len(ps)
			for _, p := range ps {
				hops += len(p)
				turns = max(turns, w.fabric.Turns(p))
			}
		})
		for _, tr := range c.Traffics {
			row := Row{Fabric: w.fabric.String(), Routing: w.routing, Traffic: tr, LambdaMin: math.Inf(1),
				PathsPerPair: float64(paths) / float64(pairs), Hops: float64(hops) / float64(max(paths, 1)), TurnsMax: turns,
				Route: w.took}
			draws := perms[:1]
			if tr == Permutation {
				draws = perms
			}
			start := time.Now()
			for _, perm := range draws {
				res, err := c.solve(w, tr, perm)
				if err != nil {
					return nil, err
				}
				row.Samples++
				row.Lambda += res.Lambda
				row.Upper += res.Upper
				row.LambdaMin = math.Min(row.LambdaMin, res.Lambda)
				row.Unroutable = max(row.Unroutable, res.Unroutable)
				if res.Unroutable > 0 {
					row.UnroutableDraws++
				}
				row.Phases += res.Phases
			}
			row.Lambda /= float64(row.Samples)
			row.Upper /= float64(row.Samples)
			row.Solve = time.Since(start)
			rows = append(rows, row)
			if progress != nil {
				progress(row)
			}
		}
	}
	return rows, nil
}

// solve builds one traffic matrix on a routed fabric and solves it.
func (c Config) solve(w routed, traffic string, perm []int) (throughput.Result, error) {
	ds, err := demands(w.fabric, traffic, perm, float64(c.Hosts))
	if err != nil {
		return throughput.Result{}, err
	}
	tors := w.fabric.ToRs()
	cs := make([]throughput.Commodity, len(ds))
	for i, d := range ds {
		cs[i] = throughput.Commodity{Src: tors[d.Src], Dst: tors[d.Dst], Demand: d.Amount, Paths: w.routes.Between(tors[d.Src], tors[d.Dst])}
	}
	var res throughput.Result
	if c.Exact {
		res, err = throughput.Exact(w.fabric.Graph, cs)
	} else {
		res, err = throughput.MaxConcurrentFlow(w.fabric.Graph, cs, c.Eps)
	}
	if err != nil {
		return res, fmt.Errorf("%s %s %s: %w", w.fabric, w.routing, traffic, err)
	}
	return res, nil
}

// demands are the traffic between ToRs, in units of a server's line
// rate: under all-to-all each server sends at line rate spread evenly
// over the servers of every other rack (hosts/(ToRs-1) per pair of
// ToRs); under a permutation all the servers of a rack send to the
// servers of one other rack (hosts per pair).
func demands(f *fcplus.Fabric, traffic string, perm []int, hosts float64) ([]throughput.Demand, error) {
	n := len(f.ToRs())
	switch traffic {
	case AllToAll:
		return throughput.AllToAll(n, hosts/float64(n-1)), nil
	case Permutation:
		return throughput.Permutation(perm, hosts), nil
	case NearWorst:
		tors := f.ToRs()
		dist := make([][]int, n)
		for i, u := range tors {
			all := f.Graph.Distances(u)
			dist[i] = make([]int, n)
			for j, v := range tors {
				dist[i][j] = all[v]
			}
		}
		p, err := throughput.LongestMatching(dist)
		if err != nil {
			return nil, err
		}
		return throughput.Permutation(p, hosts), nil
	}
	return nil, fmt.Errorf("traffic %q: want one of %v", traffic, Traffics)
}

// Markdown writes the rows as a table.
func Markdown(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| fabric | routing | traffic | λ | bound | paths/pair | hops | max T_du | route | solve |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		lam := fmt.Sprintf("%.3f", r.Lambda)
		switch {
		case r.Samples > 1 && r.UnroutableDraws > 0:
			lam = fmt.Sprintf("%.3f (min %.3f of %d; %d with a pair without a path)", r.Lambda, r.LambdaMin, r.Samples, r.UnroutableDraws)
		case r.Samples > 1:
			lam = fmt.Sprintf("%.3f (min %.3f of %d)", r.Lambda, r.LambdaMin, r.Samples)
		case r.Unroutable > 0:
			lam = fmt.Sprintf("0 (%d pairs without a path)", r.Unroutable)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.3f | %.2f | %.2f | %d | %s | %s |\n",
			r.Fabric, r.Routing, r.Traffic, lam, r.Upper, r.PathsPerPair, r.Hops, r.TurnsMax,
			r.Route.Round(time.Millisecond), r.Solve.Round(time.Millisecond))
	}
}
