package experiment

import (
	"fmt"
	"strings"
	"time"

	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/model/units"
)

// A run's README opens with its scenario (writeScenario): the papers it
// reproduces, named in full, the topology, the traffic and its phases,
// and what each plot shows. It is written from the experiment's file, so
// a file of one's own gets one too.

// paper is one of the papers the experiments reproduce: the words a
// figure line names it by, and its name in full.
type paper struct {
	names []string
	full  string
}

// papers are the papers of the built-in experiments' figure lines: the
// two PortFC papers ("ICS", "ToN", "both papers"), BFC's, and the seed
// papers of the FC+ and ICI experiments (the papers their scenarios are
// taken from).
var papers = []paper{
	{[]string{"ICS", "both papers"}, "the PortFC paper at ICS 2025, the ACM International Conference on Supercomputing (\"ICS\")"},
	{[]string{"ToN", "both papers"}, "the PortFC paper's journal version in IEEE/ACM Transactions on Networking, 2026 (\"ToN\")"},
	{[]string{"BFC"}, "\"Backpressure Flow Control\" (Goyal et al.), USENIX NSDI 2022, the Symposium on Networked Systems Design and Implementation (\"BFC\")"},
	{[]string{"ICI"}, "\"Improving dynamic congestion isolation in data-center networks\" (Merino et al., 2025), the paper that proposes ICI: congestion isolation coordinated with DCQCN (\"ICI\"; the \"seed paper\" is the paper the scenario is taken from)"},
	{[]string{"ns-3"}, "the ns-3 simulator of \"HPCC: High Precision Congestion Control\" (Li et al., ACM SIGCOMM 2019), github.com/alibaba-edu/High-Precision-Congestion-Control: the packet-level reference for RDMA with PFC and DCQCN that the flow-control papers' evaluations build on (\"ns-3\"; docs/VALIDATION.md)"},
	{[]string{"FC+"}, "\"FC+: Near-optimal Deadlock-free Expander Data Center Networks\" (Zhang et al., IEEE ISPA/BDCloud/SocialCom/SustainCom 2023), the paper that proposes FC+ (Flatten Clos Plus): a non-uniform virtual multi-layer expander with deadlock-free K shortest paths (DF-KSP), compared with FC and plain K shortest paths (\"FC+\"; the \"seed paper\" is the paper the scenario is taken from)"},
}

// PapersOf are the papers a figure line names, in full, in the order of
// the papers table.
func PapersOf(figure string) []string {
	var out []string
	for _, p := range papers {
		for _, n := range p.names {
			if strings.Contains(figure, n) {
				out = append(out, p.full)
				break
			}
		}
	}
	return out
}

// writeScenario writes c's scenario section.
func writeScenario(b *strings.Builder, c *Config) {
	m, merr := c.LabSpec("", "", "/").ResolvedModel()
	// given is a duration of the file: lab time, with the target's; or
	// under clock: target the target's, which every point's lab runs x
	// its own D.
	given := func(d time.Duration) string {
		switch {
		case c.Workload.targetClock():
			return scale.RoundTime(d).String() + " of the target's time"
		case merr != nil || m.D <= 0:
			return d.String() + " of lab time"
		}
		return m.LabTimeText(d)
	}
	b.WriteString("## Scenario\n\n")
	if c.Figure != "" {
		fmt.Fprintf(b, "**Reproduces** %s", c.Figure)
		if ps := PapersOf(c.Figure); len(ps) > 0 {
			fmt.Fprintf(b, ", of %s", strings.Join(ps, "; and "))
		}
		b.WriteString(".\n\n")
	}
	var names []string
	for _, sc := range c.Contenders {
		names = append(names, fmt.Sprintf("%s (`%s`)", c.Label(sc), sc))
	}
	fmt.Fprintf(b, "**Schemes**, as the plots and tables name them (in parentheses the file's names, which `summary.csv`'s scheme column and the points' directories keep): %s.\n\n", strings.Join(names, ", "))
	if merr == nil {
		fmt.Fprintf(b, "**The network.** Every point emulates %s: a time of the lab is D times the target's, a rate D times slower, bytes the same. %s every number of the tables and plots is the target's.\n\n", m, durationsText(c))
	}
	switch c.Kind {
	case KindHoL:
		writeHoLScenario(b, c, given)
	case KindLoop:
		writeLoopScenario(b, c, given)
	case KindWorkload:
		writeWorkloadScenario(b, c, given)
	case KindConformance:
		writeConformanceScenario(b, c)
	}
	writePlotGuide(b, c)
}

