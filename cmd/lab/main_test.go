//go:build linux

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{nil, 2, ""},
		{[]string{"help"}, 0, ""},
		{[]string{"-h"}, 0, ""},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"up", "--bogus"}, 2, "unknown flag: --bogus (see lab up -h)"},
		{[]string{"up", "bcube", "-h"}, 0, ""},
		{[]string{"up"}, 2, "name the topology"},
		{[]string{"up", "mesh", "--n", "4", "--k", "1"}, 2, `unknown topology "mesh"`},
		{[]string{"up", "bcube", "--k", "1"}, 2, "--n and --k are required"},
		{[]string{"up", "bcube", "--n", "1", "--k", "1"}, 2, "n = 1"},
		{[]string{"up", "bcube", "-n", "1", "-k", "1"}, 2, "n = 1"},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--rate", "fast"}, 2, `invalid argument "fast" for "--rate" flag: rate "fast"`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--buffer", "1X"}, 2, `invalid argument "1X" for "--buffer" flag: size "1X"`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--dilation", "0.5"}, 2, "dilation 0.5: want 1..100000"},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--dilation", "10", "--rate", "1G"}, 2, "--dilation and --rate: give one"},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--target", "nowhere.yaml"}, 1, `--target: target "nowhere.yaml": not papers or native`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--buffer", "4G"}, 2, `invalid argument "4G" for "--buffer" flag: size "4G": at most 2 GiB`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--name", "Nope"}, 2, `lab name "Nope"`},
		{[]string{"up", "bcube", "--n", "18", "--k", "1"}, 2, "too large"},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--rate", "10M", "--rates", "16M,10M"}, 2, "--rate and --rates: give one"},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--rates", "10M"}, 2, "rates 10M: want one per level of BCube(4,1), 2"},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--rates", "10M,x"}, 2, `invalid argument "10M,x" for "--rates" flag`},
		{[]string{"up", "railonly", "--k", "2"}, 2, "up railonly: --k 2: a Rail-only NDC is BCube(n,1)"},
		{[]string{"up", "bcube", "--topology", "railonly"}, 2, "topology bcube and --topology railonly: give one"},
		{[]string{"node", "pause", "h0"}, 2, "node: want stop or start"},
		{[]string{"node", "stop"}, 2, "stop: want NODE"},
		{[]string{"down", "extra"}, 2, "unexpected arguments"},
		{[]string{"exec", "h0"}, 2, "no command"},
		{[]string{"exec", "h0", "--"}, 2, "no command"},
		{[]string{"exec"}, 2, "exec: want NODE -- CMD"},
		{[]string{"stats"}, 2, "stats: want NODE"},
		{[]string{"bench", "other"}, 2, "want datapath"},
		{[]string{"bench", "datapath", "--sizes", "60,x"}, 2, `--sizes: size "x"`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--loss", "2"}, 2, `loss "2": want a probability from 0 to 1`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--loss", "0.5ppm"}, 2, "finer than 1 ppm"},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--ecn-kmin", "1Q"}, 2, `"--ecn-kmin" flag: size "1Q"`},
		{[]string{"up", "bcube", "--n", "4", "--k", "1", "--ecn-pmax", "2"}, 2, "ecn: want"},
		{[]string{"link"}, 2, "link: want NODE PORT"},
		{[]string{"link", "h0"}, 2, "link: want NODE PORT"},
		{[]string{"link", "h0", "eth0", "--loss", "x"}, 2, `loss "x"`},
		{[]string{"link", "h0", "eth0", "--down", "--up"}, 2, "--down and --up together"},
		{[]string{"link", "h0", "eth0", "--dir", "sideways", "--down"}, 2, `link direction "sideways"`},
		{[]string{"workload", "--basis", "node"}, 2, `load basis "node"`},
		{[]string{"workload", "--cdf", "nosuchcdf"}, 2, "nosuchcdf"},
		{[]string{"workload", "--pattern", "ring"}, 2, `--pattern "ring": want ps or moe`},
		{[]string{"workload", "--pairing", "worst"}, 2, `--pairing: pairing "worst": want uniform, random or near-worst`},
		{[]string{"workload", "--incast", "8", "--incast-size", "1Q"}, 2, `"--incast-size" flag: size "1Q"`},
		{[]string{"workload", "--max-lost", "5"}, 2, `--max-lost "5"`},
		{[]string{"workload", "--duration", "-1s"}, 2, `duration "-1s"`},
		{[]string{"workload", "extra"}, 2, "unexpected arguments"},
		{[]string{"health", "extra"}, 2, "unexpected arguments"},
		{[]string{"experiment", "other"}, 2, "want list, show, run, rerun or replot"},
		{[]string{"experiment", "run"}, 2, "want NAME or -f FILE"},
		{[]string{"experiment", "run", "nosuch"}, 2, `experiment "nosuch": not a built-in one`},
		{[]string{"experiment", "run", "fct", "-f", "x.yaml"}, 2, "not both"},
		{[]string{"experiment", "run", "-f", "/nonexistent.yaml"}, 1, "no such file"},
		{[]string{"experiment", "show"}, 2, "show: want NAME"},
		{[]string{"experiment", "replot"}, 2, "replot: want DIR"},
		{[]string{"experiment", "run", "fct", "--dry-run"}, 0, ""},
		{[]string{"ns3"}, 2, "ns3: want export or compare"},
		{[]string{"ns3", "export"}, 2, "export: want -o DIR"},
		{[]string{"ns3", "export", "-o", "x", "--pattern", "ring"}, 2, `--pattern "ring": want ps or moe`},
		{[]string{"ns3", "compare", "--sim", "x"}, 2, "compare: want --sim DIR and --bcfab FILE"},
		{[]string{"ns3", "export", "extra"}, 2, "unexpected arguments"},
	} {
		var out, errOut bytes.Buffer
		code, err := run(c.args, &out, &errOut)
		if code != c.code || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("lab %q: exit %d, %v; want %d, %q", c.args, code, err, c.code, c.err)
		}
	}
}

