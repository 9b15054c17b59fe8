package workload

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var hundred []float64
	for i := 1; i <= 100; i++ {
		hundred = append(hundred, float64(i))
	}
	for _, tc := range []struct{ p, want float64 }{
		{0, 1}, {1, 1}, {1.5, 2}, {50, 50}, {50.1, 51}, {95, 95}, {99, 99}, {99.9, 100}, {100, 100},
	} {
		if got := Percentile(hundred, tc.p); got != tc.want {
			t.Errorf("Percentile(1..100, %g) = %g, want %g", tc.p, got, tc.want)
		}
	}
	if got := Percentile([]int{7}, 99.9); got != 7 {
		t.Errorf("one value: %d", got)
	}
	if got := Percentile([]time.Duration(nil), 50); got != 0 {
		t.Errorf("empty: %v", got)
	}
	// The nearest rank, ceil(p/100 × n), in exact integer arithmetic, for
	// every n up to 5000: floating point must not push p99.9 of 1000
	// values to the 1000th.
	for n := 1; n <= 5000; n++ {
		xs := make([]int, n)
		for i := range xs {
			xs[i] = i + 1
		}
		for _, p := range []struct {
			p     float64
			perMy int // p in units of 0.01 %
		}{{50, 5000}, {95, 9500}, {99, 9900}, {99.9, 9990}, {99.99, 9999}} {
			rank := (p.perMy*n + 9999) / 10000
			if got := Percentile(xs, p.p); got != rank {
				t.Fatalf("n %d: Percentile(%g) = rank %d, want %d", n, p.p, got, rank)
			}
		}
	}
}

