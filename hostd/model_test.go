package hostd

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

// The parameters a server and a switch of a lab at 20 Mb/s actually run
// with — what config.Node and TransportParams hand the engine, flow
// control and transport — are the papers' network at D = 5,000: every
// amount of data the papers' bytes, every time x 5,000, every rate /
// 5,000 (scale's TestPapersAtD5000 checks the model itself).
func TestNodeRunsTheModel(t *testing.T) {
	const D = 5000
	us := time.Microsecond
	cfg := config.Node{Node: "h0", N: 4, K: 1, Control: "/x.sock", FC: scheme.NamePortFC, ECN: true, RateBps: 20_000_000}
	cfg.SetDefaults()
	if _, _, err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	port := bcube.HostPort(0)
	th, pfc, bfc, ecn := cfg.PortThresholds(port), cfg.PortPFC(port), scheme.BFCConfig(&cfg), cfg.PortECN(port)
	tr := TransportParams(cfg.Model(), cfg.PortRate(port))
	ci := scheme.ICIConfig(&cfg, true)
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"dilation", int64(cfg.Dilation), D},
		{"link delay", int64(cfg.LinkDelay()), int64(1 * us * D)},
		{"buffer per node", int64(cfg.BufferBytes), 5_000_000},
		{"one-hop BDP", int64(cfg.PortBDP(port)), 25_000},
		{"PortFC X_off (A)", int64(th.XoffA), 150_000},
		{"PortFC X_on (A)", int64(th.XonA), 100_000},
		{"PortFC X_off (B)", int64(th.XoffB), 150_000},
		{"PortFC X_on (B)", int64(th.XonB), 100_000},
		{"PFC X_off", int64(pfc.Xoff), 150_000},
		{"PFC X_on", int64(pfc.Xon), 100_000},
		{"BFC Th's BDP", int64(bfc.BDP), 25_000},
		{"BFC sticky time", bfc.Sticky, int64(4 * us * D)},
		{"flow-control refresh", int64(cfg.FCRefresh), int64(10 * us * D)},
		{"pause hold", int64(cfg.FCHold), int64(335 * us * D)},
		{"watchdog detect", int64(cfg.WatchdogDetect), int64(1000 * us * D)},
		{"watchdog restore", int64(cfg.WatchdogRestore), int64(1000 * us * D)},
		{"ECN K_min", int64(ecn.KminBytes), 100_000},
		{"ECN K_max", int64(ecn.KmaxBytes), 400_000},
		{"CI table entries", int64(ci.Table), 8},
		{"CI detection threshold", int64(ci.Detect), 50_000},
		{"CI congested queue K_min", int64(ci.CQKmin), 100_000},
		{"CI congested queue K_max", int64(ci.CQKmax), 400_000},
		{"CI residency", ci.Residency, int64(100 * us * D)},
		{"CI refresh", ci.Refresh, int64(10 * us * D)},
		{"line rate", tr.LineRateBps, 100e9 / D},
		{"Go-Back-N RTO", int64(tr.RTO), int64(10_000 * us * D)},
		{"IRN RTO_low", int64(tr.RTOLow), int64(100 * us * D)},
		{"IRN RTO_high", int64(tr.RTOHigh), int64(320 * us * D)},
		{"IRN threshold", int64(tr.RTOThreshold), 3},
		{"IRN in-flight cap", tr.BDPBytes, 100_000},
		{"ACK every", int64(tr.AckEvery), 4},
		{"ACK delay", int64(tr.AckDelay), int64(1 * us * D)},
		{"CNP interval", int64(tr.CNPInterval), int64(50 * us * D)},
		{"DCQCN alpha period", int64(tr.DCQCN.AlphaPeriod), int64(55 * us * D)},
		{"DCQCN increase period", int64(tr.DCQCN.IncreasePeriod), int64(55 * us * D)},
		{"DCQCN byte counter", tr.DCQCN.ByteCounter, 10_000_000},
		{"DCQCN F", int64(tr.DCQCN.F), 5},
		{"DCQCN R_AI", tr.DCQCN.AIRateBps, 100e6 / D},
		{"DCQCN R_HAI", tr.DCQCN.HAIRateBps, 1e9 / D},
		{"DCQCN minimum rate", tr.DCQCN.MinRateBps, 100e6 / D},
		{"ECN K_min (transport)", int64(tr.ECN.KminBytes), 100_000},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	if err := tr.Validate(); err != nil {
		t.Error(err)
	}
}
