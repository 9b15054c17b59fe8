package experiment

import (
	"slices"
	"strings"
	"testing"
)

// Which points a rerun takes, how it counts attempts and where a new
// result goes: the bookkeeping of RunAgain without a lab.
func TestRerunBookkeeping(t *testing.T) {
	c, err := Parse([]byte(strings.Replace(tiny, "loads: [0.5]", "loads: [0.3, 0.5]", 1)), false)
	if err != nil {
		t.Fatal(err)
	}
	points := c.Points()
	if len(points) != 4 {
		t.Fatalf("%d points, want 4", len(points))
	}
	// A run stopped after three points: the second INVALID.
	rep := &Report{Points: len(points)}
	for i, p := range points[:3] {
		r := Result{Point: p, Valid: i != 1}
		if !r.Valid {
			r.Problems = []string{"h1/eth0 lost 2% of its link time"}
		}
		rep.Results = append(rep.Results, r)
	}
	ids := func(ps []Point) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}

	got, err := rep.toRerun(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{points[1].ID, points[3].ID}; !slices.Equal(ids(got), want) {
		t.Errorf("to run again: %v, want the INVALID and the missing point %v", ids(got), want)
	}
	got, err = rep.toRerun(c, []string{points[2].ID, points[0].ID})
	if err != nil || !slices.Equal(ids(got), []string{points[0].ID, points[2].ID}) {
		t.Errorf("named points: %v %v, want both in the experiment's order", ids(got), err)
	}
	if _, err := rep.toRerun(c, []string{"websearch-0.9-portfc-s1-r1"}); err == nil || !strings.Contains(err.Error(), `no point "websearch-0.9-portfc-s1-r1"`) {
		t.Errorf("an unknown point: %v", err)
	}

	if n := rep.attempts(points[1].ID); n != 1 {
		t.Errorf("attempts of a point run once: %d", n)
	}
	if n := rep.attempts(points[3].ID); n != 0 {
		t.Errorf("attempts of a point never run: %d", n)
	}
	if r := replaced(rep.result(points[1].ID)); !slices.Equal(r, []string{"h1/eth0 lost 2% of its link time"}) {
		t.Errorf("why the INVALID attempt is replaced: %v", r)
	}
	if r := replaced(nil); len(r) != 1 || !strings.Contains(r[0], "never ran") {
		t.Errorf("why a point never run is run: %v", r)
	}

	// The missing point goes last, the rerun one keeps its place.
	rep.replace(c, Result{Point: points[3], Valid: true})
	rep.replace(c, Result{Point: points[1], Valid: true})
	rep.Reruns = append(rep.Reruns, Rerun{Point: points[3].ID, Attempt: 1, Valid: true},
		Rerun{Point: points[1].ID, Attempt: 2, Kept: "runs/" + points[1].ID + ".attempt1", Replaced: []string{"a | b"}, Valid: true})
	var order []string
	for _, r := range rep.Results {
		order = append(order, r.ID)
	}
	if !slices.Equal(order, ids(points)) || rep.Valid() != 4 {
		t.Errorf("results after the reruns: %v (%d valid), want %v, all valid", order, rep.Valid(), ids(points))
	}
	if n := rep.attempts(points[1].ID); n != 2 {
		t.Errorf("attempts after a rerun: %d, want 2", n)
	}
	if got, err := rep.toRerun(c, nil); err != nil || len(got) != 0 {
		t.Errorf("to run again with every point valid: %v %v", ids(got), err)
	}

	var b strings.Builder
	if err := WriteREADME(&b, c, rep); err != nil {
		t.Fatal(err)
	}
	readme := b.String()
	for _, want := range []string{"4 of 4 points ran, 4 valid. Some points were run again", "## Points run again",
		"| " + points[1].ID + " | 2 |", "[runs/" + points[1].ID + ".attempt1](runs/" + points[1].ID + ".attempt1/)", "a / b"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md lacks %q:\n%s", want, readme)
		}
	}
}
