package hostd

import (
	"slices"
	"testing"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
)

// flowSim is a flow of the fluid model TestATEFakeClock runs: it sends
// at a fixed rate until size bytes are sent, and each byte is
// acknowledged one RTT after it was sent.
type flowSim struct {
	hbd        bool
	size, sent int64
	acked      int64
	start      int64 // fake µs
}

// On a fake clock (µs), a source starts a flow every 10 µs for 400 µs,
// then none for 400 µs, then again for 400 µs: each flow sends 2000 bytes at 10
// bytes/µs and is acknowledged 100 µs later. With B_H 10 000 bytes and
// p 0.9, the first flows go to the HBD until T_H reaches 9000, the next
// ones to the network domain; as the HBD's flows are acknowledged and
// end, and after the pause, flows go to it again. Every choice is HBD exactly when T_H < p·B_H at that instant.
func TestATEFakeClock(t *testing.T) {
	a, err := NewATE(0.9, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	const rate, rtt, size = 10, 100, 2000
	var flows []*flowSim
	var choices []bool
	for now := int64(0); now < 1600; now++ {
		for _, f := range flows {
			sent := min(f.size, (now-f.start)*rate)
			acked := min(f.size, max(0, (now-f.start-rtt)*rate))
			a.Add(f.hbd, (sent-f.sent)-(acked-f.acked))
			f.sent, f.acked = sent, acked
		}
		if now%10 != 0 || (now >= 400 && now < 800) || now >= 1200 {
			continue
		}
		th, _ := a.InFlight()
		hbd := a.HBD()
		if hbd != (th < 9000) {
			t.Fatalf("at %d µs: T_H %d, chose HBD %v", now, th, hbd)
		}
		a.Chose(hbd)
		choices = append(choices, hbd)
		flows = append(flows, &flowSim{hbd: hbd, size: size, start: now})
	}
	// HBD first, then the network as T_H passes 9000, then the HBD
	// again as its first flows are acknowledged; after the pause, the
	// second burst starts in the drained HBD.
	net := slices.Index(choices, false)
	back := slices.Index(choices[max(net, 0):], true)
	if !choices[0] || net < 0 || back < 0 || !choices[40] {
		t.Fatalf("choices: %v", choices)
	}
	st := a.Stats()
	if st.HBD == 0 || st.Network == 0 || st.Switches < 3 || st.HBD+st.Network != uint64(len(choices)) {
		t.Fatalf("stats %+v over %d choices", st, len(choices))
	}
	if th, tn := a.InFlight(); th != 0 || tn != 0 {
		t.Fatalf("in flight after every flow ended: %d, %d", th, tn)
	}
	if st.LimitBytes != 9000 || st.CapHBDBytes != 10_000 || st.P != 0.9 {
		t.Fatalf("parameters %+v", st)
	}
}

func TestNewATEBad(t *testing.T) {
	for _, c := range []struct {
		p   float64
		cap int64
	}{{0, 1}, {1.1, 1}, {-1, 1}, {0.5, 0}} {
		if _, err := NewATE(c.p, c.cap); err == nil {
			t.Errorf("NewATE(%g, %d) accepted", c.p, c.cap)
		}
	}
}

// The per-flow decision (the domain, then the level order) allocates
// nothing.
func TestATEAllocs(t *testing.T) {
	h := NewHost(bcube.MustNew(4, 2), 0, bcube.Policy{ATE: true}, noFC(bcube.MustNew(4, 2), 0))
	if err := h.EnableATE(0.9, 1000); err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(100, func() {
		hbd := h.ate.HBD()
		if _, ok := h.ateOrder(63, 7, hbd); !ok {
			t.Fatal("no choice to h63")
		}
		h.ate.Chose(hbd)
		h.ate.Add(hbd, 10)
	})
	if n != 0 {
		t.Fatalf("%v allocations per decision", n)
	}
}

// ateOrder on BCube(4,2): the HBD path starts at level 0, a network path
// at a level above 0 where the destination differs; no choice when the
// destination differs in one domain only.
func TestATEOrder(t *testing.T) {
	tp := bcube.MustNew(4, 2)
	h := NewHost(tp, 0, bcube.Policy{ATE: true}, noFC(tp, 0))
	for _, c := range []struct {
		dst, id int
		hbd     bool
		want    string // "" : no choice
	}{
		{dst: 1, want: ""},                      // digit 0 only
		{dst: 4, want: ""},                      // digit 1 only
		{dst: 4 + 16, want: ""},                 // digits 1 and 2
		{dst: 5, hbd: true, want: "0,2,1"},      // digits 0 and 1
		{dst: 5, id: 3, want: "1,0,2"},          // only level 1 differs above 0
		{dst: 1 + 16, id: 2, want: "2,1,0"},     // only level 2
		{dst: 1 + 4 + 16, id: 0, want: "1,0,2"}, // levels 1 and 2: by id
		{dst: 1 + 4 + 16, id: 1, want: "2,1,0"},
	} {
		o, ok := h.ateOrder(c.dst, c.id, c.hbd)
		got := ""
		if ok {
			got = o.String()
		}
		if got != c.want {
			t.Errorf("ateOrder(h%d, id %d, hbd %v) = %q, want %q", c.dst, c.id, c.hbd, got, c.want)
		}
	}
}

// ATE in the NIC: h0 of BCube(2,1) with B_H 1000 bytes. A flow to h3
// (which differs in both digits) leaves by eth0, the HBD; once its first
// packet is out, T_H (1024) is past p·B_H (900), so the next flow to h3
// leaves by eth1 with a source port whose hash routes it 1,0; a flow to
// h1 (digit 0 only) has no choice. When h3 has acknowledged everything,
// nothing is in flight and a new flow to h3 goes to the HBD again.
func TestATERDMA(t *testing.T) {
	tp := bcube.MustNew(2, 1)
	p := fastParams()
	a := newNICPolicy(t, tp, 0, p, bcube.Policy{ATE: true}, func(h *Host) error { return h.EnableATE(0.9, 1000) })
	b := newNIC(t, tp, 3, p)
	start := func(dst int) api.RDMAFlow {
		t.Helper()
		fs, err := a.h.StartRDMA(api.RDMARequest{Dst: dst, Bytes: 4096})
		if err != nil {
			t.Fatal(err)
		}
		return fs[0]
	}
	f1 := start(3)
	if f1.Port != 0 || f1.Order != "0,1" {
		t.Fatalf("first flow: port %d order %s, want the HBD", f1.Port, f1.Order)
	}
	a.h.r.Produce(a.e.Now())
	if th, _ := a.h.ate.InFlight(); th < 1024 {
		t.Fatalf("T_H %d after the first packet", th)
	}
	f2 := start(3)
	if f2.Port != 1 || f2.Order != "1,0" {
		t.Fatalf("second flow: port %d order %s, want the network", f2.Port, f2.Order)
	}
	// Its source port routes it 1,0 at every node (relays use the hash).
	tuple := bcube.FiveTuple{Src: bcube.ServerIP(0).As4(), Dst: bcube.ServerIP(3).As4(), Proto: 17, SPort: f2.SPort, DPort: 4791}
	if o := tp.FlowOrder(&bcube.Policy{}, &tuple); o.String() != "1,0" {
		t.Fatalf("the second flow's hash routes it %s", o)
	}
	// Carry both flows to h3 and its answers back until both are done.
	toB := func(q int, fr []byte) { b.deliver(1, fr) }
	toA := func(q int, fr []byte) { a.deliver(0, fr) }
	for i := 0; ; i++ {
		if i == 100000 {
			t.Fatal("flows still run")
		}
		now := a.e.Now()
		a.h.r.Tick(now)
		b.h.r.Tick(now)
		a.h.r.Produce(now)
		a.drain(0, toB)
		a.drain(1, toB)
		b.drain(0, toA)
		b.drain(1, toA)
		rep := a.h.RDMA([]int{f1.ID, f2.ID})
		if rep.Flows[0].State != api.RDMARunning && rep.Flows[1].State != api.RDMARunning {
			if rep.Flows[0].State != api.RDMADone || rep.Flows[1].State != api.RDMADone {
				t.Fatalf("flows: %+v", rep.Flows)
			}
			break
		}
		time.Sleep(10 * time.Microsecond)
	}
	if th, tn := a.h.ate.InFlight(); th != 0 || tn != 0 {
		t.Fatalf("in flight after both flows: %d, %d", th, tn)
	}
	if f := start(3); f.Port != 0 {
		t.Fatalf("after the HBD drained: port %d", f.Port)
	}
	if f := start(1); f.Port != 0 {
		t.Fatalf("flow to h1: port %d", f.Port)
	}
	if _, err := a.h.StartRDMA(api.RDMARequest{Dst: 3, Bytes: 4096, Order: "1,0"}); err != nil {
		t.Fatal(err)
	}
	st := a.h.HostStats().ATE
	if st.HBD != 2 || st.Network != 1 || st.Switches != 2 || st.Fixed != 1 || st.Ordered != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// BenchmarkATEDecision times the per-flow decision on BCube(4,1): the
// domain, the level order, the count.
func BenchmarkATEDecision(b *testing.B) {
	h := NewHost(bcube.MustNew(4, 1), 0, bcube.Policy{ATE: true}, noFC(bcube.MustNew(4, 1), 0))
	if err := h.EnableATE(0.9, 1000); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		hbd := h.ate.HBD()
		h.ateOrder(15, i, hbd)
		h.ate.Chose(hbd)
		h.ate.Add(hbd, int64(i%3-1)*1000)
		i++
	}
}
