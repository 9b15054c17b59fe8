package config

import (
	"slices"
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

// DRR weights read as a lab gives them and write back the same; a node
// refuses weights no egress takes, naming the field.
func TestConfigDRRWeights(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		err  string // in part; "" for none
	}{
		{"1,3", []int{1, 3}, ""},
		{"2", []int{2}, ""},
		{" 1, 1 ,4 ", []int{1, 1, 4}, ""},
		{"1000,1", []int{1000, 1}, ""},
		{"1," + strings.Repeat("1,", 61) + "1", nil, ""}, // 63, an egress's most
		{"", nil, "want whole numbers"},
		{"1,,3", nil, "want whole numbers"},
		{"1;3", nil, "want whole numbers"},
		{"1.5,1", nil, "want whole numbers"},
		{"1,0", nil, "weight 0 of data queue 1: want 1..1000"},
		{"-1", nil, "weight -1 of data queue 0"},
		{"1,1001", nil, "weight 1001 of data queue 1"},
		{strings.Repeat("1,", 63) + "1", nil, "64 weights: an egress has at most 63 data queues"},
	} {
		w, err := ParseDRRWeights(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want an error saying %q", c.in, err, c.err)
			}
			continue
		case err != nil:
			t.Errorf("%q: %v", c.in, err)
			continue
		case c.want != nil && !slices.Equal(w, c.want):
			t.Errorf("%q: %v, want %v", c.in, w, c.want)
		}
		if again, err := ParseDRRWeights(FormatDRRWeights(w)); err != nil || !slices.Equal(again, w) {
			t.Errorf("%q: written %q, read again %v, %v", c.in, FormatDRRWeights(w), again, err)
		}
	}
	for _, c := range []struct {
		w   []int
		err string
	}{
		{nil, ""},
		{[]int{1, 3}, ""},
		{[]int{3, 0}, "config for s0.1: drr_weights 3,0: weight 0 of data queue 1: want 1..1000"},
		{[]int{1, -5}, "drr_weights 1,-5: weight -5"},
		{make([]int, 64), "drr_weights"},
	} {
		cfg := Node{Node: "s0.1", N: 2, K: 1, Control: "/x.sock", DRRWeights: c.w}
		cfg.SetDefaults()
		_, _, err := cfg.Validate()
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("drr_weights %v: %v, want %q", c.w, err, c.err)
		}
	}
}
