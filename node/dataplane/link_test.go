package dataplane

import (
	"net"
	"testing"
	"time"

	"github.com/bcfab/bcfab/signaling"
	"github.com/bcfab/bcfab/xdp"
)

// delayRig is a rig on a fake clock whose ports are 10 Mb/s links with a
// delay and probes, served as a punctual worker would (a pass at every
// deadline the engine names).
type delayRig struct {
	*rig
	now int64
}

var (
	macNear = net.HardwareAddr{2, 0x20, 0, 0, 0, 1}
	macFar  = net.HardwareAddr{2, 0x10, 0, 0, 0, 1}
)

func newDelayRig(t *testing.T, delay, probe time.Duration) *delayRig {
	lr := &delayRig{}
	lr.rig = newRigPorts(t, PortSpec{RateBps: 10_000_000, Delay: delay, MAC: macNear, PeerMAC: macFar},
		Options{BufferBytes: 1 << 20, ProbeEvery: probe}, func(e *Engine) { e.clock = func() int64 { return lr.now } })
	lr.e.StartProbes()
	return lr
}

// arrivals runs the engine to end and returns when each frame reached
// port 1's far end, with its bytes.
func (r *delayRig) arrivals(end int64) (times []int64, frames [][]byte) {
	for {
		r.e.step(r.now)
		for r.far[1].Receive(r.desc[:]) > 0 {
			d := r.desc[0]
			times = append(times, r.now)
			frames = append(frames, append([]byte(nil), r.farMem[1][d.Addr:d.Addr+uint64(d.Len)]...))
			r.addrs[0] = d.Addr &^ (tFrame - 1)
			r.far[1].Fill(r.addrs[:1])
		}
		d := r.e.deadline(r.now)
		if d < 0 || d > end {
			break
		}
		r.now = max(d, r.now)
	}
	r.now = end
	return times, frames
}

// A frame reaches the peer when its last bit has been serialised plus the
// link's delay (store and forward), and a frame that had to wait for the
// link behind another one serialisation later: 1,000 bytes + 24 of
// framing take 819.2 µs at 10 Mb/s.
func TestLinkStoreAndForward(t *testing.T) {
	const delay = 2 * time.Millisecond
	r := newDelayRig(t, delay, 0)
	for range 3 {
		r.send(1000)
	}
	times, _ := r.arrivals(int64(time.Second))
	ser := int64(1024 * 8 * 100) // ns per frame at 10 Mb/s
	want := []int64{ser + int64(delay), 2*ser + int64(delay), 3*ser + int64(delay)}
	if len(times) != len(want) {
		t.Fatalf("%d frames arrived, want %d", len(times), len(want))
	}
	for i := range want {
		if times[i] != want[i] {
			t.Errorf("frame %d arrived at %v, want %v", i, time.Duration(times[i]), time.Duration(want[i]))
		}
	}
}

// SetLinkDelay changes the hold of every shaped port for the frames that
// leave from then on.
func TestSetLinkDelay(t *testing.T) {
	r := newDelayRig(t, 5*time.Millisecond, 0)
	r.e.SetLinkDelay(int64(time.Millisecond))
	r.send(1000)
	times, _ := r.arrivals(int64(time.Second))
	if want := int64(1024*8*100) + int64(time.Millisecond); len(times) != 1 || times[0] != want {
		t.Fatalf("arrivals %v, want one at %v", times, time.Duration(want))
	}
}

// Probes: a port sends one every ProbeEvery in its HQ, stamped with the
// time its last bit leaves the link; the peer's Echo, carrying the
// forward delay it measured, gives the port one round trip: forward plus
// the Echo's own way back, neither frame's serialisation counted.
func TestProbeRoundTrip(t *testing.T) {
	const delay = 3 * time.Millisecond
	r := newDelayRig(t, delay, 100*time.Millisecond)
	times, frames := r.arrivals(int64(260 * time.Millisecond))
	var probes []int
	for i, b := range frames {
		if signaling.IsProbe(b) {
			probes = append(probes, i)
		}
	}
	// Each port probes every 100 ms, the first within an interval: port
	// 1's probes reach the far end (the rig's port 0 sends its own
	// elsewhere).
	if len(probes) < 2 || len(probes) > 3 {
		t.Fatalf("%d probes arrived at port 1's peer in 260 ms, want 2 or 3", len(probes))
	}
	i := probes[0]
	sig, err := signaling.ParseSignal(frames[i])
	if err != nil || sig.Type() != signaling.TypeProbe {
		t.Fatalf("probe %v: %v", frames[i], err)
	}
	sent := sig.ProbeSent() - r.e.monoBase // engine time of its last bit
	if got := times[i] - sent; got != int64(delay) {
		t.Errorf("probe reached the peer %v after its last bit, want the link delay %v", time.Duration(got), delay)
	}
	if sig.Dst().String() != macFar.String() || sig.Src().String() != macNear.String() {
		t.Errorf("probe from %s to %s", sig.Src(), sig.Dst())
	}
	// The peer answers 1.5 ms after the probe arrived (its own latency),
	// its Echo's last bit leaving then, and the Echo takes 2.5 ms back:
	// the round trip is 3 + 2.5 ms, whatever the peer's latency.
	fwd := int64(delay)
	echo := make([]byte, signaling.FrameLen)
	signaling.PutProbe(echo, macNear, macFar, signaling.TypeEcho, sig.Seq(), fwd)
	echoSent := times[i] + int64(1500*time.Microsecond)
	signaling.SetProbeSent(echo, r.e.monoBase+echoSent)
	r.now = echoSent + int64(2500*time.Microsecond)
	r.inject(t, 1, echo)
	r.e.pass()
	ps, _ := r.e.Snapshot()
	rtt := ps[1].RTT
	if rtt == nil || rtt.Count != 1 {
		t.Fatalf("port 1's round trips: %+v", rtt)
	}
	if got, want := rtt.MinNs, int64(5500*time.Microsecond); got != want {
		t.Errorf("round trip %v, want %v", time.Duration(got), time.Duration(want))
	}
	if ps[0].RTT != nil {
		t.Errorf("port 0 measured %+v without an echo", ps[0].RTT)
	}
}

