package experiment

// The conformance experiment: real frames against closed forms. Each of
// its cases runs a hand-made schedule of RDMA flows on a lab of its own
// (lab.WorkloadOptions.Flows) and judges what the lab measured against a
// formula in the target's units, the formula printed beside the figure:
//
//   - alone: one flow at a time, 1 KiB to 10 MiB, over 2, 4 and 6 links
//     (BCube(2,2): hosts one, two and three digits apart), against the
//     store-and-forward ideal (workload.Ideal), within 1%;
//   - incast: N senders of S bytes each start at once toward one host,
//     losslessly; the last byte is acknowledged after N·S on the wire at
//     the line rate, plus what one flow alone needs beyond its own bytes
//     (the path's store and forward, propagation and the last ACK),
//     within 3%;
//   - share: N long flows into one egress from N ingress ports; while
//     all N run, each gets 1/N of the link within 5%, Jain's index at
//     least 0.99, the link carries its goodput capacity within 5%.
//
// The servers route by a fixed level order (ascending: level 0 first),
// so the port an incast's flows enter their receiver by is known: the
// link of the highest level their hosts' addresses differ in.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/wire/transport"
)

// KindConformance runs the conformance checks (ConformanceCases): hand-made
// flows on labs of their own, judged against closed forms.
const KindConformance = "conformance"

// conformanceFabrics names the conformance experiment's fabric in titles:
// each case has its own.
const conformanceFabrics = "each case on its own fabric"

// ConformanceConfig is the conformance section of an experiment file.
type ConformanceConfig struct {
	// Cases are the cases to run, by name (ConformanceCases; empty: all).
	Cases []string `yaml:"cases,omitempty"`
}

// ConformanceCase is one case of the conformance experiment: a lab, a
// schedule and the judgement of what it measured.
type ConformanceCase struct {
	// Name names the case's points (their scenario): alone, incast-8.
	Name string
	// Check is the closed form it tests: alone, incast or share.
	Check string
	// What the case runs, for the README.
	Text string
	// Topology is the case's BCube, unless Fabric is set.
	Topology Topology
	Fabric   *FabricConfig
	// Flows is the schedule in the target's time, from the target's
	// wire, ideal FCT and parameters (env's ECN histograms are not
	// there yet); window is the span the starts fall in.
	flows func(env conformanceEnv) (flows []workload.Flow, window time.Duration)
	// series: the judgement reads the flows' acknowledged bytes over time.
	series bool
	// ecn: the lab marks ECN, and the judgement reads the egresses'
	// marking decisions by queue length (api.ECNHist).
	ecn bool
	// cc, when set, is the flows' congestion control (the case checks
	// it: it runs under the contenders with it, runs); the lab marks ECN
	// for it.
	cc string
	// senders is the dcqcn check's N.
	senders int
	// interval, when set, is the time between the run's polls and
	// queue samples in the target (lab.WorkloadOptions.Interval / D).
	interval time.Duration
	// mode, when set, is the flows' loss recovery (gbn, irn): the case
	// runs under the contenders of that mode (runs).
	mode string
	// pauses: the judgement reads the ports' flow-control timing
	// (api.FCTiming) and holds the pauses to their thresholds.
	pauses bool
	// fc, when set, is the only flow control the case runs under (its
	// queues are that scheme's); weights the lab's DRR weights
	// (--drr-weights).
	fc      string
	weights []int
}

// conformanceLinks are BCube(2,2)'s destinations of h0 one, two and
// three digits away: paths of 2, 4 and 6 links.
var conformanceLinks = []struct{ dst, links int }{{1, 2}, {3, 4}, {7, 6}}

// conformanceSizes are the alone check's flow sizes.
var conformanceSizes = []int64{1 << 10, 10 << 10, 100 << 10, 1 << 20, 10 << 20}

// aloneRepeats is how many times the alone check runs each flow: its
// median is judged, robust to one late wake-up of the emulator.
const aloneRepeats = 3

