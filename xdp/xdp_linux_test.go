package xdp_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/bcfab/bcfab/bpf"
	"github.com/bcfab/bcfab/internal/testkit/testns"
	"github.com/bcfab/bcfab/xdp"
)

// testEtherType marks the test's frames (IEEE local experimental). Tests
// skip other frames, should the kernel send any of its own.
const testEtherType = 0x88b5

// quietNetns moves the test into a new network namespace in which new
// links send nothing of their own.
func quietNetns(tb testing.TB) {
	tb.Helper()
	testns.New(tb)
	testns.DisableIPv6(tb)
}

// newUMEM creates a UMEM closed by a cleanup.
func newUMEM(t testing.TB, cfg xdp.UMEMConfig) *xdp.UMEM {
	t.Helper()
	u, err := xdp.NewUMEM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := u.Close(); err != nil {
			t.Error(err)
		}
	})
	return u
}

// attach loads the XDP program, attaches it natively to l and registers s
// for queue 0.
func attach(t testing.TB, l netlink.Link, s *xdp.Socket) *bpf.Program {
	t.Helper()
	p, err := bpf.Load()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	if _, err := p.Attach(l.Attrs().Index, bpf.ModeNative); err != nil {
		t.Fatal(err)
	}
	if err := p.Register(0, s.FD()); err != nil {
		t.Fatal(err)
	}
	return p
}

// port is one end of the test fabric: a device, its socket, its program.
type port struct {
	link netlink.Link
	sock *xdp.Socket
	prog *bpf.Program
}

