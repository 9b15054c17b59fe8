package dataplane

import (
	"encoding/binary"
	"reflect"
	"testing"
	"time"

	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/queues"
	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/wire/header"
)

// Every queue's DRR quantum reaches the port's stats, the weights' at
// the data queues, none at the HQ and a strict queue.
func TestSnapshotQuanta(t *testing.T) {
	qc, err := queues.EgressConfig{Queues: 5, HQ: 4, Strict: []int{3}}.Weighted([]int{1, 3, 2})
	if err != nil {
		t.Fatal(err)
	}
	r := newRigPorts(t, PortSpec{Queues: qc}, Options{BufferBytes: 1 << 20}, nil)
	ps, _ := r.e.Snapshot()
	want := []int{1518, 3 * 1518, 2 * 1518, 0, 0}
	for _, p := range ps {
		var got []int
		for _, q := range p.Queues {
			got = append(got, q.Quantum)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("port %s: quanta %v, want %v", p.Name, got, want)
		}
	}
}

// An egress's ECN histogram reaches the port's stats, without a bucket
// nothing can land in, and taking it allocates nothing on the worker's
// thread.
func TestSnapshotECNHist(t *testing.T) {
	for _, tt := range []struct {
		name string
		ecn  queues.ECNConfig
		want *api.ECNHist
	}{
		{"off", queues.ECNConfig{}, nil},
		{"RED", queues.ECNConfig{KminBytes: 2000, KmaxBytes: 6000, Pmax: 1}, &api.ECNHist{
			Edges: []int{2000, 2400, 2800, 3200, 3600, 4000, 4400, 4800, 5200, 5600, 6000},
			// At 0, 0, 1000 | 2000 | 3000 | 4000 | 5000 | 6000 to 9000 bytes.
			Decided: []uint64{3, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 4},
		}},
		{"one threshold", queues.ECNConfig{KminBytes: 2500, KmaxBytes: 2500, Pmax: 1}, &api.ECNHist{
			Edges:   []int{2500},
			Decided: []uint64{4, 7},
			Marked:  []uint64{0, 7},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// 1 kb/s: the first frame goes on the wire, the others wait,
			// joining a queue 1000 bytes longer each.
			port := PortSpec{RateBps: 1000, Queues: queues.EgressConfig{Queues: 1, HQ: -1, ECN: tt.ecn}}
			r := newRigPorts(t, port, Options{BufferBytes: 1 << 20}, nil)
			for range 11 {
				r.send(1000)
				r.e.pass()
			}
			r.e.takeSnapshot(false)
			if allocs := testing.AllocsPerRun(100, func() { r.e.takeSnapshot(false) }); allocs != 0 {
				t.Errorf("%v allocations per snapshot", allocs)
			}
			ps, _ := r.e.Snapshot()
			if ps[0].ECNHist != nil {
				t.Errorf("port 0 forwarded nothing, yet has %+v", ps[0].ECNHist)
			}
			got := ps[1].ECNHist
			if tt.want == nil || got == nil {
				if got != tt.want {
					t.Fatalf("histogram %+v, want %+v", got, tt.want)
				}
				return
			}
			if !reflect.DeepEqual(got.Edges, tt.want.Edges) || !reflect.DeepEqual(got.Decided, tt.want.Decided) {
				t.Fatalf("edges %v decided %v, want %v %v", got.Edges, got.Decided, tt.want.Edges, tt.want.Decided)
			}
			last := len(got.Marked) - 1
			if len(got.Marked) != len(got.Decided) || got.Marked[0] != 0 || got.Marked[last] != got.Decided[last] || got.Final != nil {
				t.Errorf("marked %v final %v", got.Marked, got.Final)
			}
			if tt.want.Marked != nil && !reflect.DeepEqual(got.Marked, tt.want.Marked) {
				t.Errorf("marked %v, want %v", got.Marked, tt.want.Marked)
			}
		})
	}
}