// ConformanceCases are the cases of the conformance experiment, in the
// order they run.
var ConformanceCases = []ConformanceCase{
	{
		Name: "alone", Check: "alone", Topology: Topology{N: 2, K: 2},
		Text: fmt.Sprintf("one flow at a time from h0 over 2, 4 and 6 links (to h1, h3, h7), 1 KiB to 10 MiB, %d times each, judged by the median; each flow starts after the one before has had twice its ideal FCT, after a first 1 KiB flow to each destination that is not judged (it warms the path)", aloneRepeats),
		flows: func(env conformanceEnv) ([]workload.Flow, time.Duration) {
			var fs []workload.Flow
			at := time.Duration(0)
			add := func(dst int, size int64, group int) {
				fs = append(fs, workload.Flow{ID: len(fs), Src: 0, Dst: dst, Size: size, Start: at, Kind: workload.KindPoisson, Group: group})
				at += 2*env.ideal(0, dst, size) + 20*time.Microsecond
			}
			for _, l := range conformanceLinks {
				add(l.dst, conformanceSizes[0], 0)
			}
			for range aloneRepeats {
				group := 0
				for _, l := range conformanceLinks {
					for _, s := range conformanceSizes {
						group++
						add(l.dst, s, group)
					}
				}
			}
			return fs, at
		},
	},
	incastCase(2, Topology{N: 4, K: 1}, 1<<20),
	incastCase(8, Topology{N: 4, K: 1}, 1<<20),
	incastCase(32, Topology{N: 8, K: 1}, 1<<20),
	shareCase(2, 5<<20),
	shareCase(4, 5<<20),
	dcqcnCase(2),
	dcqcnCase(4),
	dcqcnCase(8),
	lossCase(transport.GBN),
	lossCase(transport.IRN),
	ccCase("dctcp", 2),
	ccCase("dctcp", 4),
	ccCase("dctcp", 8),
	ccCase("hpcc", 2),
	ccCase("hpcc", 4),
	ccCase("hpcc", 8),
	{
		Name: "ecn", Check: "ecn", ecn: true,
		Fabric: &FabricConfig{Kind: lab.TopologyLeafSpine, Leaves: 2, Spines: 1, Hosts: 5},
		Text:   fmt.Sprintf("%d 4-to-1 incasts of %s each from h1..h4 to h0 on one leaf of a leaf-spine, %v apart in the target, ECN marking on: the leaf's egress to h0 fills past K_max (each ingress port may hold X_off), so its marking decisions cover RED's whole line", ecnIncasts, units.CompactSize(ecnIncastSize), ecnPeriod),
		flows: func(conformanceEnv) ([]workload.Flow, time.Duration) {
			var fs []workload.Flow
			for k := range ecnIncasts {
				for i := range 4 {
					fs = append(fs, workload.Flow{ID: len(fs), Src: 1 + i, Dst: 0, Size: ecnIncastSize, Start: time.Duration(k) * ecnPeriod, Kind: workload.KindIncast, Group: 1 + k})
				}
			}
			return fs, time.Duration(ecnIncasts) * ecnPeriod
		},
	},
	drrCase(),
}

// The ecn case's incasts: how many, of how many bytes per sender, how
// far apart in the target (4 x 256 KiB take 92 µs at 100 Gb/s).
const (
	ecnIncasts    = 25
	ecnIncastSize = 256 << 10
	ecnPeriod     = 250 * time.Microsecond
)

// ecnMinDecided is the fewest decisions of a bucket of RED's line that is
// judged: a binomial share of 0.1 from 400 has a standard deviation of
// 0.015, well inside the bound.
const ecnMinDecided = 400