// ports creates the veth pairs in the current namespace and one socket per
// end, all sharing u, with the XDP program attached natively to every end.
func ports(t testing.TB, u *xdp.UMEM, cfg xdp.SocketConfig, pairs ...[2]string) []port {
	t.Helper()
	var ps []port
	for _, pair := range pairs {
		a, b := testns.Veth(t, pair[0], pair[1])
		ps = append(ps, port{link: a}, port{link: b})
	}
	for i := range ps {
		c := cfg
		c.Ifindex = ps[i].link.Attrs().Index
		s, err := u.NewSocket(c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
		ps[i].sock = s
		ps[i].prog = attach(t, ps[i].link, s)
	}
	return ps
}

// frames hands out frame addresses of a UMEM.
type frames struct{ free []uint64 }

func newFrames(u *xdp.UMEM) *frames {
	f := &frames{}
	for i := u.NumFrames() - 1; i >= 0; i-- {
		f.free = append(f.free, u.FrameAddr(i))
	}
	return f
}

func (f *frames) get(t testing.TB, n int) []uint64 {
	t.Helper()
	if len(f.free) < n {
		t.Fatalf("out of frames: want %d, have %d", n, len(f.free))
	}
	out := append([]uint64(nil), f.free[len(f.free)-n:]...)
	f.free = f.free[:len(f.free)-n]
	return out
}

func (f *frames) put(addrs ...uint64) { f.free = append(f.free, addrs...) }

// fill posts n free frames to s's fill ring.
func fill(t testing.TB, f *frames, s *xdp.Socket, n int) {
	t.Helper()
	addrs := f.get(t, n)
	if got := s.Fill(addrs); got != n {
		t.Fatalf("Fill(%d) = %d", n, got)
	}
}

// writeFrame writes test frame seq of length n at addr and returns its
// descriptor.
func writeFrame(u *xdp.UMEM, addr uint64, seq, n int) xdp.Desc {
	b := u.Frame(addr, n)
	copy(b[0:6], []byte{0x02, 0, 0, 0, 0, 0x02})
	copy(b[6:12], []byte{0x02, 0, 0, 0, 0, 0x01})
	binary.BigEndian.PutUint16(b[12:14], testEtherType)
	binary.BigEndian.PutUint32(b[14:18], uint32(seq))
	for i := 18; i < n; i++ {
		b[i] = byte(seq + i)
	}
	return xdp.Desc{Addr: addr, Len: uint32(n)}
}

// wantFrame returns the bytes of test frame seq of length n.
func wantFrame(seq, n int) []byte {
	b := make([]byte, n)
	copy(b[0:6], []byte{0x02, 0, 0, 0, 0, 0x02})
	copy(b[6:12], []byte{0x02, 0, 0, 0, 0, 0x01})
	binary.BigEndian.PutUint16(b[12:14], testEtherType)
	binary.BigEndian.PutUint32(b[14:18], uint32(seq))
	for i := 18; i < n; i++ {
		b[i] = byte(seq + i)
	}
	return b
}

// isTest reports whether d holds a test frame, and its sequence number.
func isTest(u *xdp.UMEM, d xdp.Desc) (int, bool) {
	if d.Len < 18 {
		return 0, false
	}
	b := u.Frame(d.Addr, int(d.Len))
	if binary.BigEndian.Uint16(b[12:14]) != testEtherType {
		return 0, false
	}
	return int(binary.BigEndian.Uint32(b[14:18])), true
}

// frameLen spreads test frame lengths over [60, 1514].
func frameLen(seq int) int { return 60 + (seq*97)%(1514-60+1) }

func TestTransmitReceive(t *testing.T) {
	quietNetns(t)
	u := newUMEM(t, xdp.DefaultUMEMConfig())
	cfg := xdp.DefaultSocketConfig(0)
	ps := ports(t, u, cfg, [2]string{"xa", "xb"})
	tx, rx := ps[0].sock, ps[1].sock
	f := newFrames(u)
	// Copy-mode TX has no flow control: a frame that finds the receiver's
	// fill ring empty is dropped. Post more than the test sends.
	fill(t, f, rx, 512)
	fill(t, f, tx, 64) // for the kernel's own frames that come back to xa

	const n = 300 // several kick batches
	var descs []xdp.Desc
	for seq, addr := range f.get(t, n) {
		descs = append(descs, writeFrame(u, addr, seq, frameLen(seq)))
	}

	got := make(map[int]bool)
	completed := make(map[uint64]bool)
	rxBuf := make([]xdp.Desc, 64)
	addrBuf := make([]uint64, 64)
	sent := 0
	deadline := time.Now().Add(5 * time.Second)
	for (len(got) < n || len(completed) < n) && time.Now().Before(deadline) {
		if sent < n {
			sent += tx.Transmit(descs[sent:])
		}
		if err := tx.Kick(); err != nil {
			t.Fatal(err)
		}
		for k := tx.Complete(addrBuf); k > 0; k = tx.Complete(addrBuf) {
			for _, a := range addrBuf[:k] {
				if completed[a] {
					t.Fatalf("address %#x completed twice", a)
				}
				completed[a] = true
			}
		}
		for _, s := range []*xdp.Socket{rx, tx} {
			k := s.Receive(rxBuf)
			for _, d := range rxBuf[:k] {
				seq, ok := isTest(u, d)
				if !ok {
					continue
				}
				if s != rx {
					t.Fatalf("frame %d came back to the sender", seq)
				}
				if got[seq] {
					t.Fatalf("frame %d received twice", seq)
				}
				got[seq] = true
				if want := wantFrame(seq, frameLen(seq)); !bytes.Equal(u.Frame(d.Addr, int(d.Len)), want) {
					t.Fatalf("frame %d: got % x..., want % x...", seq, u.Frame(d.Addr, 32), want[:32])
				}
				if off := d.Addr - u.Base(d.Addr); off != 256 {
					t.Errorf("frame %d at offset %d in its frame, want 256", seq, off)
				}
			}
			for i := range rxBuf[:k] {
				addrBuf[i] = rxBuf[i].Addr // refill with the same frames
			}
			if s.Fill(addrBuf[:k]) != k {
				t.Fatal("fill ring full")
			}
		}
	}
	if len(got) != n || len(completed) != n {
		t.Fatalf("received %d, completed %d of %d frames", len(got), len(completed), n)
	}
	for _, d := range descs {
		if !completed[d.Addr] {
			t.Fatalf("address %#x not completed", d.Addr)
		}
	}
	if p := tx.TxPending(); p != 0 {
		t.Errorf("TxPending = %d after all completions", p)
	}
	if free := tx.TxFree(); free != cfg.TxSize {
		t.Errorf("TxFree = %d, want %d", free, cfg.TxSize)
	}

	st, err := rx.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.RxDropped != 0 || st.RxInvalidDescs != 0 || st.RxRingFull != 0 {
		t.Errorf("receiver stats %+v", st)
	}
	st, err = tx.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.TxInvalidDescs != 0 {
		t.Errorf("sender stats %+v", st)
	}
	c, err := ps[1].prog.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if c.Redirect < n || c.Fallback != 0 || c.Loss != 0 || c.Down != 0 {
		t.Errorf("receiver program counters %+v, want %d redirected", c, n)
	}
	t.Logf("receiver stats %+v; program %+v", st, c)
}

// receiveTest collects test frames from s until it has n or the deadline
// passes, giving every frame it does not return back to the fill ring.
// Non-test frames (the kernel's own) go straight back too.
func receiveTest(t testing.TB, u *xdp.UMEM, s *xdp.Socket, n int) []xdp.Desc {
	t.Helper()
	var out []xdp.Desc
	buf := make([]xdp.Desc, 64)
	deadline := time.Now().Add(5 * time.Second)
	for len(out) < n && time.Now().Before(deadline) {
		k := s.Receive(buf)
		for _, d := range buf[:k] {
			if _, ok := isTest(u, d); ok {
				out = append(out, d)
			} else if s.Fill([]uint64{d.Addr}) != 1 {
				t.Fatal("fill ring full")
			}
		}
	}
	if len(out) != n {
		t.Fatalf("received %d of %d frames", len(out), n)
	}
	return out
}

// completeAll waits for n completions on s and returns their addresses.
func completeAll(t testing.TB, s *xdp.Socket, n int) []uint64 {
	t.Helper()
	var out []uint64
	buf := make([]uint64, 64)
	deadline := time.Now().Add(5 * time.Second)
	for len(out) < n && time.Now().Before(deadline) {
		k := s.Complete(buf)
		out = append(out, buf[:k]...)
	}
	if len(out) != n {
		t.Fatalf("%d of %d completions", len(out), n)
	}
	return out
}

// TestForwardByDescriptor moves frames across two veth pairs and four
// sockets of one UMEM: sent on p0a, received on p0b, handed by descriptor to
// the socket of p1a, received on p1b. No byte is copied in user space.
func TestForwardByDescriptor(t *testing.T) {
	quietNetns(t)
	u := newUMEM(t, xdp.DefaultUMEMConfig())
	ps := ports(t, u, xdp.DefaultSocketConfig(0), [2]string{"p0a", "p0b"}, [2]string{"p1a", "p1b"})
	p0a, p0b, p1a, p1b := ps[0].sock, ps[1].sock, ps[2].sock, ps[3].sock
	f := newFrames(u)
	for _, s := range []*xdp.Socket{p0a, p0b, p1a, p1b} {
		fill(t, f, s, 256)
	}

	const n = 100
	var descs []xdp.Desc
	for seq, addr := range f.get(t, n) {
		descs = append(descs, writeFrame(u, addr, seq, frameLen(seq)))
	}
	if got := p0a.Transmit(descs); got != n {
		t.Fatalf("Transmit = %d", got)
	}
	if err := p0a.Kick(); err != nil {
		t.Fatal(err)
	}
	mid := receiveTest(t, u, p0b, n)
	if got := p1a.Transmit(mid); got != n {
		t.Fatalf("forward: Transmit = %d", got)
	}
	if err := p1a.Kick(); err != nil {
		t.Fatal(err)
	}
	out := receiveTest(t, u, p1b, n)
	for _, d := range out {
		seq, _ := isTest(u, d)
		if !bytes.Equal(u.Frame(d.Addr, int(d.Len)), wantFrame(seq, frameLen(seq))) {
			t.Fatalf("frame %d corrupted on the way", seq)
		}
	}
	// Completions name exactly the frames each socket sent; the forwarded
	// ones by their received address, past the kernel headroom.
	for _, c := range []struct {
		s    *xdp.Socket
		sent []xdp.Desc
	}{{p0a, descs}, {p1a, mid}} {
		done := completeAll(t, c.s, n)
		want := make(map[uint64]bool)
		for _, d := range c.sent {
			want[d.Addr] = true
		}
		for _, a := range done {
			if !want[a] {
				t.Fatalf("completion of %#x, which this socket did not send", a)
			}
			delete(want, a)
		}
		if c.s.TxPending() != 0 {
			t.Errorf("TxPending = %d", c.s.TxPending())
		}
	}
	for i, p := range ps {
		st, err := p.sock.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.RxDropped != 0 || st.TxInvalidDescs != 0 || st.RxInvalidDescs != 0 {
			t.Errorf("socket %d: %+v", i, st)
		}
	}
}

// TestKickDrains checks that one Kick sends far more than the kernel's 32
// descriptors per sendto.
func TestKickDrains(t *testing.T) {
	quietNetns(t)
	u := newUMEM(t, xdp.DefaultUMEMConfig())
	ps := ports(t, u, xdp.DefaultSocketConfig(0), [2]string{"xa", "xb"})
	tx, rx := ps[0].sock, ps[1].sock
	f := newFrames(u)
	fill(t, f, rx, 512)
	const n = 200 // within veth's 256-entry XDP ring, which is not drained while Kick runs
	var descs []xdp.Desc
	for seq, addr := range f.get(t, n) {
		descs = append(descs, writeFrame(u, addr, seq, 60))
	}
	if got := tx.Transmit(descs); got != n {
		t.Fatalf("Transmit = %d", got)
	}
	if err := tx.Kick(); err != nil {
		t.Fatal(err)
	}
	// One sendto per TxBudget descriptors (the last may find the ring
	// empty already).
	if got, max := tx.Sendtos(), uint64(n/tx.TxBudget()+1); got == 0 || got > max {
		t.Errorf("Kick of %d descriptors made %d sendto calls, want 1-%d (budget %d)", n, got, max, tx.TxBudget())
	}
	t.Logf("TX budget %d: %d sendto calls for %d frames", tx.TxBudget(), tx.Sendtos(), n)
	completeAll(t, tx, n) // no further Kick
	receiveTest(t, u, rx, n)
	if err := tx.Kick(); err != nil { // nothing pending: no syscall, no error
		t.Fatal(err)
	}
}

// TestNeedWakeup binds with XDP_USE_NEED_WAKEUP. In copy mode the kernel
// keeps the TX ring's flag set, so Kick always makes the syscall, and never
// sets the fill ring's. A socket sharing the UMEM inherits the setting.
func TestNeedWakeup(t *testing.T) {
	quietNetns(t)
	u := newUMEM(t, xdp.DefaultUMEMConfig())
	cfg := xdp.DefaultSocketConfig(0)
	cfg.NeedWakeup = true
	ps := ports(t, u, cfg, [2]string{"xa", "xb"})
	tx, rx := ps[0].sock, ps[1].sock
	f := newFrames(u)
	fill(t, f, rx, 8)
	const n = 40 // more than the fill ring has: drains it
	var descs []xdp.Desc
	for seq, addr := range f.get(t, n) {
		descs = append(descs, writeFrame(u, addr, seq, 60))
	}
	tx.Transmit(descs)
	if err := tx.Kick(); err != nil {
		t.Fatal(err)
	}
	completeAll(t, tx, n)
	receiveTest(t, u, rx, 8)
	if rx.FillNeedsWakeup() {
		t.Error("FillNeedsWakeup in copy mode")
	}
	st, err := rx.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.RxFillRingEmpty < n-8 {
		t.Errorf("RxFillRingEmpty = %d, want >= %d", st.RxFillRingEmpty, n-8)
	}

	// A later socket must ask for what it inherits.
	testns.Veth(t, "xc", "xd")
	c, _ := netlinkIndex(t, "xc")
	cfg.Ifindex, cfg.NeedWakeup = c, false
	if _, err := u.NewSocket(cfg); err == nil {
		t.Error("shared socket without need-wakeup: no error")
	}
}

func netlinkIndex(t testing.TB, name string) (int, netlink.Link) {
	t.Helper()
	l, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return l.Attrs().Index, l
}

// resources counts the process's open files and its mappings of sockets
// (AF_XDP rings).
func resources(t testing.TB) (fds, ringMaps int) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents), strings.Count(string(maps), "socket:[")
}

