package config

import (
	"strings"
	"testing"
	"time"
)

// The watchdog runs with the model's times unless told otherwise; a
// negative detection time turns it off.
func TestConfigWatchdog(t *testing.T) {
	cfg := Node{Node: "h0", N: 2, K: 1, Control: "/x.sock", RateBps: 100_000_000}
	cfg.SetDefaults()
	if _, _, err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if w := cfg.Watchdog(); w.Detect != time.Second || w.Action != WatchdogNone { // 1 ms x D 1000
		t.Errorf("watchdog %+v", w)
	}
	cfg = Node{Node: "h0", N: 2, K: 1, Control: "/x.sock", WatchdogDetect: -1}
	cfg.SetDefaults()
	if cfg.Watchdog().Detect != 0 {
		t.Error("negative watchdog_detect does not turn the watchdog off")
	}
}

// The model's hold and refresh, which every scheme's receivers and
// senders run with: a hold of the target's 335 µs x D (at least
// scale.HoldFloor: 1 s at D = 1,000), a refresh of 10 µs x D. What a
// scheme makes of them, package scheme checks.
func TestConfigHoldDefaults(t *testing.T) {
	cfg := Node{Node: "h0", N: 2, K: 1, Control: "/x.sock", RateBps: 100_000_000}
	cfg.SetDefaults()
	if cfg.FCHold.D() != time.Second || cfg.FCRefresh.D() != 10*time.Millisecond {
		t.Errorf("hold %v, refresh %v", cfg.FCHold.D(), cfg.FCRefresh.D())
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