// incastCase is n senders of size bytes each to h0 on BCube t, all of
// them a level-1 digit away (the last hop into h0 its level-1 link).
func incastCase(n int, t Topology, size int64) ConformanceCase {
	return ConformanceCase{
		Name: fmt.Sprintf("incast-%d", n), Check: "incast", Topology: t, pauses: true,
		Text: fmt.Sprintf("%d-to-1 incast of %s each into h0 on BCube(%d,%d), the senders h%d.. (every one entering h0 by its level-1 link)", n, units.CompactSize(size), t.N, t.K, t.N),
		flows: func(conformanceEnv) ([]workload.Flow, time.Duration) {
			fs := make([]workload.Flow, n)
			for i := range fs {
				fs[i] = workload.Flow{ID: i, Src: t.N + i, Dst: 0, Size: size, Kind: workload.KindIncast, Group: 1}
			}
			return fs, time.Microsecond
		},
	}
}

// shareCase is n flows of size bytes each from h1..hn to h0, all on one
// leaf of a leaf-spine: n ingress ports into the leaf's egress to h0.
func shareCase(n int, size int64) ConformanceCase {
	return ConformanceCase{
		Name: fmt.Sprintf("share-%d", n), Check: "share", series: true,
		Fabric: &FabricConfig{Kind: lab.TopologyLeafSpine, Leaves: 2, Spines: 1, Hosts: 5},
		Text:   fmt.Sprintf("%d flows of %s each from h1..h%d to h0 at once, through one leaf of a leaf-spine (2 leaves of 5 servers, 1 spine)", n, units.CompactSize(size), n),
		flows: func(conformanceEnv) ([]workload.Flow, time.Duration) {
			fs := make([]workload.Flow, n)
			for i := range fs {
				fs[i] = workload.Flow{ID: i, Src: 1 + i, Dst: 0, Size: size, Kind: workload.KindLong}
			}
			return fs, time.Microsecond
		},
	}
}

// conformanceCase is the case named name.
func conformanceCase(name string) (ConformanceCase, bool) {
	i := slices.IndexFunc(ConformanceCases, func(c ConformanceCase) bool { return c.Name == name })
	if i < 0 {
		return ConformanceCase{}, false
	}
	return ConformanceCases[i], true
}

// conformanceCaseNames are the names of ConformanceCases.
func conformanceCaseNames() []string {
	var out []string
	for _, c := range ConformanceCases {
		out = append(out, c.Name)
	}
	return out
}

// runs reports whether the case runs under contender sc: a case of
// loss recovery under the contenders of its mode (gbn, irn), a case of
// congestion control under a lossless contender with it (pfc,
// pfc/dcqcn), every other case under a lossless one without (pfc/nocc),
// as its closed form assumes the senders at line rate; on a graph
// fabric, whose switches run none or pfc, only under those.
func (cc *ConformanceCase) runs(sc Contender) bool {
	if cc.Fabric != nil && sc.FC != "pfc" && sc.FC != "none" || cc.fc != "" && sc.FC != cc.fc {
		return false
	}
	if cc.mode != "" {
		return sc.Mode == cc.mode
	}
	if sc.Mode != transport.Lossless.String() {
		return false
	}
	if cc.cc != "" {
		// The lab's own cc, DCQCN, when the contender names none.
		return !sc.NoCC && (sc.CC == cc.cc || sc.CC == "" && cc.cc == "dcqcn")
	}
	return sc.NoCC
}

// apply makes s the case's lab: its fabric, and the servers' fixed level
// order on a BCube.
func (cc *ConformanceCase) apply(s *lab.Spec) {
	if cc.ecn || cc.cc != "" {
		s.ECN = true
	}
	if cc.cc != "" {
		s.CC = cc.cc
	}
	if cc.weights != nil {
		s.DRRWeights = cc.weights
	}
	if cc.Fabric != nil {
		s.Fabric, s.N, s.K, s.LevelOrder = cc.Fabric.Spec(), 0, 0, ""
		return
	}
	s.Fabric, s.N, s.K, s.LevelOrder = nil, cc.Topology.N, cc.Topology.K, "ascending"
}

