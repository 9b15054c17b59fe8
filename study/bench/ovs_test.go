//go:build linux

package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testns"
)

// leftovers lists what of an ovs run with this prefix still exists: its
// namespaces, its private directory, and any process whose command line
// names that directory (every OVS daemon of the run does: --pidfile, the
// database, the log).
func leftovers(t *testing.T, prefix string) []string {
	t.Helper()
	var left []string
	for _, s := range []string{"src", "dut", "sink"} {
		if _, err := os.Stat("/var/run/netns/" + prefix + "-" + s); err == nil {
			left = append(left, "namespace "+prefix+"-"+s)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"-ovs-*"))
	for _, d := range dirs {
		left = append(left, "directory "+d)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), prefix+"-ovs-") {
			left = append(left, "process "+filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return left
}

// Open vSwitch's AF_XDP datapath, briefly: frames of one size reach the
// sink through it, its CPU is counted, and nothing of it remains.
func TestDatapathOVS(t *testing.T) {
	testns.RequireRoot(t)
	if testing.Short() {
		t.Skip("short: skipping the ovs device run")
	}
	if why := OVSMissing(); why != "" {
		t.Skip("skipping the ovs device: " + why)
	}
	prefix := "bcbo" + time.Now().Format("150405")
	t.Cleanup(func() {
		for _, l := range leftovers(t, prefix) {
			t.Errorf("left behind: %s", l)
		}
	})
	res, err := Datapath(context.Background(), Options{Prefix: prefix, Devices: []string{"ovs"}, Sizes: []int{60},
		Warmup: 300 * time.Millisecond, Measure: 500 * time.Millisecond, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Skipped != "" {
		t.Fatalf("results %+v, want one of ovs", res)
	}
	r := res[0]
	if r.ProcCores == nil || *r.ProcCores <= 0 {
		t.Fatalf("no CPU counted for ovs's processes: %+v", r)
	}
	t.Logf("ovs %d B: sent %.3f Mpps, forwarded %.3f Mpps, %.2f busy cores (its processes %.2f)", r.FrameLen, r.SentPps/1e6, r.FwdPps/1e6, r.BusyCores, *r.ProcCores)
	if r.FwdPps <= 0 {
		t.Errorf("ovs forwarded nothing")
	}
}
