package experiment

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bcfab/bcfab/internal/buildinfo"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
)

// Report is a run of an experiment: what results.json holds and
// README.md shows.
type Report struct {
	Experiment string         `json:"experiment"`
	Title      string         `json:"title,omitempty"`
	Figure     string         `json:"figure,omitempty"`
	Quick      bool           `json:"quick"`
	Build      buildinfo.Info `json:"build"`
	Started    time.Time      `json:"started"`
	Elapsed    time.Duration  `json:"elapsed_ns"`
	// Target is the target's time the points emulated, all together,
	// and WallPerTargetMs their wall time per ms of it, in seconds: what
	// each ms of the target cost the run (Cost; points whose target time
	// is not known left out).
	Target          time.Duration `json:"target_ns,omitempty"`
	WallPerTargetMs float64       `json:"wall_s_per_target_ms,omitempty"`
	// Interrupted: the run was stopped (Ctrl-C) or failed before its last
	// point; Error says why.
	Interrupted bool       `json:"interrupted,omitempty"`
	Error       string     `json:"error,omitempty"`
	Points      int        `json:"points"`
	Results     []Result   `json:"results"`
	Plots       []PlotFile `json:"plots"`
	// Reruns are the points run again after the run (RunAgain), oldest
	// first.
	Reruns []Rerun `json:"reruns,omitempty"`
}

// Valid counts the valid results.
func (r *Report) Valid() int {
	n := 0
	for i := range r.Results {
		if r.Results[i].Valid {
			n++
		}
	}
	return n
}

// Cost is the points' wall time and the target's time they emulated,
// all together, of the points whose target time is known.
func (r *Report) Cost() (wall, target time.Duration) {
	for i := range r.Results {
		if res := &r.Results[i]; res.Target > 0 {
			wall += res.Elapsed
			target += res.Target
		}
	}
	return wall, target
}

// account sets the run's totals from its points, for results.json.
func (r *Report) account() {
	wall, target := r.Cost()
	r.Target, r.WallPerTargetMs = target, scale.WallPerTargetMs(wall, target)
}

// writeJSONFile writes v, indented, to path.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// writeWith creates path and writes it with write.
func writeWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ConfigYAML is c as run: its quick section applied and left out.
func ConfigYAML(c *Config) ([]byte, error) {
	x := *c
	x.Quick = yaml.Node{}
	b, err := yaml.Marshal(&x)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	head := "# The experiment as run"
	if c.IsQuick {
		head += " (--quick: its quick section applied)"
	}
	return append([]byte(head+".\n"), b...), nil
}

// keyMetrics are the columns of the README's table, by kind, in the
// target's units (rates in Gb/s, times in µs: Result.targetUnits).
var keyMetrics = map[string][]struct{ name, head string }{
	KindWorkload: {
		{"flows", "flows"}, {"completed", "done"}, {"deadlocked", "deadlock"}, {"fct_avg_us", "FCT avg µs"}, {"fct_p99_us", "FCT p99 µs"},
		{"slowdown_avg", "slowdown avg"}, {"slowdown_p99", "slowdown p99"}, {"poisson_goodput_gbps", "Poisson goodput Gb/s"},
		{"incast_goodput_gbps", "incast goodput Gb/s"}, {"jct_avg_us", "JCT avg µs"}, {"push_avg_us", "push avg µs"}, {"pull_after_push_min_us", "pull after push (min) µs"},
		{"switch_queue_p99_kb", "switch queue p99 KB"}, {"drops", "drops"}, {"pauses", "pauses"},
		{"bg_fct_p50_us", "background FCT p50 µs"}, {"bg_fct_p95_us", "background FCT p95 µs"}, {"bg_fct_p99_us", "background FCT p99 µs"},
		{"cnps", "CNPs"}, {"cnps_victim_per_flow", "CNPs per background flow"}, {"cnps_incast_per_flow", "CNPs per incast flow"},
		{"isolations", "isolations"}, {"ici_isolated", "flows isolated"}, {"ici_table_full", "table full"},
		{"ecn_marks", "ECN marks"}, {"ecn_marks_cq", "of them in the congested queues"}, {"long_gbps", "long flow Gb/s"}, {"big_flow_gbps", "flows >1MB Gb/s"}, {"big_flow_share", "flows >1MB, share of line rate"}, {"queue_delay_p99_us", "switch queue delay p99 µs"}, {"port_queue_delay_p99_us", "port queue delay p99 µs"}, {"pkt_queue_delay_p99_us", "per-packet queueing delay p99 µs"},
		{"lost_share", "link time lost"},
	},
	KindLoop: {
		{"background_gbps", "background Gb/s"}, {"loop_gbps", "loop Gb/s"}, {"incast_gbps", "incast Gb/s"}, {"deadlocked", "deadlock"},
		{"stalled_queues", "stalled queues"}, {"pauses", "pauses"}, {"drops", "drops"}, {"missing", "missing"}, {"lost_share", "link time lost"},
	},
	KindConformance: {
		{"checks", "figures"}, {"outside", "outside their bound"}, {"flows", "flows"}, {"drops", "drops"}, {"pauses", "pauses"}, {"lost_share", "link time lost"},
	},
	KindHoL: {
		{"victim_alone_gbps", "victim alone Gb/s"}, {"victim_congested_gbps", "victim congested Gb/s"}, {"victim_ratio", "ratio"},
		{"group_fct_alone_us", "group FCT alone µs"}, {"group_fct_congested_us", "group FCT congested µs"}, {"group_fct_ratio", "FCT ratio"},
		{"drops", "drops"}, {"lost_share", "link time lost"},
	},
}

