package api

import "testing"

// Injected drops (the XDP program's loss and link down, the NIC's
// injected RDMA loss) are counted apart from the emulator's own.
func TestPortStatsDrops(t *testing.T) {
	p := PortStats{
		Drops:      map[string]uint64{"buffer_full": 2, "no_frames": 1},
		XSK:        map[string]uint64{"rx_dropped": 4, "rx_fill_ring_empty": 4, "rx_ring_full": 8},
		XDP:        map[string]uint64{"rx": 1000, "redirect": 900, "loss": 16, "down": 32},
		InjectedTx: 64,
	}
	if got := p.TotalDrops(); got != 2+1+4+8 {
		t.Errorf("TotalDrops = %d, want 15", got)
	}
	if got := p.InjectedDrops(); got != 16+32+64 {
		t.Errorf("InjectedDrops = %d, want 112", got)
	}
}