// A probe burst (a lab's calibration): the next n probes every apart,
// the first within every, then the ports probe at their interval again;
// a burst the engine cannot send is refused.
func TestProbeBurst(t *testing.T) {
	r := newDelayRig(t, time.Millisecond, 100*time.Millisecond)
	if err := r.e.ProbeBurst(10*time.Millisecond, 5); err != nil {
		t.Fatal(err)
	}
	times, frames := r.arrivals(int64(200 * time.Millisecond))
	var at []int64
	for i, b := range frames {
		if signaling.IsProbe(b) {
			at = append(at, times[i])
		}
	}
	if len(at) != 6 {
		t.Fatalf("%d probes arrived at port 1's peer in 200 ms (at %v), want the burst's 5 and one at the interval", len(at), at)
	}
	if at[0] > int64(10*time.Millisecond+2*time.Millisecond) {
		t.Errorf("the burst's first probe arrived at %v, want within 10 ms and the link", time.Duration(at[0]))
	}
	for i := 1; i < len(at); i++ {
		want := 10 * time.Millisecond
		if i == 5 {
			want = 100 * time.Millisecond
		}
		if got := time.Duration(at[i] - at[i-1]); got != want {
			t.Errorf("probe %d arrived %v after the one before, want %v", i, got, want)
		}
	}
	for _, c := range []struct {
		every time.Duration
		n     int
	}{{0, 5}, {200 * time.Millisecond, 5}, {10 * time.Millisecond, 0}, {10 * time.Millisecond, maxProbeBurst + 1}} {
		if err := r.e.ProbeBurst(c.every, c.n); err == nil {
			t.Errorf("a burst of %d every %v was accepted", c.n, c.every)
		}
	}
	quiet := newDelayRig(t, time.Millisecond, 0)
	if err := quiet.e.ProbeBurst(10*time.Millisecond, 5); err == nil {
		t.Error("an engine without probes accepted a burst")
	}
}

// A probe that arrives is answered with an Echo in the HQ, carrying the
// forward delay; a malformed probe is dropped and counted.
func TestProbeAnswered(t *testing.T) {
	r := newDelayRig(t, time.Millisecond, time.Hour) // no probes of its own in the test
	probe := make([]byte, signaling.FrameLen)
	signaling.PutProbe(probe, macNear, macFar, signaling.TypeProbe, 7, 0)
	signaling.SetProbeSent(probe, r.e.monoBase+1000)
	r.now = int64(3 * time.Millisecond)
	r.inject(t, 1, probe)
	_, frames := r.arrivals(int64(10 * time.Millisecond))
	if len(frames) != 1 {
		t.Fatalf("%d frames back, want the Echo", len(frames))
	}
	sig, err := signaling.ParseSignal(frames[0])
	if err != nil || sig.Type() != signaling.TypeEcho || sig.Seq() != 7 || sig.ProbeForward() != int64(3*time.Millisecond)-1000 {
		t.Fatalf("echo %v: %v", frames[0], err)
	}
	bad := append([]byte(nil), probe...)
	bad[signaling.HeaderLen-24+3] = 0x80 // a flag bit no probe has
	r.inject(t, 1, bad)
	r.e.pass()
	ps, _ := r.e.Snapshot()
	if ps[1].Drops["malformed"] != 1 {
		t.Errorf("drops %v, want one malformed", ps[1].Drops)
	}
}

