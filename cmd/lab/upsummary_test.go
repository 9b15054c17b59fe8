//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/lab"
)

// lab up's summary says what the lab is: its scheme with the thresholds
// the nodes were configured with, ECN, the impaired cables, and what the
// machine can do at its rates.
func TestUpSummary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "l.yaml")
	if err := os.WriteFile(file, []byte(`name: sm
topology:
  kind: bcube
  n: 2
  k: 1
  links:
    - endpoints: ["h1:eth0"]
      loss: 1%
    - endpoints: ["h3:eth1"]
      down: true
rate: 100M
fc: pfc
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"bcube", "--n", "4", "--k", "1", "--fc", "portfc", "--rate", "100M"}, []string{
			"flow ctl    portfc: switch egress X_off 150000 B (6 BDP), X_on 100000 B (4 BDP) per class (A, B); servers' relay queue strict",
			"ecn         off", "cables      all alike", "capacity    100M links: this machine keeps up with a few flows; loaded fabrics were valid up to 50M"}},
		{[]string{"bcube", "--n", "4", "--k", "1", "--fc", "portfc", "--rate", "20M", "--xoff", "60000", "--xon", "30000", "--ecn"}, []string{
			"X_off 60000 B (", "X_on 30000 B (", "ecn         marking at every egress: K_min"}},
		{[]string{"-f", file}, []string{
			"flow ctl    pfc: every ingress port and priority X_off 150000 B (6 BDP), X_on 100000 B (4 BDP)",
			"cables      2 impaired: h1:eth0-s0.0:p1 loss 1% each way; h3:eth1-s1.1:p1 down"}},
		{[]string{"bcube", "--n", "2", "--k", "1", "--fc", "bfc", "--rate", "10M"}, []string{"flow ctl    bfc: 32 queues per port"}},
		{[]string{"bcube", "--n", "2", "--k", "1", "--rate", "10M"}, []string{"flow ctl    none: no pauses"}},
		// DCTCP marks at one threshold K: 100 KB at 100 Gb/s is 4 one-hop
		// BDPs, 100000 B at any rate.
		{[]string{"bcube", "--n", "2", "--k", "1", "--rate", "20M", "--cc", "dctcp"}, []string{"cc          dctcp",
			"ecn         marking at every egress: K_min 100000 B, K_max 100000 B, P_max 1"}},
		{[]string{"bcube", "--n", "2", "--k", "1", "--rate", "20M", "--cc", "hpcc"}, []string{"cc          hpcc", "ecn         off"}},
	} {
		spec := upSpec(t, c.args...)
		p, err := lab.NewPlan(spec)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		printUp(&out, p, &lab.State{RunDir: "/run/bcfab/x"}, time.Second)
		if testing.Verbose() {
			t.Log(out.String())
		}
		for _, want := range c.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("lab up %q lacks %q:\n%s", c.args, want, out.String())
			}
		}
		if fast := strings.Contains(out.String(), "capacity "); fast != (spec.RateBps > 50e6) {
			t.Errorf("lab up %q: capacity line %v at %d bit/s", c.args, fast, spec.RateBps)
		}
	}
}
