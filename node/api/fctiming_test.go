package api

import (
	"encoding/json"
	"math"
	"testing"
)

// A port's pause timing is one JSON field, left out when the port pauses
// nothing.
func TestFCTimingJSON(t *testing.T) {
	p := PortStats{Name: "p0", FCTiming: &FCTiming{BDPBytes: 25000, Classes: []FCClass{{
		Class: "B", XoffBytes: 150000, XonBytes: 100000, PeakBytes: 171000,
		Pauses: 2, Refreshes: 7, Resumes: 2,
		AtPauseMinBytes: 150000, AtPauseMaxBytes: 150900, AtResumeMinBytes: 99100, AtResumeMaxBytes: 100000,
		PauseLatNs: PauseLat{Count: 6, Sum: 30000, Max: 9000, Hist: []uint64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 2}},
		TripNs:     PauseLat{Count: 2, Sum: 4000, Max: 2100, Hist: []uint64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}, Untimed: 0}, OvershootBytes: 21000,
	}}}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := `{"bdp_bytes":25000,"classes":[{"class":"B","xoff_bytes":150000,"xon_bytes":100000,"peak_bytes":171000,` +
		`"pauses":2,"refreshes":7,"resumes":2,"at_pause_min_bytes":150000,"at_pause_max_bytes":150900,` +
		`"at_resume_min_bytes":99100,"at_resume_max_bytes":100000,` +
		`"pause_lat_ns":{"count":6,"sum":30000,"max":9000,"hist":[0,0,0,0,0,0,0,0,0,0,0,0,0,4,2],"untimed":0},` +
		`"trip_ns":{"count":2,"sum":4000,"max":2100,"hist":[0,0,0,0,0,0,0,0,0,0,0,0,2],"untimed":0},"overshoot_bytes":21000}]}`
	if string(m["fc_timing"]) != want {
		t.Errorf("fc_timing\n %s\nwant\n %s", m["fc_timing"], want)
	}
	b, _ = json.Marshal(PortStats{Name: "p0"})
	m = nil
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["fc_timing"]; ok {
		t.Errorf("no timing, yet fc_timing in %s", b)
	}
}

// A latency lands in the bucket whose bounds hold it, at every power of
// two and either side of it.
func TestLatBucketBounds(t *testing.T) {
	check := func(ns int64) {
		i := LatBucket(ns)
		lo, hi := LatBucketBounds(i)
		if ns < lo || ns >= hi && !(i == 63 && ns == math.MaxInt64) {
			t.Errorf("%d ns in bucket %d, [%d, %d)", ns, i, lo, hi)
		}
	}
	check(0)
	check(math.MaxInt64)
	for s := range 63 {
		for _, d := range []int64{-1, 0, 1} {
			check(int64(1)<<s + d)
		}
	}
	if LatBucket(-3) != 0 || LatBucket(1000) != 10 || LatBucket(1024) != 11 {
		t.Errorf("buckets of -3, 1000, 1024 ns: %d %d %d", LatBucket(-3), LatBucket(1000), LatBucket(1024))
	}
}

// Above bounds the frames over a latency by whole buckets.
func TestPauseLatAbove(t *testing.T) {
	// 3 in [512, 1024), 2 in [1024, 2048), 1 in [2048, 4096).
	l := PauseLat{Count: 6, Sum: 6000, Hist: []uint64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 2, 1}}
	for _, c := range []struct {
		ns              int64
		atLeast, atMost uint64
	}{
		{100, 6, 6},
		{511, 6, 6},
		{512, 3, 6},
		{1023, 3, 3},
		{1500, 1, 3},
		{2047, 1, 1},
		{4095, 0, 0},
	} {
		if lo, hi := l.Above(c.ns); lo != c.atLeast || hi != c.atMost {
			t.Errorf("above %d ns: %d..%d, want %d..%d", c.ns, lo, hi, c.atLeast, c.atMost)
		}
	}
	if l.Mean() != 1000 || (&PauseLat{}).Mean() != 0 {
		t.Errorf("mean %v", l.Mean())
	}
}