// CheckRow is one figure of a conformance case against its formula.
type CheckRow struct {
	// Item is what the figure is of: "4 links, 1M", "h3's share"; the
	// same figure of the same case under another scheme has the same
	// Item. Detail says more of this point's: "median of 3".
	Item   string `json:"item"`
	Detail string `json:"detail,omitempty"`
	// Spread, when the figure is the median of several, is their least
	// and greatest, in Unit.
	Spread *[2]float64 `json:"spread,omitempty"`
	// Measured and Expected are in Unit, the target's (µs, Gb/s, or none).
	Measured float64 `json:"measured"`
	Expected float64 `json:"expected"`
	Unit     string  `json:"unit,omitempty"`
	// Formula is how Expected was computed, with its terms' values.
	Formula string `json:"formula"`
	// Error is Measured / Expected - 1, or for a floor (Jain's index)
	// Measured - Expected; Bound the largest error that passes (Floor:
	// Measured >= Expected passes).
	Error float64 `json:"error"`
	Bound float64 `json:"bound"`
	Floor bool    `json:"floor,omitempty"`
	// Slack, when positive, passes an error within it in Unit whatever
	// the relative bound.
	Slack float64 `json:"slack,omitempty"`
	// Abs: Error is Measured - Expected and Bound absolute (a
	// probability's, in points). Ceil: Measured <= Expected passes, Error
	// is Measured - Expected.
	Abs  bool `json:"abs,omitempty"`
	Ceil bool `json:"ceil,omitempty"`
	Pass bool `json:"pass"`
}

// relRow is a row judged by its relative error against bound.
func relRow(item string, measured, expected float64, unit, formula string, bound float64) CheckRow {
	r := CheckRow{Item: item, Measured: measured, Expected: expected, Unit: unit, Formula: formula, Bound: bound}
	r.Error = measured/expected - 1
	r.Pass = expected > 0 && math.Abs(r.Error) <= bound
	return r
}

// wireTime is the time size bytes of payload take on a link of w: the
// payload and every packet's overhead at w.Rate.
func wireTime(size int64, w workload.Wire) time.Duration {
	packets := (size + int64(w.Payload) - 1) / int64(w.Payload)
	bits := 8 * float64(size+packets*int64(w.Overhead))
	return time.Duration(math.Round(bits / float64(w.Rate) * 1e9))
}

// us is d in µs.
func us(d time.Duration) float64 { return float64(d) / 1e3 }

// conformanceEnv is what a case is judged with besides the lab's report:
// the target's wire and ideal FCT (at the target's rate and delays), its
// parameters, and the ECN decisions of the lab's egresses over the run,
// one histogram per set of edges (ports of one rate).
type conformanceEnv struct {
	wire   workload.Wire
	ideal  workload.IdealFunc
	target scale.Target
	pmax   float64 // RED's P_max in the lab
	d      float64 // the lab's D
	hists  []api.ECNHist
	// ports are the flow-control timings of every port (a case with
	// pauses).
	ports []fcPort
}

