package experiment

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/wire/transport"
)

// agreementGoal is one measure of a size class that two runs of the
// same flows should agree on, within goal (a fraction).
type agreementGoal struct {
	name, head string
	goal       float64
	// value is the measure of a class of a result of dilation d (its
	// bins keep the lab's times).
	value func(b *workload.BinSummary, d float64) float64
}

// A comparison of runs of the same flows, and the README section that
// shows it: each pair of schemes it finds in an experiment (pairs), a
// reference and another run of it, compared class by class against
// goals, and with counters, each counter per ms of the target.
type agreementStudy struct {
	heading, intro string
	// ref and other head the two runs' columns.
	ref, other string
	goals      []agreementGoal
	// sameFlow is the goal of the median, over a class's flows both
	// runs completed, of each flow's FCT in the other run over its FCT
	// in the reference, in the target's time: flow for flow, the
	// measure least moved by which flows a class's tail happens to hold.
	sameFlow float64
	counters []agreementCounter
	pairs    func(c *Config) []agreementPair
}

// agreementCounter is a fabric counter compared per ms of the target.
type agreementCounter struct {
	metric, head string
	goal         float64
}

// classGoals are a size class's measures, the slowdown's p50 and p99
// and the mean FCT in the target's µs, within p50, p99 and mean.
func classGoals(p50, p99, mean float64) []agreementGoal {
	return []agreementGoal{
		{"p50", "slowdown p50", p50, func(b *workload.BinSummary, _ float64) float64 { return b.Slowdown.P50 }},
		{"p99", "slowdown p99", p99, func(b *workload.BinSummary, _ float64) float64 { return b.Slowdown.P99 }},
		{"mean", "mean FCT µs", mean, func(b *workload.BinSummary, d float64) float64 { return float64(b.FCT.Mean) / max(d, 1) / 1e3 }},
	}
}

// simAgreement is a lab's run against the simulator's on the same flows
// (docs/VALIDATION.md): per size class of the background, the p50
// slowdown within 10%, the p99 within 25% and the mean FCT within 10%.
var simAgreement = agreementStudy{
	heading: "Agreement with the simulator",
	intro:   "The same flows in both tools, per size class of the background: each tool's value (the mean over the seeds both ran validly), the simulator's over the lab's (in brackets the least and greatest of one seed), and **outside** where the ratio misses the goal (%s). Each tool's slowdown is against the flow alone in its own network. A class of few flows has a noisy p99. docs/VALIDATION.md says why the tools differ.\n",
	ref:     "lab", other: "sim",
	goals:    classGoals(0.10, 0.25, 0.10),
	sameFlow: 0.10,
	// Pause frames: bcfab's nodes count those they send, the sim's
	// devices those they receive (pfc.txt), one frame on one cable either
	// way. A pause is a tail event, judged as the p99 is.
	counters: []agreementCounter{{"pauses", "pause frames", 0.25}},
	pairs: func(c *Config) []agreementPair {
		var out []agreementPair
		for _, s := range c.Contenders {
			if !strings.HasPrefix(s, simPrefix) {
				continue
			}
			for _, l := range c.Contenders {
				if !strings.HasPrefix(l, simPrefix) && simEquivalent(l) == simEquivalent(s) {
					out = append(out, agreementPair{l, s})
				}
			}
		}
		return out
	},
}

// simEquivalent is what the simulator runs for a contender (ns3:X or a
// lab's X): its flow control, congestion control and routing, DCQCN's
// two variants being one, since the simulator runs only Mellanox's. A
// lab's contender and a simulator's with one simEquivalent ran the same
// flows under what the simulator can compare.
func simEquivalent(contender string) string {
	sc, err := ParseContender(contender)
	if err != nil || sc.D != 0 || len(sc.Knobs) > 0 {
		return "?" + contender
	}
	cc := cmp.Or(sc.CC, transport.CCDCQCN.String())
	if cc == transport.CCDCQCNMlx.String() {
		cc = transport.CCDCQCN.String()
	}
	return fmt.Sprintf("%s/%s/%v/%s/%s", sc.FC, cc, sc.NoCC, sc.Mode, cmp.Or(sc.Routing, lab.RoutingECMP))
}