func TestBindErrors(t *testing.T) {
	quietNetns(t)
	xa, xb := testns.Veth(t, "xa", "xb")
	fds0, maps0 := resources(t)
	u, err := xdp.NewUMEM(xdp.DefaultUMEMConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() }) // if the test fails early; Close is idempotent
	fds1, maps1 := resources(t)

	expectFail := func(name string, cfg xdp.SocketConfig, errno error) {
		t.Helper()
		s, err := u.NewSocket(cfg)
		if err == nil {
			s.Close()
			t.Fatalf("%s: no error", name)
		}
		prefix := fmt.Sprintf("xdp: bind %d/%d: ", cfg.Ifindex, cfg.QueueID)
		if !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("%s: error %q lacks prefix %q", name, err, prefix)
		}
		if errno != nil && !errors.Is(err, errno) {
			t.Errorf("%s: error %q is not %v", name, err, errno)
		}
		if fds, maps := resources(t); fds != fds1 || maps != maps1 {
			t.Errorf("%s left %d files and %d ring mappings behind", name, fds-fds1, maps-maps1)
		}
	}

	cfg := xdp.DefaultSocketConfig(9999)
	expectFail("owner on a missing device", cfg, unix.ENODEV)
	cfg.Ifindex, cfg.QueueID = xa.Attrs().Index, 1000
	expectFail("owner on a missing queue", cfg, unix.EINVAL)

	// The failures left the UMEM usable.
	cfg.QueueID = 0
	owner, err := u.NewSocket(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fds1, maps1 = resources(t)
	expectFail("shared on a missing device", xdp.DefaultSocketConfig(9999), unix.ENODEV)
	expectFail("shared on the owner's queue", cfg, unix.EINVAL)
	bad := xdp.DefaultSocketConfig(xb.Attrs().Index)
	bad.Mode = xdp.ZeroCopy
	expectFail("shared in zero-copy", bad, nil)

	shared, err := u.NewSocket(xdp.DefaultSocketConfig(xb.Attrs().Index))
	if err != nil {
		t.Fatal(err)
	}
	if err := shared.Close(); err != nil {
		t.Fatal(err)
	}
	if err := shared.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// The queue is free again (after the kernel's deferred release).
	if shared, err = u.NewSocket(xdp.DefaultSocketConfig(xb.Attrs().Index)); err != nil {
		t.Fatal(err)
	}
	// UMEM.Close closes the sockets still open.
	_ = owner
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := shared.Close(); err != nil {
		t.Fatalf("Close after UMEM.Close: %v", err)
	}
	if _, err := u.NewSocket(xdp.DefaultSocketConfig(xb.Attrs().Index)); err == nil {
		t.Fatal("NewSocket on a closed UMEM: no error")
	}
	if fds, maps := resources(t); fds != fds0 || maps != maps0 {
		t.Errorf("closing left %d files and %d ring mappings behind", fds-fds0, maps-maps0)
	}
}

