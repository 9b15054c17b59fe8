//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/lab"
)

// fakeLab writes the state of a BCube(2,1) lab named name under a new run
// root, as lab up would, with no namespace and no daemon behind it: what
// commands check before they reach a daemon reads only this.
func fakeLab(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	spec := lab.Defaults()
	spec.Name, spec.RunRoot, spec.N, spec.K = name, root, 2, 1
	p, err := lab.NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	st := lab.State{Lab: name, Spec: p.Spec, RunDir: p.RunDir, Phase: lab.PhaseUp}
	for _, n := range p.Nodes {
		st.Nodes = append(st.Nodes, lab.NodeState{Name: n.Name, Kind: n.Kind, Namespace: n.Namespace,
			Control: filepath.Join(p.RunDir, n.Name+".sock")})
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.RunDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lab.StatePath(root, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// internals are words of the program, not the user's: control sockets,
// HTTP, Go's types.
var internals = regexp.MustCompile(`\.sock|POST|GET /|Bad Request|\b[a-z]+\.[A-Z][A-Za-z]+\b|not found in type|cannot unmarshal`)

// Bad input gets one line, in the user's terms, naming what was wrong:
// exit 2 for usage (a flag, a key of a lab file, a node), 1 for what went
// wrong at run time (a lab that does not exist); never a daemon's socket, an HTTP status or a Go type.
func TestBadInputs(t *testing.T) {
	root := fakeLab(t, "tb")
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknownKey := file("key.yaml", "name: tb\ntopology: {kind: bcube, n: 2, k: 1}\nflowcontrol: portfc\n")
	badN := file("n.yaml", "name: tb\ntopology:\n  kind: bcube\n  n: two\n  k: 1\n")
	at := []string{"--name", "tb", "--run-root", root}
	up := []string{"up", "bcube", "--n", "2", "--k", "1", "--name", "tb", "--run-root", t.TempDir()}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{append(up, "--fc", "pfcc"), 2, `--fc "pfcc": want none, portfc, pfc, pfcstar, bfc, ici, ci, ideal-fq or sfq`},
		{append(up, "--rate", "100T"), 2, "--rate 100T: faster than a lab can shape"},
		{append(up, "--rate", "1"), 2, "--rate 1: too slow to emulate"},
		{append(up, "--level-order", "2,0"), 2, `--level-order "2,0": want hash, ate`},
		{append(up, "--watchdog-action", "reboot"), 2, `--watchdog-action "reboot": want none, forward or drop`},
		{append(up, "--relay-queue", "fifo"), 2, `--relay-queue "fifo": want strict or drr`},
		{append(up, "--xdp-mode", "fast"), 2, `--xdp-mode "fast": want native, generic or auto`},
		{append(up, "--drr-weights", "1,0"), 2, `drr weights "1,0": weight 0 of data queue 1: want 1..1000`},
		{append(up, "--drr-weights", "1,1,1,1"), 2, "drr_weights 1,1,1,1: 4 weights for 3 data queues; under fc none a server port's data queues are a0, b0, RQ (the HQ takes no weight)"},
		{[]string{"up", "-f", unknownKey}, 2, "key.yaml:3: unknown key flowcontrol (did you mean fc?)"},
		{[]string{"up", "-f", badN}, 2, `n.yaml:4: "two": want a whole number`},
		{append([]string{"gen", "h0", "h9"}, at...), 2, `DST "h9": lab tb has servers h0..h3`},
		{append([]string{"gen", "h0", "h0"}, at...), 2, "SRC and DST are both h0"},
		{append([]string{"gen", "s0.0", "h1"}, at...), 2, `SRC "s0.0": lab tb has servers h0..h3`},
		{append([]string{"gen", "h0", "h3", "--order", "0,0"}, at...), 2, `--order "0,0": want a permutation of the levels 0..1`},
		{append([]string{"gen", "h0", "h3", "--frame", "20"}, at...), 2, "--frame 20: want 64..1518"},
		{append([]string{"capture", "s0.0", "p7"}, at...), 2, `port "p7": s0.0's ports are p0, p1`},
		{append([]string{"capture", "s9.9", "p0"}, at...), 2, `node "s9.9": lab tb has servers h0..h3`},
		{append([]string{"gen", "h0", "h3"}, at...), 4, "lab tb: daemon of h0 (pid 0) is not running"},
		{[]string{"gen", "h0", "h3", "--name", "nosuch", "--run-root", root}, 1, "lab nosuch: no such lab"},
		{[]string{"up", "expander", "--tors", "7", "--degree", "3", "--hosts", "2", "--name", "fbbad"}, 2, "expander degree = 3: tors × degree must be even"},
		{[]string{"up", "expander", "--tors", "8", "--degree", "3", "--name", "fbbad"}, 2, "up expander: --hosts required"},
		{[]string{"up", "leafspine", "--leaves", "1", "--spines", "2", "--hosts", "4", "--name", "fbbad"}, 2, "leafspine leaves = 1: need at least 2"},
		{[]string{"up", "fattree", "--k", "5", "--name", "fbbad"}, 2, "fattree k = 5: need an even number of ports"},
		{[]string{"up", "fattree", "--k", "4", "--hosts", "2", "--name", "fbbad"}, 2, "fattree takes --k, not --hosts"},
		{[]string{"up", "fattree", "--k", "4", "--n", "2", "--name", "fbbad"}, 2, "up fattree: --n is BCube's"},
		{[]string{"up", "fattree", "--k", "4", "--fc", "portfc", "--name", "fbbad"}, 2, "fc portfc: its queues follow BCube's relays; on fattree want none, pfc, bfc, ici, ci, ideal-fq or sfq"},
		{[]string{"up", "fattree", "--k", "4", "--routing", "spf", "--name", "fbbad"}, 2, `--routing "spf": want ecmp or ksp`},
		{[]string{"up", "leafspine", "--leaves", "4", "--spines", "2", "--hosts", "4", "--oversubscription", "0.01", "--rate", "500M", "--name", "fbbad"}, 2, "faster than a lab can shape"},
		{[]string{"up", "bcube", "--n", "2", "--k", "1", "--leaves", "2", "--name", "fbbad"}, 2, "up bcube: --leaves is for leafspine, fattree, expander or fcplus"},
	} {
		code, err := run(c.args, &bytes.Buffer{}, &bytes.Buffer{})
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if code != c.code || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || internals.MatchString(msg) {
			t.Errorf("lab %s: exit %d, %q; want exit %d, one line with %q and no internals", strings.Join(c.args, " "), code, msg, c.code, c.want)
		}
	}
	// A bad graph fabric created nothing.
	if ents, _ := os.ReadDir("/run/netns"); len(ents) > 0 {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "fbbad-") {
				t.Errorf("namespace %s was created", e.Name())
			}
		}
	}
	if _, err := os.Stat(filepath.Join(lab.DefaultRunRoot, "fbbad")); err == nil {
		t.Errorf("run dir %s was created", filepath.Join(lab.DefaultRunRoot, "fbbad"))
	}
}
