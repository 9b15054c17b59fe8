package transport

import (
	"testing"
	"time"
)

// hpccTest: T = 10 µs, a line (and every hop) of 8 Gb/s = 1e9 B/s =
// 1 byte/ns, so W_init = 1e9 B/s x 10 µs = 10000 bytes and B x T = 10000
// bytes; eta 0.95, maxStage 5, W_AI = W_init (1 - eta) / N = 10000 x
// 0.05 / 10 = 50 bytes (N = 10 here), MTU 1000 bytes.
var hpccTest = HPCCParams{Enabled: true, Eta: 0.95, MaxStage: 5, BaseRTT: 10 * time.Microsecond, WAIBytes: 50}

const hpccLine = 8_000_000_000

func hop(ts, tx, q uint32) INTHop {
	return INTHop{TS: ts, TxBytes: tx, QLen: q, RateKbps: hpccLine / 1000}
}

// HPCC's window after a known sequence of INT records on one hop,
// worked by hand from Algorithm 1 of the paper.
func TestHPCCWindow(t *testing.T) {
	h := NewHPCC(hpccTest, 1000, hpccLine)
	if h.Window() != 10_000 || h.Rate() != hpccLine || h.Packets() != 10 {
		t.Fatalf("start: W %v, rate %v", h.Window(), h.Rate())
	}
	steps := []struct {
		rec      INTHop
		una, hi  int64
		u, w, wc float64
		stage    int
	}{
		// The first records are only kept.
		{hop(0, 0, 0), 1, 10, 0, 10_000, 10_000, 0},
		// dt = 5000 ns, 6000 bytes sent: txRate 1.2 B/ns, u = min(20000,
		// 0)/10000 + 1.2/1 = 1.2; tau/T = 0.5, U = 0.5 x 0 + 0.5 x 1.2 =
		// 0.6. una 2 > lastSeq 0: an update; U < eta and stage 0 < 5:
		// W = Wc + W_AI = 10050, capped at W_init 10000; stage 1,
		// Wc = 10000, lastSeq = 10.
		{hop(5000, 6000, 20_000), 2, 10, 0.6, 10_000, 10_000, 1},
		// dt 5000, 6000 bytes: 1.2; qlen min(30000, 20000) = 20000:
		// 20000/10000 = 2; u = 3.2; U = 0.5 x 0.6 + 0.5 x 3.2 = 1.9.
		// una 4 <= 10: no update; U >= eta: W = Wc/(U/eta) + W_AI =
		// 10000/(1.9/0.95) + 50 = 5000 + 50 = 5050; Wc stays.
		{hop(10_000, 12_000, 30_000), 4, 12, 1.9, 5050, 10_000, 1},
		// dt 2000, 2000 bytes: 1.0; qlen min(10000, 30000)/10000 = 1.0;
		// u = 2.0; tau/T = 0.2: U = 0.8 x 1.9 + 0.2 x 2 = 1.92. una 11 >
		// 10: an update, multiplicative: W = 10000 x 0.95/1.92 + 50 =
		// 4947.916666... + 50 = 4997.916666...; stage 0, Wc = W,
		// lastSeq = 14.
		{hop(12_000, 14_000, 10_000), 11, 14, 1.92, 4997.916666666667, 4997.916666666667, 0},
		// dt 10000 (tau/T = 1), 5000 bytes: 0.5; qlen min(0, 10000) =
		// 0; u = 0.5; U = 0 x 1.92 + 1 x 0.5 = 0.5. una 15 > 14: an
		// update, additive: W = 4997.9166... + 50 = 5047.9166...; stage
		// 1.
		{hop(22_000, 19_000, 0), 15, 16, 0.5, 5047.916666666667, 5047.916666666667, 1},
	}
	for i, s := range steps {
		h.OnAck([]INTHop{s.rec}, s.una, s.hi)
		if !near(h.U(), s.u) || !near(h.Window(), s.w) || !near(h.Reference(), s.wc) || h.Stage() != s.stage {
			t.Fatalf("step %d: U %v W %v Wc %v stage %d; want %v %v %v %d", i, h.U(), h.Window(), h.Reference(), h.Stage(), s.u, s.w, s.wc, s.stage)
		}
	}
	// R = W/T = 5047.9166 B / 10 µs = 504.79 MB/s = 4.0383 Gb/s; six
	// packets of 1000 bytes cover W.
	if !near(h.Rate(), 5047.916666666667*8e9/10_000) || h.Packets() != 6 {
		t.Fatalf("rate %v, packets %d", h.Rate(), h.Packets())
	}
	if h.C != (HPCCCounters{ACKs: 4, Updates: 3, Cuts: 1}) {
		t.Fatalf("counters %+v", h.C)
	}
	// Four more additive updates at U = 0.5 (dt = T: U = u) bring the
	// stage to 5: each adds 50. The next update is multiplicative though
	// U < eta: W = Wc/(0.5/0.95) + 50 = 1.9 Wc + 50, capped at W_init.
	ts, tx, una := uint32(22_000), uint32(19_000), int64(16)
	for i := range 5 {
		ts, tx = ts+10_000, tx+5000
		una++
		h.OnAck([]INTHop{hop(ts, tx, 0)}, una, una)
		if i < 4 {
			if want := 5047.916666666667 + 50*float64(i+1); !near(h.Window(), want) || h.Stage() != 2+i {
				t.Fatalf("additive %d: W %v want %v, stage %d", i, h.Window(), want, h.Stage())
			}
		}
	}
	if want := min(1.9*5247.916666666667+50, 10_000); !near(h.Window(), want) || h.Stage() != 0 {
		t.Fatalf("max stage: W %v want %v, stage %d", h.Window(), want, h.Stage())
	}
}