func TestBins(t *testing.T) {
	b := DefaultBins
	for _, tc := range []struct {
		size int64
		bin  int
	}{{1, 0}, {10_000, 0}, {10_001, 1}, {100_000, 1}, {100_001, 2}, {1_000_000, 2}, {1_000_001, 3}, {30_000_000, 3}} {
		if got := b.Index(tc.size); got != tc.bin {
			t.Errorf("Index(%d) = %d, want %d", tc.size, got, tc.bin)
		}
	}
	var labels []string
	for i := range b.Len() {
		labels = append(labels, b.Label(i))
	}
	if want := []string{"<=10KB", "10KB-100KB", "100KB-1MB", ">1MB"}; !slices.Equal(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
	if got := (Bins{1500, 1 << 20, 3 << 30}).Label(2); got != "1MiB-3GiB" {
		t.Errorf("label %q", got)
	}
	if got := (Bins{1 << 10}).Label(1); got != ">1KiB" {
		t.Errorf("label %q", got)
	}
	if b := (Bins{}); b.Len() != 1 || b.Index(1e9) != 0 || b.Label(0) != "all" {
		t.Errorf("no bounds: len %d, label %q", b.Len(), b.Label(0))
	}
	for _, bad := range []Bins{{0}, {10, 10}, {100, 10}, {-1, 5}} {
		if bad.Validate() == nil {
			t.Errorf("Validate(%v) accepted", bad)
		}
	}
	if _, err := Summarize(nil, time.Second, Bins{5, 1}); err == nil {
		t.Error("Summarize accepted descending bins")
	}
}

// runRecords is a small run: 100 short flows with FCTs of 1..100 µs and a
// slowdown equal to their FCT in µs; nothing between 10 KB and 100 KB; a
// failed and an unfinished flow in 100KB-1MB; two long flows without an
// ideal FCT.
func runRecords() []FlowRecord {
	var recs []FlowRecord
	for i := 1; i <= 100; i++ {
		r := FlowRecord{ID: len(recs), Size: 5000, Kind: KindPoisson}
		r.Complete(time.Duration(i)*time.Microsecond, time.Microsecond)
		recs = append(recs, r)
	}
	recs = append(recs,
		FlowRecord{ID: len(recs), Size: 500_000, Kind: KindIncast, Failed: true, Retransmissions: 5},
		FlowRecord{ID: len(recs) + 1, Size: 1_000_000, Kind: KindIncast, Retransmissions: 2},
	)
	for _, fct := range []time.Duration{time.Millisecond, 3 * time.Millisecond} {
		r := FlowRecord{ID: len(recs), Size: 2_000_000, Kind: KindPoisson}
		r.Complete(fct, 0)
		recs = append(recs, r)
	}
	return recs
}

func TestSummarize(t *testing.T) {
	s, err := Summarize(runRecords(), time.Second, DefaultBins)
	if err != nil {
		t.Fatal(err)
	}
	if s.Flows != 104 || s.Completed != 102 || s.Failed != 1 || s.Incomplete != 1 || s.Retransmissions != 7 {
		t.Errorf("counts %+v", s)
	}
	if s.BytesCompleted != 100*5000+2*2_000_000 || s.Goodput != 8*4_500_000 {
		t.Errorf("bytes %d, goodput %g", s.BytesCompleted, s.Goodput)
	}
	us := time.Microsecond
	short := s.Bins[0]
	if want := (Dist[time.Duration]{N: 100, Mean: 50500 * time.Nanosecond, P50: 50 * us, P95: 95 * us, P99: 99 * us, P999: 100 * us, Max: 100 * us}); short.FCT != want {
		t.Errorf("short FCT %+v, want %+v", short.FCT, want)
	}
	if want := (Dist[float64]{N: 100, Mean: 50.5, P50: 50, P95: 95, P99: 99, P999: 100, Max: 100}); short.Slowdown != want {
		t.Errorf("short slowdown %+v, want %+v", short.Slowdown, want)
	}
	if short.Label != "<=10KB" || short.Above != 0 || short.UpTo != 10_000 || short.Flows != 100 || short.Completed != 100 {
		t.Errorf("short bin %+v", short)
	}
	if empty := s.Bins[1]; empty.Flows != 0 || empty.FCT != (Dist[time.Duration]{}) || empty.Slowdown != (Dist[float64]{}) {
		t.Errorf("empty bin %+v", empty)
	}
	if mid := s.Bins[2]; mid.Flows != 2 || mid.Completed != 0 || mid.Failed != 1 || mid.FCT.N != 0 {
		t.Errorf("100KB-1MB bin %+v", mid)
	}
	long := s.Bins[3]
	if long.Above != 1_000_000 || long.UpTo != 0 || long.FCT.N != 2 || long.FCT.Mean != 2*time.Millisecond || long.FCT.P50 != time.Millisecond ||
		long.FCT.P99 != 3*time.Millisecond || long.Slowdown.N != 0 {
		t.Errorf("long bin %+v", long)
	}
	if s.All.Flows != 104 || s.All.Completed != 102 || s.All.Failed != 1 || s.All.FCT.N != 102 || s.All.Slowdown.N != 100 || s.All.FCT.Max != 3*time.Millisecond {
		t.Errorf("all %+v", s.All)
	}

	// Nothing at all still sums up.
	s, err = Summarize(nil, 0, nil)
	if err != nil || s.Flows != 0 || s.Goodput != 0 || len(s.Bins) != 1 || s.All.FCT.N != 0 {
		t.Errorf("empty run: %+v, %v", s, err)
	}
}

func TestSummaryText(t *testing.T) {
	s, _ := Summarize(runRecords(), time.Second, DefaultBins)
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	want := `flows 104: 102 completed, 1 failed, 1 incomplete; 4.50 MB in 1.00s of lab time, goodput 36.0 Mbit/s in the lab; 7 retransmissions

                         ---------- FCT of lab time -----------  --------- slowdown ----------
size        flows  done     avg     p50     p95     p99   p99.9   avg   p50   p95   p99  p99.9
<=10KB        100   100  50.5µs  50.0µs  95.0µs  99.0µs   100µs  50.5  50.0  95.0  99.0    100
10KB-100KB      0     0       -       -       -       -       -     -     -     -     -      -
100KB-1MB       2     0       -       -       -       -       -     -     -     -     -      -
>1MB            2     2  2.00ms  1.00ms  3.00ms  3.00ms  3.00ms     -     -     -     -      -
all           104   102  88.7µs  51.0µs  97.0µs  1.00ms  3.00ms  50.5  50.0  95.0  99.0    100
`
	if got := buf.String(); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	// The same summary on the target's clock at D = 5,000 says so.
	buf.Reset()
	d := s.Dilated(5000)
	if err := d.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.Contains(got, "4.50 MB in 200µs in the target, goodput 180 Gbit/s in the target;") ||
		!strings.Contains(got, "FCT in the target") || !strings.Contains(got, "  400ns  200ns") {
		t.Errorf("on the target's clock:\n%s", got)
	}
}

func TestSummaryJSON(t *testing.T) {
	s, _ := Summarize(runRecords(), time.Second, DefaultBins)
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"goodput_bps": 36000000`, `"p99_9": 100000`, `"label": "10KB-100KB"`, `"fct_ns": {`, `"incomplete": 1`} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("JSON lacks %s:\n%s", key, buf.String())
		}
	}
	var back Summary
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("JSON round trip:\n got %+v\nwant %+v", back, s)
	}
}

func TestFormats(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0ns", 999: "999ns", 1000: "1.00µs", 12_345: "12.3µs", 123_456: "123µs", 1_234_567: "1.23ms",
		999_000_000: "999ms", 2_500_000_000: "2.50s", 125 * time.Second: "125s",
		999_600: "1.00ms", 9_996: "10.0µs", 99_960: "100µs", 5000 * time.Second: "5000s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%d) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1500: "1.50 KB", 999_999: "1.00 MB", 4_500_000: "4.50 MB", 12e9: "12.0 GB", 2e15: "2000 TB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	for bps, want := range map[float64]string{0: "0.00 bit/s", 36e6: "36.0 Mbit/s", 9.87e9: "9.87 Gbit/s"} {
		if got := formatRate(bps); got != want {
			t.Errorf("formatRate(%g) = %q, want %q", bps, got, want)
		}
	}
	for v, want := range map[float64]string{math.Pi: "3.14", 1: "1.00", 999.7: "1000", 123456: "123456"} {
		if got := FormatSlowdown(v); got != want {
			t.Errorf("FormatSlowdown(%g) = %q, want %q", v, got, want)
		}
	}
}

func BenchmarkSummarize(b *testing.B) {
	c := bcube41(b)
	c.Duration = 10 * time.Second
	recs := Records(generate(b, c))
	for i := range recs {
		recs[i].Complete(time.Duration(recs[i].Size)*8+time.Duration(i%1000)*time.Microsecond, time.Duration(recs[i].Size)*8)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Summarize(recs, c.Duration, DefaultBins); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(recs)), "records/op")
}
