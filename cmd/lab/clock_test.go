//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/clocktest"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/study/bench"
)

// dilated is the papers' network at D = 5,000 (lab up --rate 20M).
var dilated = scale.Model{Target: scale.Papers(), D: 5000}

// lab gen --wait reads the flow on the target's clock: a 1 MB flow that
// took 0.4 s of lab time at 19.7 Mb/s is 80 µs at 98.5 Gb/s, its 37 ms
// one-way delay 7.4 µs; every time and rate is labelled.
func TestGenTextTargetClockUnit(t *testing.T) {
	f := &api.GenFlow{ID: 1, Queue: "b0", Order: "0,1", Packets: 691, Bytes: 1048938, StartNs: 1e9, EndNs: 1e9 + 400e6}
	sink := &api.SinkReport{SinkFlow: api.SinkFlow{Packets: 691, Bytes: 1048938, FirstNs: 1e9, LastNs: 1e9 + 426e6, MaxDelayNs: 38063e3}, AvgDelayNs: 36979e3}
	var b strings.Builder
	if err := printGen(&b, []string{"h1", "h0"}, dilated, f, sink); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"in 80µs in the target (400ms of lab time)", "98.49 Gbit/s in the target (19.7 Mbit/s in the lab)",
		"one-way delay avg 7.396µs in the target, max 7.613µs in the target"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if bad := clocktest.Unlabelled(out); len(bad) > 0 {
		t.Errorf("unlabelled:\n%s\n\n%s", strings.Join(bad, "\n"), out)
	}
	g := genTarget(dilated, f, sink)
	if g.SendTargetNs != 80e3 || g.SendLabNs != 400e6 || g.AvgDelayTarget != 7396 || g.AvgDelayLabNs != 36979e3 || int(g.RxRateTarget/1e6) != 98491 {
		t.Errorf("--json's target: %+v", g)
	}
}

// lab stats gives a port's rate and a queue's time paused on the
// target's clock, its uptime in both.
func TestStatsTextTargetClockUnit(t *testing.T) {
	st := &api.Stats{Node: "s0.0", Kind: "swd", UptimeNs: int64(10 * time.Second), Ports: []api.PortStats{{Name: "p0", RateBps: 20e6,
		Queues: []api.QueueStats{{Name: "A", PausedNs: int64(50 * time.Millisecond)}, {Name: "B", Stalled: true, StalledForNs: int64(2 * time.Second)}}}}}
	var b strings.Builder
	printStats(&b, dilated, st)
	out := b.String()
	for _, want := range []string{"up 10s of lab time (2ms in the target)", "RATE (TARGET)", "100 Gbit/s", "PAUSED FOR (TARGET)", "10µs", "for 400µs"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if bad := clocktest.Unlabelled(out); len(bad) > 0 {
		t.Errorf("unlabelled:\n%s\n\n%s", strings.Join(bad, "\n"), out)
	}
}

// lab bench loop reads its throughputs on the target's clock, its
// phases in lab time with the target's beside them.
func TestBenchLoopTextTargetClockUnit(t *testing.T) {
	spec := lab.Spec{N: 2, K: 1, RateBps: 20e6}
	res := []bench.LoopResult{{FC: "pfc", Scenario: bench.LoopBCube21, Transport: "gen",
		Background: []bench.LoopFlow{{Flow: "h0->h1", Bps: 10e6}}, BackgroundBps: 10e6, LoopBps: 5e6}}
	var b strings.Builder
	printLoop(&b, spec, res, time.Second, time.Second, 5*time.Second)
	out := b.String()
	for _, want := range []string{"from 1s of lab time = 200µs in the target on", "throughput over 5s of lab time = 1ms in the target",
		"throughput in Gb/s of the target", "50.0", "25.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if bad := clocktest.Unlabelled(out); len(bad) > 0 {
		t.Errorf("unlabelled:\n%s\n\n%s", strings.Join(bad, "\n"), out)
	}
	if got := perSecond([]float64{0.5, 1, 1.5, 2}, []float64{10e6, 10e6, 20e6, 20e6}, 5000); got != "50.0 100.0" {
		t.Errorf("perSecond %q", got)
	}
}
