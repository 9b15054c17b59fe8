package xdp_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/bcfab/bcfab/bpf"
	"github.com/bcfab/bcfab/internal/testns"
	"github.com/bcfab/bcfab/xdp"
)

// testEtherType marks the test's frames (IEEE local experimental). The
// kernel sends IPv6 neighbour discovery and MLD on new links, which the XDP
// program redirects to the sockets too; tests skip those frames.
const testEtherType = 0x88b5

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
	testns.New(t)
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