// judge is the case's rows from the lab's report rep.
func (cc *ConformanceCase) judge(rep *lab.WorkloadReport, env conformanceEnv) []CheckRow {
	w, ideal := env.wire, env.ideal
	var rows []CheckRow
	recs := rep.Records
	done := 0
	for _, r := range recs {
		if r.Completed {
			done++
		}
	}
	if done < len(recs) {
		n := float64(len(recs))
		return []CheckRow{{Item: "flows completed", Measured: float64(done), Expected: n, Formula: "every flow of the schedule", Error: float64(done)/n - 1, Pass: false}}
	}
	switch cc.Check {
	case "alone":
		// The flows of each group (path and size), the warm-ups (group
		// 0) left out, by their median FCT.
		groups := map[int][]workload.FlowRecord{}
		var order []int
		for _, r := range recs {
			if r.Group == 0 {
				continue
			}
			if groups[r.Group] == nil {
				order = append(order, r.Group)
			}
			groups[r.Group] = append(groups[r.Group], r)
		}
		for _, g := range order {
			rs := groups[g]
			fcts := make([]float64, len(rs))
			for i, r := range rs {
				fcts[i] = us(r.TargetFCT)
			}
			slices.Sort(fcts)
			r := rs[0]
			links := 0
			for _, l := range conformanceLinks {
				if l.dst == r.Dst {
					links = l.links
				}
			}
			want := ideal(r.Src, r.Dst, r.Size)
			row := relRow(fmt.Sprintf("%d links, %s", links, units.CompactSize(r.Size)), fcts[len(fcts)/2], us(want), "µs",
				fmt.Sprintf("store and forward over %d links: %.2f µs", links, us(want)), 0.01)
			if len(fcts) > 1 {
				row.Detail = fmt.Sprintf("median of %d, %.4g–%.4g µs", len(fcts), fcts[0], fcts[len(fcts)-1])
				row.Spread = &[2]float64{fcts[0], fcts[len(fcts)-1]}
			}
			rows = append(rows, row)
		}
	case "incast":
		first, last := recs[0].TargetStart, time.Duration(0)
		var base time.Duration
		n := len(recs)
		for _, r := range recs {
			first = min(first, r.TargetStart)
			last = max(last, r.TargetStart+r.TargetFCT)
			base = max(base, ideal(r.Src, r.Dst, r.Size)-wireTime(r.Size, w))
		}
		on := time.Duration(n) * wireTime(recs[0].Size, w)
		rows = append(rows, relRow(fmt.Sprintf("%d x %s, last byte acknowledged", n, units.CompactSize(recs[0].Size)), us(last-first), us(on+base), "µs",
			fmt.Sprintf("N·S on the wire at C (%.1f µs) + one flow's path beyond its bytes (%.2f µs)", us(on), us(base)), 0.03))
		if cc.pauses {
			rows = append(rows, pauseRows(env.ports, env, cc.Topology.N, cc.Topology.K+1)...)
		}
	case "share":
		rows = append(rows, shareRows(rep, w)...)
	case "ecn":
		rows = append(rows, ecnRows(env.hists, env.pmax)...)
	case "dcqcn":
		rows = append(rows, dcqcnRows(rep, env, cc.senders)...)
	case "loss":
		rows = append(rows, lossRows(recs, env, cc.mode)...)
	case "drr":
		rows = append(rows, drrRows(rep, env)...)
	case "dctcp", "hpcc":
		rows = append(rows, ccRows(rep, env, cc.Check, cc.senders)...)
	}
	drops := float64(rep.Fabric.Drops)
	rows = append(rows, CheckRow{Item: "frames dropped", Measured: drops, Formula: "none but those injected", Error: drops, Pass: drops == 0})
	return rows
}