// whenNonzero are key metrics whose column shows only when some point
// has one that is not 0: what only some schemes or workloads produce.
var whenNonzero = map[string]bool{
	"bg_fct_p50_us": true, "bg_fct_p95_us": true, "bg_fct_p99_us": true, "cnps": true,
	"cnps_victim_per_flow": true, "cnps_incast_per_flow": true, "isolations": true, "long_gbps": true, "queue_delay_p99_us": true, "pkt_queue_delay_p99_us": true,
	"ici_isolated": true, "ici_table_full": true, "ecn_marks_cq": true, "ecn_marks": true,
}

// WriteREADME writes the report for people: what ran on which build,
// every point with its validity and key numbers, the plots, the files.
func WriteREADME(w io.Writer, c *Config, r *Report) error {
	var b strings.Builder
	title := c.Title
	if title == "" {
		title = c.Name
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "Experiment `%s`", c.Name)
	if c.Figure != "" {
		fmt.Fprintf(&b, " (%s)", c.Figure)
	}
	if r.Quick {
		b.WriteString(", **quick** version (its quick section applied)")
	}
	if c.Kind == KindLoop {
		var scs []string
		for _, sc := range c.Loop.Scenarios {
			t := loopScenarios[sc]
			scs = append(scs, fmt.Sprintf("%s (BCube(%d,%d))", sc, t.N, t.K))
		}
		fmt.Fprintf(&b, ". Scenarios %s, %s links", strings.Join(scs, ", "), c.RateText(""))
	} else {
		fmt.Fprintf(&b, ". %s, %s links", c.TopologyText(), c.RateText(""))
	}
	if c.Lab.ECN() {
		b.WriteString(", ECN marking on every egress")
	}
	if m, err := c.LabSpec("", "", "/").ResolvedModel(); err == nil {
		fmt.Fprintf(&b, ". Each lab emulates %s (a point at another rate at its own D); the rates and times of the tables and plots are the target's: the lab's rate x D, its time / D", m)
	}
	fmt.Fprintf(&b, ".\n\nBuild: %s", r.Build)
	if r.Build.Time != "" {
		fmt.Fprintf(&b, " (commit time %s)", r.Build.Time)
	}
	fmt.Fprintf(&b, ". Started %s, took %v.", r.Started.UTC().Format(time.RFC3339), r.Elapsed.Round(time.Second))
	if cost := scale.CostText(r.Cost()); cost != "" {
		fmt.Fprintf(&b, " The points cost %s, their labs' bring-up and removal included.", cost)
	}
	b.WriteString("\n\n")
	writeScenario(&b, c)
	c.writeAuto(&b)
	if c.Notes != "" {
		b.WriteString(strings.TrimSpace(c.Notes) + "\n\n")
	}
	b.WriteString("## Run\n\n")
	fmt.Fprintf(&b, "%d of %d points ran, %d valid.", len(r.Results), r.Points, r.Valid())
	if len(r.Reruns) > 0 {
		b.WriteString(" Some points were run again after the run (\"Points run again\", below).")
	}
	if r.Interrupted {
		fmt.Fprintf(&b, " **The run stopped early**: %s.", r.Error)
	}
	b.WriteString(" A point is valid when it ran to the end and the emulation kept up (its health: no daemon lost, no ring drops, no port losing more than its share of link time, the links' one-hop RTT within 10% of the model's); an INVALID point's numbers are not the fabric's, and no plot shows them.\n\n")

	b.WriteString("## Points\n\n")
	cols := keyMetrics[c.Kind]
	var have []int
	for i, k := range cols {
		for j := range r.Results {
			if v, ok := r.Results[j].Get(k.name); ok && !math.IsNaN(v) && (v != 0 || !whenNonzero[k.name]) {
				have = append(have, i)
				break
			}
		}
	}
	b.WriteString("| point | health | wall s per target ms |")
	for _, i := range have {
		b.WriteString(" " + cols[i].head + " |")
	}
	b.WriteString("\n| --- | --- | ---: |" + strings.Repeat(" ---: |", len(have)) + "\n")
	for j := range r.Results {
		res := &r.Results[j]
		verdict := "valid"
		if !res.Valid {
			verdict = "**INVALID**"
		}
		fmt.Fprintf(&b, "| [%s](runs/%s/) | %s | %s |", c.PointLabel(res.Point), res.ID, verdict, cell("", res.WallPerTargetMs, res.WallPerTargetMs > 0))
		for _, i := range have {
			v, ok := res.Get(cols[i].name)
			b.WriteString(" " + cell(cols[i].name, v, ok) + " |")
		}
		b.WriteString("\n")
	}
	if c.Kind == KindLoop {
		prefixTable(&b, c, r.Results, "Pauses sent in the measured window, by class (A, B: PortFC's; P3, P4: PFC's priorities; bfc: BFC's, which pause upstream queues), and relayed by the servers:", "pauses_", "relayed_")
		prefixTable(&b, c, r.Results, "Servers' egress queues paused, in % of the measured window, by queue: the mean over the servers' ports with that queue that sent or were paused (Q: BFC's data queues together; summary.csv has the most of any port, servers_paused_max_pct_):", "servers_paused_pct_")
	}
	if c.Kind == KindWorkload {
		partialTable(&b, r.Results)
		patternTable(&b, c, r.Results)
		agreementTable(&b, c, r.Results)
	}
	if c.Kind == KindConformance {
		conformanceTable(&b, c, r.Results)
	}
	var bad []*Result
	for j := range r.Results {
		if !r.Results[j].Valid {
			bad = append(bad, &r.Results[j])
		}
	}
	if len(bad) > 0 {
		b.WriteString("\nWhy the invalid points are invalid:\n\n")
		for _, res := range bad {
			fmt.Fprintf(&b, "- %s: %s\n", res.ID, strings.Join(res.Problems, "; "))
		}
	}
	writeReruns(&b, r)
	if len(r.Plots) > 0 {
		b.WriteString("\n## Plots\n\n")
		for _, p := range r.Plots {
			fmt.Fprintf(&b, "### %s\n\n![%s](plots/%s.png)\n\n[SVG](plots/%s.svg)", p.Title, p.Title, p.Name, p.Name)
			if p.Note != "" {
				fmt.Fprintf(&b, " — %s", p.Note)
			}
			b.WriteString("\n\n")
		}
	}
	b.WriteString("## Files\n\n")
	b.WriteString("- `config.yaml`: the experiment as run; `source.yaml`: its file as given\n")
	b.WriteString("- `build.json`: the build (module, VCS revision and time, modified, Go release)\n")
	b.WriteString("- `summary.csv`: one row per point, every metric, its wall time (`elapsed_s`), the target's time it emulated (`target_ms`) and their ratio (`wall_s_per_target_ms`); `results.json`: the same with the per-bin summaries and the run's totals\n")
	if c.Kind == KindWorkload {
		b.WriteString("- `bins.csv`: FCT and slowdown per point and flow-size class (<=10KB, 10KB-100KB, 100KB-1MB, >1MB), of the background's (Poisson) flows only, as the slowdown-by-size plots bin them\n")
		b.WriteString("- `runs/<point>/`: `spec.json` (the lab's full spec), `report.json` (the workload's report: records, queue series, fabric counters, health), `records.csv` (per flow), `queues.csv` (bytes queued at every node, every sample, timed on the target's clock and the lab's), `result.json`\n")
	} else {
		b.WriteString("- `runs/<point>/`: `spec.json` (the lab's spec), `report.json` (the bench's result with its health), `result.json`\n")
	}
	b.WriteString("- `plots/`: every plot as PNG and SVG\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// prefixTable writes a table of every point's metrics whose names have
// one of prefixes (a column each, headed by the rest of the name and,
// past the first prefix, the prefix), when any point has one.
func prefixTable(b *strings.Builder, c *Config, results []Result, intro string, prefixes ...string) {
	var names, heads []string
	for pi, pre := range prefixes {
		for j := range results {
			for _, m := range results[j].Metrics {
				rest, ok := strings.CutPrefix(m.Name, pre)
				if !ok || rest == "" || slices.Contains(names, m.Name) {
					continue
				}
				names = append(names, m.Name)
				if pi > 0 {
					rest = strings.TrimSuffix(strings.TrimSuffix(pre, "_"), "_pct") + " " + rest
				}
				heads = append(heads, rest)
			}
		}
	}
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n\n| point |", intro)
	for _, h := range heads {
		b.WriteString(" " + strings.ReplaceAll(h, "_", " ") + " |")
	}
	b.WriteString("\n| --- |" + strings.Repeat(" ---: |", len(names)) + "\n")
	for j := range results {
		res := &results[j]
		fmt.Fprintf(b, "| %s |", c.PointLabel(res.Point))
		for _, n := range names {
			v, ok := res.Get(n)
			b.WriteString(" " + cell(n, v, ok) + " |")
		}
		b.WriteString("\n")
	}
}

// cell prints metric name's value for the README's table.
func cell(name string, v float64, ok bool) string {
	switch {
	case !ok || math.IsNaN(v):
		return "-"
	case name == "deadlocked":
		if v > 0 {
			return "yes"
		}
		return "no"
	case name == "lost_share" || name == "skipped_share":
		return strconv.FormatFloat(100*v, 'f', 2, 64) + "%"
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// partialTable lists the points whose flows did not all end in the
// drain time, with what the watchdogs found then: their FCTs and
// slowdowns are those of the flows that ended.
func partialTable(b *strings.Builder, rs []Result) {
	first := true
	for i := range rs {
		r := &rs[i]
		n, _ := r.Get("incomplete")
		if n <= 0 {
			continue
		}
		if first {
			b.WriteString("\nPoints whose flows did not all end within the drain time (their FCTs, slowdowns and goodputs count the flows that ended; `report.txt` in the point's directory has the cycle):\n\n")
			first = false
		}
		flows, _ := r.Get("flows")
		cyc, _ := r.Get("cycle_queues")
		st, recorded := r.Get("stalled_queues")
		why := "no queue stalled: the flows were moving, slower than the drain time allowed"
		switch {
		case !recorded:
			why = "the run (an older build) did not record the stalled queues"
		case cyc > 0:
			why = fmt.Sprintf("**deadlock**: a cycle of %.0f queues pausing each other (%.0f stalled in all)", cyc, st)
		case st > 0:
			why = fmt.Sprintf("%.0f queues stalled, in no cycle", st)
		}
		fmt.Fprintf(b, "- %s: %.0f of %.0f flows incomplete; %s\n", r.ID, n, flows, why)
	}
}

// patternTable lists, per point, the completed flows that are not the
// background's (an incast's, a pattern's, the long flows): the
// slowdown-by-size plots and bins.csv leave them out, since flows all of
// one size would be a bin's whole tail.
func patternTable(b *strings.Builder, c *Config, rs []Result) {
	first := true
	for i := range rs {
		r := &rs[i]
		by := map[workload.Kind][]float64{}
		var kinds []workload.Kind
		for _, f := range r.Slowdowns {
			if f.Kind == workload.KindPoisson {
				continue
			}
			if _, ok := by[f.Kind]; !ok {
				kinds = append(kinds, f.Kind)
			}
			by[f.Kind] = append(by[f.Kind], f.Slowdown)
		}
		for _, k := range kinds {
			if first {
				b.WriteString("\nFlows outside the size bins (not the background's: the slowdown-by-size plots and `bins.csv` count only its flows), those that completed:\n\n")
				b.WriteString("| point | kind | completed | slowdown p50 | slowdown p99 |\n| --- | --- | ---: | ---: | ---: |\n")
				first = false
			}
			s := by[k]
			slices.Sort(s)
			fmt.Fprintf(b, "| %s | %s | %d | %s | %s |\n", c.PointLabel(r.Point), k, len(s),
				cell("", workload.Percentile(s, 50), true), cell("", workload.Percentile(s, 99), true))
		}
	}
}

// DefaultOut is results/<name>-<UTC time>, the default output directory.
func DefaultOut(name string, now time.Time) string {
	return filepath.Join("results", name+"-"+now.UTC().Format("20060102T150405Z"))
}

// Replot draws the plots of the run in dir again and rewrites its
// README.md and results.json: after a change to the plots, or to look at
// a stopped run. It reads config.yaml, results.json and, for the
// queue-length CDFs and the slowdown by flow size, every point's
// queues.csv and records.csv.
func Replot(dir string) (*Report, error) {
	c, rep, err := readRun(dir)
	if err != nil {
		return nil, err
	}
	return rep, rewrite(dir, c, rep)
}

// readRun reads the experiment and the report of the run in dir:
// config.yaml, results.json and every workload point's queues.csv and
// records.csv.
func readRun(dir string) (*Config, *Report, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		return nil, nil, err
	}
	c, err := Parse(data, false)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "config.yaml"), err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, nil, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
	}
	c.IsQuick = rep.Quick
	for i := range rep.Results {
		r := &rep.Results[i]
		if c.Kind != KindWorkload {
			continue
		}
		if _, ok := r.Get("incomplete_pct"); !ok {
			// A run from before the metric: it is the point's counts'.
			n, _ := r.Get("incomplete")
			f, _ := r.Get("flows")
			r.add("incomplete_pct", incompletePct(int(n), int(f)))
		}
		if r.Queues, err = readSwitchQueues(filepath.Join(dir, "runs", r.ID, "queues.csv")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, nil, err
		}
		recs, err := readRecords(filepath.Join(dir, "runs", r.ID, "records.csv"))
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, nil, err
		default:
			// bins.csv's rows as this build counts them (the
			// background's flows), whatever the run's build did.
			r.Slowdowns, r.Bins = flowSlowdowns(recs), backgroundBins(recs)
		}
	}
	return c, &rep, nil
}

