//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/lab/ns3"
	"github.com/bcfab/bcfab/lab/workload"
)

// incastCSV is docs/VALIDATION.md's hand-made schedule: h1..h8 each
// send 15.625 MB to h0 at 0.
func incastCSV() string {
	var b strings.Builder
	b.WriteString("id,src,dst,size,start_ns,kind,group,phase,after\n")
	for i := range 8 {
		fmt.Fprintf(&b, "%d,%d,0,15625000,0,incast,1,0,0\n", i, i+1)
	}
	return b.String()
}

// writeTemp writes text to name in a new directory.
func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lab ns3 export --flows writes the file's flows, and only them, into
// the sim's flow.txt and flows.csv, without root or a lab up.
func TestFlowsNS3Export(t *testing.T) {
	csv := writeTemp(t, "f.csv", incastCSV())
	out := filepath.Join(t.TempDir(), "export")
	var stdout bytes.Buffer
	args := []string{"ns3", "export", "-f", "../../examples/bcube41-portfc.yaml", "--flows", csv, "-o", out}
	if code, err := run(args, &stdout, &bytes.Buffer{}); code != 0 || err != nil {
		t.Fatalf("lab %s: exit %d, %v", strings.Join(args, " "), code, err)
	}
	if !strings.Contains(stdout.String(), "BCube(4,1) as 40 sim nodes (16 relays)") || !strings.Contains(stdout.String(), "; 8 flows of ") {
		t.Errorf("lab ns3 export printed %q", stdout.String())
	}
	// flow.txt: by start and id, priority group 3, port 100, at 2 s of
	// the sim's clock.
	want := "8\n"
	for i := 1; i <= 8; i++ {
		want += fmt.Sprintf("%d 0 3 100 15625000 2.000000000\n", i)
	}
	if b, err := os.ReadFile(filepath.Join(out, "flow.txt")); err != nil || string(b) != want {
		t.Errorf("flow.txt (%v):\n%s\nwant\n%s", err, b, want)
	}
	f, err := os.Open(filepath.Join(out, ns3.FlowsFile))
	if err != nil {
		t.Fatal(err)
	}
	sched, err := ns3.ReadFlows(f)
	f.Close()
	if err != nil || len(sched) != 8 {
		t.Fatalf("flows.csv: %d flows, %v", len(sched), err)
	}
	for i, fl := range sched {
		if fl.ID != i || fl.Src != i+1 || fl.Dst != 0 || fl.Size != 15_625_000 || fl.Start != 0 || fl.Kind != workload.KindIncast || fl.Group != 1 {
			t.Errorf("flows.csv's flow %d: %+v", i, fl)
		}
	}
}

// --flows is the whole schedule: every flag of a generated one the user
// gave is refused in one line, --load 0 and --duration are not; the
// file's errors name the file and line, on their own or found on the
// lab (its servers, the window).
func TestFlowsErrors(t *testing.T) {
	good := writeTemp(t, "f.csv", incastCSV())
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const head = "id,src,dst,size,start_ns,kind,group,phase,after\n"
	cols := file("cols.csv", head+"0,1,0,1000,0,incast,1,0,0\n1,2,0,1000,0\n")
	size := file("size.csv", head+"0,1,0,15.6MB,0,incast,1,0,0\n")
	kind := file("kind.csv", head+"0,1,0,1000,0,elephant,1,0,0\n")
	far := file("far.csv", head+"0,1,0,1000,0,incast,1,0,0\n# h16 is not in BCube(4,1)\n1,16,0,1000,0,incast,1,0,0\n")
	late := file("late.csv", head+"0,1,0,1000,0,incast,1,0,0\n1,2,0,1000,2000000000,incast,1,0,0\n")
	waits := file("waits.csv", head+"0,1,0,1000,0,ps,1,0,0\n1,0,1,1000,0,ps,1,1,1\n")
	empty := file("empty.csv", head)
	labFile := "../../examples/bcube41-portfc.yaml"
	export := func(args ...string) []string {
		return append([]string{"ns3", "export", "-f", labFile, "-o", filepath.Join(t.TempDir(), "x")}, args...)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{export("--flows", good, "--incast", "8"), 2, "--flows and --incast: the file is the whole schedule, give one"},
		{export("--flows", good, "--load", "0.5", "--seed", "2", "--pattern", "ps"), 2, "--flows and --load, --seed, --pattern: the file is the whole schedule, give one"},
		{export("--flows", good, "--cdf", "hadoop"), 2, "--flows and --cdf:"},
		{[]string{"workload", "--flows", good, "--incast", "8"}, 2, "--flows and --incast:"},
		{[]string{"workload", "--flows", good, "--pattern", "moe", "--moe-topk", "1"}, 2, "--flows and --pattern, --moe-topk:"},
		{export("--flows", filepath.Join(dir, "nosuch.csv")), 1, "no such file"},
		{export("--flows", cols), 2, cols + ":3: 5 columns, want 9"},
		{export("--flows", size), 2, size + `:2: size "15.6MB": invalid syntax`},
		{export("--flows", kind), 2, kind + `:2: flow kind "elephant": want poisson, incast, ps, moe or long`},
		{export("--flows", empty), 2, empty + ": no flows"},
		{export("--flows", far), 2, far + ":4: flow 1: h16 -> h0, want servers h0..h15"},
		{export("--flows", late, "--duration", "1s"), 2, late + ":3: flow 1: starts at 2s, outside the window [0, 1s)"},
		{export("--flows", waits), 2, waits + ":3: flow 1: after 1: the sim starts every flow at its time"},
		{[]string{"workload", "--flows", cols, "--dry-run"}, 2, cols + ":3: 5 columns"},
	} {
		code, err := run(c.args, &bytes.Buffer{}, &bytes.Buffer{})
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if code != c.code || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || internals.MatchString(msg) {
			t.Errorf("lab %s: exit %d, %q; want exit %d, one line with %q", strings.Join(c.args, " "), code, msg, c.code, c.want)
		}
	}
	// --load 0 and --duration go with --flows.
	if code, err := run(export("--flows", good, "--load", "0", "--duration", "1s", "--cc", "dcqcn", "--mtu", "1000"), &bytes.Buffer{}, &bytes.Buffer{}); code != 0 || err != nil {
		t.Errorf("--flows with --load 0, --duration, --cc and --mtu: exit %d, %v", code, err)
	}
}

