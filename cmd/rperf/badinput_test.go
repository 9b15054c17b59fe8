package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/lab"
)

// stateOnlyLab writes the state of a BCube(2,1) lab named name under a new run
// root, with no daemon behind it.
func stateOnlyLab(t *testing.T, name string) string {
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

var internals = regexp.MustCompile(`\.sock|POST|GET /|Bad Request|\b[a-z]+\.[A-Z][A-Za-z]+\b|hostd: rdma|transport:`)

// Bad input gets one line in the user's terms (iperf3's habits
// explained), exit 2 for usage and 1 at run time, never a socket, an
// HTTP status or the NIC's internals.
func TestBadInputs(t *testing.T) {
	root := stateOnlyLab(t, "tb")
	at := []string{"--lab", "tb", "--node", "h0", "--run-root", root}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-s"}, 2, "-s is perftest's message size here"},
		{[]string{"-c", "h3", "--mode", "tcp"}, 2, `--mode "tcp": want lossless, gbn or irn`},
		{[]string{"-c", "h3", "--mtu", "9000"}, 2, "--mtu 9000: want 256..1456"},
		{[]string{"-c", "h3", "-P", "0"}, 2, "-P 0: want 1..128"},
		{[]string{"-c", "h3", "-t"}, 2, "-t takes a value"},
		{[]string{"-c", "h3", "-n", "1M", "-t", "2"}, 2, "give -n or -t, not both"},
		{append([]string{"-c", "10.0.0.1"}, at...), 2, `-c "10.0.0.1": want a server`},
		{append([]string{"-c", "h9"}, at...), 2, "-c h9: lab tb has servers h0..h3"},
		{append([]string{"-c", "h0"}, at...), 2, "-c h0: that is this server"},
		{append([]string{"-c", "h3", "--order", "0,0"}, at...), 2, `--order "0,0": want a permutation of the levels 0..1`},
		{[]string{"-c", "h3", "--lab", "tb", "--node", "s0.0", "--run-root", root}, 2, `--node "s0.0": lab tb has servers h0..h3`},
		{[]string{}, 2, "give the destination with -c"},
		{[]string{"-c", "h3", "extra"}, 2, `unknown command "extra"`},
		{[]string{"-c", "h3", "--bogus"}, 2, "unknown flag: --bogus"},
		{[]string{"-c", "h3", "-n", "0"}, 2, "-n 0: want a positive number of bytes"},
		{[]string{"-c", "h3", "-n", "1Q"}, 2, `invalid argument "1Q" for "-n, --bytes" flag`},
		{[]string{"-c", "h3", "-R", "--bidir"}, 2, "give -R or --bidir, not both"},
		{[]string{"-c", "h3", "-J", "--json-stream"}, 2, "give -J or --json-stream, not both"},
		{[]string{"-c", "h3", "-O", "1", "-n", "1M"}, 2, "-O needs a timed test"},
		{[]string{"-c", "h3", "-a", "-n", "1M"}, 2, "-a, -s and --lat run perftest's tests"},
		{[]string{"-c", "h3", "-a", "--iters", "0"}, 2, "--iters 0: want 1..1048576"},
		{[]string{"-c", "h3", "--timeout", "0"}, 2, "--timeout 0: want > 0"},
		{[]string{"-c", "h3", "-t", "2", "--mode", "gbn", "--lose", "3"}, 2, "--lose needs a sized test (-n)"},
		{[]string{"-c", "h3", "-n", "10K", "--lose", "3"}, 2, "--lose with --mode lossless: a lossless flow fails at a lost packet; give --mode gbn or irn"},
		{[]string{"-c", "h3", "-n", "10K", "--mode", "irn", "--lose", "10"}, 2, "--lose 10: each flow has packets 0..9"},
		{[]string{"-c", "h3", "-n", "10K", "--mode", "gbn", "--lose", "4,4"}, 2, "--lose: packet 4 twice"},
		{[]string{"-c", "h3", "-n", "10K", "--mode", "gbn", "--lose", "x"}, 2, `invalid argument "x" for "--lose" flag: want packet numbers from 0, such as 10,39`},
		{[]string{"-c", "h3", "--lab", "Bad/x", "--node", "h0"}, 2, `--lab: lab name "Bad/x"`},
		{[]string{"-c", "h3", "--lab", "nosuch", "--node", "h0", "--run-root", root}, 1, "lab nosuch: no such lab"},
		{append([]string{"-c", "h3", "-t", "1"}, at...), 4, "lab tb: daemon of h0 (pid 0) is not running"},
	} {
		var out, errw bytes.Buffer
		code := runCtx(context.Background(), c.args, &out, &errw)
		msg := strings.TrimSpace(errw.String())
		if code != c.code || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || internals.MatchString(msg) {
			t.Errorf("rperf %s: exit %d, %q; want exit %d, one line with %q and no internals", strings.Join(c.args, " "), code, msg, c.code, c.want)
		}
	}
}

// Run outside a server's namespace without --lab and --node, rperf does
// not know where it runs from: a usage error, as a missing flag.
func TestOutsideNamespace(t *testing.T) {
	if ns, err := netnsName(); err == nil {
		t.Skipf("runs in namespace %s", ns)
	}
	var errw bytes.Buffer
	code := runCtx(context.Background(), []string{"-c", "h3", "--run-root", t.TempDir()}, &bytes.Buffer{}, &errw)
	msg := strings.TrimSpace(errw.String())
	if code != 2 || !strings.Contains(msg, "give --lab and --node") || strings.Contains(msg, "\n") {
		t.Errorf("outside a namespace: exit %d, %q; want 2, one line asking for --lab and --node", code, msg)
	}
}

// rperf --version (and -v, as iperf3's) prints the build on one line.
func TestVersion(t *testing.T) {
	for _, flag := range []string{"--version", "-v"} {
		var out bytes.Buffer
		code := runCtx(context.Background(), []string{flag}, &out, &bytes.Buffer{})
		if code != 0 || !strings.HasPrefix(out.String(), "rperf ") || strings.Count(out.String(), "\n") != 1 || !strings.Contains(out.String(), " go1.") {
			t.Errorf("rperf %s: exit %d, %q", flag, code, out.String())
		}
	}
}
