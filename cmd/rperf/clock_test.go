package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/internal/testkit/clocktest"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
)

// dilatedDoc is a 3 s test on a lab at D = 5,000 (lab up --rate 20M):
// 6.6 MB at 18.3 Mb/s of the lab.
func dilatedDoc() *Document {
	m := scale.Model{Target: scale.Papers(), D: 5000}
	d := &Document{Start: Start{Lab: "ck", Node: "h0", LinkRateBps: 20e6, Model: &m,
		ConnectingTo: ConnectingTo{Host: "198.18.0.3", Server: "h3"},
		TestStart:    TestStart{Mode: "lossless", DCQCN: true, MTU: 1024, NumStreams: 1, Duration: 3, Interval: 1, Omit: 1, RateLimitBps: 10e6},
		Streams:      []StreamInfo{{ID: 1, Port: "eth0", Queue: "b2", Order: "1,0"}}}}
	d.Start.setTarget()
	sum := Sum{Start: 0, End: 3.0234, Seconds: 3.0234, Bytes: 6.6e6, BitsPerSecond: 18.3e6, WireBitsPerSecond: 19.8e6, LinkUtilization: 0.99}
	d.End = End{Streams: []EndStream{{ID: 1, Sender: sum, Receiver: sum, FCTNs: 3023397000, State: "done"}}, SumSent: sum, SumReceived: sum}
	d.End.setTarget(&m)
	return d
}

// The text report of every mode reads times and rates on the target's
// clock at D = 5,000, each labelled; a duration given is the lab's with
// the target's beside it.
func TestTextTargetClockUnit(t *testing.T) {
	d := dilatedDoc()
	var b strings.Builder
	r := &textReporter{w: &b}
	r.start(d)
	iv := Interval{Streams: []IntervalStream{{ID: 1, Start: 0, End: 1, Seconds: 1, Bytes: 2.15e6, BitsPerSecond: 18e6, RateBps: 20e6}}}
	iv.Sum = iv.Streams[0]
	iv.setTarget(d.Start.Model)
	r.interval(d, &iv)
	r.end(d)
	r.finish(d, nil)
	out := b.String()
	for _, want := range []string{
		"3 seconds of lab time = 600µs in the target after 1 second of lab time = 200µs in the target omitted",
		"at most 10.0 Mbits/sec in the lab (50.0 Gbits/sec in the target) each",
		"Interval (target)", "Bitrate (target)",
		"   0.0-200.0  µs   2.05 MBytes  90.0 Gbits/sec      0      0   100 Gbits/sec",
		"FCT 604.7µs in the target (3.023s of lab time)",
		"In the target: link 100 Gbits/sec, goodput 91.5 Gbits/sec, on the wire with headers 99.0 Gbits/sec",
		"The first 1 second of lab time = 200µs in the target are omitted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if bad := clocktest.Unlabelled(out); len(bad) > 0 {
		t.Errorf("unlabelled:\n%s\n\n%s", strings.Join(bad, "\n"), out)
	}

	// --lab-units: the lab's clock, labelled so.
	b.Reset()
	r = &textReporter{w: &b, labUnits: true}
	r.start(d)
	r.interval(d, &iv)
	r.end(d)
	out = b.String()
	for _, want := range []string{"Bitrate (lab)", "  0.00-1.00   sec  2.05 MBytes  18.0 Mbits/sec", "FCT 3.023397s of lab time (604.7µs in the target)",
		"In the lab: link 20.0 Mbits/sec, goodput 18.3 Mbits/sec"} {
		if !strings.Contains(out, want) {
			t.Errorf("--lab-units lacks %q:\n%s", want, out)
		}
	}
	if bad := clocktest.Unlabelled(out); len(bad) > 0 {
		t.Errorf("--lab-units unlabelled:\n%s\n\n%s", strings.Join(bad, "\n"), out)
	}

	// perftest: --lat's round trips and -a's bandwidths in the target.
	for _, test := range []string{"latency", "bandwidth"} {
		pd := dilatedDoc()
		pd.Start.TestStart = TestStart{Mode: "lossless", DCQCN: true, MTU: 1024, NumStreams: 1, Perftest: test}
		pd.Perftest = &Perftest{Test: test}
		b.Reset()
		r = &textReporter{w: &b}
		r.start(pd)
		lr := LatencyRow{Bytes: 2, Iterations: 50, LatencyStats: api.LatencyStats{MinNs: 20145580, MaxNs: 20431990, P50Ns: 20268180, AvgNs: 20274550, P99Ns: 20431990, P999Ns: 20431990}}
		lr.setTarget(pd.Start.Model)
		br := BandwidthRow{Bytes: 4096, Iterations: 100, PeakBps: 18.57e6, AvgBps: 16.08e6, MsgRate: 490}
		br.setTarget(pd.Start.Model)
		if test == "latency" {
			r.row(lr)
		} else {
			r.row(br)
		}
		r.end(pd)
		out = b.String()
		want := " 2      50            4.029          4.086        4.054"
		if test == "bandwidth" {
			want = " 4096       100            92.85              80.40                2.450000"
		}
		for _, w := range []string{want, "Link           : 100 Gbits/sec (target)", "Times and rates in the target"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", test, w, out)
			}
		}
		if bad := clocktest.Unlabelled(out); len(bad) > 0 {
			t.Errorf("%s unlabelled:\n%s\n\n%s", test, strings.Join(bad, "\n"), out)
		}
		if lr.Target.MinNs != 4029 || br.AvgTargetBps != 80.4e9 {
			t.Errorf("JSON rows' target values: %+v, %+v", lr.Target, br)
		}
	}
}

// JSON keeps iperf3's keys with the lab's values and adds the target's.
func TestJSONTargetClockUnit(t *testing.T) {
	d := dilatedDoc()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"fct_ns":3023397000`, `"fct_lab_ns":3023397000`, `"fct_target_ns":604679`, `"bits_per_second":18300000`,
		`"bits_per_second_target":91500000000`, `"link_rate_target_bps":100000000000`, `"duration":3,`, `"duration_target":0.0006`} {
		if !strings.Contains(s, want) {
			t.Errorf("JSON lacks %s:\n%s", want, s)
		}
	}
}
