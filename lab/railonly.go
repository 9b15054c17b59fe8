package lab

// The Rail-only NDC preset (DESIGN §2, §9): BCube(n,1) whose level-0
// cables, the high-bandwidth domain (HBD, NVLink/NVSwitch-like), run
// faster than its level-1 cables, the rails. The PortFC papers run 160
// and 100 Gb/s (ToN §III-E, §V-E). The preset keeps that ratio at 32 and
// 20 Mb/s, well below the highest uniform rate at which a BCube(4,1)
// workload was measured valid (docs/BENCHMARKS.md, "Emulation capacity"):
// a Rail-only fabric's relays add frame-hops and flow control adds
// signals, and both levels must stay within what the emulation carries.
// lab up railonly --rates 160M,100M (or any pair) runs another scale.

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
