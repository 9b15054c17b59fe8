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

// Over rounds, each ratio pairs the devices of one round; the line gives
// the median and the range, and Medians takes each quantity's median.
func TestRatiosOverRounds(t *testing.T) {
	var res []Result
	for i, v := range []struct{ swd, ovs float64 }{{1.0, 1.0}, {0.5, 0.4}, {0.9, 1.0}} {
		res = append(res,
			Result{Device: "swd", Round: i + 1, FrameLen: 64, FwdPps: v.swd * 1e6, MppsPerCore: v.swd},
			Result{Device: "ovs", Round: i + 1, FrameLen: 64, FwdPps: v.ovs * 1e6, MppsPerCore: v.ovs})
	}
	want := []string{"64 B: swd = 1.00 x ovs (0.90-1.25); per busy core 1.00 x ovs (0.90-1.25)"}
	if got := Ratios(res); !slices.Equal(got, want) {
		t.Errorf("Ratios = %q, want %q", got, want)
	}
	m := Medians(append(res, Result{Device: "bridge", Skipped: "x"}))
	if len(m) != 2 || m[0].Device != "swd" || m[0].MppsPerCore != 0.9 || m[1].MppsPerCore != 1.0 || m[0].Round != 0 {
		t.Errorf("Medians = %+v", m)
	}
}
