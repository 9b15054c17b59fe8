//go:build linux

package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	labpkg "github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/api"
)

// The commands that drive traffic and faults, on a lab of real daemons
// with a propagation delay (--delay): gen sends a flow and says it
// arrived whole, capture prints the frames a switch port sends and
// writes them to a pcap, node stop and start take a node out and back
// with status saying so, and a flow crosses the restarted node again.
// Then bench fairness and experiment run bring up and remove labs of
// their own and print their results.
func TestCLIRealLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: brings up labs of real daemons")
	}
	if testing.Short() {
		t.Skip("short: brings up labs of real daemons")
	}
	testtool.Require(t, "tcpdump", "run lab capture")
	tsharkBin := testtool.Require(t, "tshark", "read lab capture's file by the lab's ethers")
	bins := realBins(t)
	id := fmt.Sprintf("%06x", rand.IntN(1<<24))
	name := "rc" + id
	root := t.TempDir()
	lab := func(args ...string) (int, string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		args = append(args[:1:1], append([]string{"--name", name, "--run-root", root}, args[1:]...)...)
		code, err := run(args, &out, &errOut)
		if err != nil {
			errOut.WriteString(err.Error())
		}
		return code, out.String(), errOut.String()
	}
	t.Cleanup(func() {
		if code, out, errs := lab("down"); code != 0 {
			t.Errorf("down: %d\n%s%s", code, out, errs)
		}
	})

	if code, out, errs := lab("up", "bcube", "--n", "2", "--k", "1", "--bin-dir", bins, "--dilation", "5000", "--fc", "portfc"); code != 0 {
		t.Fatalf("up --dilation 5000: %d\n%s%s", code, out, errs)
	} else if !strings.Contains(out, "at D = 5000") || !strings.Contains(out, "rate 20 Mbit/s in the lab, delay 5ms of lab time") {
		t.Errorf("up does not show the model, the rate and the delay:\n%s", out)
	}

	// valid is lab for a command whose run its emulation health judges:
	// one that exits 3 only because the emulation was late (lateOutput)
	// runs again (testtool.RetryLate).
	valid := func(args ...string) (code int, out, errs string) {
		t.Helper()
		testtool.RetryLate(t, 0, func(t *testing.T) string {
			code, out, errs = lab(args...)
			why, _ := lateOutput(code, out+errs)
			return why
		})
		return code, out, errs
	}

	code, out, errs := valid("gen", "h1", "h0", "--bytes", "1M", "--wait")
	t.Logf("gen: %s%s", out, errs)
	if code != 0 {
		t.Errorf("gen --wait: exit %d", code)
	}

	// A flow h1 -> h0 crosses s0.0; capture --all prints the frames s0.0
	// sends toward h0 (p0) and writes them to a pcap.
	pcap := filepath.Join(t.TempDir(), "s0.0-p0.pcap")
	capDone := make(chan struct{})
	var capCode int
	var capOut, capErr string
	go func() {
		defer close(capDone)
		capCode, capOut, capErr = lab("capture", "s0.0", "p0", "--all", "-c", "3", "--duration", "20s", "-w", pcap)
	}()
	// The flow runs longer than tcpdump and the daemon's switch of the
	// port to the kernel's packet path take.
	time.Sleep(time.Second)
	if _, err := labpkg.StartFlow(root, name, "h1", api.GenRequest{Dst: 0, Duration: int64(3 * time.Second)}); err != nil {
		t.Fatalf("flow h1 -> h0: %v", err)
	}
	<-capDone
	t.Logf("capture: %s%s", capOut, capErr)
	frames := 0
	for _, l := range strings.Split(capOut, "\n") {
		if l != "" && !strings.HasPrefix(l, "capturing") {
			frames++
			// The MACs by node and port, from the lab's ethers file:
			// on the patched cable the capture shows both directions,
			// s0.0's p0 to h0's eth0 and back.
			if _, rest, _ := strings.Cut(l, " "); !strings.HasPrefix(rest, "s0.0.p0 > h0.eth0 ") && !strings.HasPrefix(rest, "h0.eth0 > s0.0.p0 ") {
				t.Errorf("capture line %q does not name s0.0.p0 and h0.eth0", l)
			}
		}
	}
	if capCode != 0 || frames != 3 {
		t.Errorf("capture --all -c 3: exit %d, %d frames printed, want 3", capCode, frames)
	}
	if st, err := os.Stat(pcap); err != nil || st.Size() <= 24 {
		t.Errorf("capture -w wrote no frame: %v", err)
	}
	// tshark names them too, pointed at the names kept beside the file
	// as capture says, with the project's dissector.
	ws := pcap + labpkg.CaptureNamesSuffix
	if !strings.Contains(capErr, "WIRESHARK_CONFIG_DIR="+ws+" tshark -X lua_script:") || !strings.Contains(capErr, "/scripts/bcfab.lua -o nameres.mac_name:TRUE -r "+pcap) {
		t.Errorf("capture -w does not say how tshark names the nodes:\n%s", capErr)
	}
	tshark := exec.Command(tsharkBin, "-r", pcap, "-T", "fields", "-e", "eth.src_resolved", "-e", "eth.dst_resolved")
	tshark.Env = append(os.Environ(), "WIRESHARK_CONFIG_DIR="+ws)
	if out, err := tshark.Output(); err != nil || strings.Count(string(out), "s0.0.p0\th0.eth0\n")+strings.Count(string(out), "h0.eth0\ts0.0.p0\n") != 3 {
		t.Errorf("tshark with the lab's ethers: %v\n%s", err, out)
	}

	if code, out, errs := lab("node", "stop", "h3"); code != 0 {
		t.Fatalf("node stop h3: %d\n%s%s", code, out, errs)
	}
	if code, out, _ := lab("status"); code == 0 || !strings.Contains(out, "h3") {
		t.Errorf("status with h3 stopped: exit %d (want non-zero), h3 named: %v\n%s", code, strings.Contains(out, "h3"), out)
	}
	if code, out, errs := lab("node", "start", "h3"); code != 0 {
		t.Fatalf("node start h3: %d\n%s%s", code, out, errs)
	}
	if code, out, _ := lab("status"); code != 0 || !strings.Contains(out, "all 8 nodes up") {
		t.Errorf("status after node start: %d\n%s", code, out)
	}
	if code, out, errs := valid("gen", "h0", "h3", "--bytes", "1M", "--wait"); code != 0 {
		t.Errorf("gen h0 h3 after h3 restarted: %d\n%s%s", code, out, errs)
	}

	// The benches and experiments bring up labs of their own.
	code, out, errs = valid("bench", "fairness", "--name", "rb"+id, "--bin-dir", bins, "--rate", "20M", "--duration", "3s")
	t.Logf("bench fairness: %s%s", out, errs)
	if code != 0 || !strings.Contains(out, "emulation health") {
		t.Errorf("bench fairness: exit %d", code)
	}
	exp := filepath.Join(t.TempDir(), "tiny.yaml")
	src := `name: tiny
kind: workload
topology: {n: 2, k: 1}
lab: {rate: 10M, name: re` + id + `}
schemes: [portfc]
workload: {loads: [0.2], cdfs: [storage], duration: 2s}
`
	if err := os.WriteFile(exp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	testtool.RetryLate(t, 0, func(t *testing.T) string {
		outDir := filepath.Join(t.TempDir(), "tiny")
		code, out, errs := lab("experiment", "run", "-f", exp, "--name", "re"+id, "--bin-dir", bins, "--out", outDir)
		t.Logf("experiment run: %s%s", out, errs)
		for _, f := range []string{"summary.csv", "results.json", "README.md"} {
			if st, err := os.Stat(filepath.Join(outDir, f)); err != nil || st.Size() == 0 {
				t.Errorf("experiment run wrote no %s: %v", f, err)
			}
		}
		if why := lateExperiment(t, code, outDir); why != "" {
			return why
		}
		if code != 0 {
			t.Errorf("experiment run: exit %d", code)
		}
		return ""
	})
}

