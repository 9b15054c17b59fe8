package api

import (
	"encoding/json"
	"testing"
)

// The JSON of GET /worker is read by tools outside this module (lab
// status, scripts, recorded runs): its keys, their order and the value
// each carries are pinned here.
func TestWorkerReportJSON(t *testing.T) {
	var r WorkerReport
	r.Name, r.Pid, r.Tid, r.Lab = "w0", 1, 2, "lab"
	r.Nodes = []WorkerNode{{Name: "s0.0", Kind: "switch", State: NodeRunning, StartedUnixNs: 3}}
	r.Rounds, r.Steps, r.Polls, r.Sleeps, r.BusyNs = 4, 5, 6, 7, 8
	r.MaxStepNs, r.MaxRoundNs, r.ControlNs, r.MaxControlNs = 9, 10, 11, 12
	r.LateWakes, r.MaxWakeLateNs, r.Replays, r.MaxReplayNs, r.Disarms = 13, 14, 22, 23, 15
	r.Priority, r.PriorityError, r.Yields = 16, "refused", 17
	r.Skips, r.SkippedNs = 24, 25
	r.HeapBytes, r.GoMemBytes, r.Goroutines, r.Threads = 18, 19, 20, 21
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"w0","pid":1,"tid":2,"lab":"lab",` +
		`"nodes":[{"name":"s0.0","kind":"switch","state":"running","started_unix_ns":3}],` +
		`"rounds":4,"steps":5,"polls":6,"sleeps":7,"busy_ns":8,` +
		`"max_step_ns":9,"max_round_ns":10,"control_ns":11,"max_control_ns":12,` +
		`"late_wakes":13,"max_wake_late_ns":14,"replays":22,"max_replay_ns":23,"skips":24,"skipped_ns":25,"disarms":15,` +
		`"priority":16,"priority_error":"refused","yields":17,` +
		`"heap_bytes":18,"go_mem_bytes":19,"goroutines":20,"threads":21}`
	if string(b) != want {
		t.Errorf("GET /worker JSON\n got %s\nwant %s", b, want)
	}

	// A report read back carries every value.
	var back WorkerReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(back); string(again) != want {
		t.Errorf("read back\n got %s\nwant %s", again, want)
	}
}