// writeHoLScenario is the head-of-line blocking scenario (bench.HoL).
func writeHoLScenario(b *strings.Builder, c *Config, given func(time.Duration) string) {
	h := c.HoL
	phase := orDefault(h.Phase.D(), 5*time.Second)
	flows, size := h.GroupFlows, int64(h.GroupSize)
	if flows == 0 {
		flows = 4
	}
	if size == 0 {
		size = 256 << 10
	}
	fmt.Fprintf(b, "**Topology.** %s, %s links: 16 servers h0..h15 and 8 switches; h1 reaches h0 and h2 through switch s0.0, out of the same port eth0.\n\n", c.TopologyText(), c.RateText(""))
	b.WriteString("**Traffic and phases.** h1 sends two generated flows out of eth0: h1 -> h0, the flow that will be congested, and the victim h1 -> h2, which shares h1's uplink but leaves s0.0 by another port. Two phases follow:\n\n")
	fmt.Fprintf(b, "1. **alone** (%s): only those two flows run. The victim's throughput here is its rate uncongested: it shares h1's uplink with h1 -> h0, so it gets about half of the link.\n", given(phase))
	fmt.Fprintf(b, "2. **congested** (%s more): h2 and h3 also send to h0, so s0.0's port toward h0 takes three flows' worth into one link. Flow control pushes back on h1 -> h0; how much of that falls on the victim is the head-of-line blocking a scheme causes.\n\n", given(phase))
	fmt.Fprintf(b, "In each phase, after its throughput window (the phase less its last second of lab time), a victim group of %d flows of %s (h1 -> h2 and h1 -> h3 alternately, all started at once) shares h1's link with the congested flow but not s0.0's congested egress: its mean FCT, congested against alone, asks the same question as BFC's Fig. 8.\n\n", flows, sizeWords(size))
	b.WriteString("**Why a victim can be faster congested than alone.** Alone, the victim shares h1's uplink with h1 -> h0 and gets about half of it. Congested, PortFC pauses only the queue of the congested flow at h1 (its pause names the port, s0.0's egress toward h0), so h1 -> h0 slows to its share of the congested port and the victim takes the uplink capacity the paused flow leaves: it runs faster than alone (a ratio above 1). PFC pauses the whole priority at h1, the victim with the congested flow, so the victim falls below its rate alone (a ratio below 1); BFC's dynamic queues isolate it as PortFC does, its single data queue (bfc:2) does not. Without flow control the congested port drops frames, and the victim's share turns on which it loses.\n\n")
}

// writeLoopScenario is the loop (deadlock) scenario (bench.Loop).
func writeLoopScenario(b *strings.Builder, c *Config, given func(time.Duration) string) {
	l := c.Loop
	var scs []string
	for _, sc := range l.Scenarios {
		t := loopScenarios[sc]
		scs = append(scs, fmt.Sprintf("%s on BCube(%d,%d)", sc, t.N, t.K))
	}
	fmt.Fprintf(b, "**Topology.** %s, %s links. bcube21: 4 servers and 4 switches; bcube41-over: the same cycle on BCube(4,1), where two more one-hop flows from the other servers of each switch oversubscribe every switch egress of the cycle.\n\n", strings.Join(scs, "; "), c.RateText(""))
	b.WriteString("**Traffic and phases.** Background 2-hop flows, one on each link of a cycle (h0->h1, h1->h3, h3->h2, h2->h0), then four 4-hop flows whose routes close a cycle of buffers (h0->h3 via h1, h3->h0 via h2, h1->h2 via h3, h2->h1 via h0):\n\n")
	fmt.Fprintf(b, "1. **warm-up** (%s): the background flows alone;\n", given(orDefault(l.Warmup.D(), time.Second)))
	fmt.Fprintf(b, "2. **settle** (%s): the loop flows start;\n", given(orDefault(l.Settle.D(), time.Second)))
	fmt.Fprintf(b, "3. **measured window** (%s): every flow's throughput, the pauses every node sent, the time every queue was paused, and what the watchdogs report: stalled queues, and whether they close a cycle (a deadlock).\n\n", given(orDefault(l.Measure.D(), 5*time.Second)))
	b.WriteString("The paper: under plain PFC the background throughput falls to 0 (deadlock); PortFC and PFC* do not deadlock.\n\n")
}

