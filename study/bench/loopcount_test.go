//go:build linux

package bench

import (
	"reflect"
	"testing"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/api"
)

// The measured window's pauses are the differences of the sent
// counters, by class: PortFC's A and B, PFC's X_off per priority (not
// its refreshes), BFC's; relayed PortFC pauses apart. A queue's paused
// time is the difference of its PausedNs; idle queues are left out.
func TestLoopCounters(t *testing.T) {
	node := func(name string, sig map[string]uint64, pausedNs int64, deq uint64) lab.NodeSnapshot {
		return lab.NodeSnapshot{Node: name, Stats: &api.Stats{Ports: []api.PortStats{{Name: "eth0", Signals: sig,
			Queues: []api.QueueStats{{Name: "b0", PausedNs: pausedNs, DeqBytes: deq}, {Name: "a0"}}}}}}
	}
	s0 := []lab.NodeSnapshot{
		node("h0", map[string]uint64{"relayed_pause_B": 3, "rx_pause_B": 9}, 0, 100),
		node("s0.0", map[string]uint64{"tx_pause_A": 1, "tx_pause_B": 5, "tx_resume_B": 4}, 0, 0),
		node("s0.1", map[string]uint64{"tx_xoff_P3": 2, "tx_refresh_P3": 7, "tx_xoff_P4": 0}, 0, 0),
		node("s1.0", map[string]uint64{"tx_pause": 10}, 0, 0),
	}
	s1 := []lab.NodeSnapshot{
		node("h0", map[string]uint64{"relayed_pause_B": 7, "rx_pause_B": 20}, 250e6, 1100),
		node("s0.0", map[string]uint64{"tx_pause_A": 1, "tx_pause_B": 15, "tx_resume_B": 40}, 0, 0),
		node("s0.1", map[string]uint64{"tx_xoff_P3": 6, "tx_refresh_P3": 70, "tx_xoff_P4": 1}, 0, 0),
		node("s1.0", map[string]uint64{"tx_pause": 12}, 0, 0),
	}
	pauses, byClass, qs := loopCounters(s0, s1, time.Second)
	if want := map[string]uint64{"B": 10, "P3": 4, "P4": 1, "bfc": 2}; !reflect.DeepEqual(byClass, want) {
		t.Errorf("by class %v, want %v", byClass, want)
	}
	if len(pauses) != 4 || pauses[0].Relayed["B"] != 4 || pauses[0].Sent != nil || pauses[1].Sent["A"] != 0 {
		t.Errorf("per node %+v", pauses)
	}
	if want := []LoopQueue{{Node: "h0", Port: "eth0", Queue: "b0", PausedMs: 250, PausedFrac: 0.25, SentBytes: 1000}}; !reflect.DeepEqual(qs, want) {
		t.Errorf("queues %+v, want %+v", qs, want)
	}
}

// The series is each flow's rate between samples, from zero bytes at
// the start; a sample that went backwards (a restarted sink) gives 0.
func TestLoopSamplerRates(t *testing.T) {
	s := &loopSampler{t: []float64{0.5, 1, 2, 3}, bytes: []map[string]uint64{{"f": 500}, {"f": 1000}, {"f": 1000}, {"f": 10}}}
	if got, want := s.rates("f"), []float64{8000, 8000, 0, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("rates %v, want %v", got, want)
	}
}