// rewrite draws the plots of rep into dir/plots, replacing what was
// there, and writes the tables (writeTables) and README.md.
func rewrite(dir string, c *Config, rep *Report) error {
	plots := filepath.Join(dir, "plots")
	if err := os.RemoveAll(plots); err != nil {
		return err
	}
	var err error
	rep.Plots, err = Plot(c, rep.Results, plots)
	if err != nil {
		return err
	}
	if err := writeTables(dir, c, rep); err != nil {
		return err
	}
	return writeWith(filepath.Join(dir, "README.md"), func(w io.Writer) error { return WriteREADME(w, c, rep) })
}

// writeTables writes a run's summary.csv, a workload's bins.csv and
// results.json into dir.
func writeTables(dir string, c *Config, rep *Report) error {
	rep.account()
	if err := writeWith(filepath.Join(dir, "summary.csv"), func(w io.Writer) error { return WriteSummaryCSV(w, c, rep.Results) }); err != nil {
		return err
	}
	if c.Kind == KindWorkload {
		if err := writeWith(filepath.Join(dir, "bins.csv"), func(w io.Writer) error { return WriteBinsCSV(w, c, rep.Results) }); err != nil {
			return err
		}
	}
	return writeJSONFile(filepath.Join(dir, "results.json"), rep)
}

// readSwitchQueues reads the switches' columns of a queues.csv
// (lab.WorkloadReport.WriteQueuesCSV): every sample of every switch.
func readSwitchQueues(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []float64
	for _, row := range rows[min(1, len(rows)):] {
		for i := 1; i < len(row) && i < len(rows[0]); i++ {
			if name := rows[0][i]; name == "cnps" || !isSwitch(name) {
				continue // the CNP series, or a server
			}
			v, err := strconv.ParseFloat(row[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}