// Every command's help is generated, and the root's lists every command
// that runs, nested ones (bench loop) included.
func TestHelp(t *testing.T) {
	var root bytes.Buffer
	if code, err := run([]string{"-h"}, &root, &bytes.Buffer{}); code != 0 || err != nil {
		t.Fatalf("lab -h: exit %d, %v", code, err)
	}
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		path := strings.Fields(c.CommandPath())[1:]
		if len(path) > 0 {
			n++
			var out bytes.Buffer
			code, err := run(append(path, "-h"), &out, &bytes.Buffer{})
			if code != 0 || err != nil {
				t.Errorf("lab %s -h: exit %d, %v", strings.Join(path, " "), code, err)
			}
			help := out.String()
			if !strings.Contains(help, "Usage:") || !strings.Contains(help, c.CommandPath()) {
				t.Errorf("lab %s -h lacks its usage:\n%s", strings.Join(path, " "), help)
			}
			c.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if !strings.Contains(help, "--"+f.Name+" ") {
					t.Errorf("lab %s -h lacks --%s", strings.Join(path, " "), f.Name)
				}
			})
			if c.Runnable() && !c.HasAvailableSubCommands() && path[0] != "help" && path[0] != "completion" &&
				!strings.Contains(root.String(), "\n  "+strings.Join(path, " ")) {
				t.Errorf("lab -h does not list %q", strings.Join(path, " "))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(&bytes.Buffer{}, &bytes.Buffer{}))
	if n < 16 {
		t.Errorf("walked %d commands", n)
	}
	for _, want := range []string{"bench loop", "bench hol", "completion bash|zsh|fish", "Exit status: 0 done, 1 an error, 2 bad usage (a command, flag, argument"} {
		if !strings.Contains(root.String(), want) {
			t.Errorf("lab -h lacks %q", want)
		}
	}
}