func TestNewUMEMErrors(t *testing.T) {
	testns.RequireRoot(t)
	cfg := xdp.DefaultUMEMConfig()
	cfg.FrameSize = 3000
	if _, err := xdp.NewUMEM(cfg); err == nil {
		t.Fatal("frame size 3000: no error")
	}
}

func TestSetTxChecksum(t *testing.T) {
	quietNetns(t)
	testns.Veth(t, "xa", "xb")
	for _, on := range []bool{false, true, false} {
		if err := xdp.SetTxChecksum("xa", on); err != nil {
			t.Fatal(err)
		}
		got, err := xdp.TxChecksum("xa")
		if err != nil {
			t.Fatal(err)
		}
		if got != on {
			t.Fatalf("TX checksum offload %t after setting %t", got, on)
		}
	}
	if err := xdp.SetTxChecksum("nosuchdev", false); !errors.Is(err, unix.ENODEV) {
		t.Fatalf("missing device: %v", err)
	}
}

func TestSetTxVLAN(t *testing.T) {
	quietNetns(t)
	testns.Veth(t, "xa", "xb")
	for _, on := range []bool{false, true, false} {
		if err := xdp.SetTxVLAN("xa", on); err != nil {
			t.Fatal(err)
		}
		got, err := xdp.TxVLAN("xa")
		if err != nil {
			t.Fatal(err)
		}
		if got != on {
			t.Fatalf("tx VLAN offload %t after setting %t", got, on)
		}
	}
	if err := xdp.SetTxVLAN("nosuchdev", false); !errors.Is(err, unix.ENODEV) {
		t.Fatalf("missing device: %v", err)
	}
}

