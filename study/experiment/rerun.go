package experiment

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bcfab/bcfab/internal/buildinfo"
)

// Rerun is one point of a run run again (RunAgain, lab experiment rerun): a point
// that was INVALID, one named, or one an interrupted run never reached.
// The report keeps every rerun, so a run's README says which of its
// points were measured later, by which build and why.
type Rerun struct {
	Point string `json:"point"`
	// Attempt counts the point's runs, this one included: 2 for the
	// first rerun of a point the run measured once.
	Attempt int            `json:"attempt"`
	Build   buildinfo.Info `json:"build"`
	Started time.Time      `json:"started"`
	Elapsed time.Duration  `json:"elapsed_ns"`
	// Replaced says why the attempt before was not kept: its problems
	// when it was INVALID, "valid, named to run again" or "never ran".
	Replaced []string `json:"replaced"`
	// Kept is where the attempt before's files are, under the run's
	// directory (runs/<point>.attempt<N>); empty when it had none.
	Kept  string `json:"kept,omitempty"`
	Valid bool   `json:"valid"`
}

// toRerun is the points of c to run again: those named by ids, or, with
// no ids, every point whose result is INVALID or missing (a stopped
// run's), in the experiment's order.
func (r *Report) toRerun(c *Config, ids []string) ([]Point, error) {
	points := c.Points()
	if len(ids) > 0 {
		known := make(map[string]bool, len(points))
		for _, p := range points {
			known[p.ID] = true
		}
		for _, id := range ids {
			if !known[id] {
				return nil, fmt.Errorf("experiment %s has no point %q (lab experiment run -f DIR/config.yaml --dry-run lists them)", c.Name, id)
			}
		}
	}
	var out []Point
	for _, p := range points {
		switch {
		case len(ids) > 0:
			if slices.Contains(ids, p.ID) {
				out = append(out, p)
			}
		default:
			if res := r.result(p.ID); res == nil || !res.Valid {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// result is the result of point id, or nil.
func (r *Report) result(id string) *Result {
	for i := range r.Results {
		if r.Results[i].ID == id {
			return &r.Results[i]
		}
	}
	return nil
}

// attempts is how many times point id has run: once if the run has its
// result, and once more for each rerun of it whose attempt before had
// one.
func (r *Report) attempts(id string) int {
	n := 0
	for _, rr := range r.Reruns {
		if rr.Point == id {
			n = max(n, rr.Attempt)
		}
	}
	if n == 0 && r.result(id) != nil {
		n = 1
	}
	return n
}

// replace puts res in place of its point's result, or, for a point
// that never ran, among the results in the order of c's points.
func (r *Report) replace(c *Config, res Result) {
	if old := r.result(res.ID); old != nil {
		*old = res
		return
	}
	order := make(map[string]int)
	for i, p := range c.Points() {
		order[p.ID] = i
	}
	i := 0
	for i < len(r.Results) && order[r.Results[i].ID] < order[res.ID] {
		i++
	}
	r.Results = slices.Insert(r.Results, i, res)
}

// replaced is why the attempt before of a point is not kept.
func replaced(prev *Result) []string {
	switch {
	case prev == nil:
		return []string{"never ran (the run stopped before it)"}
	case prev.Valid:
		return []string{"valid, named to run again"}
	case len(prev.Problems) == 0:
		return []string{"INVALID"}
	}
	return slices.Clone(prev.Problems)
}

// writeReruns is the README's account of the points run again.
func writeReruns(b *strings.Builder, r *Report) {
	if len(r.Reruns) == 0 {
		return
	}
	b.WriteString("\n## Points run again\n\n")
	fmt.Fprintf(b, "`lab experiment rerun` ran these points again, each on a fresh lab with the run's own `config.yaml`; the tables and plots show the last attempt. The attempt before's files are kept beside it. The run itself was build %s.\n\n", r.Build)
	b.WriteString("| point | attempt | started | build | the attempt before | now | its files |\n| --- | ---: | --- | --- | --- | --- | --- |\n")
	for _, rr := range r.Reruns {
		now := "valid"
		if !rr.Valid {
			now = "**INVALID**"
		}
		kept := "-"
		if rr.Kept != "" {
			kept = fmt.Sprintf("[%s](%s/)", rr.Kept, rr.Kept)
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s |\n", rr.Point, rr.Attempt, rr.Started.UTC().Format(time.RFC3339),
			rr.Build, strings.ReplaceAll(strings.Join(rr.Replaced, "; "), "|", "/"), now, kept)
	}
}
