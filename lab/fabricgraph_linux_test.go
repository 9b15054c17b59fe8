package lab

// Fabrics given as a graph on real labs: the real daemons in their
// namespaces, veths, AF_XDP, the switches forwarding by the tables lab
// computed from the graph, and the kernel's ping through every server's
// bc0.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/node/scheme"
)

// graphSpec is a lab of the real daemons on fabric f, named fb + 6
// random characters, brought down and checked gone when the test ends.
func graphSpec(t *testing.T, f FabricSpec) Spec {
	t.Helper()
	requireRoot(t)
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	name := []byte("fb")
	for range 6 {
		name = append(name, chars[rand.IntN(len(chars))])
	}
	s := Spec{Name: string(name), Fabric: &f, RateBps: 100e6, BinDir: realBinDir(t), RunRoot: t.TempDir(), HealthTimeout: 60 * time.Second}
	progs := xdpPrograms(t)
	t.Cleanup(func() {
		if err := Down(s.RunRoot, s.Name, testLogger(t)); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		checkGone(t, s)
		deadline := time.Now().Add(20 * time.Second)
		for xdpPrograms(t) > progs && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if now := xdpPrograms(t); now > progs {
			t.Errorf("%d BPF programs left behind (%d before the lab, %d after)", now-progs, progs, now)
		}
	})
	return s
}

// pingAll pings every server from every other through the kernel's
// stack (bc0), one ping each, all sources at once; it returns the pairs
// that got no answer.
func pingAll(t *testing.T, lab string, servers int) []string {
	t.Helper()
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for src := range servers {
		wg.Go(func() {
			var script strings.Builder
			for dst := range servers {
				if dst != src {
					// Two tries: the first frame of a pair may wait for ARP.
					fmt.Fprintf(&script, "ping -c1 -W2 -q %s >/dev/null || ping -c1 -W2 -q %s >/dev/null || echo h%d; ", bcube.ServerIP(dst), bcube.ServerIP(dst), dst)
				}
			}
			out, err := exec.Command("ip", "netns", "exec", Namespace(lab, bcube.HostName(src)), "sh", "-c", script.String()).CombinedOutput()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, fmt.Sprintf("h%d: %v %s", src, err, out))
			}
			for _, d := range strings.Fields(string(out)) {
				failed = append(failed, fmt.Sprintf("h%d -> %s", src, d))
			}
		})
	}
	wg.Wait()
	return failed
}