// lateExperiment is why an experiment's run into out was invalid when it
// exited 3 and every INVALID point of its summary.csv was so only because
// the emulation fell behind (labpkg.Lateness); "" otherwise.
func lateExperiment(t *testing.T, code int, out string) string {
	t.Helper()
	if code != exitInvalid {
		return ""
	}
	f, err := os.Open(filepath.Join(out, "summary.csv"))
	if err != nil {
		return ""
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) < 2 {
		return ""
	}
	valid, problems, id := slices.Index(rows[0], "valid"), slices.Index(rows[0], "problems"), slices.Index(rows[0], "point")
	var late []string
	for _, r := range rows[1:] {
		if r[valid] == "true" {
			continue
		}
		why, ok := labpkg.Lateness(strings.Split(r[problems], "; "))
		if !ok {
			return ""
		}
		late = append(late, r[id]+": "+why)
	}
	return strings.Join(late, "; ")
}

// lateOutput is why a lab command's run was invalid, and true, when it
// exited 3 and every emulation health it printed INVALID (Health.Short:
// the first problem, and how many more) names only the emulation falling
// behind (labpkg.LateProblem); a run invalid for another reason is a failure.
func lateOutput(code int, out string) (string, bool) {
	if code != exitInvalid {
		return "", false
	}
	return labpkg.LateOutput(out)
}