// A scheme's marks appear apart from RED's only where they differ.
func TestExportECNFinal(t *testing.T) {
	var h queues.ECNHist
	for i := range h.Edges {
		h.Edges[i] = 1000 // one threshold
	}
	h.Decided[0], h.Decided[queues.ECNBuckets-1] = 5, 3
	h.Marked[queues.ECNBuckets-1], h.Final[queues.ECNBuckets-1] = 3, 3
	got := exportECN(&h)
	want := &api.ECNHist{Edges: []int{1000}, Decided: []uint64{5, 3}, Marked: []uint64{0, 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RED's marks: %+v, want %+v", got, want)
	}
	h.Final[0] = 2
	want.Final = []uint64{2, 3}
	if got := exportECN(&h); !reflect.DeepEqual(got, want) {
		t.Errorf("a scheme's marks: %+v, want %+v", got, want)
	}
	if got := exportECN(&queues.ECNHist{}); got != nil {
		t.Errorf("nothing decided: %+v", got)
	}
}

// timingSource gives port 1 a class of pause timing, as a scheme does.
type timingSource struct{}

func (timingSource) PortCounters(int, map[string]uint64) {}

func (timingSource) FCTiming(p int, t *signaling.FCTiming) {
	t.N = 0
	if p != 1 {
		return
	}
	c := signaling.ClassTiming{Class: "B", Xoff: 150_000, Xon: 100_000, Peak: 171_000, Pauses: 2, Refreshes: 7, Resumes: 1,
		AtPauseMin: 150_000, AtPauseMax: 150_900, AtResumeMin: 99_100, AtResumeMax: 99_100}
	c.Lat.Count, c.Lat.SumNs, c.Lat.MaxNs, c.Lat.Untimed = 3, 7000, 3000, 1
	c.Lat.Buckets[11], c.Lat.Buckets[12] = 2, 1 // 2000, 2000, 3000 ns
	c.Trip.Count, c.Trip.SumNs, c.Trip.MaxNs, c.Overshoot = 1, 2500, 2500, 21_000
	c.Trip.Buckets[12] = 1
	t.C[0], t.N, t.BDPBytes = c, 1, 25_000
}

// A scheme's pause timing reaches the port's stats, each histogram up to
// its last non-empty bucket, and taking it allocates nothing on the
// worker's thread; a port with none has no fc_timing.
func TestSnapshotFCTiming(t *testing.T) {
	r := newRigPorts(t, PortSpec{Queues: queues.EgressConfig{Queues: 1, HQ: -1}}, Options{BufferBytes: 1 << 20}, nil)
	r.e.SetPortCounters(timingSource{})
	r.e.takeSnapshot(false)
	if allocs := testing.AllocsPerRun(100, func() { r.e.takeSnapshot(false) }); allocs != 0 {
		t.Errorf("%v allocations per snapshot", allocs)
	}
	ps, _ := r.e.Snapshot()
	if ps[0].FCTiming != nil {
		t.Errorf("port 0 has no classes, yet %+v", ps[0].FCTiming)
	}
	want := &api.FCTiming{BDPBytes: 25_000, Classes: []api.FCClass{{
		Class: "B", XoffBytes: 150_000, XonBytes: 100_000, PeakBytes: 171_000, Pauses: 2, Refreshes: 7, Resumes: 1,
		AtPauseMinBytes: 150_000, AtPauseMaxBytes: 150_900, AtResumeMinBytes: 99_100, AtResumeMaxBytes: 99_100,
		PauseLatNs: api.PauseLat{Count: 3, Sum: 7000, Max: 3000, Hist: []uint64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1}, Untimed: 1},
		TripNs:     api.PauseLat{Count: 1, Sum: 2500, Max: 2500, Hist: []uint64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}, OvershootBytes: 21_000,
	}}}
	if got := ps[1].FCTiming; !reflect.DeepEqual(got, want) {
		t.Errorf("port 1:\n got %+v\nwant %+v", got, want)
	}
	var none signaling.FCTiming
	none.N = 1
	if c := exportFCTiming(&none).Classes[0]; c.PauseLatNs.Hist == nil || len(c.PauseLatNs.Hist) != 0 || c.TripNs.Hist == nil || len(c.TripNs.Hist) != 0 {
		t.Errorf("nothing timed: hists %#v, %#v, want []", c.PauseLatNs.Hist, c.TripNs.Hist)
	}
}

