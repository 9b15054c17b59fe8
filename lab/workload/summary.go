package workload

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Bins are the upper bounds, in bytes and inclusive, of flow-size bins,
// ascending; one more bin above the last bound holds the largest flows.
// No bounds make a single bin.
type Bins []int64

// DefaultBins are the papers' size classes: <=10KB, 10KB-100KB,
// 100KB-1MB and >1MB (decimal units).
var DefaultBins = Bins{10_000, 100_000, 1_000_000}

// Validate checks that the bounds are positive and strictly ascending.
func (b Bins) Validate() error {
	for i, v := range b {
		if v < 1 || (i > 0 && v <= b[i-1]) {
			return fmt.Errorf("size bins %v: want positive bounds in strictly ascending order", []int64(b))
		}
	}
	return nil
}

// Len is the number of bins, len(b)+1.
func (b Bins) Len() int { return len(b) + 1 }

// Index is the bin a flow of size bytes falls in.
func (b Bins) Index(size int64) int {
	i, _ := slices.BinarySearch(b, size)
	return i
}

// Label names bin i: "<=10KB", "10KB-100KB", ">1MB", or "all" when there
// are no bounds.
func (b Bins) Label(i int) string {
	switch {
	case len(b) == 0:
		return "all"
	case i == 0:
		return "<=" + sizeLabel(b[0])
	case i == len(b):
		return ">" + sizeLabel(b[i-1])
	}
	return sizeLabel(b[i-1]) + "-" + sizeLabel(b[i])
}

