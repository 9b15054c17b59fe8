package lab

// What the real-lab tests that measure a property share: the run's
// emulation health, checked before anything it measured is believed, and
// the bounds of the model (a node's configuration, with the lab's
// defaults applied) that the measurements are held to.

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/queues"
)

// nodeConfig is the configuration the lab of s gives node: the model
// every bound of a test derives from (PortRate, PortThresholds, PortPFC,
// BFC), so the bounds follow the defaults wherever they move.
func nodeConfig(t *testing.T, s Spec, node string) config.Node {
	t.Helper()
	d, err := s.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	topo, err := d.check()
	if err != nil {
		t.Fatal(err)
	}
	return d.bcubeNodeConfig(topo, node, "/x.sock")
}

// runHealth samples the lab's emulation health now and returns the check
// of the run that follows. What an invalid run measured is the machine,
// not the fabric: the check returns why, when the run was invalid only
// because the emulation fell behind (lab.Health.Late), for the test to
// check nothing that depends on timing and to end its attempt
// (testtool.RetryLate); it fails the test at once for any other problem
// (a daemon died or restarted).
func runHealth(t *testing.T, s Spec) func() (late string) {
	t.Helper()
	before, err := SampleHealth(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	return func() string {
		t.Helper()
		after, err := SampleHealth(s.RunRoot, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		h := after.Since(before, 0, HealthLimits{})
		t.Logf("emulation health: %s", h.Short())
		if why, late := h.Late(); late {
			return why
		}
		if !h.Valid {
			t.Fatalf("the run is not valid, so it measured nothing: %v", h.Problems)
		}
		return ""
	}
}

// reactionHeadroom is what one source sends at rateBps, beyond a
// threshold, before it obeys a pause: the emulator's reaction (a switch's
// receive ring and a source's wake-up, 5-15 ms measured on two shared
// cores), bounded by 20 ms. A one-hop RTT of the model is far below it.
func reactionHeadroom(rateBps uint64) int { return int(float64(rateBps) / 8 * 0.020) }

// goodputShare is the share of a link's rate that frames of frameLen
// bytes fill at best: the rest is Ethernet's preamble, FCS and gap.
func goodputShare(frameLen int) float64 {
	return float64(frameLen) / float64(frameLen+queues.WireOverhead)
}

// checkIncastGoodput checks that the sink flows of an incast kept the
// bottleneck of links links of rateBps busy from the first frame to the
// last (links may be a fraction: the total over the busiest link's
// share, when the sources' routes split the incast unevenly): under a lossless scheme that holds the sources back without
// letting the bottleneck's queue run dry, the sink receives, from its
// first frame to its last, at least 90% of what the links carry. The 10%
// is the healthy run's allowance (a port may lose 1% of its time) and the
// ends of the run, where fewer sources than the bottleneck's rate may
// send; a scheme that pauses the sources too long or too often, or
// drops, falls far below it.
func checkIncastGoodput(t *testing.T, sink []api.SinkReport, links float64, rateBps uint64) {
	t.Helper()
	var first, last int64
	var bytes uint64
	for _, f := range sink {
		bytes += f.Bytes
		if first == 0 || f.FirstNs < first {
			first = f.FirstNs
		}
		last = max(last, f.LastNs)
	}
	span := time.Duration(last - first)
	if span <= 0 {
		t.Fatalf("incast: no span between the first and the last frame (%v)", span)
	}
	got := float64(bytes) * 8 / span.Seconds()
	ceiling := links * float64(rateBps) * goodputShare(api.DefaultGenFrame)
	t.Logf("incast goodput %.1f Mb/s over %v, %.1f%% of the bottleneck's %.1f Mb/s", got/1e6, span, 100*got/ceiling, ceiling/1e6)
	if got < 0.9*ceiling {
		t.Errorf("incast goodput %.1f Mb/s: under 90%% of the bottleneck's %.1f Mb/s", got/1e6, ceiling/1e6)
	}
	if got > 1.01*ceiling {
		t.Errorf("incast goodput %.1f Mb/s: above the bottleneck's %.1f Mb/s (the shaper lets more through than the link carries)", got/1e6, ceiling/1e6)
	}
}
