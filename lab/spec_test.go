package lab

import (
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/scheme"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// asUser makes Validate see the given effective uid for one test.
func asUser(t *testing.T, uid int) {
	t.Helper()
	old := euid
	euid = func() int { return uid }
	t.Cleanup(func() { euid = old })
}

func TestValidate(t *testing.T) {
	asUser(t, 0)
	root := t.TempDir()
	ok := Spec{Name: "btv", N: 4, K: 1, RunRoot: root, BinDir: "/nonexistent"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid spec: %v", err)
	}
	with := func(f func(*Spec)) Spec { s := ok; f(&s); return s }
	for _, c := range []struct {
		name string
		spec Spec
		want string // in the error
	}{
		{"n<2", with(func(s *Spec) { s.N = 1 }), "n = 1"},
		{"n=0", with(func(s *Spec) { s.N = 0 }), "n >= 2"},
		{"k<1", with(func(s *Spec) { s.K = 0 }), "k = 0"},
		{"k<0", with(func(s *Spec) { s.K = -1 }), "k >= 1"},
		{"too large", with(func(s *Spec) { s.N = 18 }), "too large: 324 servers + 36 switches = 360 nodes, the limit is 300"},
		{"too many processes", with(func(s *Spec) { s.N, s.Workers = 16, PerNode }), "288 nodes: a daemon process per node is limited to 160"},
		{"workers", with(func(s *Spec) { s.Workers = MaxWorkers + 1 }), "workers 65: want 1..64"},
		{"too large k", with(func(s *Spec) { s.N, s.K = 2, 7 }), "too large"},
		{"absurd", with(func(s *Spec) { s.N, s.K = 1<<30, 3 }), "too large"},
		{"over max nodes", with(func(s *Spec) { s.MaxNodes = 20 }), "24 nodes, the limit is 20"},
		{"uppercase name", with(func(s *Spec) { s.Name = "Lab" }), `lab name "Lab"`},
		{"long name", with(func(s *Spec) { s.Name = "abcdefghi" }), "at most 7"},
		{"dash in name", with(func(s *Spec) { s.Name = "a-b" }), `lab name "a-b"`},
		{"digit first", with(func(s *Spec) { s.Name = "1ab" }), "lowercase letter"},
		{"relative run root", with(func(s *Spec) { s.RunRoot = "run" }), "absolute"},
		{"xdp mode", with(func(s *Spec) { s.XDPMode = "fast" }), "xdp_mode"},
		{"level order", with(func(s *Spec) { s.LevelOrder = "0,0" }), "level order"},
		{"dilation", with(func(s *Spec) { s.Dilation, s.RateBps = 0.5, 0 }), "dilation 0.5: want 1..100000"},
		{"target", with(func(s *Spec) { s.Target = scale.Papers(); s.Target.XonBDPs = 9 }), "target papers: xon 9 and xoff 6 BDPs"},
		{"buffer", with(func(s *Spec) { s.BufferBytes = 100 }), "buffer_bytes"},
		{"socket path", with(func(s *Spec) { s.RunRoot = "/" + strings.Repeat("x", 100) }), "too long"},
		{"fc", with(func(s *Spec) { s.FC = "cbfc" }), `fc "cbfc": want none, portfc, pfc, pfcstar, bfc, ici, ci, ideal-fq or sfq`},
		{"bfc queues", with(func(s *Spec) { s.FC, s.BFCQueues = scheme.NameBFC, 65 }), "queueing bfc: 65 queues: want 2..64"},
		{"bfc table", with(func(s *Spec) { s.FC, s.BFCTable = scheme.NameBFC, 1<<20 }), "bfc: flow table of 1048576 entries"},
		{"bfc assign", with(func(s *Spec) { s.FC, s.BFCAssign = scheme.NameBFC, "random" }), `bfc_assign "random": want dynamic or hash`},
		{"relay queue", with(func(s *Spec) { s.FC, s.RelayQueue = scheme.NamePortFC, "wfq" }), `relay_queue "wfq": want strict or drr`},
		{"relay queue under pfc", with(func(s *Spec) { s.FC, s.RelayQueue = scheme.NamePFC, "drr" }), "relay_queue drr: only queueing portfc has a relay queue"},
		{"pfcstar k=3", with(func(s *Spec) { s.FC, s.N, s.K = scheme.NamePFCStar, 2, 3 }), "fc pfcstar on BCube(2,3)"},
		{"pfc xon above xoff", with(func(s *Spec) { s.FC, s.Xoff, s.Xon = scheme.NamePFC, 1000, 2000 }), "pfc thresholds"},
		{"watchdog action", with(func(s *Spec) { s.WatchdogAction = "reboot" }), `watchdog action "reboot"`},
		{"watchdog detect", with(func(s *Spec) { s.WatchdogDetect = time.Millisecond }), "watchdog detection time"},
		{"loss above 1", with(func(s *Spec) { s.LossPPM = 1_000_001 }), "loss_ppm 1000001: want 0..1000000"},
		{"negative loss", with(func(s *Spec) { s.LossPPM = -1 }), "loss_ppm -1"},
		{"ecn pmax", with(func(s *Spec) { s.ECNPmax = 1.5 }), "ecn: want 0 <= kmin (125000) <= kmax (500000) and 0 < pmax (1.5) <= 1"},
		{"ecn kmin above kmax", with(func(s *Spec) { s.ECN, s.ECNKminBytes = true, 1<<20 }), "ecn: want 0 <= kmin (1048576) <= kmax (500000)"},
		{"ecn negative kmax", with(func(s *Spec) { s.ECNKmaxBytes = -1 }), "ecn: want"},
		{"drr weight 0", with(func(s *Spec) { s.DRRWeights = []int{1, 0} }), "config for h0: drr_weights 1,0: weight 0 of data queue 1: want 1..1000"},
		{"drr weights past a switch's queues", with(func(s *Spec) { s.FC, s.DRRWeights = scheme.NamePortFC, []int{1, 1, 1, 1, 3} }),
			"config for s0.0: drr_weights 1,1,1,1,3: 5 weights for 4 data queues; under fc portfc a switch port's data queues are A0, A1, A2, B (the HQ takes no weight)"},
		{"drr weight of the strict relay queue", with(func(s *Spec) { s.FC, s.DRRWeights = scheme.NamePortFC, []int{1, 1, 1, 1, 1, 1, 2} }),
			"config for h0: drr_weights 1,1,1,1,1,1,2: weight 2 of queue RQ: a strict queue"},
		{"drr weights past the priorities", with(func(s *Spec) { s.FC, s.DRRWeights = scheme.NamePFC, []int{1, 1, 1, 1, 1, 1, 1, 1} }),
			"config for h0: drr_weights 1,1,1,1,1,1,1,1: 8 weights for 7 data queues; under fc pfc a server port's data queues are P0, P1, P2, P3, P4, P5, P7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.spec.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, c.want)
			}
			if _, err := NewPlan(c.spec); err == nil {
				t.Fatalf("NewPlan accepted what Validate rejects")
			}
		})
	}

	for _, fc := range []string{scheme.NameNone, scheme.NamePortFC, scheme.NamePFC, scheme.NamePFCStar, scheme.NameBFC} {
		if err := with(func(s *Spec) { s.FC = fc }).Validate(); err != nil {
			t.Errorf("fc %s: %v", fc, err)
		}
	}
	if err := with(func(s *Spec) { s.FC, s.N, s.K = scheme.NamePFCStar, 2, 2 }).Validate(); err != nil {
		t.Errorf("pfcstar on BCube(2,2) (priorities 3..5): %v", err)
	}
	if err := with(func(s *Spec) { s.WatchdogDetect, s.WatchdogAction = -1, "drop" }).Validate(); err != nil {
		t.Errorf("watchdog off: %v", err)
	}
	// DRR weights that fit every port reach every node's config.
	for _, fc := range []string{scheme.NamePortFC, scheme.NamePFC, scheme.NameBFC, scheme.NameIdealFQ} {
		w := with(func(s *Spec) { s.FC, s.DRRWeights = fc, []int{1, 1, 1, 3} })
		if err := w.Validate(); err != nil {
			t.Errorf("fc %s, drr weights 1,1,1,3: %v", fc, err)
			continue
		}
		p, err := NewPlan(w)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range p.Nodes {
			if !slices.Equal(n.Config.DRRWeights, []int{1, 1, 1, 3}) {
				t.Errorf("fc %s: %s's drr_weights %v", fc, n.Name, n.Config.DRRWeights)
			}
		}
	}

	t.Run("not root", func(t *testing.T) {
		asUser(t, 1000)
		if err := ok.Validate(); err == nil || !strings.Contains(err.Error(), "not root") {
			t.Fatalf("Validate() = %v, want not root", err)
		}
		if _, err := NewPlan(ok); err != nil {
			t.Fatalf("NewPlan needs no root: %v", err)
		}
	})
	t.Run("run dir in use", func(t *testing.T) {
		if err := os.Mkdir(filepath.Join(root, "btv"), 0o755); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(filepath.Join(root, "btv"))
		if err := ok.Validate(); err == nil || !strings.Contains(err.Error(), "in use") {
			t.Fatalf("Validate() = %v, want in use", err)
		}
	})
	t.Run("nothing created", func(t *testing.T) {
		ents, err := os.ReadDir(root)
		if err != nil || len(ents) != 0 {
			t.Fatalf("Validate left %v in the run root (%v)", ents, err)
		}
	})
}