// The most loaded hop decides, with its own tau; counters wrap.
func TestHPCCHops(t *testing.T) {
	h := NewHPCC(hpccTest, 1000, hpccLine)
	h.OnAck([]INTHop{hop(1000, 0, 0), hop(4_294_962_296, 4_294_967_000, 5000)}, 1, 10)
	// Hop 0: dt 2000, 1000 bytes: u = 0.5. Hop 1: its clock wrapped,
	// dt = 5000 (2^32 - 4294962296 = 5000), bytes 4000 + 296 = 4296
	// wrapped too: 0.8592; qlen min(5000, 5000)/10000 = 0.5; u = 1.3592.
	// Hop 1 is the max: tau/T = 0.5, U = 0.5 x 1.3592 = 0.6796.
	h.OnAck([]INTHop{hop(3000, 1000, 0), hop(0, 4000, 5000)}, 2, 10)
	if !near(h.U(), 0.6796) {
		t.Fatalf("U %v, want 0.6796", h.U())
	}
	// A path of another length: the records are kept, nothing else.
	h.OnAck([]INTHop{hop(9000, 9000, 90_000)}, 3, 10)
	if !near(h.U(), 0.6796) || h.C.ACKs != 1 {
		t.Fatalf("after a new path: U %v, %+v", h.U(), h.C)
	}
}

// A sender under HPCC paces at W/T and keeps at most W outstanding.
func TestHPCCSender(t *testing.T) {
	p := testParams()
	p.DCQCN.Enabled = false
	p.LineRateBps = hpccLine
	p.HPCC = hpccTest
	s, err := NewSender(Lossless, p, 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if s.Window() != 10 || s.Rate() != hpccLine || s.HPCC() == nil {
		t.Fatalf("window %d, rate %v", s.Window(), s.Rate())
	}
	now := int64(0)
	for range 10 {
		now = max(now, s.NextSendTime())
		if _, ok := s.Next(now); !ok {
			t.Fatal("Next refused")
		}
	}
	e := Echo{Hops: 1}
	e.Hop[0] = hop(0, 0, 0)
	s.OnAckEcho(0, &e, now)
	e.Hop[0] = hop(5000, 6000, 20_000)
	s.OnAckEcho(1, &e, now)
	e.Hop[0] = hop(10_000, 12_000, 30_000)
	s.OnAckEcho(3, &e, now)
	// As TestHPCCWindow's third step: W = 5050, six packets, R = 5050 B
	// per 10 µs = 4.04 Gb/s.
	if s.Window() != 6 || !near(s.Rate(), 4.04e9) {
		t.Fatalf("window %d, rate %v", s.Window(), s.Rate())
	}
	p.DCTCP = DCTCPParams{Enabled: true, G: 0.5}
	if p.Validate() == nil {
		t.Fatal("HPCC with DCTCP validated")
	}
}
