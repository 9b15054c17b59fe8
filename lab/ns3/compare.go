package ns3

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
)

// Comparison is bcfab's run and the sim's of one exported schedule, side
// by side on the target's clock: each summed up by size bin (package
// workload), and flow for flow the ratio of their FCTs.
type Comparison struct {
	Flows int              `json:"flows"`
	BCfab workload.Summary `json:"bcfab"`
	Sim   workload.Summary `json:"sim"`
	// Both counts the flows both tools completed, and Ratio is the
	// distribution of the sim's FCT over bcfab's among them.
	Both  int   `json:"both"`
	Ratio Ratio `json:"fct_ratio"`
}

// Ratio is a distribution of FCT ratios: nearest-rank percentiles
// (workload.Percentile), mean and range.
type Ratio struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// ratioSlack is how far bcfab's ideal FCT of a flow may be from the
// export's (both are lab.WorkloadIdeal / D, rounded to the nanosecond).
const ratioSlack = 1e-6

// Compare compares bcfab's records of a run of the export's schedule
// (flows, from flows.csv) with the sim's (SimRecords). bcfab's are read
// on the target's clock (their target times). Each tool's slowdown is
// against the flow's ideal FCT in its own network (flows.csv's
// ideal_target_ns for bcfab's, sim_ideal_target_ns for the sim's: the
// flow alone on its path, with that tool's headers and ACKs), so that
// the slowdowns compare what congestion did, the FCTs what each network
// delivered. Every flow must have a record of bcfab's, of its servers and
// size, and with the export's ideal FCT where the record has one: else
// the records are of another schedule, or another MTU, and it is an
// error.
func Compare(flows []Flow, bcfab, sim []workload.FlowRecord, bins workload.Bins) (*Comparison, error) {
	byID := make(map[int]Flow, len(flows))
	for _, f := range flows {
		if _, dup := byID[f.ID]; dup {
			return nil, fmt.Errorf("flows.csv has flow %d twice", f.ID)
		}
		byID[f.ID] = f
	}
	seen := make(map[int]workload.FlowRecord, len(bcfab))
	var ours []workload.FlowRecord
	for _, r := range bcfab {
		f, ok := byID[r.ID]
		switch {
		case !ok:
			return nil, fmt.Errorf("bcfab's flow %d is not in the export's schedule: the records are of another run", r.ID)
		case r.Src != f.Src || r.Dst != f.Dst || r.Size != f.Size:
			return nil, fmt.Errorf("bcfab's flow %d is h%d to h%d, %d bytes; the export's h%d to h%d, %d bytes: the records are of another schedule",
				r.ID, r.Src, r.Dst, r.Size, f.Src, f.Dst, f.Size)
		case r.Completed && r.FCT > 0 && r.TargetFCT == 0:
			return nil, fmt.Errorf("bcfab's flow %d has no FCT in the target: records written without the lab's scale model", r.ID)
		case r.TargetIdealFCT > 0 && math.Abs(float64(r.TargetIdealFCT-f.Ideal)) > max(2, ratioSlack*float64(f.Ideal)):
			return nil, fmt.Errorf("bcfab's flow %d has an ideal FCT of %v in the target, the export %v: export with the run's --mtu", r.ID, r.TargetIdealFCT, f.Ideal)
		}
		if _, dup := seen[r.ID]; dup {
			return nil, fmt.Errorf("bcfab's records have flow %d twice", r.ID)
		}
		t := workload.FlowRecord{ID: r.ID, Src: r.Src, Dst: r.Dst, Size: r.Size, Start: r.TargetStart, Kind: r.Kind, Group: r.Group,
			Retransmissions: r.Retransmissions, CNPs: r.CNPs, Failed: r.Failed}
		if r.Completed {
			t.Complete(r.TargetFCT, f.Ideal)
		}
		t.TargetStart, t.TargetFCT, t.TargetIdealFCT = t.Start, t.FCT, f.Ideal
		seen[r.ID] = t
		ours = append(ours, t)
	}
	for _, f := range flows {
		if _, ok := seen[f.ID]; !ok {
			return nil, fmt.Errorf("bcfab's records lack flow %d of the export's schedule: the records are of another run", f.ID)
		}
	}
	c := &Comparison{Flows: len(flows)}
	var err error
	if c.BCfab, err = workload.Summarize(ours, 0, bins); err != nil {
		return nil, err
	}
	if c.Sim, err = workload.Summarize(sim, 0, bins); err != nil {
		return nil, err
	}
	c.BCfab.Clock, c.Sim.Clock = workload.ClockTarget, workload.ClockTarget
	var ratios []float64
	for _, s := range sim {
		if b := seen[s.ID]; s.Completed && !s.Failed && b.Completed && !b.Failed && b.FCT > 0 {
			ratios = append(ratios, float64(s.FCT)/float64(b.FCT))
		}
	}
	c.Both = len(ratios)
	if len(ratios) > 0 {
		slices.Sort(ratios)
		var sum float64
		for _, x := range ratios {
			sum += x
		}
		c.Ratio = Ratio{Mean: sum / float64(len(ratios)), Min: ratios[0], Max: ratios[len(ratios)-1],
			P50: workload.Percentile(ratios, 50), P95: workload.Percentile(ratios, 95), P99: workload.Percentile(ratios, 99)}
	}
	return c, nil
}

