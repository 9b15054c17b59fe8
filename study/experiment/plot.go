package experiment

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// PlotFile is one plot written by Plot: plots/<Name>.png and .svg.
type PlotFile struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Note says what the plot leaves out: the invalid points.
	Note string `json:"note,omitempty"`
}

// A plot of every point's metrics by scheme: a group of bars per
// metric, a bar per scheme (its colour). The loop and hol experiments'
// plots are lists of these: a new field of their results is a new metric
// in the runner and a name here.
type contenderBars struct {
	name, title, ylabel string
	metrics             []string
	groups              []string // one per metric
	// prefix, when set, takes the metrics from the results instead:
	// every one whose name has it and ends in suffix (but the prefix
	// alone), the group the rest of the name.
	prefix, suffix string
}

// The units of the plots: the target network's (package scale), which a
// result's lab figures are read into (Result.targetUnits).
const (
	unitRate = "Gb/s, the target's"
	unitTime = "µs, the target's"
)

var (
	loopPlots = []contenderBars{
		{name: "loop-throughput", title: "Average throughput per flow, background and loop flows", ylabel: unitRate,
			metrics: []string{"background_gbps", "loop_gbps", "incast_gbps"}, groups: []string{"background (2-hop)", "loop (4-hop)", "incast (1-hop)"}},
		{name: "loop-background-flows", title: "Background flows' throughput", ylabel: unitRate, prefix: "bg_", suffix: "_gbps"},
		{name: "loop-pauses", title: "Pauses sent in the measured window, by class", ylabel: "pauses", prefix: "pauses_"},
		{name: "loop-servers-paused", title: "Servers' egress queues paused (mean over servers), by queue", ylabel: "% of the window", prefix: "servers_paused_pct_"},
	}
	holPlots = []contenderBars{
		{name: "hol-victim", title: "Victim flow's throughput, alone and with the congested port", ylabel: unitRate,
			metrics: []string{"victim_alone_gbps", "victim_congested_gbps"}, groups: []string{"alone", "congested"}},
		{name: "hol-group-fct", title: "Victim group's mean FCT, alone and with the congested port", ylabel: unitTime,
			metrics: []string{"group_fct_alone_us", "group_fct_congested_us"}, groups: []string{"alone", "congested"}},
	}
)

// A plot of a workload metric: a group of bars per load, a bar per
// scheme, one plot per CDF.
type loadBars struct {
	name, title, ylabel, metric string
	when                        func(*Config) bool // nil: always
}

var workloadPlots = []loadBars{
	{"fct-avg", "Average FCT", unitTime, "fct_avg_us", nil},
	{"fct-p99", "99th-percentile FCT", unitTime, "fct_p99_us", nil},
	{"slowdown-avg-all", "Average slowdown, all flows", "FCT / ideal FCT", "slowdown_avg", nil},
	{"goodput-poisson", "Goodput of the Poisson background, all hosts together", unitRate, "poisson_goodput_gbps", func(c *Config) bool { return len(c.Workload.CDFs) > 0 }},
	{"goodput-incast", "Goodput of an incast (its bytes over its first start to last end)", unitRate, "incast_goodput_gbps", func(c *Config) bool { return c.hasIncast() }},
	{"incast-time", "Incast completion time (first start to last end)", unitTime, "incast_time_avg_us", func(c *Config) bool { return c.hasIncast() }},
	{"jct-avg", "Job completion time of a pattern event (first flow's start to last flow's end)", unitTime, "jct_avg_us", func(c *Config) bool { return c.Workload.Pattern != nil }},
	{"jct-p99", "99th-percentile job completion time", unitTime, "jct_p99_us", func(c *Config) bool { return c.Workload.Pattern != nil }},
	{"push-avg", "Push stage of a pattern event (its first push's start to its last push's end)", unitTime, "push_avg_us", func(c *Config) bool { return c.Workload.Pattern != nil && c.Workload.Pattern.Wait }},
	{"switch-queue-p99", "99th percentile of the switches' queued bytes", "KB", "switch_queue_p99_kb", nil},
	{"packet-queue-delay-p99", "99th-percentile queueing delay of a packet at a switch (each frame's own wait)", unitTime, "pkt_queue_delay_p99_us", nil},
	{"long-flow", "Throughput of the long flow(s): bytes over FCT", unitRate, "long_gbps", func(c *Config) bool { return c.Workload.Long != nil }},
	{"big-flow", "Throughput of the background's flows over 1 MB (each its bytes over its FCT, the mean)", unitRate, "big_flow_gbps", func(c *Config) bool { return c.hasPermutation() }},
	{"background-fct-p99", "99th-percentile FCT of the background's flows", unitTime, "bg_fct_p99_us", func(c *Config) bool { return c.Lab.ECN() && c.hasIncast() }},
	{"cnps-victim", "CNPs per background flow (the victims')", "CNPs", "cnps_victim_per_flow", func(c *Config) bool { return c.Lab.ECN() && c.hasIncast() }},
	{"incomplete", "Flows that never ended (a deadlock, or slower than the drain time)", "% of the flows", "incomplete_pct", nil},
}