// shareRows judge the rates of rep's flows while all of them ran: the
// middle 80% of the span from the last start to the first end, read from
// the flow series at the samples nearest its ends.
func shareRows(rep *lab.WorkloadReport, w workload.Wire) []CheckRow {
	n := len(rep.Records)
	var from, to time.Duration
	to = time.Duration(math.MaxInt64)
	for _, r := range rep.Records {
		from = max(from, r.TargetStart)
		to = min(to, r.TargetStart+r.TargetFCT)
	}
	span := to - from
	from, to = from+span/10, to-span/10
	// The samples of each flow: the last at or before from, the first at
	// or after to.
	type at struct {
		t     time.Duration
		acked int64
	}
	a, b := make([]*at, n), make([]*at, n)
	for _, s := range rep.FlowSeries {
		if s.Flow < 0 || s.Flow >= n {
			continue
		}
		x := &at{s.TargetElapsed, s.Acked}
		if s.TargetElapsed <= from && (a[s.Flow] == nil || s.TargetElapsed > a[s.Flow].t) {
			a[s.Flow] = x
		}
		if s.TargetElapsed >= to && (b[s.Flow] == nil || s.TargetElapsed < b[s.Flow].t) {
			b[s.Flow] = x
		}
	}
	rates := make([]float64, n)
	var sum, sq float64
	for i := range n {
		if a[i] == nil || b[i] == nil || b[i].t <= a[i].t {
			return []CheckRow{{Item: "rates while all flows run", Formula: "samples before and after the shared span", Pass: false}}
		}
		rates[i] = 8 * float64(b[i].acked-a[i].acked) / (b[i].t - a[i].t).Seconds() / 1e9
		sum += rates[i]
		sq += rates[i] * rates[i]
	}
	var rows []CheckRow
	for i, r := range rep.Records {
		rows = append(rows, relRow(fmt.Sprintf("h%d's share", r.Src), rates[i]/sum, 1/float64(n), "", fmt.Sprintf("1/N, N = %d", n), 0.05))
	}
	jain := sum * sum / (float64(n) * sq)
	rows = append(rows, CheckRow{Item: "Jain's index", Measured: jain, Expected: 0.99, Formula: "(Σx)²/(N·Σx²) at least 0.99", Error: jain - 0.99, Floor: true, Pass: jain >= 0.99})
	capacity := float64(w.Rate) * float64(w.Payload) / float64(w.Payload+w.Overhead) / 1e9
	rows = append(rows, relRow("the link's goodput", sum, capacity, "Gb/s",
		fmt.Sprintf("C·MTU/(MTU+overhead) = %g Gb/s x %d/%d", float64(w.Rate)/1e9, w.Payload, w.Payload+w.Overhead), 0.05))
	return rows
}

// ecnRows judge the marking decisions of hists against RED's line:
// nothing marked below K_min, everything at or above K_max, and between
// them each bucket's share marked within 5 points of P_max·(q−K_min)/
// (K_max−K_min) at the bucket's middle, where it has ecnMinDecided
// decisions or more. The histograms with fewer decisions than that in
// all are left out (ports that hardly queued); none left is a failure.
func ecnRows(hists []api.ECNHist, pmax float64) []CheckRow {
	var rows []CheckRow
	kb := func(b int) string { return strconv.FormatFloat(float64(b)/1e3, 'f', -1, 64) }
	for _, h := range hists {
		var total uint64
		for _, n := range h.Decided {
			total += n
		}
		if total < ecnMinDecided || len(h.Edges) < 2 {
			continue
		}
		kmin, kmax := h.Edges[0], h.Edges[len(h.Edges)-1]
		ports := fmt.Sprintf("K_min %s KB: ", kb(kmin))
		for i, n := range h.Decided {
			if n == 0 {
				continue
			}
			share := float64(h.Marked[i]) / float64(n)
			detail := units.Count(n, "decision", "decisions")
			switch {
			case i == 0:
				rows = append(rows, CheckRow{Item: ports + "queue below K_min", Detail: detail, Measured: share, Formula: "none marked", Error: share, Abs: true, Pass: h.Marked[i] == 0})
			case i == len(h.Edges):
				rows = append(rows, CheckRow{Item: ports + "queue at or above K_max", Detail: detail, Measured: share, Expected: 1, Formula: "all marked", Error: share - 1, Abs: true, Pass: h.Marked[i] == n})
			case n >= ecnMinDecided:
				lo, hi := h.Edges[i-1], h.Edges[i]
				mid := float64(lo+hi) / 2
				want := pmax * (mid - float64(kmin)) / float64(kmax-kmin)
				rows = append(rows, CheckRow{Item: fmt.Sprintf("%squeue %s–%s KB", ports, kb(lo), kb(hi)), Detail: detail, Measured: share, Expected: want,
					Formula: fmt.Sprintf("P_max·(q−K_min)/(K_max−K_min) at q = %s KB, P_max %g", kb(int(mid)), pmax), Error: share - want, Bound: 0.05, Abs: true,
					Pass: math.Abs(share-want) <= 0.05})
			}
		}
	}
	if len(rows) == 0 {
		return []CheckRow{{Item: "ECN decisions", Formula: fmt.Sprintf("a port with %d or more", ecnMinDecided), Pass: false}}
	}
	return rows
}

