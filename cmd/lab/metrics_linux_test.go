//go:build linux

package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bcfab/bcfab/internal/testkit/testns"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
)

// realBins builds swd, hostd and bcfabd into a temporary directory.
func realBins(t *testing.T) string {
	testns.RequireLab(t)
	return testns.Bins(t, "swd", "hostd", lab.WorkerBin)
}

// During traffic, lab metrics serves every node's ports and queues, as
// Prometheus' own parser reads them, and counters only grow.
func TestMetricsLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: brings up a lab of real daemons")
	}
	spec := lab.Defaults()
	spec.Name, spec.N, spec.K, spec.RateBps = fmt.Sprintf("cm%s", time.Now().Format("150405")), 2, 1, 100e6
	spec.BinDir, spec.RunRoot, spec.FC = realBins(t), t.TempDir(), scheme.NamePortFC
	if _, err := lab.Up(t.Context(), spec, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Down(spec.RunRoot, spec.Name, nil); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	for _, f := range [][2]int{{0, 3}, {1, 2}, {2, 0}} {
		if _, err := lab.StartFlow(spec.RunRoot, spec.Name, fmt.Sprintf("h%d", f[0]), api.GenRequest{Dst: f[1], Duration: int64(4 * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := metricsServer(spec.RunRoot, spec.Name, seriesOptions(spec, true))
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	url := "http://" + ln.Addr().String() + "/metrics"
	// By default, the series the lab's configuration keeps at zero, and
	// those of queues that have carried nothing, are left out.
	lnLean, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lean := metricsServer(spec.RunRoot, spec.Name, seriesOptions(spec, false))
	go lean.Serve(lnLean)
	defer lean.Shutdown(context.Background())

	time.Sleep(500 * time.Millisecond)
	first := scrapeFamilies(t, url)
	time.Sleep(time.Second)
	second := scrapeFamilies(t, url)
	leanFams := scrapeFamilies(t, "http://"+lnLean.Addr().String()+"/metrics")
	all, few := seriesCount(second), seriesCount(leanFams)
	t.Logf("series: %d with --all-series, %d by default", all, few)
	if few >= 1000 || few >= all {
		t.Errorf("lab metrics of BCube(2,1) exports %d series by default (%d with --all-series): want fewer than 1000", few, all)
	}
	for _, fam := range []string{"bcfab_port_tx_bytes_total", "bcfab_port_xsk_rx_dropped_total", "bcfab_queue_enqueued_packets_total", "bcfab_queue_paused_seconds_total"} {
		if len(leanFams[fam].GetMetric()) == 0 {
			t.Errorf("lab metrics by default has no %s", fam)
		}
	}

	st, err := lab.LoadState(spec.RunRoot, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range st.Nodes {
		ports := st.Spec.NodePorts(n.Name)
		for _, p := range ports {
			for _, fam := range []string{"bcfab_port_rx_packets_total", "bcfab_port_tx_bytes_total", "bcfab_port_drops_total",
				"bcfab_port_xdp_rx_packets_total", "bcfab_port_xsk_rx_dropped_total", "bcfab_queue_enqueued_packets_total",
				"bcfab_queue_paused_seconds_total", "bcfab_queue_depth_bytes"} {
				if !seriesWith(second[fam], map[string]string{"lab": spec.Name, "node": n.Name, "port": p}) {
					t.Errorf("no %s for %s %s", fam, n.Name, p)
				}
			}
		}
		if v := valueWith(second["bcfab_node_up"], map[string]string{"node": n.Name}); v != 1 {
			t.Errorf("%s: bcfab_node_up %v", n.Name, v)
		}
	}
	// PortFC's queues by name: s0.0 p0 toward h0 has A0, B and the HQ.
	for _, q := range []string{"A0", "B", "HQ"} {
		if !seriesWith(second["bcfab_queue_dequeued_bytes_total"], map[string]string{"node": "s0.0", "port": "p0", "queue": q}) {
			t.Errorf("no queue %s of s0.0 p0", q)
		}
	}
	// h0 -> h3 runs through h0's eth0 or eth1: its transmitted bytes grow.
	tx := func(f map[string]*dto.MetricFamily) float64 {
		return valueWith(f["bcfab_port_tx_bytes_total"], map[string]string{"node": "h0", "port": "eth0"}) +
			valueWith(f["bcfab_port_tx_bytes_total"], map[string]string{"node": "h0", "port": "eth1"})
	}
	if a, b := tx(first), tx(second); b <= a {
		t.Errorf("h0's transmitted bytes %v then %v: no traffic seen", a, b)
	}
	n := 0
	for name, fa := range first {
		if fa.GetType() != dto.MetricType_COUNTER {
			continue
		}
		for _, m := range fa.GetMetric() {
			n++
			if v := valueWith(second[name], labelMap(m)); v < m.GetCounter().GetValue() {
				t.Errorf("%s%v went down: %v -> %v", name, labelMap(m), m.GetCounter().GetValue(), v)
			}
		}
	}
	t.Logf("%d counter series, %d families", n, len(second))
}

func seriesCount(f map[string]*dto.MetricFamily) int {
	n := 0
	for _, fa := range f {
		n += len(fa.GetMetric())
	}
	return n
}

func scrapeFamilies(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// seriesWith reports whether f has a series with labels want (and maybe
// more).
func seriesWith(f *dto.MetricFamily, want map[string]string) bool {
	return valueWith(f, want) >= 0
}

// valueWith is the value of f's first series with labels want (-1: none);
// counters of the same labels are summed over the labels want leaves out.
func valueWith(f *dto.MetricFamily, want map[string]string) float64 {
	v, found := 0.0, false
	for _, m := range f.GetMetric() {
		got := labelMap(m)
		ok := true
		for k, w := range want {
			if got[k] != w {
				ok = false
			}
		}
		if !ok {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		}
	}
	if !found {
		return -1
	}
	return v
}
