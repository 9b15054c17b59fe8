package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bcfab/bcfab/node/api"
)

// fakeStats is a switch and a server whose counters grow with step.
func fakeNodes(step uint64) []Node {
	port := func(name string) api.PortStats {
		return api.PortStats{Name: name, RateBps: 100e6, RxPackets: 10 * step, RxBytes: 1000 * step, TxPackets: 20 * step, TxBytes: 2000 * step,
			QueueBytes: 100, MaxQueueBytes: 500, Drops: map[string]uint64{"buffer_full": step, "no_route": 0},
			XSK: map[string]uint64{"rx_dropped": 0, "rx_ring_full": step}, XDP: map[string]uint64{"rx": 11 * step, "redirect": 10 * step, "loss": step},
			Signals:    map[string]uint64{"tx_pause_A": step, "rx_resume_B": step, "relayed_state_B": 2 * step, "tx_xoff_P3": step, "lost": 0},
			LateFrames: step, MaxLateNs: 1000, LostLinkNs: int64(step) * 1e6, LossPPM: 10_000,
			Queues: []api.QueueStats{
				{Index: 0, Name: "A0", EnqPackets: 5 * step, EnqBytes: 500 * step, DeqPackets: 5 * step, DeqBytes: 500 * step, PausedNs: int64(step) * 1e7,
					Paused: step%2 == 0, Drops: map[string]uint64{"buffer_full": step}, ECNMarks: step},
				{Index: 1, Name: "B", EnqPackets: step, Drops: map[string]uint64{}},
			}}
	}
	return []Node{
		{Name: "s0.0", Kind: "swd", Stats: &api.Stats{Node: "s0.0", Kind: "swd", Pid: 10, UptimeNs: int64(step) * 1e9, XDPMode: "native",
			Frames: api.FrameStats{Total: 8192, Free: 8000}, Ports: []api.PortStats{port("p0"), port("p1")}}},
		{Name: "h0", Kind: "hostd", Stats: &api.Stats{Node: "h0", Kind: "hostd", Pid: 11, UptimeNs: int64(step) * 1e9, XDPMode: "native",
			Ports: []api.PortStats{port("eth0"), port("bc0nic")}},
			Classifier: &api.ClassifierStats{Attached: true, DSCPMap: "26=3", Classes: [8]api.ClassCounters{3: {Packets: step, Bytes: 100 * step}}}},
		{Name: "h1", Kind: "hostd", Err: errors.New("connection refused")},
	}
}

