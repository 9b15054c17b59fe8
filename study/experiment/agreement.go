package experiment

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bcfab/bcfab/lab/workload"
)

// The agreement a lab's run should have with the simulator's on the
// same flows (docs/VALIDATION.md): per size class of the background,
// the p50 slowdown within 10%, the p99 within 25% and the mean FCT
// within 10% of the simulator's.
var agreementGoals = []struct {
	name, head string
	goal       float64
	// value is the measure of a class of a result of dilation d (its
	// bins keep the lab's times).
	value func(b *workload.BinSummary, d float64) float64
}{
	{"p50", "slowdown p50", 0.10, func(b *workload.BinSummary, _ float64) float64 { return b.Slowdown.P50 }},
	{"p99", "slowdown p99", 0.25, func(b *workload.BinSummary, _ float64) float64 { return b.Slowdown.P99 }},
	{"mean", "mean FCT µs", 0.10, func(b *workload.BinSummary, d float64) float64 { return float64(b.FCT.Mean) / max(d, 1) / 1e3 }},
}

// agreementPair is a scheme run by both tools: the lab's (lab) and the
// simulator's (sim, ns3:lab).
type agreementPair struct{ lab, sim string }

// agreementPairs are c's schemes that the simulator runs too.
func agreementPairs(c *Config) []agreementPair {
	var out []agreementPair
	for _, s := range c.Contenders {
		if base, ok := strings.CutPrefix(s, simPrefix); ok && slices.Contains(c.Contenders, base) {
			out = append(out, agreementPair{base, s})
		}
	}
	return out
}

// agreementRow is one size class of one pair at one CDF and load: each
// measure's mean over the seeds both tools ran validly, for each tool,
// and the least and greatest ratio (simulator / lab) of one seed.
type agreementRow struct {
	label      string
	above      int64
	flows      float64 // the lab's flows in the class, per seed
	seeds      int
	lab, sim   []float64 // by agreementGoals
	loR, hiR   []float64
	outside    []bool
	anyOutside bool
}

// agreementRows compares pair p's results at one CDF and load, class by
// class (the background's, Result.Bins), over the seeds (and scenarios
// and repetitions) that both tools ran validly.
func agreementRows(results []Result, p agreementPair, cdf string, load float64) []agreementRow {
	type key struct {
		scenario  string
		seed      uint64
		rep       int
		contender string
	}
	by := map[key]*Result{}
	for i := range results {
		r := &results[i]
		if r.Valid && r.CDF == cdf && r.Load == load {
			by[key{r.Scenario, r.Seed, r.Rep, r.Contender}] = r
		}
	}
	var labels []string
	rows := map[string]*agreementRow{}
	for k, lr := range by {
		if k.contender != p.lab {
			continue
		}
		k.contender = p.sim
		sr := by[k]
		if sr == nil {
			continue
		}
		for i := range lr.Bins {
			lb := &lr.Bins[i]
			var sb *workload.BinSummary
			for j := range sr.Bins {
				if sr.Bins[j].Label == lb.Label {
					sb = &sr.Bins[j]
				}
			}
			if sb == nil || lb.Slowdown.N == 0 || sb.Slowdown.N == 0 {
				continue
			}
			row := rows[lb.Label]
			if row == nil {
				n := len(agreementGoals)
				row = &agreementRow{label: lb.Label, above: lb.Above, lab: make([]float64, n), sim: make([]float64, n), loR: make([]float64, n), hiR: make([]float64, n), outside: make([]bool, n)}
				for g := range row.loR {
					row.loR[g], row.hiR[g] = math.Inf(1), math.Inf(-1)
				}
				rows[lb.Label] = row
				labels = append(labels, lb.Label)
			}
			row.seeds++
			row.flows += float64(lb.Flows)
			for g, goal := range agreementGoals {
				l, s := goal.value(lb, lr.Dilation), goal.value(sb, sr.Dilation)
				row.lab[g] += l
				row.sim[g] += s
				if l > 0 {
					row.loR[g], row.hiR[g] = min(row.loR[g], s/l), max(row.hiR[g], s/l)
				}
			}
		}
	}
	slices.SortFunc(labels, func(a, b string) int { return cmp.Compare(rows[a].above, rows[b].above) })
	out := make([]agreementRow, 0, len(labels))
	for _, l := range labels {
		row := rows[l]
		n := float64(row.seeds)
		row.flows /= n
		for g, goal := range agreementGoals {
			row.lab[g] /= n
			row.sim[g] /= n
			row.outside[g] = row.lab[g] <= 0 || math.Abs(row.sim[g]/row.lab[g]-1) > goal.goal+1e-9 // a ratio on the goal is within
			row.anyOutside = row.anyOutside || row.outside[g]
		}
		out = append(out, *row)
	}
	return out
}

// agreementTable writes, when c runs schemes in both tools, how far the
// simulator's slowdowns and FCTs are from the lab's on the same flows:
// per pair, CDF, load and size class, each tool's value (the mean over
// seeds), their ratio and its range over seeds, and whether the ratio
// is within the goal (agreementGoals).
func agreementTable(b *strings.Builder, c *Config, results []Result) {
	pairs := agreementPairs(c)
	if len(pairs) == 0 {
		return
	}
	b.WriteString("\n## Agreement with the simulator\n\n")
	var goals []string
	for _, g := range agreementGoals {
		goals = append(goals, fmt.Sprintf("%s within %.0f%%", g.head, 100*g.goal))
	}
	fmt.Fprintf(b, "The same flows in both tools, per size class of the background: each tool's value (the mean over the seeds both ran validly), the simulator's over the lab's (in brackets the least and greatest of one seed), and **outside** where the ratio misses the goal (%s). A class of few flows has a noisy p99. docs/VALIDATION.md says why the tools differ.\n", strings.Join(goals, ", "))
	for _, p := range pairs {
		for _, cdf := range c.cdfNames() {
			for _, load := range c.Workload.Loads {
				rows := agreementRows(results, p, cdf, load)
				if len(rows) == 0 {
					continue
				}
				fmt.Fprintf(b, "\n%s (`%s`) against %s (`%s`), %s at load %s:\n\n", c.Label(p.lab), p.lab, c.Label(p.sim), p.sim, cdfTitle(cdf), strconv.FormatFloat(load, 'f', -1, 64))
				b.WriteString("| size | flows per seed | seeds |")
				for _, g := range agreementGoals {
					fmt.Fprintf(b, " %s lab | sim | sim / lab |", g.head)
				}
				b.WriteString("\n| --- | ---: | ---: |" + strings.Repeat(" ---: | ---: | ---: |", len(agreementGoals)) + "\n")
				for _, r := range rows {
					fmt.Fprintf(b, "| %s | %s | %d |", r.label, cell("", r.flows, true), r.seeds)
					for g := range agreementGoals {
						ratio := r.sim[g] / r.lab[g]
						rng := ""
						if r.seeds > 1 {
							rng = fmt.Sprintf(" [%.2f, %.2f]", r.loR[g], r.hiR[g])
						}
						mark := ""
						if r.outside[g] {
							mark = " **outside**"
						}
						fmt.Fprintf(b, " %s | %s | %.2f%s%s |", cell("", r.lab[g], true), cell("", r.sim[g], true), ratio, rng, mark)
					}
					b.WriteString("\n")
				}
			}
		}
	}
}
