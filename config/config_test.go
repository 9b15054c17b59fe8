package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/bcube"
)

func TestConfigPFCDefaults(t *testing.T) {
	for _, c := range []struct {
		fc       string
		k        int
		queueing string
		lossless uint8
	}{
		{FCPFC, 1, QueueingPriority, 1 << 3},
		{FCPFCStar, 1, QueueingPriority, 1<<3 | 1<<4},
		{FCPFCStar, 2, QueueingPriority, 1<<3 | 1<<4 | 1<<5},
		{FCPortFC, 1, QueueingPortFC, 1 << 3},
		{FCNone, 1, QueueingPortFC, 1 << 3},
	} {
		cfg := Node{Node: "h0", N: 2, K: c.k, Control: "/x.sock", FC: c.fc, RateBps: 100_000_000}
		cfg.SetDefaults()
		if _, _, err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", c.fc, err)
		}
		th := cfg.PFCThresholds()
		bdp := 25_000 // the papers' one-hop BDP, at any D
		if cfg.Queueing != c.queueing || th.Lossless != c.lossless || th.Xoff != 6*bdp || th.Xon != 4*bdp {
			t.Errorf("%s k=%d: queueing %s, thresholds %+v", c.fc, c.k, cfg.Queueing, th)
		}
		if w := cfg.Watchdog(); w.Detect != time.Second || w.Action != WatchdogNone { // 1 ms x D 1000
			t.Errorf("%s: watchdog %+v", c.fc, w)
		}
	}
	cfg := Node{Node: "h0", N: 2, K: 1, Control: "/x.sock", FC: FCPFC, Queueing: QueueingPortFC}
	cfg.SetDefaults()
	if _, _, err := cfg.Validate(); err == nil {
		t.Error("pfc with portfc queueing accepted")
	}
	cfg = Node{Node: "h0", N: 2, K: 1, Control: "/x.sock", WatchdogDetect: -1}
	cfg.SetDefaults()
	if cfg.Watchdog().Detect != 0 {
		t.Error("negative watchdog_detect does not turn the watchdog off")
	}
}

func TestConfigLoss(t *testing.T) {
	for _, c := range []struct {
		ppm int
		ok  bool
	}{{0, true}, {1, true}, {10_000, true}, {1_000_000, true}, {-1, false}, {1_000_001, false}} {
		cfg := Node{Node: "s0.1", N: 2, K: 1, Control: "/x.sock", LossPPM: c.ppm}
		cfg.SetDefaults()
		_, _, err := cfg.Validate()
		if (err == nil) != c.ok {
			t.Errorf("loss_ppm %d: %v", c.ppm, err)
		}
		if err != nil && !strings.Contains(err.Error(), "loss_ppm") {
			t.Errorf("loss_ppm %d: error does not name the field: %v", c.ppm, err)
		}
	}
}

// Every scheme's receivers hold a pause fc_hold (the target's 335 µs x D,
// at least scale.HoldFloor: 1 s at D = 1,000) and refresh it every 10 µs
// x D; a hold shorter than three refreshes is refused.
func TestConfigHold(t *testing.T) {
	for _, fc := range []string{FCPortFC, FCPFC, FCPFCStar, FCBFC} {
		cfg := Node{Node: "h0", N: 2, K: 1, Control: "/x.sock", FC: fc, RateBps: 100_000_000}
		cfg.SetDefaults()
		if _, _, err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", fc, err)
		}
		hold := int64(time.Second)
		if cfg.Thresholds().HoldNs() != hold || cfg.PFCThresholds().Hold != hold || cfg.BFC().Hold != hold ||
			cfg.PFCThresholds().Repeat != int64(10*time.Millisecond) {
			t.Errorf("%s: hold %v", fc, cfg.FCHold.D())
		}
		cfg.FCHold = Duration(20 * time.Millisecond)
		if _, _, err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "fc_hold") {
			t.Errorf("%s: a hold of two refreshes: %v", fc, err)
		}
	}
}

// Level order ate: p defaults to 0.9 and must be a fraction; ATE's
// options need the ate order; B_H is what eth0 (its override if any)
// carries in 4 one-hop RTTs unless set.
func TestConfigATE(t *testing.T) {
	for _, c := range []struct {
		order string
		p     float64
		capB  int64
		ok    bool
		wantP float64
	}{
		{"ate", 0, 0, true, 0.9},
		{"ate", 0.5, 0, true, 0.5},
		{"ate", 1, 5000, true, 1},
		{"ate", 1.5, 0, false, 0},
		{"ate", -0.1, 0, false, 0},
		{"ate", 0.9, -1, false, 0},
		{"hash", 0.9, 0, false, 0},
		{"hash", 0, 1000, false, 0},
		{"hash", 0, 0, true, 0},
	} {
		cfg := Node{Node: "h0", N: 4, K: 1, Control: "/x.sock", LevelOrder: c.order, ATEP: c.p, ATECapBytes: c.capB}
		cfg.SetDefaults()
		_, _, err := cfg.Validate()
		if (err == nil) != c.ok {
			t.Errorf("%s p %g cap %d: %v", c.order, c.p, c.capB, err)
		}
		if err == nil && cfg.ATEP != c.wantP {
			t.Errorf("%s p %g: p %g after defaults, want %g", c.order, c.p, cfg.ATEP, c.wantP)
		}
	}
	cfg := Node{Node: "h0", N: 4, K: 1, Control: "/x.sock", LevelOrder: "ate", RateBps: 100_000_000,
		Ports: []PortConfig{{Name: "eth0", RateBps: 160_000_000}}}
	cfg.SetDefaults()
	// eth0 is a 160 Gb/s target link at D = 1,000: 4 one-hop BDPs of 40 KB.
	if got := cfg.ATECap(); got != 160_000 {
		t.Errorf("B_H %d, want 160000", got)
	}
	cfg.ATECapBytes = 4096
	if got := cfg.ATECap(); got != 4096 {
		t.Errorf("B_H %d, want the 4096 set", got)
	}
}

// The relay queue of a PortFC server is strict by default and joins the
// round robin with relay_queue drr; no other queueing has one to set.
func TestConfigRelayQueue(t *testing.T) {
	topo, err := bcube.New(2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		relay, queueing string
		strict          []int
		err             bool
	}{
		{"", QueueingPortFC, []int{topo.ServerRQ()}, false},
		{RelayStrict, QueueingPortFC, []int{topo.ServerRQ()}, false},
		{RelayDRR, QueueingPortFC, nil, false},
		{RelayDRR, QueueingPriority, nil, true},
		{"fifo", QueueingPortFC, nil, true},
	} {
		n := Node{Queueing: c.queueing, RelayQueue: c.relay}
		qc, err := n.ServerEgress(topo)
		if (err != nil) != c.err {
			t.Errorf("relay %q, queueing %s: error %v, want one: %v", c.relay, c.queueing, err, c.err)
			continue
		}
		if err == nil && !slices.Equal(qc.Strict, c.strict) {
			t.Errorf("relay %q: strict queues %v, want %v", c.relay, qc.Strict, c.strict)
		}
	}
}
