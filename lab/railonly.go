package lab

// The Rail-only NDC preset (DESIGN §2, §9): BCube(n,1) whose level-0
// cables, the high-bandwidth domain (HBD, NVLink/NVSwitch-like), run
// faster than its level-1 cables, the rails. The PortFC papers run 160
// and 100 Gb/s (ToN §III-E, §V-E). This machine carries a BCube(4,1)
// workload validly up to 50 Mb/s per link (docs/BENCHMARKS.md, "Emulation
// capacity"), so the preset keeps the ratio at 32 and 20 Mb/s: the
// fabric's frame rate stays well below the uniform 50 Mb/s that was
// valid, room for the relays' extra hops and for the signals of flow
// control. lab up railonly --rates 160M,100M (or any pair) runs another
// scale.

// RailOnlyN is the preset's n: Rail-only NDC(4,1), 16 servers of four
// HBDs of four, joined by four rails.
const RailOnlyN = 4

// RailOnlyRates are the preset's level rates in bit/s: level 0 (HBD) and
// level 1 (rails), 160:100.
var RailOnlyRates = []uint64{32_000_000, 20_000_000}

// RailOnly lays the Rail-only preset over s: k = 1, n RailOnlyN unless
// s has one, and RailOnlyRates unless s has rates.
func RailOnly(s Spec) Spec {
	s.K = 1
	if s.N == 0 {
		s.N = RailOnlyN
	}
	if len(s.Rates) == 0 {
		s.Rates = append([]uint64(nil), RailOnlyRates...)
	}
	return s
}

// Topology kinds of lab up and of lab files.
const (
	TopologyBCube    = "bcube"
	TopologyRailOnly = "railonly"
)
