//go:build linux

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/config"
	"github.com/bcfab/bcfab/lab"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args      []string
		max       int
		pos, rest []string
		name      string
	}{
		{[]string{"bcube", "--name", "x"}, -1, []string{"bcube"}, nil, "x"},
		{[]string{"--name", "x", "bcube"}, -1, []string{"bcube"}, nil, "x"},
		{[]string{"--name", "x", "h0", "--", "ping", "-c1", "198.18.0.1"}, 1, []string{"h0"}, []string{"ping", "-c1", "198.18.0.1"}, "x"},
		{[]string{"h0", "ping", "-c1"}, 1, []string{"h0"}, []string{"ping", "-c1"}, "bc"},
		{[]string{"h0", "--", "sh", "--", "-c"}, 1, []string{"h0"}, []string{"sh", "--", "-c"}, "bc"},
		{[]string{"--", "--name"}, -1, nil, []string{"--name"}, "bc"},
	} {
		fs, cm := newFlags("test", "", &bytes.Buffer{})
		pos, rest, err := parse(fs, c.args, c.max)
		if err != nil || !slices.Equal(pos, c.pos) || !slices.Equal(rest, c.rest) || cm.name != c.name {
			t.Errorf("parse(%q) = %q %q %v name %s; want %q %q %s", c.args, pos, rest, err, cm.name, c.pos, c.rest, c.name)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{nil, 2, ""},
		{[]string{"help"}, 0, ""},
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"up", "--bogus"}, 2, ""},
		{[]string{"up", "bcube", "-h"}, 0, ""},
		{[]string{"up"}, 1, "name the topology"},
		{[]string{"up", "mesh", "--n", "4", "--k", "1"}, 1, `unknown topology "mesh"`},
		{[]string{"up", "bcube", "--k", "1"}, 1, "--n and --k are required"},
		{[]string{"up", "bcube", "--n", "1", "--k", "1"}, 1, "n = 1"},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--rate", "fast"}, 1, `rate "fast"`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--buffer", "1M"}, 1, `size "1M"`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--name", "Nope"}, 1, `lab name "Nope"`},
		{[]string{"up", "bcube", "--n", "18", "--k", "1"}, 1, "too large"},
		{[]string{"down", "extra"}, 1, "unexpected arguments"},
		{[]string{"exec", "h0"}, 1, "no command"},
		{[]string{"exec"}, 2, ""},
		{[]string{"stats"}, 2, ""},
		{[]string{"bench", "other"}, 1, "want datapath"},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--loss", "2"}, 1, `loss "2": want a probability from 0 to 1`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--loss", "0.5ppm"}, 1, "finer than 1 ppm"},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--ecn-kmin", "1M"}, 1, `--ecn-kmin: size "1M"`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--ecn-pmax", "2"}, 1, "ecn: want"},
		{[]string{"link"}, 2, ""},
		{[]string{"link", "h0"}, 2, ""},
		{[]string{"link", "h0", "eth0", "--loss", "x"}, 1, `loss "x"`},
		{[]string{"link", "h0", "eth0", "--down", "--up"}, 1, "--down and --up together"},
		{[]string{"link", "h0", "eth0", "--dir", "sideways", "--down"}, 1, `link direction "sideways"`},
		{[]string{"workload", "--basis", "node"}, 1, `load basis "node"`},
		{[]string{"workload", "--cdf", "nosuchcdf"}, 1, "nosuchcdf"},
		{[]string{"workload", "--pattern", "ring"}, 1, `--pattern "ring": want ps or moe`},
		{[]string{"workload", "--incast", "8", "--incast-size", "1M"}, 1, `--incast-size: size "1M"`},
		{[]string{"workload", "--max-lost", "5"}, 1, `--max-lost "5"`},
		{[]string{"workload", "extra"}, 1, "unexpected arguments"},
		{[]string{"health", "extra"}, 1, "unexpected arguments"},
	} {
		var out, errOut bytes.Buffer
		code, err := run(c.args, &out, &errOut)
		if code != c.code || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("lab %q: exit %d, %v; want %d, %q", c.args, code, err, c.code, c.err)
		}
	}
}