// Plot draws every plot of c's results into dir (PNG and SVG each) and
// lists them. Only valid results are plotted; a plot whose data lacks
// invalid points says so in its title and Note.
func Plot(c *Config, results []Result, dir string) ([]PlotFile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	pl := plots{c: c, dir: dir, results: results}
	switch c.Kind {
	case KindLoop:
		for _, sc := range c.Loop.Scenarios {
			pl.scenario = sc
			for _, b := range loopPlots {
				b.name += "-" + sc
				pl.contenderBars(b)
			}
			pl.series("loop-series-"+sc, "Throughput over time, mean per flow", "", pl.loopMarkers(), throughputAxis)
		}
		pl.scenario = ""
	case KindConformance:
		pl.conformanceErrors()
	case KindHoL:
		for _, b := range holPlots {
			pl.contenderBars(b)
		}
		pl.series("hol-victim-series", "Victim flow's throughput over time", pl.holGroupNote(), pl.holMarkers(), throughputAxis)
	case KindWorkload:
		for _, scn := range c.scenarioNames() {
			pl.scenario = scn
			for _, cdf := range c.cdfNames() {
				pl.cdf = cdf
				for _, b := range workloadPlots {
					if b.when == nil || b.when(c) {
						b.name = pl.named(b.name)
						pl.loadBars(b, cdf)
					}
				}
				for _, load := range c.Workload.Loads {
					// The plots of one load: its points' D titles them.
					pl.load = load
					pl.slowdownBySize(cdf, load)
					pl.queueCDF(cdf, load)
					if c.Lab.ECN() {
						pl.series(pl.named(fmt.Sprintf("cnp-series-%s-load%s", cdf, loadName(load))),
							fmt.Sprintf("CNPs over time, %s at load %s", cdfTitle(cdf), loadName(load)),
							"the CNPs every sender received, in each interval of the queue samples", nil, cnpAxis)
					}
					pl.load = 0
				}
				pl.ratioCDF(cdf)
			}
		}
		pl.scenario, pl.cdf = "", ""
	}
	return pl.files, errors.Join(pl.errs...)
}

type plots struct {
	c       *Config
	dir     string
	results []Result
	files   []PlotFile
	errs    []error
	// scenario is the loop scenario being drawn (match keeps its
	// results only).
	scenario string
	// cdf is the workload CDF being drawn (its links' rate titles it),
	// load the load of a workload's plots of one load (0: all loads).
	cdf  string
	load float64
}

// named is a plot's file name for the scenario being drawn: a workload
// scenario's name first.
func (pl *plots) named(name string) string {
	if pl.scenario == "" || pl.c.Kind != KindWorkload {
		return name
	}
	return pl.scenario + "-" + name
}

// seriesAxis is a series plot's y axis: its label in the lab's units
// and in the target's (lab values × D / 1000: Mb/s to Gb/s, or per
// second of the lab to per ms of the target).
type seriesAxis struct{ lab, target string }

var (
	throughputAxis = seriesAxis{"throughput (Mb/s, the lab's)", "throughput (" + unitRate + ")"}
	cnpAxis        = seriesAxis{"CNPs per s (the lab's)", "CNPs per ms (the target's)"}
)

// match are the results of one setting (scheme and, for a workload, CDF
// and load) over seeds and repetitions: the valid ones, and the IDs of
// the invalid ones.
func (pl *plots) match(contender, cdf string, load float64) (valid []*Result, invalid []string) {
	for i := range pl.results {
		r := &pl.results[i]
		if r.Contender != contender || r.CDF != cdf || r.Scenario != pl.scenario || (pl.c.Kind == KindWorkload && r.Load != load) {
			continue
		}
		if r.Valid {
			valid = append(valid, r)
		} else {
			invalid = append(invalid, r.ID)
		}
	}
	return valid, invalid
}

// spreadOfMetric is the spread of metric over rs (those that have it).
func spreadOfMetric(rs []*Result, metric string) spread {
	var vs []float64
	dead := false
	for _, r := range rs {
		if v, ok := r.Get(metric); ok {
			vs = append(vs, v)
			dead = dead || r.deadlocked()
		}
	}
	s := spreadOf(vs)
	s.deadlocked = dead && s.ok()
	return s
}

