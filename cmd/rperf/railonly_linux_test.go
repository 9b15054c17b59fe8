package main

import (
	"context"
	"math"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/queues"
)

// A Rail-only NDC(4,1) at the preset's rates (32 Mb/s HBD, 20 Mb/s
// rails) under PortFC: servers ping and run rperf within the HBD, along a
// rail and across both (a relay between the domains), and each port's
// shaper holds its own rate within 2%: two saturating flows from h0, one
// in its HBD (eth0, then s0.0 p1 toward h1) and one along its rail (eth1,
// then s1.0 p1 toward h4), measured on the wire from the ports'
// counters.
func TestRailOnly(t *testing.T) {
	spec := upLab(t, "rr", lab.RailOnly(lab.Spec{FC: scheme.NamePortFC}))
	hbd, rail := spec.Rates[0], spec.Rates[1]

	for _, dst := range []string{"198.18.0.1", "198.18.0.4", "198.18.0.5"} { // HBD, rail, both
		if out, err := exec.Command("ip", "netns", "exec", lab.Namespace(spec.Name, "h0"), "ping", "-c", "2", "-i", "0.2", "-W", "2", "-q", dst).CombinedOutput(); err != nil {
			t.Errorf("ping h0 -> %s: %v\n%s", dst, err, out)
		}
	}

	// Both domains at once, one flow each way across them: h0 -> h5
	// crosses the HBD and a rail, relayed by h1 or h4.
	r := rperf(t, spec, "h0", "-c", "h5", "-t", "1.5", "-J")
	d := parseDoc(t, r)
	if r.code != 0 || d.End.SumReceived.Bytes < 1<<20 || d.Start.LinkRateBps != int64(rail) {
		t.Errorf("h0 -> h5: exit %d, %d bytes, link rate %d (want the rails' %d): %s", r.code, d.End.SumReceived.Bytes, d.Start.LinkRateBps, rail, r.stderr)
	}
	t.Logf("h0 -> h5 (order %s): %.2f Mb/s goodput, %.1f%% of the rail", d.Start.Streams[0].Order, d.End.SumReceived.BitsPerSecond/1e6, 100*d.End.SumReceived.LinkUtilization)

	// Saturate eth0 and eth1 of h0 at once, two flows each, and read
	// the ports' counters twice while they run.
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		var wg sync.WaitGroup
		results := make([]result, 2)
		errs := make([]error, 2)
		for i, dst := range []string{"h1", "h4"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = runRperf(spec, "h0", "-c", dst, "-P", "2", "-t", "4", "--no-dcqcn", "-J")
			}()
		}
		ports := []struct {
			node, port string
			rate       uint64
		}{{"h0", "eth0", hbd}, {"s0.0", "p1", hbd}, {"h0", "eth1", rail}, {"s1.0", "p1", rail}}
		time.Sleep(1500 * time.Millisecond)
		first := sample(t, spec, ports[0].node, ports[1].node, ports[3].node)
		time.Sleep(2 * time.Second)
		second := sample(t, spec, ports[0].node, ports[1].node, ports[3].node)
		wg.Wait()
		// A rate read while the emulation was late is the machine's: the
		// two flows run again (testtool.RetryLate), rates unchecked.
		var late []string
		for i := range results {
			if why := lateRperf(results[i]); errs[i] == nil && why != "" {
				late = append(late, why)
			}
		}
		if len(late) > 0 {
			return strings.Join(late, "; ")
		}
		for i := range results {
			if errs[i] != nil || results[i].code != 0 {
				t.Errorf("rperf %d: %v, exit %d: %s", i, errs[i], results[i].code, results[i].stderr)
			}
		}
		for _, p := range ports {
			a, b := port(t, first[p.node], p.port), port(t, second[p.node], p.port)
			dt := float64(second[p.node].UptimeNs - first[p.node].UptimeNs)
			wire := float64(b.TxBytes-a.TxBytes+queues.WireOverhead*(b.TxPackets-a.TxPackets)) * 8 / dt * 1e9
			t.Logf("%s %s: %.3f Mb/s on the wire over %.2fs, configured %s (%+.2f%%)", p.node, p.port, wire/1e6, dt/1e9, lab.FormatRate(p.rate), 100*(wire/float64(p.rate)-1))
			if b.RateBps != p.rate {
				t.Errorf("%s %s: shaped to %d bit/s, want %d", p.node, p.port, b.RateBps, p.rate)
			}
			if math.Abs(wire/float64(p.rate)-1) > 0.02 {
				t.Errorf("%s %s: %.3f Mb/s, not within 2%% of %s", p.node, p.port, wire/1e6, lab.FormatRate(p.rate))
			}
		}
		return ""
	})
}

// sample reads the stats of nodes of spec's lab.
func sample(t *testing.T, spec lab.Spec, nodes ...string) map[string]*api.Stats {
	t.Helper()
	st, err := lab.LoadState(spec.RunRoot, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*api.Stats{}
	for _, n := range nodes {
		ns, ok := st.Node(n)
		if !ok {
			t.Fatalf("no node %s", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := lab.FetchStats(ctx, ns.Control)
		cancel()
		if err != nil {
			t.Fatalf("stats of %s: %v", n, err)
		}
		out[n] = s
	}
	return out
}

// port is the port name of s.
func port(t *testing.T, s *api.Stats, name string) api.PortStats {
	t.Helper()
	for _, p := range s.Ports {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("%s has no port %s", s.Node, name)
	return api.PortStats{}
}
