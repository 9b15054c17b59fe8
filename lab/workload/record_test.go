package workload

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// At 8 Gb/s a byte takes a nanosecond, which keeps the arithmetic plain.
const byteNs = 8e9

func TestIdeal(t *testing.T) {
	w := Wire{Rate: byteNs, Payload: 1000, Overhead: 62, Prop: time.Microsecond}
	for _, tc := range []struct {
		name string
		size int64
		hops int
		w    Wire
		want time.Duration
	}{
		// One packet of 1062 bytes on the first link, stored and
		// forwarded once more, two propagations.
		{"one packet, 2 hops", 1000, 2, w, 1062 + 1062 + 2000},
		// Three packets (1000, 1000, 500): 2686 bytes on the first link,
		// then one full packet per further hop.
		{"three packets, 4 hops", 2500, 4, Wire{Rate: byteNs, Payload: 1000, Overhead: 62}, 2686 + 3*1062},
		{"a byte", 1, 2, Wire{Rate: byteNs, Payload: 1000, Overhead: 62}, 63 + 63},
		// The acknowledgement's way back: per hop its 66 bytes and a
		// propagation.
		{"with ack", 1000, 2, Wire{Rate: byteNs, Payload: 1000, Overhead: 62, Prop: time.Microsecond, Ack: 66}, 1062 + 1062 + 2000 + 2*(66+1000)},
		{"1 Gb/s", 1_000_000, 2, Wire{Rate: 1e9, Payload: 1000, Overhead: 0}, 8_008_000},
		{"no rate", 1000, 2, Wire{Payload: 1000}, 0},
		{"no payload", 1000, 2, Wire{Rate: byteNs}, 0},
		{"no hops", 1000, 0, w, 0},
		{"no size", 0, 2, w, 0},
	} {
		if got := Ideal(tc.size, tc.hops, tc.w); got != tc.want {
			t.Errorf("%s: Ideal = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestIdealPipeline checks Ideal against a packet-by-packet simulation of
// store and forward over equal links.
func TestIdealPipeline(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		w := Wire{Rate: byteNs, Payload: 1 + r.IntN(2000), Overhead: r.IntN(100), Prop: time.Duration(r.IntN(3000))}
		size := 1 + r.Int64N(50_000)
		hops := 1 + r.IntN(6)
		// done[i]: when packet i has left the current hop.
		var done []int64
		for left := size; left > 0; left -= int64(w.Payload) {
			ser := min(left, int64(w.Payload)) + int64(w.Overhead)
			prev := int64(0)
			if len(done) > 0 {
				prev = done[len(done)-1]
			}
			done = append(done, prev+ser)
		}
		sers := make([]int64, len(done))
		for i := range done {
			sers[i] = min(size-int64(i)*int64(w.Payload), int64(w.Payload)) + int64(w.Overhead)
		}
		for range hops - 1 {
			var free int64
			for i := range done {
				start := max(done[i]+int64(w.Prop), free)
				done[i] = start + sers[i]
				free = done[i]
			}
		}
		want := time.Duration(done[len(done)-1] + int64(w.Prop))
		if got := Ideal(size, hops, w); got != want {
			t.Fatalf("size %d, %d hops, %+v: Ideal %v, simulation %v", size, hops, w, got, want)
		}
	}
}

// TestIdealPathPipeline checks IdealPath against a packet-by-packet
// simulation of store and forward over links of different rates (the
// Rail-only fabric's levels), flows of whole packets: the bottleneck
// serializes them all, every other hop adds one.
func TestIdealPathPipeline(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 500 {
		w := Wire{Payload: 8 * (1 + r.IntN(250)), Overhead: 8 * r.IntN(12), Prop: time.Duration(r.IntN(3000)), Ack: 8 * r.IntN(10)}
		packets := 1 + r.IntN(40)
		size := int64(packets * w.Payload)
		// Rates of 1, 1/2, 1/4 and 1/8 byte per ns: whole ns per byte.
		rates := make([]uint64, 1+r.IntN(6))
		perByte := make([]int64, len(rates))
		for i := range rates {
			perByte[i] = int64(1) << r.IntN(4)
			rates[i] = byteNs / uint64(perByte[i])
		}
		ser := int64(w.Payload + w.Overhead)
		done := make([]int64, packets) // when packet i has left the current hop
		for h := range rates {
			var free int64
			for i := range done {
				start := free
				if h > 0 {
					start = max(done[i]+int64(w.Prop), free)
				}
				done[i] = start + ser*perByte[h]
				free = done[i]
			}
		}
		want := done[packets-1] + int64(w.Prop)
		for _, pb := range perByte {
			if w.Ack > 0 {
				want += int64(w.Ack)*pb + int64(w.Prop) // the ack's way back
			}
		}
		if got := IdealPath(size, rates, w); got != time.Duration(want) {
			t.Fatalf("%d packets over %v, %+v: IdealPath %v, simulation %v", packets, rates, w, got, time.Duration(want))
		}
	}
	w := Wire{Rate: byteNs, Payload: 1000, Overhead: 62, Prop: time.Microsecond, Ack: 66}
	if a, b := Ideal(2500, 4, w), IdealPath(2500, []uint64{byteNs, byteNs, byteNs, byteNs}, w); a != b {
		t.Errorf("equal rates: Ideal %v, IdealPath %v", a, b)
	}
	if IdealPath(1000, []uint64{byteNs, 0}, w) != 0 {
		t.Error("a hop without a rate has an ideal")
	}
}

func TestRecords(t *testing.T) {
	flows := []Flow{{ID: 0, Src: 1, Dst: 2, Size: 1000, Start: 5, Kind: KindPoisson}, {ID: 1, Src: 3, Dst: 0, Size: 1e6, Start: 9, Kind: KindIncast, Group: 1}}
	recs := Records(flows)
	want := FlowRecord{ID: 1, Src: 3, Dst: 0, Size: 1e6, Start: 9, Kind: KindIncast, Group: 1}
	if len(recs) != 2 || recs[1] != want {
		t.Fatalf("Records = %+v", recs)
	}
	hops := func(src, dst int) int { return 4 }
	ideal := IdealByHops(Wire{Rate: byteNs, Payload: 1000, Overhead: 0}, hops)
	if got := ideal(3, 0, 1e6); got != 1e6+3000 {
		t.Fatalf("ideal = %v", got)
	}
	r := &recs[1]
	r.Complete(2*(1e6+3000), ideal(r.Src, r.Dst, r.Size))
	if !r.Completed || r.Slowdown != 2 || r.IdealFCT != 1e6+3000 {
		t.Errorf("after Complete: %+v", *r)
	}
	r.Complete(time.Millisecond, 0)
	if r.Slowdown != 0 {
		t.Errorf("slowdown with an unknown ideal = %g", r.Slowdown)
	}
}

func sampleRecords() []FlowRecord {
	return []FlowRecord{
		{ID: 0, Src: 1, Dst: 14, Size: 1234, Start: 17, FCT: 45_678, IdealFCT: 9_876, Slowdown: 45678.0 / 9876, Kind: KindPoisson, Completed: true,
			TargetStart: 3, TargetFCT: 9_136, TargetIdealFCT: 1_975},
		{ID: 1, Src: 0, Dst: 3, Size: 1_000_000, Start: 1_000_000, FCT: 0, IdealFCT: 0, Retransmissions: 42, CNPs: 5, Kind: KindIncast, Group: 7, Failed: true, Order: "0,1"},
		{ID: 2, Src: 5, Dst: 6, Size: 30_000_000, Start: 2_500_000_000, Kind: KindMoE, Group: 8},
		{ID: 3, Src: 6, Dst: 5, Size: 1, Start: 3, FCT: 1e9, IdealFCT: 3, Slowdown: 1e9 / 3.0, Retransmissions: 1, Kind: KindPS, Group: 9, Completed: true},
	}
}

func TestCSVRoundTrip(t *testing.T) {
	recs := sampleRecords()
	var buf bytes.Buffer
	if err := WriteCSV(&buf, recs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if lines[0] != "id,src,dst,size,start_ns,fct_ns,ideal_fct_ns,slowdown,retransmissions,kind,group,completed,failed,start_target_ns,fct_target_ns,ideal_fct_target_ns,cnps,order" {
		t.Errorf("header %q", lines[0])
	}
	if lines[2] != `1,0,3,1000000,1000000,0,0,0,42,incast,7,false,true,0,0,0,5,"0,1"` {
		t.Errorf("row %q", lines[2])
	}
	// A file of the lab times only (written before the target's) reads
	// as such.
	var old strings.Builder
	for _, l := range lines[:len(lines)-1] {
		f := strings.Split(l, ",")
		old.WriteString(strings.Join(f[:13], ",") + "\n")
	}
	if got, err := ReadCSV(strings.NewReader(old.String())); err != nil || len(got) != len(recs) || got[0].FCT != recs[0].FCT || got[0].TargetFCT != 0 {
		t.Errorf("a file without target times: %+v, %v", got, err)
	}
	// One written before the CNPs were recorded reads without them.
	var noCNPs strings.Builder
	for _, l := range lines[:len(lines)-1] {
		f := strings.Split(l, ",")
		noCNPs.WriteString(strings.Join(f[:16], ",") + "\n")
	}
	if got, err := ReadCSV(strings.NewReader(noCNPs.String())); err != nil || len(got) != len(recs) || got[1].CNPs != 0 || got[0].TargetFCT != recs[0].TargetFCT {
		t.Errorf("a file without CNPs: %+v, %v", got, err)
	}
	// One written before the level order was recorded reads without it.
	var noOrder strings.Builder
	for _, l := range lines[:len(lines)-1] {
		f := strings.Split(l, ",")
		noOrder.WriteString(strings.Join(f[:17], ",") + "\n")
	}
	if got, err := ReadCSV(strings.NewReader(noOrder.String())); err != nil || len(got) != len(recs) || got[1].Order != "" || got[1].CNPs != recs[1].CNPs {
		t.Errorf("a file without the level order: %+v, %v", got, err)
	}
	got, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, recs) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, recs)
	}

	var empty bytes.Buffer
	if err := WriteCSV(&empty, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadCSV(&empty); err != nil || len(got) != 0 {
		t.Errorf("empty round trip: %v, %v", got, err)
	}

	for _, tc := range []struct{ name, text, want string }{
		{"wrong header", "id,src\n", "read csv"},
		{"renamed column", strings.Replace(lines[0], "fct_ns", "fct", 1) + "\n", `"fct", want "fct_ns"`},
		{"bad number", lines[0] + "\n" + strings.Replace(lines[1], "1234", "12x4", 1) + "\n", "line 2: size"},
		{"bad kind", lines[0] + "\n" + strings.Replace(lines[1], "poisson", "mesh", 1) + "\n", "mesh"},
		{"bad bool", lines[0] + "\n" + strings.Replace(lines[1], "true", "yes", 1) + "\n", "completed"},
		{"no header", "", "header"},
	} {
		if _, err := ReadCSV(strings.NewReader(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ReadCSV = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	recs := sampleRecords()
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, recs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("%d lines for %d records", len(lines), len(recs))
	}
	if want := `{"id":1,"src":0,"dst":3,"size":1000000,"start_ns":1000000,"fct_ns":0,"ideal_fct_ns":0,"slowdown":0,"retransmissions":42,"cnps":5,"kind":"incast","group":7,"order":"0,1","completed":false,"failed":true}`; lines[1] != want {
		t.Errorf("line %s\nwant %s", lines[1], want)
	}
	got, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, recs) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, recs)
	}
	for _, text := range []string{`{"id":1,"colour":"red"}`, `{"id":1,"kind":"mesh"}`, `{"id":`} {
		if _, err := ReadJSONL(strings.NewReader(text)); err == nil {
			t.Errorf("ReadJSONL(%s) accepted", text)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrors(t *testing.T) {
	recs := sampleRecords()
	if err := WriteCSV(failWriter{}, recs); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("WriteCSV = %v", err)
	}
	if err := WriteJSONL(failWriter{}, recs); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("WriteJSONL = %v", err)
	}
}