// WriteText writes the comparison as a table: per size bin, and for all
// flows, the flows each tool completed, the mean FCT of each and their
// ratio, and each tool's slowdown at p50, p95 and p99; then the per-flow
// ratio of the FCTs.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d flows: bcfab completed %d (%d failed), the sim %d; both %d. Times are the target's; each tool's "+
		"columns are over the flows it completed; a slowdown is the FCT over the flow's ideal FCT in that tool's network (flows.csv).\n\n",
		c.Flows, c.BCfab.Completed, c.BCfab.Failed, c.Sim.Completed, c.Both)
	rows := [][]string{{"size", "flows", "bcfab", "sim", "bcfab", "sim", "sim/bcfab", "bcfab", "sim", "bcfab", "sim", "bcfab", "sim"}}
	bins := append(slices.Clone(c.BCfab.Bins), c.BCfab.All)
	sims := append(slices.Clone(c.Sim.Bins), c.Sim.All)
	for i, bb := range bins {
		sb := sims[i]
		fct := func(d workload.Dist[time.Duration]) string {
			if d.N == 0 {
				return "-"
			}
			return workload.FormatDuration(d.Mean)
		}
		ratio := "-"
		if bb.FCT.N > 0 && sb.FCT.N > 0 {
			ratio = strconv.FormatFloat(float64(sb.FCT.Mean)/float64(bb.FCT.Mean), 'f', 2, 64)
		}
		slow := func(d workload.Dist[float64], p float64) string {
			if d.N == 0 {
				return "-"
			}
			return workload.FormatSlowdown(p)
		}
		rows = append(rows, []string{bb.Label, strconv.Itoa(bb.Flows), strconv.Itoa(bb.Completed), strconv.Itoa(sb.Completed),
			fct(bb.FCT), fct(sb.FCT), ratio,
			slow(bb.Slowdown, bb.Slowdown.P50), slow(sb.Slowdown, sb.Slowdown.P50),
			slow(bb.Slowdown, bb.Slowdown.P95), slow(sb.Slowdown, sb.Slowdown.P95),
			slow(bb.Slowdown, bb.Slowdown.P99), slow(sb.Slowdown, sb.Slowdown.P99)})
	}
	workload.WriteTable(&b, rows, []workload.ColumnGroup{{From: 2, To: 3, Title: "done"}, {From: 4, To: 6, Title: "mean FCT"}, {From: 7, To: 8, Title: "slowdown p50"}, {From: 9, To: 10, Title: "p95"}, {From: 11, To: 12, Title: "p99"}})
	if c.Both > 0 {
		r := c.Ratio
		fmt.Fprintf(&b, "\nflow for flow, the sim's FCT / bcfab's over the %d flows both completed: p50 %.2f, p95 %.2f, p99 %.2f, mean %.2f, from %.2f to %.2f\n",
			c.Both, r.P50, r.P95, r.P99, r.Mean, r.Min, r.Max)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ReadRecords reads bcfab's records of a run: lab workload's --records
// file (CSV, or JSON lines if it ends in .jsonl or .json) or its --json
// report (an object with "records"). Records without the target's times
// take them from the report's scale model where it has one.
func ReadRecords(path string) ([]workload.FlowRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if ext := filepath.Ext(path); ext != ".json" && ext != ".jsonl" {
		recs, err := workload.ReadCSV(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return recs, nil
	}
	var first map[string]json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&first); err == nil && first["records"] != nil {
		var rep struct {
			Records []workload.FlowRecord `json:"records"`
			Model   scale.Model           `json:"model"`
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			return nil, fmt.Errorf("%s: a report of lab workload --json: %w", path, err)
		}
		for i := range rep.Records {
			if r := &rep.Records[i]; r.TargetFCT == 0 && r.TargetIdealFCT == 0 {
				r.SetTarget(rep.Model.D)
			}
		}
		return rep.Records, nil
	}
	recs, err := workload.ReadJSONL(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}