// sizeLabel prints a bound in the largest unit that divides it: decimal
// (KB, MB, GB) first, as the papers write sizes, then binary, then bytes.
func sizeLabel(n int64) string {
	for _, u := range []struct {
		div  int64
		name string
	}{{1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n%u.div == 0 {
			return strconv.FormatInt(n/u.div, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// Dist summarises a sample: its size, mean, nearest-rank percentiles
// (see Percentile) and maximum. All zero when the sample is empty.
type Dist[T time.Duration | float64] struct {
	N    int `json:"n"`
	Mean T   `json:"mean"`
	P50  T   `json:"p50"`
	P95  T   `json:"p95"`
	P99  T   `json:"p99"`
	P999 T   `json:"p99_9"`
	Max  T   `json:"max"`
}

// DurationDist summarises a sample of durations (left unchanged): its
// mean, nearest-rank percentiles and maximum.
func DurationDist(xs []time.Duration) Dist[time.Duration] {
	return distOf(slices.Clone(xs), func(f float64) time.Duration { return time.Duration(math.Round(f)) })
}

// distOf sorts xs in place and summarises it; round makes the mean, a
// float64, a T.
func distOf[T time.Duration | float64](xs []T, round func(float64) T) Dist[T] {
	if len(xs) == 0 {
		return Dist[T]{}
	}
	slices.Sort(xs)
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	return Dist[T]{
		N:    len(xs),
		Mean: round(sum / float64(len(xs))),
		P50:  Percentile(xs, 50),
		P95:  Percentile(xs, 95),
		P99:  Percentile(xs, 99),
		P999: Percentile(xs, 99.9),
		Max:  xs[len(xs)-1],
	}
}

// Percentile is the p-th percentile, p in [0, 100], of sorted (ascending)
// by the nearest-rank method: the smallest value that at least p percent
// of the values do not exceed, sorted[ceil(p/100 × n) - 1], and the
// minimum for p = 0. No interpolation: every percentile is a measured
// value. The zero value for an empty sample. The rank is computed with a
// margin of 1e-6 below the exact product so that p = 99.9 of 1000
// values is the 999th even where p/100 × n is not exact in floating
// point.
func Percentile[T cmp.Ordered](sorted []T, p float64) T {
	var zero T
	n := len(sorted)
	if n == 0 {
		return zero
	}
	rank := int(math.Ceil(p/100*float64(n) - 1e-6))
	return sorted[min(max(rank, 1), n)-1]
}

// BinSummary is one size bin of a Summary.
type BinSummary struct {
	Label string `json:"label"`
	// Above and UpTo bound the bin: Above < size <= UpTo; UpTo 0 for the
	// last bin, which has no upper bound.
	Above int64 `json:"above_bytes"`
	UpTo  int64 `json:"up_to_bytes,omitempty"`
	// Flows counts every record in the bin; Completed and Failed those
	// that completed and failed.
	Flows     int `json:"flows"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	// FCT is over the completed flows; Slowdown over those of them with a
	// slowdown (a known ideal FCT).
	FCT      Dist[time.Duration] `json:"fct_ns"`
	Slowdown Dist[float64]       `json:"slowdown"`
}

// Summary is the outcome of a run.
type Summary struct {
	Duration       time.Duration `json:"duration_ns"`
	Flows          int           `json:"flows"`
	Completed      int           `json:"completed"`
	Failed         int           `json:"failed"`
	Incomplete     int           `json:"incomplete"`
	BytesCompleted int64         `json:"bytes_completed"`
	// Goodput is 8 × BytesCompleted / Duration, in bit/s: the bytes of
	// the flows that completed, over the run's duration.
	Goodput         float64      `json:"goodput_bps"`
	Retransmissions uint64       `json:"retransmissions"`
	All             BinSummary   `json:"all"`
	Bins            []BinSummary `json:"bins"`
	// Clock says whose times and rates these are: "target" for a
	// summary read on the target's clock (Dilated), empty for the lab's
	// own (Summarize).
	Clock string `json:"clock,omitempty"`
}

// Summarize sums up the records of a run of the given duration by the
// size bins. A record that is Failed counts as failed even if it is
// also marked Completed; one that is neither is incomplete.
func Summarize(recs []FlowRecord, duration time.Duration, bins Bins) (Summary, error) {
	if err := bins.Validate(); err != nil {
		return Summary{}, err
	}
	type acc struct {
		BinSummary
		fct  []time.Duration
		slow []float64
	}
	all := acc{BinSummary: BinSummary{Label: "all"}}
	per := make([]acc, bins.Len())
	for i := range per {
		per[i].Label = bins.Label(i)
		if i > 0 {
			per[i].Above = bins[i-1]
		}
		if i < len(bins) {
			per[i].UpTo = bins[i]
		}
	}
	s := Summary{Duration: duration, Flows: len(recs)}
	for i := range recs {
		r := &recs[i]
		s.Retransmissions += r.Retransmissions
		for _, a := range []*acc{&all, &per[bins.Index(r.Size)]} {
			a.Flows++
			switch {
			case r.Failed:
				a.Failed++
			case r.Completed:
				a.Completed++
				a.fct = append(a.fct, r.FCT)
				if r.Slowdown > 0 {
					a.slow = append(a.slow, r.Slowdown)
				}
			}
		}
		switch {
		case r.Failed:
			s.Failed++
		case r.Completed:
			s.Completed++
			s.BytesCompleted += r.Size
		default:
			s.Incomplete++
		}
	}
	roundDur := func(f float64) time.Duration { return time.Duration(math.Round(f)) }
	same := func(f float64) float64 { return f }
	finish := func(a *acc) BinSummary {
		a.FCT = distOf(a.fct, roundDur)
		a.Slowdown = distOf(a.slow, same)
		return a.BinSummary
	}
	s.All = finish(&all)
	s.Bins = make([]BinSummary, len(per))
	for i := range per {
		s.Bins[i] = finish(&per[i])
	}
	if duration > 0 {
		s.Goodput = 8 * float64(s.BytesCompleted) / duration.Seconds()
	}
	return s, nil
}

// Dilated is s in the time of a network the lab emulates at dilation d
// (package scale): every duration divided by d, the goodput multiplied
// by it; counts, bytes and slowdowns are the same.
func (s Summary) Dilated(d float64) Summary {
	s.Clock = ClockTarget
	if d <= 0 || d == 1 {
		return s
	}
	at := func(t time.Duration) time.Duration { return time.Duration(math.Round(float64(t) / d)) }
	bin := func(b BinSummary) BinSummary {
		f := &b.FCT
		f.Mean, f.P50, f.P95, f.P99, f.P999, f.Max = at(f.Mean), at(f.P50), at(f.P95), at(f.P99), at(f.P999), at(f.Max)
		return b
	}
	s.Duration = at(s.Duration)
	s.Goodput *= d
	s.All = bin(s.All)
	bins := make([]BinSummary, len(s.Bins))
	for i, b := range s.Bins {
		bins[i] = bin(b)
	}
	s.Bins = bins
	return s
}

// ClockTarget is Summary.Clock of a summary on the target's clock.
const ClockTarget = "target"

// WriteJSON writes s as indented JSON; times are integer nanoseconds.
func (s *Summary) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// WriteText writes s as a table for people: a line of totals, then one
// row per size bin and one for all flows, with the FCT's and the
// slowdown's mean and percentiles. Times carry their unit; a bin without
// completed flows shows "-".
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	where, fct := " of lab time", "FCT of lab time"
	if s.Clock == ClockTarget {
		where, fct = " in the target", "FCT in the target"
	}
	fmt.Fprintf(&b, "flows %d: %d completed, %d failed, %d incomplete; %s in %s%s, goodput %s%s; %d retransmissions\n\n",
		s.Flows, s.Completed, s.Failed, s.Incomplete, formatBytes(s.BytesCompleted), FormatDuration(s.Duration), where, formatRate(s.Goodput), strings.Replace(where, "of lab time", "in the lab", 1), s.Retransmissions)
	rows := [][]string{{"size", "flows", "done", "avg", "p50", "p95", "p99", "p99.9", "avg", "p50", "p95", "p99", "p99.9"}}
	for _, bin := range append(slices.Clone(s.Bins), s.All) {
		f, d := bin.FCT, bin.Slowdown
		row := []string{bin.Label, strconv.Itoa(bin.Flows), strconv.Itoa(bin.Completed)}
		for _, v := range []time.Duration{f.Mean, f.P50, f.P95, f.P99, f.P999} {
			row = append(row, cond(f.N > 0, FormatDuration(v)))
		}
		for _, v := range []float64{d.Mean, d.P50, d.P95, d.P99, d.P999} {
			row = append(row, cond(d.N > 0, FormatSlowdown(v)))
		}
		rows = append(rows, row)
	}
	WriteTable(&b, rows, []ColumnGroup{{From: 3, To: 7, Title: fct}, {From: 8, To: 12, Title: "slowdown"}})
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

func cond(ok bool, s string) string {
	if ok {
		return s
	}
	return "-"
}

// ColumnGroup is a banner over a table's columns From to To.
type ColumnGroup struct {
	From, To int
	Title    string
}

// WriteTable writes rows (the first the header) to b in columns, the
// first left aligned and the others right, under a line of banners over
// groups of columns ("---- FCT ----"), a group's columns widened, the
// last first, until its banner fits.
func WriteTable(b *strings.Builder, rows [][]string, groups []ColumnGroup) {
	const gap = "  "
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	span := func(from, to int) int {
		n := 0
		for i := from; i <= to; i++ {
			n += widths[i]
		}
		return n + (to-from)*len(gap)
	}
	for _, g := range groups {
		for i := 0; span(g.From, g.To) < len(g.Title)+4; i++ {
			widths[g.To-i%(g.To-g.From+1)]++
		}
	}
	var head strings.Builder
	at := 0
	for _, g := range groups {
		start := span(0, g.From-1) + len(gap)
		n := span(g.From, g.To)
		title := " " + g.Title + " "
		left := (n - len(title)) / 2
		head.WriteString(strings.Repeat(" ", start-at) + strings.Repeat("-", left) + title + strings.Repeat("-", n-len(title)-left))
		at = start + n
	}
	b.WriteString(head.String() + "\n")
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i == 0 {
				line.WriteString(cell + pad)
			} else {
				line.WriteString(gap + pad + cell)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// threeDigits prints v, 0 <= v < 999.5, with three significant digits
// (fewer for v < 1: two decimals).
func threeDigits(v float64) string {
	switch {
	case v < 9.995:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 99.95:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// unit is a scale of a quantity and its name.
type unit struct {
	div  float64
	name string
}

// scaled prints v in the smallest of units (ascending) in which it
// rounds below 1000, three significant digits, or else in the largest
// unit, whole.
func scaled(v float64, units []unit) string {
	for _, u := range units {
		if v/u.div < 999.5 {
			return threeDigits(v/u.div) + u.name
		}
	}
	u := units[len(units)-1]
	return strconv.FormatFloat(v/u.div, 'f', 0, 64) + u.name
}

// FormatDuration prints d as the summary's tables do: in ns, µs, ms or
// s, three significant digits.
func FormatDuration(d time.Duration) string {
	if d < time.Microsecond {
		return strconv.FormatInt(int64(d), 10) + "ns"
	}
	return scaled(float64(d), []unit{{1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}})
}

// FormatSlowdown prints a slowdown as the summary's tables do: three
// significant digits (two decimals below 10), whole from 1000 up.
func FormatSlowdown(v float64) string {
	if v >= 999.5 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return threeDigits(v)
}

// formatBytes prints n bytes with a decimal unit, three significant
// digits.
func formatBytes(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(n, 10) + " B"
	}
	return scaled(float64(n), []unit{{1e3, " KB"}, {1e6, " MB"}, {1e9, " GB"}, {1e12, " TB"}})
}

// formatRate prints a rate in bit/s with a decimal unit, three
// significant digits.
func formatRate(bps float64) string {
	return scaled(bps, []unit{{1, " bit/s"}, {1e3, " kbit/s"}, {1e6, " Mbit/s"}, {1e9, " Gbit/s"}, {1e12, " Tbit/s"}})
}