// lab completion SHELL writes a script the shell reads.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		var out bytes.Buffer
		if code, err := run([]string{"completion", shell}, &out, &bytes.Buffer{}); code != 0 || err != nil || !strings.Contains(out.String(), "lab") {
			t.Errorf("lab completion %s: exit %d, %v, %d bytes", shell, code, err, out.Len())
		}
		if shell == "bash" {
			if _, err := exec.LookPath("bash"); err == nil {
				cmd := exec.Command("bash", "-n")
				cmd.Stdin = &out
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("bash -n of the completion script: %v\n%s", err, b)
				}
			}
		}
	}
	// Flags and their values complete from the commands themselves.
	var out bytes.Buffer
	run([]string{"__complete", "up", "bcube", "--fc", ""}, &out, &bytes.Buffer{})
	for _, want := range []string{scheme.NamePortFC, scheme.NamePFCStar, scheme.NameBFC} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("completion of --fc lacks %s:\n%s", want, out.String())
		}
	}
	out.Reset()
	run([]string{"__complete", "bench", ""}, &out, &bytes.Buffer{})
	if !strings.Contains(out.String(), "loop") {
		t.Errorf("completion of bench lacks loop:\n%s", out.String())
	}
}

// The CLI end to end with the lab package's fake daemon.
func TestCLI(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "swd"), "../../lab/internal/fakeproc").CombinedOutput(); err != nil {
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

	code, out, err := lab("up", "bcube", "--n", "2", "--k", "1", "--bin-dir", bin, "--rate", "2.5G", "--buffer", "512KiB", "--loss", "1%", "--ecn", "--dscp-map", "26=3,46=5", "--workers", "0",
		"--probe-interval", "0") // the fake daemons do not probe their links
	if code != 0 {
		t.Fatalf("up: %d %v", code, err)
	}
	for _, want := range []string{"BCube(2,1) up in", "8: " + name + "-h0", "4 hostd + 4 swd", "rate 2.5 Gbit/s", "buffer 512 KiB",
		"loss        1% injected on every fabric link", "ecn         marking at every egress: K_min 100000 B, K_max 400000 B, P_max 0.2",
		"emulates    the papers' network (100 Gb/s, 1µs links, 5 MB buffers) at D = 40",
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
		if code != 0 || strings.Count(out, "\n") < 10 || !strings.HasPrefix(out, "id,src,dst,size,start_ns,kind,group,phase,after\n") {
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
	if code, out, err = lab("list", "--json"); code != 0 || !strings.Contains(out, `"name": "`+name+`"`) {
		t.Errorf("list --json: %d %v\n%s", code, err, out)
	}
	// lab inspect prints the file that brings the same lab up again.
	if code, out, err = lab("inspect"); code != 0 {
		t.Errorf("inspect: %d %v\n%s", code, err, out)
	} else {
		checkInspect(t, root, name, out)
	}
	svg := filepath.Join(t.TempDir(), "fabric.svg")
	if code, out, err = lab("graph", "--svg", svg); code != 0 {
		t.Errorf("graph: %d %v\n%s", code, err, out)
	} else if b, _ := os.ReadFile(svg); !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("loss 1%")) {
		t.Errorf("graph --svg wrote %d bytes", len(b))
	}
	if code, out, err = lab("down"); code != 0 || !strings.Contains(out, "lab "+name+" is down") {
		t.Errorf("down: %d %v\n%s", code, err, out)
	}
	if code, _, err = lab("status"); code != 1 || err == nil {
		t.Errorf("status after down: %d %v", code, err)
	}
}

// checkInspect checks that file, lab inspect's output, brings up the lab
// name under root is.
func checkInspect(t *testing.T, root, name, file string) {
	t.Helper()
	f, err := lab.ParseFile([]byte(file))
	if err != nil {
		t.Fatalf("inspect's file: %v\n%s", err, file)
	}
	got, err := f.Check()
	if err != nil {
		t.Fatalf("inspect's file: %v\n%s", err, file)
	}
	st, err := lab.LoadState(root, name)
	if err != nil {
		t.Fatal(err)
	}
	got.RunRoot = root // run-root is where the file is used, not what it is
	p1, err1 := lab.NewPlan(got)
	p2, err2 := lab.NewPlan(st.Spec)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(p1.Spec, p2.Spec) {
		t.Errorf("inspect's file\n%s\ngives %+v (%v)\nthe lab is %+v (%v)", file, p1, err1, p2, err2)
	}
}

func TestDefaultRate(t *testing.T) {
	if r, err := lab.ParseRate(defaultRate); err != nil || r != config.DefaultRateBps {
		t.Fatalf("--rate default %q = %d, config.DefaultRateBps = %d", defaultRate, r, config.DefaultRateBps)
	}
}

// upSpec is the spec lab up would bring up for args (after "up"), without
// bringing anything up; defaults applied as NewPlan applies them.
func upSpec(t *testing.T, args ...string) lab.Spec {
	t.Helper()
	cmd := upCmd()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	spec, err := upFlagsOf[cmd].spec(cmd, cmd.Flags().Args())
	if err != nil {
		t.Fatalf("up %q: %v", args, err)
	}
	p, err := lab.NewPlan(spec)
	if err != nil {
		t.Fatalf("up %q: %v", args, err)
	}
	return p.Spec
}

// A lab file and the flags it spells out are the same lab; flags given
// with a file override it.
func TestUpFile(t *testing.T) {
	file := upSpec(t, "-f", "../../examples/bcube41-portfc.yaml")
	flags := upSpec(t, "bcube", "--n", "4", "--k", "1", "--name", "pf", "--rate", "100M", "--fc", "portfc", "--ecn")
	if !reflect.DeepEqual(file, flags) {
		t.Errorf("lab up -f examples/bcube41-portfc.yaml:\n%+v\nthe same flags:\n%+v", file, flags)
	}
	over := upSpec(t, "-f", "../../examples/bcube41-portfc.yaml", "--name", "pf2", "--rate", "200M", "--dscp-map", "26=3,46=5")
	want := flags
	want.Name, want.RateBps, want.DSCPMap = "pf2", 200e6, config.DSCPMap{26: 3, 46: 5}
	want.Dilation = 500 // 100 Gb/s over 200 Mb/s
	if !reflect.DeepEqual(over, want) {
		t.Errorf("file with flags:\n%+v\nwant\n%+v", over, want)
	}
	// Every example is a valid lab.
	examples, _ := filepath.Glob("../../examples/*.yaml")
	if len(examples) < 3 {
		t.Errorf("%d examples", len(examples))
	}
	for _, e := range examples {
		upSpec(t, "-f", e)
	}
}

// lab up railonly is BCube(4,1) at the preset's level rates, the same lab
// as the bcube flags and the lab file that spell it out; n and the rates
// can be changed.
func TestUpRailOnly(t *testing.T) {
	preset := upSpec(t, "railonly", "--name", "ro", "--fc", "portfc")
	flags := upSpec(t, "bcube", "--n", "4", "--k", "1", "--rates", "32M,20M", "--name", "ro", "--fc", "portfc")
	file := upSpec(t, "-f", "../../examples/railonly41.yaml")
	if !reflect.DeepEqual(preset, flags) || !reflect.DeepEqual(preset, file) {
		t.Errorf("lab up railonly:\n%+v\nthe same flags:\n%+v\nthe example file:\n%+v", preset, flags, file)
	}
	if s := upSpec(t, "--topology", "railonly", "--n", "3", "--rates", "160M,100M"); s.N != 3 || s.K != 1 || !reflect.DeepEqual(s.Rates, []uint64{160e6, 100e6}) {
		t.Errorf("railonly --n 3 --rates 160M,100M: BCube(%d,%d) at %v", s.N, s.K, s.Rates)
	}
	if s := upSpec(t, "-f", "../../examples/railonly41.yaml", "--rate", "10M"); s.Rates != nil || s.RateBps != 10e6 {
		t.Errorf("file with --rate 10M: rates %v, rate %d", s.Rates, s.RateBps)
	}
}

// A malformed lab file gets one error naming its line, and nothing is
// created.
func TestUpBadFile(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: cbad\ntopology:\n  kind: bcube\n  n: 2\n  k: 1\nrate: 100M\nfc: portfc\nbuffer: lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, err := run([]string{"up", "-f", bad, "--run-root", root}, &bytes.Buffer{}, &bytes.Buffer{})
	if code != 2 || err == nil || err.Error() != bad+`:8: buffer: size "lots": want bytes like 1500, 64K, 1M (1024-based), 4MiB or 1MB (1000-based)` {
		t.Errorf("up -f bad.yaml: exit %d, %v", code, err)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("run root holds %d entries after a bad file", len(ents))
	}
	if ns, _ := filepath.Glob("/run/netns/cbad-*"); len(ns) != 0 {
		t.Errorf("namespaces %v after a bad file", ns)
	}
	code, err = run([]string{"up", "-f", bad, "bcube"}, &bytes.Buffer{}, &bytes.Buffer{})
	if code != 2 || err == nil || !strings.Contains(err.Error(), "the topology is the file's") {
		t.Errorf("up -f with a topology: exit %d, %v", code, err)
	}
}

// lab up's summary of a Rail-only lab gives each level's rate and, with
// ECN, each level's marking, scaled to its rate.
func TestPrintUpRates(t *testing.T) {
	spec := upSpec(t, "railonly", "--name", "ro", "--ecn")
	p, err := lab.NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printUp(&out, p, &lab.State{RunDir: "/run/bcfab/ro"}, time.Second)
	for _, want := range []string{"rates 32 Mbit/s (level 0), 20 Mbit/s (level 1)",
		"ecn         marking at every egress: level 0 K_min 160000 B, K_max 640000 B, P_max 0.2; level 1 K_min 100000 B, K_max 400000 B, P_max 0.2", "emulates    the papers' network (100 Gb/s, 1µs links, 5 MB buffers) at D = 5000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lab up railonly --ecn lacks %q:\n%s", want, out.String())
		}
	}
}

