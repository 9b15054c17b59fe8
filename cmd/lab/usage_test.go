//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every kind of bad command line exits 2 with one line that says what
// is wrong, before anything is built or any lab is reached: no root
// needed. What only running finds (a lab that does not exist, a file
// that cannot be read) exits 1.
func TestUsageExits(t *testing.T) {
	root := t.TempDir() // no lab in it
	dir := t.TempDir()
	badKey := filepath.Join(dir, "key.yaml")
	if err := os.WriteFile(badKey, []byte("name: hbx\ntopology: {kind: bcube, n: 2, k: 1}\nrat: 1G\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	up := func(a ...string) []string {
		return append(append([]string{"up"}, a...), "--name", "hbx", "--run-root", root)
	}
	at := func(a ...string) []string { return append(a, "--name", "hbx", "--run-root", root) }
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{up("bcube", "--n", "4"), 2, "up bcube: --n and --k are required"},
		{up("torus", "--n", "4", "--k", "1"), 2, `unknown topology "torus"`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--name", "Bad/Name", "--run-root", root}, 2, `lab name "Bad/Name"`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--name", "muchtoolonganame", "--run-root", root}, 2, `lab name "muchtoolonganame"`},
		{up(), 2, "up: name the topology"},
		{[]string{"down", "--name", "Bad/x", "--run-root", root}, 2, `invalid argument "Bad/x" for "--name" flag: lab name "Bad/x"`},
		{[]string{"gen", "h0", "h1", "--name", "h0-x"}, 2, `lab name "h0-x": want a lowercase letter`},
		{up("bcube", "--n", "1", "--k", "1"), 2, "n = 1: BCube needs n >= 2"},
		{up("bcube", "--n", "4", "--k", "1", "--max-nodes", "3"), 2, "BCube(4,1) is too large"},
		{up("bcube", "--n", "4", "--k", "1", "--rate", "1X"), 2, `invalid argument "1X" for "--rate" flag`},
		{up("bcube", "--n", "4", "--k", "1", "--rate", "1G", "--rates", "1G,1G"), 2, "--rate and --rates: give one"},
		{up("bcube", "--n", "4", "--k", "1", "--rate", "auto", "--capacity", filepath.Join(dir, "none.json")), 1, "capacity was not measured (lab calibrate)"},
		{at("calibrate", "--duration", "1s"), 2, "--duration 1s: want at least 5s"},
		{up("bcube", "--n", "4", "--k", "1", "--fc", "portf"), 2, `--fc "portf": want none, portfc`},
		{up("bcube", "--n", "4", "--k", "1", "--bogus"), 2, "unknown flag: --bogus"},
		{[]string{"up", "-f", badKey}, 2, "key.yaml:3: unknown key rat"},
		{at("list", "extra"), 2, `list: unexpected arguments ["extra"]`},
		{at("status", "extra"), 2, `status: unexpected arguments ["extra"]`},
		{at("gen", "h0"), 2, "gen: want SRC DST, got 1 arguments"},
		{at("capture"), 2, "capture: want NODE PORT"},
		{[]string{"exec", "--name", "hbx", "--run-root", root, "h0"}, 2, "exec h0: no command"},
		{[]string{"node"}, 2, "node: want stop or start"},
		{at("node", "stop"), 2, "stop: want NODE"},
		{[]string{"bench"}, 2, "bench: want datapath, fairness, hol or loop"},
		{[]string{"experiment"}, 2, "experiment: want list, show, run, rerun or replot"},
		{[]string{"experiment", "run", "loop", "fct"}, 2, "run: want at most NAME, got 2 arguments"},
		{at("workload", "--cdf", "nosuch", "--load", "0.5"), 2, `cdf "nosuch": neither a built-in`},
		{at("workload", "--pattern", "ring"), 2, `--pattern "ring": want ps or moe`},
		{at("health", "--max-lost", "5"), 2, `--max-lost "5": want a share`},
		{at("workload", "--progress", "fancy"), 2, `invalid argument "fancy" for "--progress" flag: progress "fancy": want auto, bar, plain, none`},
		{[]string{"experiment", "run", "loop", "--progress", "bars"}, 2, `progress "bars": want auto, bar, plain, none`},
		{at("metrics", "--listen", "0.0.0.0:9464"), 2, "not a loopback address"},
		{at("link", "h0", "eth0", "--down", "--up"), 2, "link: --down and --up together"},
		{[]string{"model", "--dilation", "5", "--rate", "1G"}, 2, "--dilation and --rate: give one"},
		// Run time: exit 1.
		{[]string{"up", "-f", filepath.Join(dir, "nosuch.yaml")}, 1, "nosuch.yaml: no such file or directory"},
		{at("status"), 1, "lab hbx: no such lab"},
	} {
		var out, errw bytes.Buffer
		code, err := run(c.args, &out, &errw)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if code != c.code || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || errw.Len() > 0 || internals.MatchString(msg) {
			t.Errorf("lab %s: exit %d, %q (stderr %q); want exit %d, one line with %q", strings.Join(c.args, " "), code, msg, errw.String(), c.code, c.want)
		}
		if c.code == 2 && !strings.Contains(msg, " -h") && !strings.HasPrefix(msg, badKey) {
			t.Errorf("lab %s: %q does not point to the help", strings.Join(c.args, " "), msg)
		}
	}
	if ents, _ := os.ReadDir(root); len(ents) > 0 {
		t.Errorf("bad command lines created %v", ents)
	}
}

// lab --version prints the build on one line.
func TestVersion(t *testing.T) {
	var out bytes.Buffer
	code, err := run([]string{"--version"}, &out, &bytes.Buffer{})
	if code != 0 || err != nil || !strings.HasPrefix(out.String(), "lab ") || strings.Count(out.String(), "\n") != 1 || !strings.Contains(out.String(), " go1.") {
		t.Errorf("lab --version: exit %d, %v, %q", code, err, out.String())
	}
}
