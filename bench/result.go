package bench

import (
	"fmt"
	"strings"
)

// Result is one device at one frame size.
type Result struct {
	Device   string  `json:"device"`
	FrameLen int     `json:"frame_len"` // on the wire, FCS included
	SentPps  float64 `json:"sent_pps"`
	FwdPps   float64 `json:"fwd_pps"`
	FwdGbps  float64 `json:"fwd_gbps"` // frame bits, FCS included
}

// Ratios compares swd with the other devices at each frame size, as lines
// such as "64 B: swd = 1.34 x bridge, 0.98 x bare".
func Ratios(res []Result) []string {
	by := map[int]map[string]float64{}
	var sizes []int
	for _, r := range res {
		if by[r.FrameLen] == nil {
			by[r.FrameLen] = map[string]float64{}
			sizes = append(sizes, r.FrameLen)
		}
		by[r.FrameLen][r.Device] = r.FwdPps
	}
	var out []string
	for _, size := range sizes {
		m := by[size]
		swd, ok := m["swd"]
		if !ok {
			continue
		}
		var parts []string
		for _, other := range []string{"bridge", "bare"} {
			if v, ok := m[other]; ok && v > 0 {
				parts = append(parts, fmt.Sprintf("%.2f x %s", swd/v, other))
			}
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("%d B: swd = %s", size, strings.Join(parts, ", ")))
		}
	}
	return out
}
