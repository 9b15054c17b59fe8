//go:build linux

package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testns"
)

// buildBins builds swd and xdpfwd into a temporary directory.
func buildBins(t *testing.T) string { return testns.Bins(t, "swd", "xdpfwd") }

// A short run of the benchmark: swd, the bridge and the bare forwarder
// forward frames of both sizes from the blaster to the sink, and nothing is
// left behind. (Rates are measured by `lab bench datapath`, not asserted
// here; OVS has its own test.)
func TestDatapath(t *testing.T) {
	testns.RequireRoot(t)
	if testing.Short() {
		t.Skip("short: skipping the datapath benchmark run")
	}
	bin := buildBins(t)
	prefix := "bcbt" + time.Now().Format("150405")
	res, err := Datapath(context.Background(), Options{BinDir: bin, Prefix: prefix, Warmup: 200 * time.Millisecond, Measure: 500 * time.Millisecond, Rounds: 1,
		Devices: []string{"swd", "bridge", "bare"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 6 {
		t.Fatalf("%d results, want 6", len(res))
	}
	for _, r := range res {
		t.Logf("%-6s %4d B: sent %.3f Mpps, forwarded %.3f Mpps, %.2f Gb/s, %.2f busy cores", r.Device, r.FrameLen, r.SentPps/1e6, r.FwdPps/1e6, r.FwdGbps, r.BusyCores)
		if r.FwdPps <= 0 {
			t.Errorf("%s at %d B forwarded nothing", r.Device, r.FrameLen)
		}
		if r.BusyCores <= 0 {
			t.Errorf("%s at %d B: %.2f busy cores", r.Device, r.FrameLen, r.BusyCores)
		}
	}
	for _, s := range []string{"src", "dut", "sink"} {
		if _, err := os.Stat("/var/run/netns/" + prefix + "-" + s); err == nil {
			t.Errorf("namespace %s-%s left behind", prefix, s)
		}
	}
}
