package bench

import (
	"slices"
	"testing"
)

func TestRatios(t *testing.T) {
	got := Ratios([]Result{
		{Device: "swd", FrameLen: 64, FwdPps: 1.2e6}, {Device: "bridge", FrameLen: 64, FwdPps: 1e6}, {Device: "bare", FrameLen: 64, FwdPps: 1.5e6},
		{Device: "bridge", FrameLen: 1518, FwdPps: 1e5},
	})
	want := []string{"64 B: swd = 1.20 x bridge, 0.80 x bare"}
	if !slices.Equal(got, want) {
		t.Fatalf("Ratios = %q, want %q", got, want)
	}
}
