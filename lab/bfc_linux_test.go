package lab

// BFC on real fabrics: per-upstream-queue pauses on veths between AF_XDP
// daemons.

import (
	"strings"
	"testing"
	"time"
)

// Incast 8 -> 1 on BCube(4,1) under BFC (h1..h8 -> h0, 2- and 4-hop
// flows): the frames s0.0 sends to h1 are BFC pauses, resumes and
// bitmaps that the project's dissector decodes; nothing is dropped or
// missing although the sources offer four times what h0's links carry;
// and the queues toward h0 are sampled while the incast runs, to report
// their depth against Th.
func TestBFCIncastLab(t *testing.T) {
	const rate = 100e6
	s := realSpec(t, 4, 1)
	s.FC, s.RateBps = "bfc", rate
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	srcs := []string{"h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"}
	type sample struct{ active, bytes int }
	var samples []sample
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(time.Second) // the incast is under way
		for range 20 {
			for _, sw := range []string{"s0.0", "s1.0"} {
				st, err := Stats(s.RunRoot, s.Name, sw)
				if err != nil {
					return
				}
				var sm sample
				for _, q := range st.Ports[0].Queues {
					if q.Bytes > 0 {
						sm.active++
						sm.bytes += q.Bytes
					}
				}
				samples = append(samples, sm)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	pcap, capOut := incastCaptured(t, s, srcs, 1000)
	for _, want := range []string{"BFC pause upstreamQ=", "BFC resume upstreamQ=", "BFC state bitmap="} {
		if !strings.Contains(capOut, want) {
			t.Errorf("no %q in the %d frames captured on s0.0 p1", want, strings.Count(capOut, "\n"))
		}
	}
	tsharkDecodes(t, pcap)
	<-done
	total := incastDelivered(t, s, len(srcs))

	bdp := int(rate / 8 * 250e-6)
	var perQueue float64
	n := 0
	for _, sm := range samples {
		if sm.active > 0 {
			perQueue += float64(sm.bytes) / float64(sm.active)
			n++
		}
	}
	if n == 0 {
		t.Fatal("no sample found a queue toward h0 holding anything: the incast did not congest")
	}
	perQueue /= float64(n)
	var maxq, maxPort int
	for _, sw := range []string{"s0.0", "s1.0"} {
		st, err := Stats(s.RunRoot, s.Name, sw)
		if err != nil {
			t.Fatal(err)
		}
		maxPort = max(maxPort, int(st.Ports[0].MaxQueueBytes))
		for _, q := range st.Ports[0].Queues {
			maxq = max(maxq, q.MaxBytes)
		}
		t.Logf("%s p0 signals on p1: %v", sw, st.Ports[1].Signals)
	}
	t.Logf("h0 received %.1f Mb/s of 2 x %.0f; queues toward h0: mean depth of an active queue %.0f B over %d samples (Th = %d B / active queues), deepest queue %d B, deepest port %d B",
		float64(total)*8/3/1e6, rate/1e6, perQueue, n, bdp, maxq, maxPort)
	// Without backpressure, 8 line-rate sources into h0's two links (4:1)
	// overflow the 4 MiB buffer within a tenth of a second; incastDelivered
	// found no drop and no missing frame in 3 s. The depth is reported,
	// not asserted: above Th it measures how fast the emulation reacts
	// (milliseconds on two shared cores), not BFC (docs/BENCHMARKS.md).
}