// writeWorkloadScenario is a workload's scenario (lab.RunWorkload).
func writeWorkloadScenario(b *strings.Builder, c *Config, given func(time.Duration) string) {
	w := c.Workload
	fmt.Fprintf(b, "**Topology.** %s, %s links", c.TopologyText(), c.RateText(""))
	if c.Lab.ECN() {
		b.WriteString(", ECN marking on every egress (DCQCN acts on it)")
	}
	b.WriteString(".\n\n**Traffic.** ")
	var parts []string
	if len(w.CDFs) > 0 {
		loads := "loads"
		if len(w.Loads) == 1 {
			loads = "load"
		}
		p := fmt.Sprintf("a Poisson background of flow sizes drawn from %s at %s %s of one host link", strings.Join(w.CDFs, ", "), loads, joinLoads(w.Loads))
		switch {
		case w.hasScenarioPairing():
			p += ", between pairs of servers as each scenario says"
		case w.Pairing == "", w.Pairing == "uniform":
			p += ", between random pairs of servers"
		default:
			p += ", pairs by a " + w.Pairing + " permutation of the racks"
		}
		parts = append(parts, p)
	}
	if in := w.Incast; in != nil {
		p := fmt.Sprintf("a periodic %d-to-1 incast of %s flows", in.Senders, sizeWords(int64(in.Size)))
		if in.Trees > 1 {
			p += fmt.Sprintf(", %d trees at once", in.Trees)
		}
		if in.Period > 0 {
			p += ", every " + given(in.Period.D())
		}
		parts = append(parts, p)
	}
	for _, sc := range w.Scenarios {
		var what []string
		if sc.Pairing != "" {
			what = append(what, "the background pairs by a "+sc.Pairing+" permutation of the racks")
		}
		if sc.Incast != nil {
			what = append(what, fmt.Sprintf("a %d-to-1 incast of %s flows", sc.Incast.Senders, sizeWords(int64(sc.Incast.Size))))
		} else {
			what = append(what, "no incast")
		}
		parts = append(parts, "in scenario "+sc.Name+", "+strings.Join(what, " and "))
	}
	if pt := w.Pattern; pt != nil {
		p := fmt.Sprintf("a %s pattern of %s flows every %s", pt.Kind, sizeWords(int64(pt.Size)), given(pt.Period.D()))
		if pt.Kind == "ps" {
			p += " (parameter server: the workers push to it, then it pulls back once the push has ended)"
		}
		parts = append(parts, p)
	}
	if l := w.Long; l != nil {
		parts = append(parts, fmt.Sprintf("%d long flow(s) through every point", l.Flows))
	}
	if len(parts) == 0 {
		parts = append(parts, "the flows of the file")
	}
	traffic := strings.Join(parts, "; ")
	b.WriteString(strings.ToUpper(traffic[:1]) + traffic[1:] + ". The flows are RDMA flows of the servers' NICs")
	if !w.NoDCQCN {
		b.WriteString(" under DCQCN")
	}
	b.WriteString(".\n\n**Its phases.** Each point is one run of two phases:\n\n")
	fmt.Fprintf(b, "1. **arrivals** (%s", given(w.Duration.D()))
	if w.MinFlows > 0 {
		fmt.Fprintf(b, ", or longer, up to %s, until at least %d flows are expected", given(w.MaxDuration.D()), w.MinFlows)
	}
	b.WriteString("): flows start at their scheduled times;\n")
	b.WriteString("2. **drain**: no more starts; the run waits for every flow to end (at most the drain time: the largest of the target's 2 ms, the arrivals' window and 10x the slowest flow's ideal FCT, in lab time). Flows still running then are stopped and counted incomplete, with the stalled queues the watchdogs saw (a deadlock when they close a cycle).\n\n")
}