func TestDefaults(t *testing.T) {
	p, err := NewPlan(Spec{N: 2, K: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Spec
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if s.Name != "bc" || s.RunRoot != "/run/bcfab" || s.MaxNodes != DefaultMaxNodes || s.HealthTimeout != time.Minute ||
		s.XDPMode != "native" || s.LevelOrder != "hash" || s.BufferBytes != 5_000_000 || s.Target.Name != "native" || s.Dilation != 1 || s.BinDir != filepath.Dir(exe) {
		t.Fatalf("defaults: %+v", s)
	}
	if p.RunDir != "/run/bcfab/bc" || p.Nodes[0].Config.Control != "/run/bcfab/bc/h0.sock" {
		t.Fatalf("paths: %s %s", p.RunDir, p.Nodes[0].Config.Control)
	}
}

// ECN marking: off unless asked; on, the model's thresholds (the papers'
// bytes at every D; the native target's counted in its RTT), each
// overridable, and every daemon gets them.
func TestECN(t *testing.T) {
	for _, c := range []struct {
		name       string
		spec       Spec
		kmin, kmax int
		pmax       float64
	}{
		{"off", Spec{}, 0, 0, 0},
		{"100M", Spec{ECN: true, RateBps: 100e6}, 100_000, 400_000, 0.2},
		{"500M", Spec{ECN: true, RateBps: 500e6}, 100_000, 400_000, 0.2},
		{"unshaped: native at 1G", Spec{ECN: true}, 125_000, 500_000, 0.2},
		{"native 100M", Spec{ECN: true, RateBps: 100e6, Target: scale.Native(100e6)}, 12_500, 50_000, 0.2},
		{"kmin override", Spec{ECN: true, RateBps: 500e6, ECNKminBytes: 30_000}, 30_000, 400_000, 0.2},
		{"overrides imply ecn", Spec{RateBps: 100e6, Target: scale.Native(100e6), ECNKmaxBytes: 80_000, ECNPmax: 0.5}, 12_500, 80_000, 0.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.spec
			s.N, s.K, s.BinDir = 2, 1, "/x"
			p, err := NewPlan(s)
			if err != nil {
				t.Fatal(err)
			}
			if on := c.kmax != 0; p.Spec.ECN != on {
				t.Errorf("spec ECN %v, want %v", p.Spec.ECN, on)
			}
			for _, n := range p.Nodes {
				port := "eth0"
				if n.Name[0] == 's' {
					port = "p0"
				}
				if e := n.Config.PortECN(port); e.KminBytes != c.kmin || e.KmaxBytes != c.kmax || e.Pmax != c.pmax {
					t.Fatalf("%s: ECN %+v, want %d/%d/%g", n.Name, e, c.kmin, c.kmax, c.pmax)
				}
			}
		})
	}
}

// Injected loss reaches every daemon's config.
func TestLossConfig(t *testing.T) {
	p, err := NewPlan(Spec{N: 2, K: 1, BinDir: "/x", LossPPM: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Nodes {
		if n.Config.LossPPM != 10_000 {
			t.Errorf("%s: loss_ppm %d", n.Name, n.Config.LossPPM)
		}
	}
}