func TestSetGRO(t *testing.T) {
	quietNetns(t)
	testns.Veth(t, "xa", "xb")
	for _, on := range []bool{true, false, true} {
		if err := xdp.SetGRO("xa", on); err != nil {
			t.Fatal(err)
		}
		if got, err := xdp.GRO("xa"); err != nil || got != on {
			t.Fatalf("GRO %t (%v) after setting %t", got, err, on)
		}
	}
	if err := xdp.SetGRO("nosuchdev", true); !errors.Is(err, unix.ENODEV) {
		t.Fatalf("missing device: %v", err)
	}
}

// roundTrip sends one test frame from tx to rx and recycles everything.
type roundTrip struct {
	u      *xdp.UMEM
	tx, rx *xdp.Socket
	d      [1]xdp.Desc
	rxBuf  [16]xdp.Desc
	addrs  [16]uint64
}

func (r *roundTrip) run(tb testing.TB) {
	if r.tx.Transmit(r.d[:]) != 1 {
		tb.Fatal("TX ring full")
	}
	if err := r.tx.Kick(); err != nil {
		tb.Fatal(err)
	}
	got, done := false, false
	for spin := 0; !(got && done); spin++ {
		if spin > 10_000_000 {
			tb.Fatalf("frame lost: received %t, completed %t", got, done)
		}
		n := r.rx.Receive(r.rxBuf[:])
		for i, d := range r.rxBuf[:n] {
			if _, ok := isTest(r.u, d); ok {
				got = true
			}
			r.addrs[i] = d.Addr
		}
		r.rx.Fill(r.addrs[:n])
		if r.tx.Complete(r.addrs[:1]) == 1 {
			done = true
		}
	}
}