// TestGraphFabrics brings up the leaf-spine, fat-tree and expander of
// the acceptance (and the expander routed by K shortest paths, and the
// FC+ loop fabric by DF-KSP with two PFC priorities): every
// server pair pings, every switch forwarded, nothing was dropped, and
// Down (the cleanup) leaves nothing.
func TestGraphFabrics(t *testing.T) {
	for _, f := range []FabricSpec{
		{Kind: TopologyLeafSpine, Leaves: 4, Spines: 2, Hosts: 4},
		{Kind: TopologyFatTree, K: 4},
		{Kind: TopologyExpander, ToRs: 8, Degree: 3, Hosts: 2, Seed: 1},
		{Kind: TopologyExpander, ToRs: 8, Degree: 3, Hosts: 2, Seed: 1, Routing: RoutingKSP, Paths: 3},
		{Kind: TopologyFCPlus, Scenario: "fcplus-loop", Routing: RoutingDFKSP2, Paths: 4}, // under PFC, two priorities
	} {
		t.Run(strings.ReplaceAll(f.String(), " ", ""), func(t *testing.T) {
			s := graphSpec(t, f)
			if f.Kind == TopologyFCPlus {
				s.FC = scheme.NamePFC
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			start := time.Now()
			st, err := Up(ctx, s, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			servers := s.Servers()
			t.Logf("%s up in %v: %d nodes", f, time.Since(start).Round(time.Millisecond), len(st.Nodes))
			if failed := pingAll(t, s.Name, servers); len(failed) > 0 {
				t.Fatalf("%d of %d pairs did not ping: %s", len(failed), servers*(servers-1), strings.Join(failed, "; "))
			}
			r, err := Status(s.RunRoot, s.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range r.Nodes {
				switch {
				case !n.Alive || !n.Healthy || n.Stats == nil:
					t.Errorf("%s: alive %v healthy %v", n.Name, n.Alive, n.Healthy)
				case n.Stats.Drops != 0:
					t.Errorf("%s: %d frames dropped", n.Name, n.Stats.Drops)
				case n.Kind == KindSwitch && n.Stats.TxPackets == 0:
					t.Errorf("%s forwarded nothing", n.Name)
				}
			}
		})
	}
}

// BFC and congestion isolation on a leaf-spine (2 leaves of 4 hosts, 1
// spine): two trees of 3-to-1 incasts and a long flow, on the real
// daemons, without congestion control (so the incasts' queues build).
// Every flow completes and nothing is dropped; BFC pauses upstream
// queues, and under ici the roots isolate the incasts' flows.
func TestGraphFabricSchemes(t *testing.T) {
	for _, fc := range []string{scheme.NameBFC, scheme.NameICI} {
		t.Run(fc, func(t *testing.T) {
			s := graphSpec(t, FabricSpec{Kind: TopologyLeafSpine, Leaves: 2, Spines: 1, Hosts: 4})
			s.FC, s.ECN = fc, true
			if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
				t.Fatal(err)
			}
			cfg := workload.Config{Duration: 2 * time.Second, Seed: 3,
				Incast: &workload.Incast{Senders: 3, Size: 300_000, Period: time.Second, Trees: 2},
				Long:   &workload.Long{Flows: 1, Size: 2_000_000}}
			rep, err := RunWorkload(t.Context(), s.RunRoot, s.Name, WorkloadOptions{Config: cfg, Interval: 250 * time.Millisecond, NoDCQCN: true})
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", text.String())
			long := 0
			for _, r := range rep.Records {
				if !r.Completed || r.Failed {
					t.Errorf("flow %d (%s, h%d -> h%d) did not complete", r.ID, r.Kind, r.Src, r.Dst)
				}
				if r.Kind == workload.KindLong {
					long++
				}
			}
			f := rep.Fabric
			switch {
			case len(rep.Records) != 13 || long != 1:
				t.Errorf("%d flows (%d long), want 2 instants x 2 trees x 3 senders and 1 long", len(rep.Records), long)
			case f.Drops != 0:
				t.Errorf("%d drops under lossless %s", f.Drops, fc)
			case f.Pauses == 0 && fc == scheme.NameBFC:
				t.Error("bfc paused nothing under incast")
			case fc == scheme.NameICI && (f.Isolated == 0 || f.Isolations == 0):
				t.Errorf("ici isolated %d flows and sent %d isolations under incast", f.Isolated, f.Isolations)
			}
			if len(rep.Queues) == 0 {
				t.Error("no queue series")
			}
		})
	}
}

// HPCC on a leaf-spine (2 leaves of 4 hosts, 1 spine), on the real
// daemons: the switches' egresses stamp INT records into the data
// packets and the servers, which relay nothing, stamp none (an RDMA NIC
// adds no record of its own backlog; DECISIONS). h1 starts four flows
// at once, so its NIC holds a queue of its own flows that a record
// would have reported; every flow completes, nothing dropped.
func TestGraphFabricHPCCStamps(t *testing.T) {
	s := graphSpec(t, FabricSpec{Kind: TopologyLeafSpine, Leaves: 2, Spines: 1, Hosts: 4})
	s.FC, s.CC, s.RateBps = scheme.NamePFC, "hpcc", 20e6
	if _, err := Up(t.Context(), s, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	var flows []workload.Flow
	for i, p := range [][2]int{{1, 0}, {1, 2}, {1, 4}, {1, 6}, {5, 0}} {
		flows = append(flows, workload.Flow{ID: i, Src: p[0], Dst: p[1], Size: 400_000, Kind: workload.KindLong})
	}
	cfg := workload.Config{Duration: time.Second, Seed: 1}
	rep, err := RunWorkload(t.Context(), s.RunRoot, s.Name, WorkloadOptions{Config: cfg, Flows: flows, CC: "hpcc", Interval: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Records {
		if !r.Completed || r.Failed {
			t.Errorf("flow %d (h%d -> h%d) did not complete", r.ID, r.Src, r.Dst)
		}
	}
	if len(rep.Records) != len(flows) || rep.Fabric.Drops != 0 {
		t.Errorf("%d flows of %d, %d drops", len(rep.Records), len(flows), rep.Fabric.Drops)
	}
	st, err := LoadState(s.RunRoot, s.Name)
	if err != nil {
		t.Fatal(err)
	}
	var switches, servers uint64
	for _, n := range st.Nodes {
		for _, p := range mustStats(t, s, n.Name).Ports {
			if strings.HasPrefix(n.Name, "h") {
				servers += p.INTStamped
			} else {
				switches += p.INTStamped
			}
		}
	}
	t.Logf("INT records stamped: %d by switches, %d by servers; health valid %v", switches, servers, rep.Health.Valid)
	// Each data packet gets a record at its source's leaf at least.
	if packets := uint64(len(flows) * 400_000 / 1024); switches < packets || servers != 0 {
		t.Errorf("INT records: %d by switches (want at least %d), %d by servers (want 0)", switches, packets, servers)
	}
}