// The CLI end to end with the lab package's fake daemon.
func TestCLI(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "swd"), "../../lab/internal/fakedaemon").CombinedOutput(); err != nil {
		t.Fatalf("build fake daemon: %v\n%s", err, out)
	}
	if err := os.Link(filepath.Join(bin, "swd"), filepath.Join(bin, "hostd")); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("bt%06x", rand.IntN(1<<24))
	root := t.TempDir()
	lab := func(args ...string) (int, string, error) {
		var out bytes.Buffer
		args = append(args[:1:1], append([]string{"--name", name, "--run-root", root}, args[1:]...)...)
		code, err := run(args, &out, &bytes.Buffer{})
		return code, out.String(), err
	}
	t.Cleanup(func() { lab("down") })

	code, out, err := lab("up", "bcube", "--n", "2", "--k", "1", "--bin-dir", bin, "--rate", "2.5G", "--buffer", "512KiB", "--loss", "1%", "--ecn", "--workers", "0")
	if code != 0 {
		t.Fatalf("up: %d %v", code, err)
	}
	for _, want := range []string{"BCube(2,1) up in", "8: " + name + "-h0", "4 hostd + 4 swd", "rate 2.5 Gbit/s", "buffer 512 KiB",
		"loss        1% injected on every fabric link", "ecn         marking at every egress: K_min 312500 B, K_max 1250000 B, P_max 0.2",
		"ip netns exec " + name + "-h0 ping -c3 198.18.0.3", "lab down --name " + name} {
		if !strings.Contains(out, want) {
			t.Errorf("up output lacks %q:\n%s", want, out)
		}
	}
	if code, out, err = lab("status"); code != 0 || !strings.Contains(out, "all 8 nodes up") {
		t.Errorf("status: %d %v\n%s", code, err, out)
	}
	if code, out, err = lab("link", "h1", "eth0", "--loss", "0"); code != 0 ||
		!strings.Contains(out, "h1 eth0 (from s0.0 p1): loss none, up  (changed)\ns0.0 p1 (from h1 eth0): loss none, up  (changed)") {
		t.Errorf("link: %d %v\n%s", code, err, out)
	}
	if code, out, err = lab("link", "s1.1", "p0", "--down", "--dir", "rx"); code != 0 ||
		!strings.Contains(out, "s1.1 p0 (from h1 eth1): loss 1%, down  (changed)\nh1 eth1 (from s1.1 p0): loss 1%, up\n") {
		t.Errorf("link --down: %d %v\n%s", code, err, out)
	}
	if code, out, err = lab("status"); code != 0 || !strings.Contains(out, "INJECTED") || !strings.Contains(out, "impaired: every fabric port loses 1% of what it receives (lab up --loss), but 3 ports now:") ||
		!strings.Contains(out, "s1.1 p0: loss 1%, down, 0 dropped") {
		t.Errorf("status with loss: %d %v\n%s", code, err, out)
	}
	if code, out, err = lab("stats", "s1.1"); code != 0 || !strings.Contains(out, "RX LOSS") || !strings.Contains(out, "down") {
		t.Errorf("stats with loss: %d %v\n%s", code, err, out)
	}
	if code, out, err = lab("stats", "s1.1"); code != 0 || !strings.Contains(out, "s1.1 (swd") || !strings.Contains(out, "p1") {
		t.Errorf("stats: %d %v\n%s", code, err, out)
	}
	if code, out, err = lab("stats", "--json", "h2"); code != 0 || !strings.Contains(out, `"node": "h2"`) {
		t.Errorf("stats --json: %d %v\n%s", code, err, out)
	}
	if code, _, err = lab("exec", "h1", "--", "sh", "-c", "exit 3"); code != 3 || err != nil {
		t.Errorf("exec exit 3: %d %v", code, err)
	}
	// The same seed gives the same schedule, another seed another one.
	dry := func(seed string) string {
		code, out, err := lab("workload", "--dry-run", "--cdf", "hadoop", "--load", "0.4", "--incast", "2", "--duration", "200ms", "--seed", seed)
		if code != 0 || strings.Count(out, "\n") < 10 || !strings.HasPrefix(out, "id,src,dst,size,start_ns,kind,group\n") {
			t.Fatalf("workload --dry-run: %d %v\n%s", code, err, out)
		}
		return out
	}
	if a, b, c := dry("3"), dry("3"), dry("4"); a != b || a == c {
		t.Errorf("schedules of seeds 3, 3, 4: same %v, %v (want true, false)", a == b, a == c)
	}
	if code, out, err = lab("health"); code != 0 || !strings.Contains(out, "emulation health: valid") || !strings.Contains(out, "rings: 0 frames dropped") {
		t.Errorf("health: %d %v\n%s", code, err, out)
	}
	if code, out, err = lab("list"); code != 0 || !strings.Contains(out, name+"  BCube(2,1)  up") {
		t.Errorf("list: %d %v\n%s", code, err, out)
	}
	if code, out, err = lab("down"); code != 0 || !strings.Contains(out, "lab "+name+" is down") {
		t.Errorf("down: %d %v\n%s", code, err, out)
	}
	if code, _, err = lab("status"); code != 1 || err == nil {
		t.Errorf("status after down: %d %v", code, err)
	}
}

func TestDefaultRate(t *testing.T) {
	if r, err := lab.ParseRate(defaultRate); err != nil || r != config.DefaultRateBps {
		t.Fatalf("--rate default %q = %d, config.DefaultRateBps = %d", defaultRate, r, config.DefaultRateBps)
	}
}