func newRoundTrip(tb testing.TB) *roundTrip {
	quietNetns(tb)
	u := newUMEM(tb, xdp.DefaultUMEMConfig())
	ps := ports(tb, u, xdp.DefaultSocketConfig(0), [2]string{"xa", "xb"})
	r := &roundTrip{u: u, tx: ps[0].sock, rx: ps[1].sock}
	f := newFrames(u)
	fill(tb, f, r.rx, 64)
	fill(tb, f, r.tx, 64)
	r.d[0] = writeFrame(u, f.get(tb, 1)[0], 1, 60)
	return r
}

// TestAllocs checks that a Transmit, Kick, Receive, Fill and Complete round
// trip on real sockets allocates nothing.
func TestAllocs(t *testing.T) {
	r := newRoundTrip(t)
	r.run(t) // warm up
	if a := testing.AllocsPerRun(200, func() { r.run(t) }); a != 0 {
		t.Fatalf("%v allocations per round trip", a)
	}
}

// BenchmarkRoundTrip sends one frame across a veth pair and back to the
// rings per iteration.
func BenchmarkRoundTrip(b *testing.B) {
	r := newRoundTrip(b)
	b.ReportAllocs()
	for b.Loop() {
		r.run(b)
	}
}

// BenchmarkBatch sends 32 frames per iteration, one Kick per batch.
func BenchmarkBatch(b *testing.B) {
	quietNetns(b)
	u := newUMEM(b, xdp.DefaultUMEMConfig())
	ps := ports(b, u, xdp.DefaultSocketConfig(0), [2]string{"xa", "xb"})
	tx, rx := ps[0].sock, ps[1].sock
	f := newFrames(u)
	fill(b, f, rx, 256)
	fill(b, f, tx, 64)
	const batch = 32
	descs := make([]xdp.Desc, batch)
	for i, addr := range f.get(b, batch) {
		descs[i] = writeFrame(u, addr, i, 64)
	}
	rxBuf := make([]xdp.Desc, 64)
	addrs := make([]uint64, 64)
	b.ReportAllocs()
	b.SetBytes(batch * 64)
	for b.Loop() {
		tx.Transmit(descs)
		if err := tx.Kick(); err != nil {
			b.Fatal(err)
		}
		for got, done := 0, 0; got < batch || done < batch; {
			n := rx.Receive(rxBuf)
			for i, d := range rxBuf[:n] {
				if _, ok := isTest(u, d); ok {
					got++
				}
				addrs[i] = d.Addr
			}
			rx.Fill(addrs[:n])
			done += tx.Complete(addrs)
		}
	}
}
