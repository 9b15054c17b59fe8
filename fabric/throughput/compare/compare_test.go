package compare

import (
	"strings"
	"testing"

	"github.com/bcfab/bcfab/fabric/fcplus"
)

// A small comparison runs end to end, the approximation agrees with the
// LP row for row, and no deadlock-free routing's path turns more than its
// priorities allow.
func TestRunSmall(t *testing.T) {
	c := Config{ToRs: 12, Ports: 6, Hosts: 3, Virtual: []int{3}, FCLayers: []int{4}, Seed: 1, K: 4,
		Routings: fcplus.Routings, Traffics: Traffics, Eps: 0.05}
	rows, err := Run(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4*3 {
		t.Fatalf("%d rows, want 12", len(rows))
	}
	c.Exact = true
	exact, err := Run(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		e := exact[i]
		if r.Lambda > e.Lambda*(1+1e-6) || r.Lambda < (1-c.Eps)*e.Lambda {
			t.Errorf("%s %s %s: approximate %.4f, LP %.4f", r.Fabric, r.Routing, r.Traffic, r.Lambda, e.Lambda)
		}
		if r.Routing != fcplus.KSP && r.TurnsMax > r.Routing.Lossless()-1 {
			t.Errorf("%s %s: a path with %d turns", r.Fabric, r.Routing, r.TurnsMax)
		}
	}
	var b strings.Builder
	Markdown(&b, rows)
	if strings.Count(b.String(), "\n") != len(rows)+2 {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestConfigRejects(t *testing.T) {
	ok := Config{ToRs: 12, Ports: 6, Hosts: 3, Virtual: []int{3}, K: 4, Routings: fcplus.Routings, Traffics: Traffics, Eps: 0.05}
	for name, mod := range map[string]func(*Config){
		"k":       func(c *Config) { c.K = 0 },
		"hosts":   func(c *Config) { c.Hosts = 0 },
		"eps":     func(c *Config) { c.Eps = 1 },
		"traffic": func(c *Config) { c.Traffics = []string{"incast"} },
		"nothing": func(c *Config) { c.Routings = nil },
	} {
		c := ok
		mod(&c)
		if _, err := Run(c, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := ok
	c.Virtual = []int{5}
	if _, err := Run(c, nil); err == nil || !strings.Contains(err.Error(), "virtual") {
		t.Errorf("a bad virtual count: %v", err)
	}
}