// durationsText says what clock the durations of c's scenario are on.
func durationsText(c *Config) string {
	if c.Workload.targetClock() {
		return "The durations below are the file's, in the target's time (workload.clock: target): each point's lab runs them x its own D, so every point covers the same window of the target;"
	}
	return "The durations below are the file's, in lab time, with the target's beside them;"
}

// hasScenarioPairing is whether a scenario of w names its own pairing.
func (w *WorkloadConfig) hasScenarioPairing() bool {
	for _, sc := range w.Scenarios {
		if sc.Pairing != "" {
			return true
		}
	}
	return false
}

// sizeWords prints a byte count in the unit it was most likely given
// in: 1 MB, 256 kB, or binary (256 KiB).
func sizeWords(n int64) string {
	switch {
	case n >= 1e6 && n%1e6 == 0:
		return fmt.Sprintf("%d MB", n/1e6)
	case n >= 1e3 && n%1e3 == 0:
		return fmt.Sprintf("%d kB", n/1e3)
	}
	return units.FormatSize(n)
}

// joinLoads prints loads "0.3, 0.5 and 0.7".
func joinLoads(ls []float64) string {
	var s []string
	for _, l := range ls {
		s = append(s, loadName(l))
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// writePlotGuide says what the plots of c's kind show.
func writePlotGuide(b *strings.Builder, c *Config) {
	b.WriteString("**What the plots show** (under Plots, below; the bars are the mean of the valid points, the whiskers the least and greatest over seeds and repetitions, in the target's units; a plot of one group, one load, is a dot per scheme instead, its line the least to the greatest; a deadlocked point's bar is hatched, its dot hollow, its line dashed):\n\n")
	switch c.Kind {
	case KindHoL:
		for _, p := range holPlots {
			fmt.Fprintf(b, "- %s (`%s`): a bar per phase for each scheme, %s.\n", p.title, p.name, p.ylabel)
		}
		b.WriteString("- Victim flow's throughput over time (`hol-victim-series`): the victim's rate sample by sample, a line per scheme, with a marker where the incast starts the congested phase; time in the target's ms.\n\n")
	case KindLoop:
		for _, p := range loopPlots {
			fmt.Fprintf(b, "- %s (`%s-<scenario>`): %s.\n", p.title, p.name, p.ylabel)
		}
		b.WriteString("- Throughput over time, mean per flow (`loop-series-<scenario>`): each kind of flow's rate sample by sample, a line per scheme, with a marker where the loop flows start.\n\n")
	case KindWorkload:
		shape := "a group of bars per load, a bar per scheme"
		if len(c.Workload.Loads) == 1 {
			shape = "a dot per scheme (one load)"
		}
		for _, p := range workloadPlots {
			if p.when == nil || p.when(c) {
				fmt.Fprintf(b, "- %s (`%s-<cdf>`): %s; %s.\n", p.title, p.name, shape, p.ylabel)
			}
		}
		b.WriteString("- Slowdown (FCT / ideal FCT) of the background's flows by size (`slowdown-size-<cdf>-load<load>`): per scheme, the 50th, 95th and 99th percentile slowdown of each flow-size bin of the Poisson background's flows, on log axes; an incast's, a pattern's and the long flows are in the table of flows outside the size bins.\n")
		b.WriteString("- Switch queue length CDF (`queue-cdf-<cdf>-load<load>`): the distribution of the switches' queued bytes over the run's samples.\n")
		if c.Lab.ECN() {
			b.WriteString("- CNPs over time (`cnp-series-<cdf>-load<load>`): the CNPs every sender received in each interval of the queue samples, per ms of the target.\n")
		}
		if len(agreementPairs(c)) > 0 {
			b.WriteString("- Flow for flow (`fct-ratio-<cdf>-<scheme>`): for a scheme both tools ran, the distribution of the simulator's FCT over the lab's for the same flow, a panel per load, a line per size class, over the seeds both ran validly.\n")
		}
		b.WriteString("\n")
	}
}