// dInvariance is a scheme at another D against itself at the
// experiment's (docs/VALIDATION.md, the invariance study): per size
// class of the background the p50 slowdown within 5%, the p99 within
// 15% and the mean FCT within 5%; pauses, ECN marks and CNPs per ms of
// the target within 10%.
var dInvariance = agreementStudy{
	heading: "Invariance across D",
	intro:   "The same flows over the same time of the target at another D, per size class of the background: the value at the experiment's D and at the other (the mean over the seeds both ran validly), the other's over the experiment's (in brackets the least and greatest of one seed), and **outside** where the ratio misses the goal (%s). A class of few flows has a noisy p99.\n",
	ref:     "ref", other: "D",
	goals:    classGoals(0.05, 0.15, 0.05),
	sameFlow: 0.05,
	counters: []agreementCounter{{"pauses", "pauses", 0.10}, {"ecn_marks", "ECN marks", 0.10}, {"cnps", "CNPs", 0.10}},
	pairs: func(c *Config) []agreementPair {
		var out []agreementPair
		for _, s := range c.Contenders {
			sc, err := ParseContender(s)
			if err != nil || sc.D == 0 || len(sc.Knobs) > 0 {
				continue
			}
			if base, _, _ := strings.Cut(s, dPrefix); slices.Contains(c.Contenders, base) {
				out = append(out, agreementPair{base, s})
			}
		}
		return out
	},
}

// agreementStudies are the comparisons a README may show.
var agreementStudies = []*agreementStudy{&simAgreement, &dInvariance}

// agreementPair is a scheme run twice on the same flows: the reference
// (lab: the lab's run, or the experiment's D) and the other (sim: the
// simulator's, ns3:lab, or another D, lab~dD).
type agreementPair struct{ lab, sim string }

// agreementPairs are c's schemes that the simulator runs too.
func agreementPairs(c *Config) []agreementPair { return simAgreement.pairs(c) }

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
	// same are the class's flows' FCT ratios, flow for flow (other /
	// reference, in the target's time), over the seeds both ran
	// validly, sorted.
	same []float64
}

// agreementRows compares pair p's results at one CDF and load, class by
// class (the background's, Result.Bins), over the seeds (and scenarios
// and repetitions) that both tools ran validly.
func agreementRows(results []Result, p agreementPair, cdf string, load float64, goals []agreementGoal) []agreementRow {
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
		same := sameFlowRatios(lr, sr)
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
				n := len(goals)
				row = &agreementRow{label: lb.Label, above: lb.Above, lab: make([]float64, n), sim: make([]float64, n), loR: make([]float64, n), hiR: make([]float64, n), outside: make([]bool, n)}
				for g := range row.loR {
					row.loR[g], row.hiR[g] = math.Inf(1), math.Inf(-1)
				}
				rows[lb.Label] = row
				labels = append(labels, lb.Label)
			}
			row.seeds++
			row.flows += float64(lb.Flows)
			row.same = append(row.same, same[lb.Label]...)
			for g, goal := range goals {
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
		slices.Sort(row.same)
		for g, goal := range goals {
			row.lab[g] /= n
			row.sim[g] /= n
			row.outside[g] = row.lab[g] <= 0 || math.Abs(row.sim[g]/row.lab[g]-1) > goal.goal+1e-9 // a ratio on the goal is within
			row.anyOutside = row.anyOutside || row.outside[g]
		}
		out = append(out, *row)
	}
	return out
}