// Probe frames whose stamps no node could have written — unstamped, or
// a one-way delay below -1 s or above 10 s on the clock every node shares
// — are dropped as malformed: no Echo answers them, and no round trip
// enters the histogram or the delay line's steering.
func TestProbeForged(t *testing.T) {
	r := newDelayRig(t, time.Millisecond, time.Hour)
	r.e.modelRTT = int64(2 * time.Millisecond)
	r.now = int64(20 * time.Second)
	now := r.e.monoBase + r.now
	var forged [][]byte
	for _, c := range []struct {
		typ       uint8
		sent, fwd int64
	}{
		{signaling.TypeProbe, 0, 0},
		{signaling.TypeProbe, now - int64(11*time.Second), 0},
		{signaling.TypeProbe, now + int64(2*time.Second), 0},
		{signaling.TypeProbe, 0x3030303030303030, 0},
		{signaling.TypeEcho, 0, int64(time.Millisecond)},
		{signaling.TypeEcho, now - int64(time.Millisecond), int64(11 * time.Second)},
		{signaling.TypeEcho, now - int64(time.Millisecond), -int64(2 * time.Second)},
		{signaling.TypeEcho, 0x3030303030303030, 0x3030303030303030},
	} {
		b := make([]byte, signaling.FrameLen)
		signaling.PutProbe(b, macNear, macFar, c.typ, 1, c.fwd)
		signaling.SetProbeSent(b, c.sent)
		forged = append(forged, b)
	}
	delay := r.e.ports[1].delayNs
	for _, b := range forged {
		r.inject(t, 1, b)
	}
	_, frames := r.arrivals(r.now + int64(10*time.Millisecond))
	if len(frames) != 0 {
		t.Errorf("%d frames answered forged probes", len(frames))
	}
	ps, _ := r.e.Snapshot()
	if ps[1].Drops["malformed"] != uint64(len(forged)) || ps[1].RxConsumed != 0 || ps[1].RTT != nil || r.e.ports[1].delayNs != delay {
		t.Errorf("drops %v, consumed %d, round trips %+v, delay line %v (was %v)", ps[1].Drops, ps[1].RxConsumed, ps[1].RTT,
			time.Duration(r.e.ports[1].delayNs), time.Duration(delay))
	}
}

// The probe path allocates nothing: sending, answering, timing them and
// steering the delay line.
func TestProbeAllocs(t *testing.T) {
	r := newDelayRig(t, time.Millisecond, time.Millisecond)
	r.e.modelRTT = int64(2 * time.Millisecond) // and steering
	step := int64(0)
	allocs := testing.AllocsPerRun(200, func() {
		step += int64(time.Millisecond)
		r.now = step
		r.e.step(r.now)
		for r.far[1].Receive(r.desc[:]) > 0 {
			d := r.desc[0]
			b := r.farMem[1][d.Addr : d.Addr+uint64(d.Len)]
			if signaling.IsProbe(b) {
				// Answer it as the peer would, into port 1.
				signaling.PutProbe(b[:signaling.FrameLen], macNear, macFar, signaling.TypeEcho, 1, 1000)
				signaling.SetProbeSent(b, r.e.monoBase+r.now)
			}
			r.addrs[0] = d.Addr &^ (tFrame - 1)
			r.far[1].Fill(r.addrs[:1])
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per step with probes", allocs)
	}
}

// inject puts frame b on the wire into port i.
func (r *rig) inject(t *testing.T, i int, b []byte) {
	t.Helper()
	if i != 1 {
		t.Fatal("inject: the rig's far end 1 only")
	}
	// Port 1's far end transmits out of its own memory.
	a := uint64((2*tRing - 1) * tFrame)
	copy(r.farMem[1][a:], b)
	r.desc[0] = xdp.Desc{Addr: a, Len: uint32(len(b))}
	if r.far[1].Transmit(r.desc[:]) != 1 {
		t.Fatal("inject: no room")
	}
	_ = r.far[1].Kick()
	r.e.readableAll()
}

// Steering: a port whose round trips run long by 400 µs takes a quarter
// of that off its hold after every window of probes, never below 0 nor
// above the model's delay; round trips on the model leave it be.
func TestSteering(t *testing.T) {
	var s steering
	const link = 5_000_000
	delay := int64(4_800_000)
	for i := range steerWindow - 1 {
		if d := s.sample(10_400_000+int64(i%3), 10_000_000, delay, link); d != delay {
			t.Fatalf("moved after %d samples", i+1)
		}
	}
	if d := s.sample(10_400_000, 10_000_000, delay, link); d != 4_700_000 {
		t.Errorf("hold %d after a window 400 µs long, want 4700000", d)
	}
	for range steerWindow {
		delay = s.sample(9_000_000, 10_000_000, 4_900_000, link)
	}
	if delay != 5_000_000 {
		t.Errorf("hold %d after a window 1 ms short, want the model's 5000000", delay)
	}
	for range steerWindow {
		delay = s.sample(30_000_000, 10_000_000, 1_000_000, link)
	}
	if delay != 0 {
		t.Errorf("hold %d after a window 20 ms long, want 0", delay)
	}
	for range steerWindow {
		delay = s.sample(10_000_000, 10_000_000, 3_000_000, link)
	}
	if delay != 3_000_000 {
		t.Errorf("hold %d on the model, want it unchanged", delay)
	}
}
