package fabrictest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/transport"
)

// startsFlow is a flow of scripts/ns3/starts/dctcp: its source (into h0),
// size in bytes and start in the lab's ns at D = 5,000.
type startsFlow struct {
	src   int
	size  int64
	start time.Duration
}

// readStartsFile reads one of scripts/ns3/starts/dctcp' flow files (lab
// workload --flows CSV).
func readStartsFile(t testing.TB, name string) []startsFlow {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []startsFlow
	for _, line := range strings.Split(string(b), "\n") {
		fs := strings.Split(line, ",")
		if strings.HasPrefix(line, "#") || len(fs) < 5 || fs[0] == "id" {
			continue
		}
		src, err1 := strconv.Atoi(fs[1])
		size, err2 := strconv.ParseInt(fs[3], 10, 64)
		start, err3 := strconv.ParseInt(fs[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || fs[2] != "0" {
			t.Fatalf("%s: %q", name, line)
		}
		out = append(out, startsFlow{src: src, size: size, start: time.Duration(start)})
	}
	return out
}

// dctcpFabric is leafFabric with DCTCP's marking at K (100 KB), its
// receivers acknowledging every ackEvery packets, its switch marking as a
// packet joins its queue or, atDequeue, as it leaves (the simulator's).
func dctcpFabric(t testing.TB, ackEvery int, atDequeue bool) *Fabric {
	t.Helper()
	m := scale.Model{Target: scale.Papers(), D: startsD}
	ecn := m.DCTCPECN(startsRate)
	ecn.AtDequeue = ecn.AtDequeue || atDequeue
	p := hostd.TransportParams(m, startsRate)
	p.DCQCN.Enabled, p.DCTCP.Enabled, p.AckEvery = false, true, ackEvery
	return leafFabric(t, ecn, p)
}

// leafFabric is BCube(9,1) (servers h1..h8 and h0 on s0.0, as on the leaf
// of scripts/ns3/starts' labs and the conformance study's long-flow
// cases) at D = 5,000 (20 Mb/s, 5 ms links, PFC at 150/100 KB), its
// switches marking by ecn, its servers' transport p; the fabric whose
// health judges the run.
func leafFabric(t testing.TB, ecn scale.ECN, p transport.Params) *Fabric {
	t.Helper()
	m := scale.Model{Target: scale.Papers(), D: startsD}
	// Eight flows' first windows, 800 KB, reach s0.0 at once: frames
	// for them beyond the rings (a lab's switch has 1,024 a port).
	f, err := New(bcube.MustNew(9, 1), Options{RateBps: startsRate, Delay: m.LinkDelay(), Buffer: 5_000_000, SwitchFrames: 4096,
		FC:  PFC(signaling.PFCThresholds{Xoff: 150_000, Xon: 100_000, Lossless: 1 << signaling.PCPData}, startsRate, false),
		ECN: queues.ECNConfig{KminBytes: ecn.KminBytes, KmaxBytes: ecn.KmaxBytes, Pmax: ecn.Pmax, AtDequeue: ecn.AtDequeue}})
	if err != nil {
		t.Fatal(err)
	}
	watch(t, f)
	for _, h := range f.HostLogic {
		if err := h.SetTransport(p); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// The lab of scripts/ns3/starts/dctcp.
const (
	startsD    = 5000
	startsRate = 20_000_000
)

// dctcpStarts runs the flows of one file on f, their starts from now, and
// returns their FCTs once every queue has drained.
func dctcpStarts(t testing.TB, f *Fabric, flows []startsFlow) []time.Duration {
	t.Helper()
	t0 := f.Now()
	ids := make([][2]int, len(flows))
	for i, fl := range flows { // in order of start
		f.RunFor(t0 + fl.start - f.Now())
		fs, err := f.HostLogic[fl.src].StartRDMA(api.RDMARequest{Dst: 0, Bytes: fl.size, CC: "dctcp"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = [2]int{fl.src, fs[0].ID}
	}
	var fcts []time.Duration
	for _, r := range losslessDone(t, f, ids, 20*time.Millisecond*startsD) {
		fcts = append(fcts, time.Duration(r.FCTNs))
	}
	if n, where := fabricDrops(f); n != 0 {
		t.Fatalf("%d drops: %v", n, where)
	}
	drained(t, f, time.Minute)
	return fcts
}

// The conformance study's DCTCP cases with their starts apart
// (scripts/ns3/starts/dctcp, whose files the HPCC simulator and a lab
// run too): N = 2, 4, 8 long flows into one switch port through the
// whole datapath on virtual time, where no node is ever late, with
// every packet acknowledged (the simulator's receivers) and every 4 (the
// model's). Every flow completes with nothing dropped or retransmitted,
// and the two flows of N = 2 end within 3% of each other when every
// packet is acknowledged. The test logs each file's FCT spread (the
// greatest FCT over the least, less one), which docs/VALIDATION.md puts
// beside the simulator's and the lab's.
func TestDCTCPStartsOnVirtualTime(t *testing.T) { validRun(t, dctcpStartsOnVirtualTime) }

func dctcpStartsOnVirtualTime(t testing.TB) {
	names, err := filepath.Glob("../../../scripts/ns3/starts/dctcp/long-*.csv")
	if err != nil || len(names) == 0 {
		t.Fatalf("the flow files of scripts/ns3/starts/dctcp: %v (%d)", err, len(names))
	}
	sort.Strings(names)
	for _, ack := range []int{1, 4} {
		f := dctcpFabric(t, ack, false)
		spreads := map[int]string{}
		for _, name := range names {
			flows := readStartsFile(t, name)
			fcts := dctcpStarts(t, f, flows)
			spread := fctSpread(fcts)
			if ack == 1 && len(flows) == 2 && spread > 0.03 {
				t.Errorf("ACK every packet, %s: FCTs %v, %.1f%% apart", filepath.Base(name), fcts, 100*spread)
			}
			spreads[len(flows)] += fmt.Sprintf(" %.1f", 100*spread)
		}
		for _, n := range []int{2, 4, 8} {
			t.Logf("ACK every %d, N = %d: FCT spreads (%%, all at once, then draws 1-6):%s", ack, n, spreads[n])
		}
		if h := f.Health(); !h.Valid() { // validRun judges the last fabric
			t.Errorf("ACK every %d: the run was unhealthy on virtual time: %s", ack, h)
		}
	}
}

// startsJitter is the most a start of BenchmarkDCTCPStartsPerturbed moves:
// 100 µs of the lab's time at D = 5,000, 20 ns of the target's, under a
// quarter of a packet's time at the link's rate.
const startsJitter = 100 * time.Microsecond

// BenchmarkDCTCPStartsPerturbed measures how much a file of
// scripts/ns3/starts/dctcp sets its flows' FCT spread: each file run as
// written and then startsPerturbed times with every start moved later by
// up to startsJitter (seeded draws), each run on a fabric of its own, on
// virtual time, with the model's ACK every 4 packets and the simulator's
// every packet, marks as a packet joins its queue (the model's) and as it
// leaves (the simulator's). It logs each file's spreads (the greatest FCT
// over the least, less one, %) and reports their median and 10th and
// 90th percentiles over the runs of each N: the distribution of which the
// lab's and the simulator's seven files are seven draws
// (docs/VALIDATION.md, "Starts apart, in both tools"). Every run must complete its flows without a loss or a
// retransmission, its fabric healthy.
//
//	go test -run '^$' -bench DCTCPStartsPerturbed -benchtime 1x ./internal/testkit/fabrictest
func BenchmarkDCTCPStartsPerturbed(b *testing.B) {
	const startsPerturbed = 5
	variants := []struct {
		ack       int
		atDequeue bool
	}{{4, false}, {1, false}, {1, true}}
	for _, v := range variants {
		mark := "enqueue"
		if v.atDequeue {
			mark = "dequeue"
		}
		for _, n := range []int{2, 4, 8} {
			b.Run(fmt.Sprintf("ack=%d/mark=%s/N=%d", v.ack, mark, n), func(b *testing.B) {
				names, err := filepath.Glob(fmt.Sprintf("../../../scripts/ns3/starts/dctcp/long-%d-s*.csv", n))
				if err != nil || len(names) == 0 {
					b.Fatalf("the flow files of scripts/ns3/starts/dctcp: %v (%d)", err, len(names))
				}
				sort.Strings(names)
				var all []float64
				for range b.N {
					all = all[:0]
					for _, name := range names {
						flows := readStartsFile(b, name)
						line := ""
						for r := range startsPerturbed + 1 {
							moved := perturbStarts(flows, r)
							f := dctcpFabric(b, v.ack, v.atDequeue)
							fcts := dctcpStarts(b, f, moved)
							if h := f.Health(); !h.Valid() {
								b.Fatalf("%s, draw %d: the run was unhealthy on virtual time: %s", filepath.Base(name), r, h)
							}
							s := 100 * fctSpread(fcts)
							all = append(all, s)
							line += fmt.Sprintf(" %.1f", s)
						}
						b.Logf("ACK every %d, marks at %s, %s: FCT spreads (%%, as written, then moved by up to %v):%s", v.ack, mark, filepath.Base(name), startsJitter, line)
					}
				}
				sort.Float64s(all)
				b.ReportMetric(all[len(all)/2], "median-spread-%")
				b.ReportMetric(all[len(all)/10], "p10-spread-%")
				b.ReportMetric(all[len(all)*9/10], "p90-spread-%")
			})
		}
	}
}

// perturbStarts returns flows with every start moved later by up to
// startsJitter, drawn from seed r (r = 0: as written), in order of start.
func perturbStarts(flows []startsFlow, r int) []startsFlow {
	out := append([]startsFlow(nil), flows...)
	if r == 0 {
		return out
	}
	rng := rand.New(rand.NewPCG(uint64(r), 0))
	for i := range out {
		out[i].start += time.Duration(rng.Int64N(int64(startsJitter)))
	}
	sort.SliceStable(out, func(a, c int) bool { return out[a].start < out[c].start })
	return out
}

// fctSpread is the greatest of fcts over the least, less one.
func fctSpread(fcts []time.Duration) float64 {
	lo, hi := fcts[0], fcts[0]
	for _, x := range fcts {
		lo, hi = min(lo, x), max(hi, x)
	}
	return float64(hi)/float64(lo) - 1
}