// The names follow Prometheus' conventions (promlint finds nothing).
func TestLint(t *testing.T) {
	c := NewCollector("t", func(context.Context) ([]Node, error) { return fakeNodes(1), nil }, time.Second)
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

// Two scrapes through promhttp, read with Prometheus' own text parser:
// series per node, port and queue, and counters that only grow.
func TestScrape(t *testing.T) {
	step := uint64(0)
	c := NewCollector("t", func(context.Context) ([]Node, error) { step++; return fakeNodes(step), nil }, time.Second)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	first, second := scrape(t, srv.URL), scrape(t, srv.URL)
	for _, want := range []struct {
		family string
		labels map[string]string
	}{
		{"bcfab_port_tx_bytes_total", map[string]string{"lab": "t", "node": "s0.0", "port": "p1"}},
		{"bcfab_queue_paused_seconds_total", map[string]string{"node": "h0", "port": "eth0", "queue": "A0"}},
		{"bcfab_port_drops_total", map[string]string{"node": "s0.0", "reason": "buffer_full"}},
		{"bcfab_port_signals_total", map[string]string{"direction": "relayed", "type": "state", "class": "B"}},
		{"bcfab_port_signals_total", map[string]string{"direction": "tx", "type": "xoff", "class": "P3"}},
		{"bcfab_port_xdp_verdict_packets_total", map[string]string{"verdict": "loss"}},
		{"bcfab_port_xsk_rx_ring_full_total", map[string]string{"port": "p0"}},
		{"bcfab_port_shaper_lost_seconds_total", map[string]string{"port": "eth0"}},
		{"bcfab_classifier_packets_total", map[string]string{"node": "h0", "priority": "3"}},
		{"bcfab_node_up", map[string]string{"node": "h1"}},
	} {
		if !hasSeries(second[want.family], want.labels) {
			t.Errorf("no %s%v", want.family, want.labels)
		}
	}
	if v := value(second["bcfab_node_up"], map[string]string{"node": "h1"}); v != 0 {
		t.Errorf("h1 (unreachable) up = %v", v)
	}
	if v := value(second["bcfab_port_shaper_lost_seconds_total"], map[string]string{"node": "s0.0", "port": "p0"}); v != 0.002 {
		t.Errorf("lost seconds = %v, want 0.002", v)
	}
	checkGrowing(t, first, second)
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func matches(m *dto.Metric, want map[string]string) bool {
	got := labelsOf(m)
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func hasSeries(f *dto.MetricFamily, want map[string]string) bool {
	for _, m := range f.GetMetric() {
		if matches(m, want) {
			return true
		}
	}
	return false
}

func value(f *dto.MetricFamily, want map[string]string) float64 {
	for _, m := range f.GetMetric() {
		if matches(m, want) {
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			}
		}
	}
	return -1
}

// checkGrowing checks that every counter series of a is in b, no smaller.
func checkGrowing(t *testing.T, a, b map[string]*dto.MetricFamily) {
	t.Helper()
	counters := 0
	for name, fa := range a {
		if fa.GetType() != dto.MetricType_COUNTER {
			continue
		}
		fb := b[name]
		for _, m := range fa.GetMetric() {
			counters++
			key := labelsOf(m)
			var found bool
			for _, n := range fb.GetMetric() {
				if matches(n, key) && len(labelsOf(n)) == len(key) {
					found = true
					if n.GetCounter().GetValue() < m.GetCounter().GetValue() {
						t.Errorf("%s%v went down: %v -> %v", name, key, m.GetCounter().GetValue(), n.GetCounter().GetValue())
					}
				}
			}
			if !found {
				t.Errorf("%s%v gone in the second scrape", name, key)
			}
		}
	}
	if counters < 50 {
		t.Errorf("only %d counter series", counters)
	}
	if !strings.HasPrefix(b["bcfab_port_tx_bytes_total"].GetHelp(), "Bytes") {
		t.Errorf("help: %q", b["bcfab_port_tx_bytes_total"].GetHelp())
	}
}

// A lean collector leaves out what the lab's configuration keeps at zero
// (pauses without flow control, marks without ECN, the HQ's pauses),
// queues that carried nothing, and the zero parts of counts split by
// reason or kind.
func TestLean(t *testing.T) {
	nodes := func(context.Context) ([]Node, error) {
		n := fakeNodes(1)
		p := &n[0].Stats.Ports[0]
		p.Queues = append(p.Queues, api.QueueStats{Index: 2, Name: "HQ", EnqPackets: 3, Drops: map[string]uint64{"buffer_full": 0}},
			api.QueueStats{Index: 3, Name: "A1", Drops: map[string]uint64{"buffer_full": 0}})
		return n, nil
	}
	series := func(o Options) map[string]int {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(NewCollector("t", nodes, time.Second).WithOptions(o))
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				out[f.GetName()]++
				for _, l := range m.GetLabel() {
					if l.GetName() == "queue" {
						out[f.GetName()+"/"+l.GetValue()]++
					}
				}
			}
		}
		return out
	}
	all := series(Options{})
	none := series(Options{Lean: true})
	pfc := series(Options{Lean: true, Pauses: true, ECN: true, Watchdog: true})
	total := func(m map[string]int) (n int) {
		for k, v := range m {
			if !strings.Contains(k, "/") {
				n += v
			}
		}
		return n
	}
	t.Logf("series: all %d, lean without flow control %d, lean with pauses, ECN and the watchdog %d", total(all), total(none), total(pfc))
	for _, c := range []struct {
		what string
		got  int
		want int
	}{
		{"all: A1's enqueued", all["bcfab_queue_enqueued_packets_total/A1"], 1},
		{"lean: A1 (idle)", none["bcfab_queue_enqueued_packets_total/A1"], 0},
		{"lean: HQ", none["bcfab_queue_enqueued_packets_total/HQ"], 1},
		{"lean, no fc: pauses", none["bcfab_queue_paused_seconds_total"], 0},
		{"lean, no ecn: marks", none["bcfab_queue_ecn_marks_total"], 0},
		{"lean, no watchdog: stalls", none["bcfab_queue_stalls_total"], 0},
		{"lean, fc: the HQ's pauses", pfc["bcfab_queue_paused_seconds_total/HQ"], 0},
		{"lean, fc: A0's pauses", pfc["bcfab_queue_paused_seconds_total/A0"], 4},
		{"lean, fc: ignored pauses (no action)", pfc["bcfab_queue_ignored_pauses_total"], 0},
		{"lean: port drops by reason, the non-zero ones", none["bcfab_port_drops_total"], all["bcfab_port_drops_total"] / 2},
		{"lean: signals, the non-zero ones", none["bcfab_port_signals_total"] + none["bcfab_port_signal_events_total"], all["bcfab_port_signals_total"] + all["bcfab_port_signal_events_total"] - 4},
		{"lean: the HQ's zero drop reasons", none["bcfab_queue_drops_total/HQ"], 0},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d series, want %d", c.what, c.got, c.want)
		}
	}
	if total(none) >= total(pfc) || total(pfc) >= total(all) {
		t.Errorf("series: all %d, lean with fc %d, without %d: want fewer each", total(all), total(pfc), total(none))
	}
}