// sameFlowRatios are, by size class of the background, the FCT of each
// flow of other over its FCT in ref, both in the target's time: the
// same flow (one ID of one schedule, of one size) in two results of the
// same flows. At one D the two schedules are one (their digests); at
// two, a schedule's lab times differ by the D's ratio, so each flow's
// ID and size must match.
func sameFlowRatios(ref, other *Result) map[string][]float64 {
	if len(ref.Slowdowns) == 0 || len(other.Slowdowns) == 0 || ref.Dilation == other.Dilation && ref.Schedule != other.Schedule {
		return nil
	}
	type flow struct {
		size int64
		fct  float64
	}
	fct := make(map[int]flow, len(other.Slowdowns))
	for _, f := range other.Slowdowns {
		if f.Kind == workload.KindPoisson && f.FCT > 0 {
			fct[f.ID] = flow{f.Size, float64(f.FCT) / max(other.Dilation, 1)}
		}
	}
	out := map[string][]float64{}
	for _, f := range ref.Slowdowns {
		o, ok := fct[f.ID]
		if !ok || o.size != f.Size || f.Kind != workload.KindPoisson || f.FCT <= 0 {
			continue
		}
		if c := ratioClass(f.Size); c < len(ratioClasses) {
			l := ratioClasses[c].label
			out[l] = append(out[l], o.fct/(float64(f.FCT)/max(ref.Dilation, 1)))
		}
	}
	return out
}

