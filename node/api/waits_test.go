package api

import (
	"encoding/json"
	"testing"

	"github.com/bcfab/bcfab/queues"
)

func TestPortWaitsRoundTrip(t *testing.T) {
	var h queues.DelayHist
	for _, v := range []int64{0, 3, 3, 900, 1 << 20, 5_000_000_000, 1 << 50, -7} {
		h.Add(v)
	}
	b, err := json.Marshal(NewPortWaits("p0", &h))
	if err != nil {
		t.Fatal(err)
	}
	var w PortWaits
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	got, err := w.Hist()
	if err != nil {
		t.Fatal(err)
	}
	if *got != h {
		t.Errorf("the histogram did not survive JSON: %s", b)
	}
	for _, bad := range []string{`{"buckets":[[592,1]]}`, `{"buckets":[[5,1],[5,2]]}`, `{"buckets":[[7,1],[5,2]]}`} {
		var w PortWaits
		if err := json.Unmarshal([]byte(bad), &w); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Hist(); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
