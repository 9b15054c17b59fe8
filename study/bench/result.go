package bench

import (
	"fmt"
	"slices"
	"strings"
)

// Result is one device at one frame size in one round, or a device that
// was skipped.
type Result struct {
	Device   string  `json:"device"`
	Skipped  string  `json:"skipped,omitempty"` // why the device did not run; nothing else is set
	Round    int     `json:"round,omitempty"`   // 1, 2, ...; 0 for a median (Medians)
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

// Medians is, per device and frame size, in the order they first appear,
// the median of each quantity over the rounds (each quantity on its own),
// with Round 0. Skipped devices are left out.
func Medians(res []Result) []Result {
	type key struct {
		dev  string
		size int
	}
	var order []key
	by := map[key][]Result{}
	for _, r := range res {
		if r.Skipped != "" {
			continue
		}
		k := key{r.Device, r.FrameLen}
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	out := make([]Result, 0, len(order))
	for _, k := range order {
		rs := by[k]
		m := Result{Device: k.dev, FrameLen: k.size,
			SentPps:      median(rs, func(r Result) float64 { return r.SentPps }),
			FwdPps:       median(rs, func(r Result) float64 { return r.FwdPps }),
			FwdGbps:      median(rs, func(r Result) float64 { return r.FwdGbps }),
			BusyCores:    median(rs, func(r Result) float64 { return r.BusyCores }),
			MppsPerCore:  median(rs, func(r Result) float64 { return r.MppsPerCore }),
			BlasterCores: median(rs, func(r Result) float64 { return r.BlasterCores })}
		if rs[0].ProcCores != nil {
			p := median(rs, func(r Result) float64 { return *r.ProcCores })
			m.ProcCores = &p
		}
		out = append(out, m)
	}
	return out
}

func median[T any](xs []T, f func(T) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}

// Ratios compares swd with the other devices at each frame size, in
// forwarded frames and in frames per busy core, as lines such as
// "64 B: swd = 1.34 x ovs, 1.20 x bridge; per busy core 2.10 x ovs (1.90-2.30), ...".
// Each ratio pairs the two devices' measurements of one round, and the
// line gives the median over the rounds, with the lowest and highest
// when there were several.
func Ratios(res []Result) []string {
	type key struct {
		size, round int
	}
	by := map[key]map[string]Result{}
	var sizes []int
	for _, r := range res {
		if r.Skipped != "" {
			continue
		}
		k := key{r.FrameLen, r.Round}
		if by[k] == nil {
			by[k] = map[string]Result{}
		}
		if !slices.Contains(sizes, r.FrameLen) {
			sizes = append(sizes, r.FrameLen)
		}
		by[k][r.Device] = r
	}
	rounds := func(size int) []map[string]Result {
		var ms []map[string]Result
		for k, m := range by {
			if k.size == size {
				ms = append(ms, m)
			}
		}
		return ms
	}
	var out []string
	for _, size := range sizes {
		var rate, perCore []string
		for _, other := range []string{"ovs", "bridge", "bare"} {
			var rr, cr []float64
			for _, m := range rounds(size) {
				swd, ok1 := m["swd"]
				v, ok2 := m[other]
				if !ok1 || !ok2 {
					continue
				}
				if v.FwdPps > 0 {
					rr = append(rr, swd.FwdPps/v.FwdPps)
				}
				if v.MppsPerCore > 0 && swd.MppsPerCore > 0 {
					cr = append(cr, swd.MppsPerCore/v.MppsPerCore)
				}
			}
			if len(rr) > 0 {
				rate = append(rate, ratio(rr, other))
			}
			if len(cr) > 0 {
				perCore = append(perCore, ratio(cr, other))
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

// ratio formats the median of rs against other, and its range if there
// are several.
func ratio(rs []float64, other string) string {
	s := fmt.Sprintf("%.2f x %s", median(rs, func(x float64) float64 { return x }), other)
	if len(rs) > 1 {
		s += fmt.Sprintf(" (%.2f-%.2f)", slices.Min(rs), slices.Max(rs))
	}
	return s
}