// conformanceTable writes the README's table of every check of every
// point, the points in order.
func conformanceTable(b *strings.Builder, c *Config, results []Result) {
	b.WriteString("\n## Checks\n\n")
	b.WriteString("Every figure in the target's units against its closed form (the cases under Scenario); a check of an INVALID point is not a verdict.\n\n")
	b.WriteString("| point | figure | measured | expected | formula | error | bound | verdict |\n| --- | --- | ---: | ---: | --- | ---: | ---: | --- |\n")
	for j := range results {
		res := &results[j]
		for _, row := range res.Checks {
			verdict := "within"
			switch {
			case !res.Valid:
				verdict = "(INVALID point)"
			case !row.Pass:
				verdict = "**outside**"
			}
			unit := ""
			if row.Unit != "" {
				unit = " " + row.Unit
			}
			errText, bound := fmt.Sprintf("%+.2f%%", 100*row.Error), fmt.Sprintf("±%g%%", 100*row.Bound)
			switch {
			case row.Floor:
				errText, bound = fmt.Sprintf("%+.4g", row.Error), fmt.Sprintf("≥ %.4g", row.Expected)
			case row.Ceil:
				errText, bound = fmt.Sprintf("%+.4g", row.Error), fmt.Sprintf("≤ %.4g", row.Expected)
			case row.Abs && row.Unit != "":
				errText, bound = fmt.Sprintf("%+g %s", row.Error, row.Unit), fmt.Sprintf("±%g %s", row.Bound, row.Unit)
			case row.Abs:
				errText, bound = fmt.Sprintf("%+.1f points", 100*row.Error), fmt.Sprintf("±%g points", 100*row.Bound)
			case row.Slack > 0:
				bound = fmt.Sprintf("±%g%% or %g %s", 100*row.Bound, row.Slack, row.Unit)
			case row.Expected == 0:
				errText, bound = fmt.Sprintf("%g", row.Error), "0"
			}
			item := row.Item
			if row.Detail != "" {
				item += " (" + row.Detail + ")"
			}
			fmt.Fprintf(b, "| %s | %s | %s%s | %s%s | %s | %s | %s | %s |\n", c.PointLabel(res.Point), item, sig(row.Measured), unit, sig(row.Expected), unit, row.Formula, errText, bound, verdict)
		}
	}
}

// writeConformanceScenario lists the cases c runs, each on its lab.
func writeConformanceScenario(b *strings.Builder, c *Config) {
	b.WriteString("**Topology.** Each case runs on a lab of its own, the servers of a BCube routing by a fixed level order (level 0 first), so the links every flow crosses are known; the flows are RDMA flows, lossless, started by the lab at the times of a hand-made schedule.\n\n**Cases.**\n\n")
	for i, name := range c.Conformance.Cases {
		cc, ok := conformanceCase(name)
		if !ok {
			continue
		}
		fabric := fmt.Sprintf("BCube(%d,%d)", cc.Topology.N, cc.Topology.K)
		if cc.Fabric != nil {
			fabric = cc.Fabric.Spec().String()
		}
		fmt.Fprintf(b, "%d. **%s** (%s check, %s): %s.\n", i+1, cc.Name, cc.Check, fabric, cc.Text)
	}
	b.WriteString("\n")
}

// sig is v with four significant digits.
func sig(v float64) string { return fmt.Sprintf("%.4g", v) }