// --ci ici and ci are the schemes of congestion isolation over PFC, with
// or without --fc pfc; their settings reach every node's config, and a
// lab file says the same with its ci keys.
func TestUpCI(t *testing.T) {
	for _, args := range [][]string{{"--ci", "ici"}, {"--ci", "ici", "--fc", "pfc"}} {
		s := upSpec(t, append([]string{"bcube", "--n", "2", "--k", "1", "--name", "ic1"}, args...)...)
		if s.FC != scheme.NameICI {
			t.Errorf("%q: fc %q", args, s.FC)
		}
	}
	s := upSpec(t, "bcube", "--n", "2", "--k", "1", "--name", "ic1", "--ci", "ci", "--ci-table", "4",
		"--ci-detect", "30K", "--ci-kmin", "40K", "--ci-kmax", "90K", "--ci-residency", "50ms")
	want := config.CI{CITable: 4, CIDetect: 30 << 10, CIKmin: 40 << 10, CIKmax: 90 << 10, CIResidency: config.Duration(50 * time.Millisecond)}
	if s.FC != scheme.NameCI || s.CI != want {
		t.Errorf("fc %q, %+v; want ci, %+v", s.FC, s.CI, want)
	}
	if s := upSpec(t, "bcube", "--n", "2", "--k", "1", "--name", "ic1", "--ci", "none", "--fc", "bfc"); s.FC != scheme.NameBFC {
		t.Errorf("--ci none: fc %q", s.FC)
	}
	f := filepath.Join(t.TempDir(), "ci.yaml")
	if err := os.WriteFile(f, []byte("name: ic2\ntopology:\n  kind: bcube\n  n: 2\n  k: 1\nci: ici\nci-table: 4\nci-detect: 30K\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := upSpec(t, "-f", f); s.FC != scheme.NameICI || s.CITable != 4 || s.CIDetect != 30<<10 {
		t.Errorf("file: fc %q, %+v", s.FC, s.CI)
	}
	for _, args := range [][]string{{"--ci", "ici", "--fc", "portfc"}, {"--ci", "recn"}} {
		cmd := upCmd()
		if err := cmd.ParseFlags(append([]string{"bcube", "--n", "2", "--k", "1"}, args...)); err != nil {
			t.Fatal(err)
		}
		if _, err := upFlagsOf[cmd].spec(cmd, cmd.Flags().Args()); err == nil || !strings.Contains(err.Error(), "--ci") {
			t.Errorf("%q: %v", args, err)
		}
	}
}
