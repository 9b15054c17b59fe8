package fabrictest

import (
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/signaling"
)

// ICI on an in-process BCube(4,1): three four-hop flows into h0, each
// relayed by one of h1..h3 and joining at s0.0's port 0 (the root). The
// root isolates them and tells the relays, which isolate them at their
// eth0 in turn; nothing is dropped.
func TestICIIncast(t *testing.T) { validRun(t, iciIncast) }

func iciIncast(t testing.TB) {
	tp := bcube.MustNew(4, 1)
	cfg := signaling.ICIConfig{Table: 8, Detect: 10_000, CQKmin: 20_000, CQKmax: 80_000, Pmax: 0.2,
		Residency: int64(50 * time.Millisecond), Refresh: int64(5 * time.Millisecond), Coordinated: true}
	f, err := New(tp, Options{RateBps: fcRate, FC: CI(pfcTh, fcRate, cfg), Watchdog: watchdog})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	watch(t, f)
	// h5, h6, h7 -> h0, level 1 first: through s1.1..s1.3 to the relays
	// h1..h3, then s0.0.
	var flows [][2]int
	for src := 5; src <= 7; src++ {
		if _, err := f.HostLogic[src].StartFlow(api.GenRequest{Dst: 0, Duration: int64(400 * time.Millisecond), Order: "1,0"}); err != nil {
			t.Fatal(err)
		}
		flows = append(flows, [2]int{src, 0})
	}
	waitFlows(t, f, flows, 10*time.Second)
	if n, where := fabricDrops(f); n != 0 {
		t.Errorf("%d drops: %v", n, where)
	}
	root := f.SwitchLogic[0].Scheme().(*scheme.CI).Isolation() // s0.0
	k := root.C[0]
	var told uint64
	for p := 1; p < 4; p++ {
		told += root.C[p].TxIsolate
	}
	t.Logf("s0.0 p0: %d isolated, %d released, %d table full; %d isolations sent to h1..h3", k.Isolated, k.Released, k.TableFull, told)
	if k.Isolated == 0 || told == 0 {
		t.Fatal("the root isolated nothing or told nobody")
	}
	if cq := f.Sws[0].Egress(0).Stats(signaling.PCPCongested).EnqPackets; cq == 0 {
		t.Error("the root sent nothing by its congested queue")
	}
	for h := 1; h <= 3; h++ {
		r := f.HostLogic[h].Scheme().(*scheme.CI).Isolation().C[0]
		cq := f.Hosts[h].Egress(0).Stats(signaling.PCPCongested).EnqPackets
		t.Logf("h%d eth0: %d isolations received, %d flows isolated by them, %d frames through its congested queue", h, r.RxIsolate, r.BySignal, cq)
		if r.BySignal > 0 && cq == 0 {
			t.Errorf("h%d isolated a flow but sent nothing by its congested queue", h)
		}
		if r.RxIsolate > 0 && r.BySignal == 0 {
			t.Errorf("h%d received %d isolations and isolated nothing", h, r.RxIsolate)
		}
	}
	var obeyed uint64
	for h := 1; h <= 3; h++ {
		obeyed += f.HostLogic[h].Scheme().(*scheme.CI).Isolation().C[0].BySignal
	}
	if obeyed == 0 {
		t.Error("no relay isolated a flow on the root's signal")
	}
}