// An egress that marks at dequeue sets CE on the ECN-capable IPv4
// packets that leave at least K bytes behind, keeps their checksums
// valid, counts the marks, and leaves other frames alone.
func TestMarkAtDequeue(t *testing.T) {
	const k = 2500
	ecn := queues.ECNConfig{KminBytes: k, KmaxBytes: k, Pmax: 1, AtDequeue: true}
	// 8 Mb/s: a 1,000-byte frame leaves every millisecond.
	port := PortSpec{RateBps: 8_000_000, Queues: queues.EgressConfig{Queues: 1, HQ: -1, ECN: ecn}}
	r := newRigPorts(t, port, Options{BufferBytes: 1 << 20}, nil)
	frame := func(tos byte) []byte {
		b := make([]byte, 1000)
		binary.BigEndian.PutUint16(b[12:14], header.EtherTypeIPv4)
		ip := b[header.EthLen:]
		ip[0], ip[1], ip[8], ip[9] = 0x45, tos, 64, header.ProtoUDP
		binary.BigEndian.PutUint16(ip[2:4], uint16(len(ip)))
		binary.BigEndian.PutUint16(ip[10:12], header.IPv4Checksum(ip[:20]))
		return b
	}
	// Eleven frames join at once: the i-th to leave leaves (10-i) x
	// 1,000 bytes behind. The last is not ECN-capable.
	for i := range 11 {
		tos := byte(ecnECT0)
		if i == 10 {
			tos = header.ECNNotECT
		}
		f := frame(tos)
		r.sendBytes(f, len(f))
	}
	var got []byte
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < 11 && time.Now().Before(deadline) {
		r.e.pass()
		for r.far[1].Receive(r.desc[:]) > 0 {
			d := r.desc[0]
			ip := header.IPv4(r.farMem[1][d.Addr+header.EthLen : d.Addr+uint64(d.Len)])
			if header.IPv4Checksum(ip[:20]) != 0 {
				t.Fatalf("frame %d: IPv4 checksum broken", len(got))
			}
			got = append(got, ip.ECN())
			r.addrs[0] = d.Addr &^ (tFrame - 1)
			r.far[1].Fill(r.addrs[:1])
		}
		time.Sleep(100 * time.Microsecond)
	}
	// 10,000 to 3,000 bytes behind: CE; 2,000 and 1,000: not; the last
	// cannot carry it.
	want := []byte{header.ECNCE, header.ECNCE, header.ECNCE, header.ECNCE, header.ECNCE, header.ECNCE, header.ECNCE, header.ECNCE,
		ecnECT0, ecnECT0, header.ECNNotECT}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ECN fields leaving %v, want %v", got, want)
	}
	ps, _ := r.e.Snapshot()
	if m := ps[1].Queues[0].ECNMarks; m != 8 {
		t.Fatalf("%d marks counted, want 8", m)
	}
}

// ecnECT0 is the ECT(0) codepoint (RFC 3168).
const ecnECT0 = 2

// A sample (SnapshotAt(true)) has the full stats' scalar counters, lag,
// round trips and queue counts, value for value, and none of the maps
// and histograms a periodic sample does not read.
func TestSnapshotSample(t *testing.T) {
	port := PortSpec{RateBps: 1000, Queues: queues.EgressConfig{Queues: 2, HQ: 1, ECN: queues.ECNConfig{KminBytes: 100, KmaxBytes: 5000, Pmax: 1}}}
	r := newRigPorts(t, port, Options{BufferBytes: 1 << 20}, nil)
	r.e.SetPortCounters(timingSource{})
	for range 11 {
		r.send(1000)
		r.e.pass()
	}
	full, ffs, _, _, _ := r.e.SnapshotAt(false)
	got, gfs, _, _, _ := r.e.SnapshotAt(true)
	if ffs != gfs {
		t.Errorf("frames: sample %+v, full %+v", gfs, ffs)
	}
	if len(got) != len(full) {
		t.Fatalf("%d ports in the sample, %d in the full stats", len(got), len(full))
	}
	if full[1].ECNHist == nil || full[1].FCTiming == nil || full[1].Drops == nil || full[1].Queues[0].Drops == nil {
		t.Fatalf("the full stats lack what the test compares: %+v", full[1])
	}
	for i := range full {
		f, s := full[i], got[i]
		if s.Drops != nil || s.Signals != nil || s.ECNHist != nil || s.FCTiming != nil {
			t.Errorf("port %d: the sample has drops %v, signals %v, ECN %v, timing %v", i, s.Drops, s.Signals, s.ECNHist, s.FCTiming)
		}
		// The rest is the full stats' but for the queues' detail.
		fq, sq := f.Queues, s.Queues
		f.Drops, f.Signals, f.ECNHist, f.FCTiming, f.Queues, s.Queues = nil, nil, nil, nil, nil, nil
		if !reflect.DeepEqual(s, f) {
			t.Errorf("port %d:\nsample %+v\n  full %+v", i, s, f)
		}
		if len(sq) != len(fq) {
			t.Fatalf("port %d: %d queues in the sample, %d in the full stats", i, len(sq), len(fq))
		}
		for q := range fq {
			want := api.QueueStats{Index: fq[q].Index, Name: fq[q].Name, EnqPackets: fq[q].EnqPackets, EnqBytes: fq[q].EnqBytes,
				DeqPackets: fq[q].DeqPackets, DeqBytes: fq[q].DeqBytes, Packets: fq[q].Packets, Bytes: fq[q].Bytes}
			if !reflect.DeepEqual(sq[q], want) {
				t.Errorf("port %d queue %d: sample %+v, want %+v", i, q, sq[q], want)
			}
		}
	}
	if q := got[1].Queues[0]; got[1].QueueBytes != 10_000 || q.DeqPackets != 1 || q.Packets != 10 || q.Bytes != 10_000 {
		t.Errorf("port 1 dequeued one frame and queued ten: %+v", got[1])
	}
}