// sameFlowCell is a class's flow-for-flow cell: the median ratio, its
// 10th and 90th percentiles (nearest rank) and its verdict against
// goal; "-" without flows.
func sameFlowCell(rs []float64, goal float64) string {
	if len(rs) == 0 {
		return "-"
	}
	at := func(q float64) float64 { return rs[max(0, min(len(rs)-1, int(math.Ceil(q*float64(len(rs))))-1))] }
	med := rs[len(rs)/2]
	if len(rs)%2 == 0 {
		med = (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2
	}
	mark := ""
	if math.Abs(med-1) > goal+1e-9 {
		mark = " **outside**"
	}
	return fmt.Sprintf("%.3f [%.2f, %.2f]%s", med, at(0.10), at(0.90), mark)
}

// agreementTable writes c's comparisons of runs of the same flows
// (agreementStudies) that it has pairs for: per pair, CDF, load and
// size class, each run's value (the mean over seeds), their ratio and
// its range over seeds, and whether the ratio is within the goal; then
// the counters per ms of the target.
func agreementTable(b *strings.Builder, c *Config, results []Result) {
	for _, st := range agreementStudies {
		st.write(b, c, results)
	}
}

func (st *agreementStudy) write(b *strings.Builder, c *Config, results []Result) {
	pairs := st.pairs(c)
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %s\n\n", st.heading)
	var goals []string
	for _, g := range st.goals {
		goals = append(goals, fmt.Sprintf("%s within %.0f%%", g.head, 100*g.goal))
	}
	for _, k := range st.counters {
		goals = append(goals, fmt.Sprintf("%s per ms of the target within %.0f%%", k.head, 100*k.goal))
	}
	if st.sameFlow > 0 {
		goals = append(goals, fmt.Sprintf("the median same-flow FCT ratio within %.0f%%", 100*st.sameFlow))
	}
	fmt.Fprintf(b, st.intro, strings.Join(goals, ", "))
	if st.sameFlow > 0 {
		b.WriteString("\nThe last column pairs each flow with itself: its FCT in the other run over its FCT in the reference, in the target's time, the median over the class's flows both completed (all seeds), in brackets the 10th and 90th percentiles.\n")
	}
	for _, p := range pairs {
		for _, cdf := range c.cdfNames() {
			for _, load := range c.Workload.Loads {
				rows := agreementRows(results, p, cdf, load, st.goals)
				if len(rows) == 0 {
					continue
				}
				fmt.Fprintf(b, "\n%s (`%s`) against %s (`%s`), %s at load %s:\n\n", c.Label(p.lab), p.lab, c.Label(p.sim), p.sim, cdfTitle(cdf), strconv.FormatFloat(load, 'f', -1, 64))
				b.WriteString("| size | flows per seed | seeds |")
				for _, g := range st.goals {
					fmt.Fprintf(b, " %s %s | %s | %s / %s |", g.head, st.ref, st.other, st.other, st.ref)
				}
				sep := "\n| --- | ---: | ---: |" + strings.Repeat(" ---: | ---: | ---: |", len(st.goals))
				if st.sameFlow > 0 {
					fmt.Fprintf(b, " same flow, %s / %s |", st.other, st.ref)
					sep += " ---: |"
				}
				b.WriteString(sep + "\n")
				for _, r := range rows {
					fmt.Fprintf(b, "| %s | %s | %d |", r.label, cell("", r.flows, true), r.seeds)
					for g := range st.goals {
						b.WriteString(" " + ratioCells(r.lab[g], r.sim[g], r.loR[g], r.hiR[g], r.seeds, r.outside[g]) + " |")
					}
					if st.sameFlow > 0 {
						b.WriteString(" " + sameFlowCell(r.same, st.sameFlow) + " |")
					}
					b.WriteString("\n")
				}
				st.writeCounters(b, results, p, cdf, load)
			}
		}
	}
}

// ratioCells are a measure's three cells: the reference's value, the
// other's, and their ratio with its range over seeds and its verdict.
func ratioCells(ref, other, lo, hi float64, seeds int, outside bool) string {
	rng, mark := "", ""
	if seeds > 1 {
		rng = fmt.Sprintf(" [%.2f, %.2f]", lo, hi)
	}
	if outside {
		mark = " **outside**"
	}
	return fmt.Sprintf("%s | %s | %.2f%s%s", cell("", ref, true), cell("", other, true), other/ref, rng, mark)
}

// writeCounters writes the counters of pair p per ms of the target, the
// mean over the seeds both ran validly.
func (st *agreementStudy) writeCounters(b *strings.Builder, results []Result, p agreementPair, cdf string, load float64) {
	if len(st.counters) == 0 {
		return
	}
	type key struct {
		scenario string
		seed     uint64
		rep      int
	}
	refs, others := map[key]*Result{}, map[key]*Result{}
	for i := range results {
		r := &results[i]
		if !r.Valid || r.CDF != cdf || r.Load != load || r.Target <= 0 {
			continue
		}
		k := key{r.Scenario, r.Seed, r.Rep}
		switch r.Contender {
		case p.lab:
			refs[k] = r
		case p.sim:
			others[k] = r
		}
	}
	perMs := func(r *Result, metric string) (float64, bool) {
		v, ok := r.Get(metric)
		return v / (float64(r.Target) / 1e6), ok && !math.IsNaN(v)
	}
	var lines []string
	for _, k := range st.counters {
		var ref, other float64
		lo, hi, n := math.Inf(1), math.Inf(-1), 0
		for key, rr := range refs {
			or := others[key]
			if or == nil {
				continue
			}
			a, aok := perMs(rr, k.metric)
			o, ook := perMs(or, k.metric)
			if !aok || !ook {
				continue
			}
			ref, other, n = ref+a, other+o, n+1
			if a > 0 {
				lo, hi = min(lo, o/a), max(hi, o/a)
			}
		}
		if n == 0 || ref == 0 && other == 0 {
			continue
		}
		ref, other = ref/float64(n), other/float64(n)
		outside := ref <= 0 || math.Abs(other/ref-1) > k.goal+1e-9
		lines = append(lines, fmt.Sprintf("| %s | %d | %s |", k.head, n, ratioCells(ref, other, lo, hi, n, outside)))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\n| per ms of the target | seeds | %s | %s | %s / %s |\n| --- | ---: | ---: | ---: | ---: |\n", st.ref, st.other, st.other, st.ref)
	b.WriteString(strings.Join(lines, "\n") + "\n")
}
