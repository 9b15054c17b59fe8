package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A port's ECN histogram is one compact JSON field, left out when there
// is none.
func TestECNHistJSON(t *testing.T) {
	p := PortStats{Name: "p0", ECNHist: &ECNHist{
		Edges:   []int{100, 150, 200},
		Decided: []uint64{5, 4, 3, 2},
		Marked:  []uint64{0, 1, 2, 2},
	}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if want := `{"edges":[100,150,200],"decided":[5,4,3,2],"marked":[0,1,2,2]}`; string(m["ecn_hist"]) != want {
		t.Errorf("ecn_hist %s, want %s", m["ecn_hist"], want)
	}
	p.ECNHist.Final = []uint64{0, 0, 0, 1}
	b, _ = json.Marshal(p.ECNHist)
	if want := `{"edges":[100,150,200],"decided":[5,4,3,2],"marked":[0,1,2,2],"final":[0,0,0,1]}`; string(b) != want {
		t.Errorf("with a scheme's marks %s, want %s", b, want)
	}
	b, _ = json.Marshal(PortStats{Name: "p0"})
	m = nil
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["ecn_hist"]; ok {
		t.Errorf("no histogram, yet ecn_hist in %s", b)
	}
}

func TestECNHistBucket(t *testing.T) {
	h := ECNHist{Edges: []int{100, 150, 200}}
	for _, c := range []struct{ qbytes, want int }{
		{0, 0}, {99, 0}, {100, 1}, {149, 1}, {150, 2}, {199, 2}, {200, 3}, {1 << 40, 3},
	} {
		if got := h.Bucket(c.qbytes); got != c.want {
			t.Errorf("Bucket(%d) = %d, want %d", c.qbytes, got, c.want)
		}
	}
	step := ECNHist{Edges: []int{100}}
	if step.Bucket(99) != 0 || step.Bucket(100) != 1 {
		t.Error("a single threshold's buckets")
	}
}

func TestECNHistSubAdd(t *testing.T) {
	edges := []int{100, 200}
	old := ECNHist{Edges: edges, Decided: []uint64{1, 2, 3}, Marked: []uint64{0, 1, 3}}
	now := ECNHist{Edges: edges, Decided: []uint64{4, 6, 9}, Marked: []uint64{0, 3, 9}}
	want := ECNHist{Edges: edges, Decided: []uint64{3, 4, 6}, Marked: []uint64{0, 2, 6}}
	if got := now.Sub(old); !reflect.DeepEqual(got, want) {
		t.Errorf("Sub = %+v, want %+v", got, want)
	}
	if got := old.Sub(now); !reflect.DeepEqual(got, old) {
		t.Errorf("after a restart Sub = %+v, want all of it %+v", got, old)
	}
	other := ECNHist{Edges: []int{100, 300}, Decided: []uint64{0, 0, 0}, Marked: []uint64{0, 0, 0}}
	if got := now.Sub(other); !reflect.DeepEqual(got, now) {
		t.Errorf("other edges: Sub = %+v, want all of it", got)
	}
	// A scheme's marks: absent means RED's, on either side.
	fin := now
	fin.Final = []uint64{1, 3, 9}
	if got := fin.Sub(old).Final; !reflect.DeepEqual(got, []uint64{1, 2, 6}) {
		t.Errorf("Sub's final marks %v", got)
	}
	same := now
	same.Final = []uint64{0, 3, 9}
	if got := same.Sub(old).Final; got != nil {
		t.Errorf("the scheme marked as RED did in the window: final %v, want none", got)
	}

	var sum ECNHist
	if err := sum.Add(old); err != nil {
		t.Fatal(err)
	}
	if err := sum.Add(fin); err != nil {
		t.Fatal(err)
	}
	wantSum := ECNHist{Edges: edges, Decided: []uint64{5, 8, 12}, Marked: []uint64{0, 4, 12}, Final: []uint64{1, 4, 12}}
	if !reflect.DeepEqual(sum, wantSum) {
		t.Errorf("Add = %+v, want %+v", sum, wantSum)
	}
	if old.Decided[0] != 1 || fin.Final[0] != 1 {
		t.Error("Add changed its argument")
	}
	if err := sum.Add(other); err == nil {
		t.Error("added a histogram of other edges")
	}
}