// lab workload --flows --dry-run prints the file's schedule back, in the
// format it was read in, checked on the lab; a run of it gets as far as
// the lab's daemons (none behind a fake lab).
func TestFlowsWorkload(t *testing.T) {
	root := fakeLab(t, "fw") // BCube(2,1): h0..h3
	at := []string{"--name", "fw", "--run-root", root}
	in := "# by hand\n" +
		"id, src, dst, size, start_ns, kind, group, phase, after\n" +
		"0, 1, 0, 1000, 0, incast, 1, 0, 0\n" +
		"1, 2, 0, 1000, 0, incast, 1, 0, 0\n" +
		"2, 3, 1, 2000, 007, poisson, 0, 0, 0\n"
	csv := writeTemp(t, "f.csv", in)
	var out bytes.Buffer
	if code, err := run(append([]string{"workload", "--flows", csv, "--dry-run"}, at...), &out, &bytes.Buffer{}); code != 0 || err != nil {
		t.Fatalf("workload --flows --dry-run: exit %d, %v", code, err)
	}
	want := "id,src,dst,size,start_ns,kind,group,phase,after\n0,1,0,1000,0,incast,1,0,0\n1,2,0,1000,0,incast,1,0,0\n2,3,1,2000,7,poisson,0,0,0\n"
	if out.String() != want {
		t.Errorf("workload --flows --dry-run printed\n%s\nwant\n%s", out.String(), want)
	}
	// What it printed reads back as the same flows.
	a, _, err1 := workload.ReadFlows(strings.NewReader(in))
	b, _, err2 := workload.ReadFlows(&out)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("read back: %v, %v, same %v", err1, err2, reflect.DeepEqual(a, b))
	}
	// On the lab: its servers, and the window --duration gives.
	far := writeTemp(t, "far.csv", "id,src,dst,size,start_ns,kind,group,phase,after\n0,4,0,1000,0,incast,1,0,0\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--flows", far, "--dry-run"}, 2, far + ":2: flow 0: h4 -> h0, want servers h0..h3"},
		{[]string{"--flows", far}, 2, far + ":2: flow 0: h4 -> h0, want servers h0..h3"},
		{[]string{"--flows", csv, "--duration", "7ns", "--dry-run"}, 2, csv + ":5: flow 2: starts at 7ns, outside the window [0, 7ns)"},
		{[]string{"--flows", csv}, 4, "daemon of h0 (pid 0) is not running"},
	} {
		code, err := run(append(append([]string{"workload"}, c.args...), at...), &bytes.Buffer{}, &bytes.Buffer{})
		if code != c.code || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("lab workload %s: exit %d, %v; want %d, %q", strings.Join(c.args, " "), code, err, c.code, c.want)
		}
	}
}
