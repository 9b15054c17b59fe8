package bench

import (
	"slices"
	"testing"
)

func TestRatios(t *testing.T) {
	got := Ratios([]Result{
		{Device: "swd", FrameLen: 64, FwdPps: 1.2e6, MppsPerCore: 2}, {Device: "ovs", Skipped: "not installed"},
		{Device: "bridge", FrameLen: 64, FwdPps: 1e6, MppsPerCore: 4}, {Device: "bare", FrameLen: 64, FwdPps: 1.5e6},
		{Device: "bridge", FrameLen: 1518, FwdPps: 1e5},
		{Device: "swd", FrameLen: 1518, FwdPps: 1e5, MppsPerCore: 0.5}, {Device: "ovs", FrameLen: 1518, FwdPps: 5e4, MppsPerCore: 0.05},
	})
	want := []string{
		"64 B: swd = 1.20 x bridge, 0.80 x bare; per busy core 0.50 x bridge",
		"1518 B: swd = 2.00 x ovs, 1.00 x bridge; per busy core 10.00 x ovs",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Ratios = %q, want %q", got, want)
	}
}