// deadlocked says r's fabric deadlocked: its queues paused each other
// around a cycle (a workload's flows never all ended, a loop's stopped).
func (r *Result) deadlocked() bool {
	v, ok := r.Get("deadlocked")
	return ok && v > 0
}

// anyDeadlocked says one of rs deadlocked.
func anyDeadlocked(rs []*Result) bool { return slices.ContainsFunc(rs, (*Result).deadlocked) }

// save writes f as name.png and name.svg, note under its title, and
// lists it.
func (pl *plots) save(f *figure, name, title, note string) {
	f.note(note)
	if err := f.save(pl.dir, name); err != nil {
		pl.errs = append(pl.errs, err)
		return
	}
	if sc := pl.scenarioText(); sc != "" {
		// The README lists every scenario's plots: each says whose.
		title = sc + ": " + title
	}
	pl.files = append(pl.files, PlotFile{Name: name, Title: title, Note: note})
}

// scenarioText is the scenario being drawn, for titles: a workload's
// in words ("no incast"), a loop's by its name.
func (pl *plots) scenarioText() string {
	if pl.c.Kind == KindWorkload {
		return strings.ReplaceAll(pl.scenario, "-", " ")
	}
	return pl.scenario
}

// invalidNote says which points a plot leaves out.
func invalidNote(invalid []string) string {
	if len(invalid) == 0 {
		return ""
	}
	sort.Strings(invalid)
	if len(invalid) > 4 {
		return fmt.Sprintf("not plotted, INVALID: %s and %d more", strings.Join(invalid[:4], ", "), len(invalid)-4)
	}
	return "not plotted, INVALID: " + strings.Join(invalid, ", ")
}

// partialNote says which of rs (valid points) had flows that never
// ended, whose numbers count only the flows that did.
func partialNote(rs []*Result) string {
	var ids []string
	for _, r := range rs {
		if n, ok := r.Get("incomplete"); ok && n > 0 {
			d, _ := r.Get("deadlocked")
			id := fmt.Sprintf("%s (%.0f", r.ID, n)
			if d > 0 {
				id += ", deadlock"
			}
			ids = append(ids, id+")")
		}
	}
	if len(ids) == 0 {
		return ""
	}
	sort.Strings(ids)
	if len(ids) > 3 {
		ids = append(ids[:3], fmt.Sprintf("%d more", len(ids)-3))
	}
	return "flows never ended, the ended counted: " + strings.Join(ids, ", ")
}

// spreadNote says what a value of more than one result is: most is the
// most results any value had.
func spreadNote(most int, what, band string) string {
	if most < 2 {
		return ""
	}
	return fmt.Sprintf("each %s the mean of up to %d valid results (repetitions, seeds); %s their least to greatest", what, most, band)
}

// joinNotes puts the non-empty notes one per line.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "\n")
}

// barLabel prints a bar's value: three significant digits, whole
// numbers from 100 on (3614, not 3.61e+03).
func barLabel(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// title puts the setting in a plot's title t: the scenario before it,
// and after it the fabric in words and D (the links' rate where D is
// not known); the exact configuration is the README's.
func (pl *plots) title(t string) string {
	fabric := pl.c.FabricWords()
	if sc, ok := loopScenarios[pl.scenario]; ok {
		fabric = fmt.Sprintf("BCube(%d,%d)", sc.N, sc.K)
	}
	if sc := pl.scenarioText(); sc != "" {
		t = sc + ": " + t
	}
	d := ", " + pl.c.RateText(pl.cdf) + " links"
	switch lo, hi := pl.dilations(); {
	case lo > 0 && lo == hi:
		d = "; D = " + dilationText(lo)
	case lo > 0:
		d = "; D = " + dilationText(lo) + "-" + dilationText(hi)
	}
	return fmt.Sprintf("%s (%s%s)", t, fabric, d)
}

// dilations are the smallest and largest D of the plotted points (of the
// CDF being drawn, and the load of a series plot: a CDF may run at a
// rate of its own, and under rate auto every point at its own), 0 when
// unknown.
func (pl *plots) dilations() (lo, hi float64) {
	for i := range pl.results {
		if r := &pl.results[i]; r.Dilation > 0 && (pl.cdf == "" || r.CDF == pl.cdf) && (pl.load == 0 || r.Load == pl.load) {
			if lo == 0 || r.Dilation < lo {
				lo = r.Dilation
			}
			hi = max(hi, r.Dilation)
		}
	}
	return lo, hi
}

func loadName(load float64) string { return strconv.FormatFloat(load, 'g', -1, 64) }
