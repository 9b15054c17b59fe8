package bench

import (
	"fmt"
	"strings"
)

// Result is one device at one frame size, or a device that was skipped.
type Result struct {
	Device   string  `json:"device"`
	Skipped  string  `json:"skipped,omitempty"` // why the device did not run; nothing else is set
	FrameLen int     `json:"frame_len"`         // on the wire, FCS included
	SentPps  float64 `json:"sent_pps"`
	FwdPps   float64 `json:"fwd_pps"`
	FwdGbps  float64 `json:"fwd_gbps"` // frame bits, FCS included
	// BusyCores is the device's CPU over the measurement window, by one
	// method for every device (see cpu.go): the busy time of every core
	// but the blaster's, plus the irq and softirq time of the blaster's
	// core, in cores.
	BusyCores   float64 `json:"busy_cores"`
	MppsPerCore float64 `json:"mpps_per_core"` // forwarded Mpps per busy core
	// ProcCores is the utime+stime of the device's own processes, in
	// cores; nil for the bridge, which has none.
	ProcCores    *float64 `json:"proc_cores,omitempty"`
	BlasterCores float64  `json:"blaster_cores"` // the blaster's process
}

// Ratios compares swd with the other devices at each frame size, in
// forwarded frames and in frames per busy core, as lines such as
// "64 B: swd = 1.34 x ovs, 1.20 x bridge, 0.98 x bare; per busy core 2.10 x ovs, ...".
func Ratios(res []Result) []string {
	by := map[int]map[string]Result{}
	var sizes []int
	for _, r := range res {
		if r.Skipped != "" {
			continue
		}
		if by[r.FrameLen] == nil {
			by[r.FrameLen] = map[string]Result{}
			sizes = append(sizes, r.FrameLen)
		}
		by[r.FrameLen][r.Device] = r
	}
	var out []string
	for _, size := range sizes {
		m := by[size]
		swd, ok := m["swd"]
		if !ok {
			continue
		}
		var rate, perCore []string
		for _, other := range []string{"ovs", "bridge", "bare"} {
			v, ok := m[other]
			if !ok {
				continue
			}
			if v.FwdPps > 0 {
				rate = append(rate, fmt.Sprintf("%.2f x %s", swd.FwdPps/v.FwdPps, other))
			}
			if v.MppsPerCore > 0 && swd.MppsPerCore > 0 {
				perCore = append(perCore, fmt.Sprintf("%.2f x %s", swd.MppsPerCore/v.MppsPerCore, other))
			}
		}
		if len(rate) == 0 {
			continue
		}
		line := fmt.Sprintf("%d B: swd = %s", size, strings.Join(rate, ", "))
		if len(perCore) > 0 {
			line += "; per busy core " + strings.Join(perCore, ", ")
		}
		out = append(out, line)
	}
	return out
}
