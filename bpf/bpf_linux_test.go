package bpf

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"

	"github.com/bcfab/bcfab/internal/testkit/testns"
)

// XDP actions as returned by the program.
const (
	xdpAborted  = 0
	xdpRedirect = 4
)

func loadT(t *testing.T) *Program {
	t.Helper()
	testns.RequireRoot(t)
	p, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// run runs the program on frame f as if it arrived on ifindex (0: the
// loopback device, which p is made to serve), repeat times (0: once).
func run(t *testing.T, p *Program, ifindex int, f, out []byte, repeat uint32) uint32 {
	t.Helper()
	if ifindex == 0 {
		ifindex = 1
		if p.ifindex == 0 {
			if err := p.serve(ifindex); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The kernel reads the frame's device (and its namespace's) from the
	// context; data_end must be the frame's length.
	ctx := &xdpMD{DataEnd: uint32(len(f)), IngressIfindex: uint32(ifindex)}
	ret, err := p.sh.objs.XdpRedirect.Run(&ebpf.RunOptions{Data: f, DataOut: out, Context: ctx, Repeat: repeat})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return ret
}

// xdpMD is struct xdp_md of linux/bpf.h.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// frame returns an Ethernet frame of n bytes with a recognisable payload.
func frame(n int) []byte {
	f := make([]byte, n)
	copy(f[0:6], []byte{0x02, 0, 0, 0, 0, 0x02})  // dst
	copy(f[6:12], []byte{0x02, 0, 0, 0, 0, 0x01}) // src
	f[12], f[13] = 0x88, 0xb5                     // local experimental EtherType
	for i := 14; i < n; i++ {
		f[i] = byte(i)
	}
	return f
}

func TestProgramRun(t *testing.T) {
	frames := map[string][]byte{
		"min":  frame(14),
		"60":   frame(60),
		"1514": frame(1514),
	}
	tests := []struct {
		name    string
		cfg     Config
		verdict uint32
		want    Counters // per frame
	}{
		{"default passes", Config{}, xdpPass, Counters{RX: 1, Fallback: 1}},
		{"fallback drop", Config{Fallback: Drop}, xdpDrop, Counters{RX: 1, Fallback: 1}},
		{"full loss", Config{LossPPM: MaxLossPPM}, xdpDrop, Counters{RX: 1, Loss: 1}},
		{"down", Config{Down: true}, xdpDrop, Counters{RX: 1, Down: 1}},
		{"down wins over loss", Config{Down: true, LossPPM: MaxLossPPM}, xdpDrop, Counters{RX: 1, Down: 1}},
		// A patched port's interface carries only copies for captures:
		// counted apart, passed to the taps while captured, and never
		// impaired or counted as link traffic.
		{"patched drops copies", Config{Patched: true, Down: true}, xdpDrop, Counters{Mirror: 1}},
		{"patched and captured passes copies", Config{Patched: true, Captured: true, LossPPM: MaxLossPPM}, xdpPass, Counters{Mirror: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := loadT(t)
			if err := p.SetConfig(tt.cfg); err != nil {
				t.Fatal(err)
			}
			for name, f := range frames {
				before, err := p.Counters()
				if err != nil {
					t.Fatal(err)
				}
				out := make([]byte, len(f)+256)
				ret := run(t, p, 0, f, out, 0)
				if ret != tt.verdict {
					t.Errorf("%s: verdict %d, want %d", name, ret, tt.verdict)
				}
				if ret == xdpPass && !bytes.Equal(out[:len(f)], f) {
					t.Errorf("%s: frame modified", name)
				}
				after, err := p.Counters()
				if err != nil {
					t.Fatal(err)
				}
				if d := delta(after, before); d != tt.want {
					t.Errorf("%s: counters moved by %+v, want %+v", name, d, tt.want)
				}
			}
		})
	}
}

func delta(a, b Counters) Counters {
	return Counters{
		RX:       a.RX - b.RX,
		Redirect: a.Redirect - b.Redirect,
		Fallback: a.Fallback - b.Fallback,
		Loss:     a.Loss - b.Loss,
		Down:     a.Down - b.Down,
		Mirror:   a.Mirror - b.Mirror,
	}
}

// TestProgramLossRate runs 20000 frames at 25% loss; the count of losses is
// binomial with sd ~61, so [4500, 5500] fails by chance about once in 10^15.
// A test run the kernel interrupts is retried from the start, so the
// program may run a few more times than asked: the check is on what ran.
func TestProgramLossRate(t *testing.T) {
	p := loadT(t)
	if err := p.SetConfig(Config{LossPPM: 250000}); err != nil {
		t.Fatal(err)
	}
	const n = 20000
	run(t, p, 0, frame(60), nil, n)
	c, err := p.Counters()
	if err != nil {
		t.Fatal(err)
	}
	frac := float64(c.Loss) / float64(c.RX)
	if c.RX < n || c.Loss+c.Fallback != c.RX || frac < 0.225 || frac > 0.275 {
		t.Fatalf("counters %+v after %d frames at 25%% loss", c, n)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{LossPPM: MaxLossPPM + 1}, {Fallback: Verdict(7)}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if err := (Config{LossPPM: MaxLossPPM, Down: true, Fallback: Drop}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range []Mode{ModeNative, ModeGeneric, ModeAuto} {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseMode("offload"); err == nil {
		t.Error("ParseMode(offload): no error")
	}
}

// xdpState returns the attach mode (nl.XDP_ATTACHED_*) and program ID
// on the device name.
func xdpState(t *testing.T, name string) (uint32, uint32) {
	t.Helper()
	l, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	x := l.Attrs().Xdp
	if x == nil || !x.Attached {
		return 0, 0
	}
	return x.AttachMode, x.ProgId
}

func TestAttach(t *testing.T) {
	tests := []struct {
		mode     Mode
		want     Mode
		attached uint32
	}{
		{ModeNative, ModeNative, nl.XDP_ATTACHED_DRV},
		{ModeGeneric, ModeGeneric, nl.XDP_ATTACHED_SKB},
		{ModeAuto, ModeNative, nl.XDP_ATTACHED_DRV}, // veth has native XDP
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			testns.New(t)
			a, _ := testns.Veth(t, "xa", "xb")
			p := loadT(t)
			got, err := p.Attach(a.Attrs().Index, tt.mode)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("attached in %v, want %v", got, tt.want)
			}
			if mode, _ := xdpState(t, "xa"); mode != tt.attached {
				t.Errorf("device reports XDP attach mode %d, want %d", mode, tt.attached)
			}
			if _, err := p.Attach(a.Attrs().Index, tt.mode); err == nil {
				t.Error("second Attach: no error")
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if mode, id := xdpState(t, "xa"); mode != 0 {
				t.Errorf("still attached after Close: mode %d prog %d", mode, id)
			}
		})
	}
}

func TestAttachBadIfindex(t *testing.T) {
	testns.New(t)
	p := loadT(t)
	if _, err := p.Attach(1<<30, ModeAuto); err == nil {
		t.Fatal("attach to a missing device: no error")
	}
}

// TestAttachDiesWithProcess checks that the attachment is a bpf_link: a
// child process attaches the program and is killed with SIGKILL, and the
// program must be gone from the device without anyone detaching it.
func TestAttachDiesWithProcess(t *testing.T) {
	if os.Getenv("BPF_TEST_ATTACH_CHILD") != "" {
		return // the child's work is in TestMain
	}
	testns.New(t)
	a, _ := testns.Veth(t, "xa", "xb")

	// The child is forked from this locked thread and so starts in the
	// test namespace.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BPF_TEST_ATTACH_CHILD="+strconv.Itoa(a.Attrs().Index))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make([]byte, 64)
	n, err := stdout.Read(line)
	if err != nil || !bytes.HasPrefix(line[:n], []byte("attached")) {
		t.Fatalf("child: %q, %v", line[:n], err)
	}
	if mode, _ := xdpState(t, "xa"); mode != nl.XDP_ATTACHED_DRV {
		t.Fatalf("child attached, but device reports mode %d", mode)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		mode, id := xdpState(t, "xa")
		if mode == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("program %d still attached (mode %d) after its owner was killed", id, mode)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMain(m *testing.M) {
	if s := os.Getenv("BPF_TEST_ATTACH_CHILD"); s != "" {
		os.Exit(attachChild(s))
	}
	if s := os.Getenv("BPF_TEST_TCX_CHILD"); s != "" {
		os.Exit(tcxChild(s))
	}
	os.Exit(m.Run())
}

// attachChild attaches to ifindex s, says so, and waits to be killed.
func attachChild(s string) int {
	ifindex, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	p, err := Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := p.Attach(ifindex, ModeNative); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("attached")
	time.Sleep(time.Minute)
	return 1
}

func TestRegister(t *testing.T) {
	p := loadT(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := p.Register(0, int(r.Fd())); err == nil {
		t.Error("Register of a pipe: no error")
	}
	if err := p.Register(MaxQueues, int(r.Fd())); err == nil {
		t.Errorf("Register of queue %d (a slot holds %d): no error", MaxQueues, MaxQueues)
	}
	if err := p.Unregister(0); err != nil {
		t.Errorf("Unregister of an empty queue: %v", err)
	}
}

// TestShared checks that the Programs of one Shared each keep their own
// configuration and counters, keyed by their interface; that a frame of
// an interface without a slot passes uncounted; that an ifindex serves
// one slot; and that a slot given back starts again from zero.
func TestShared(t *testing.T) {
	testns.New(t)
	a, b := testns.Veth(t, "xa", "xb")
	ia, ib := a.Attrs().Index, b.Attrs().Index
	testns.RequireRoot(t)
	s, err := LoadShared()
	if err != nil {
		t.Fatal(err)
	}
	progs := make([]*Program, 2)
	for i := range progs {
		if progs[i], err = s.Program(); err != nil {
			t.Fatal(err)
		}
	}
	pa, pb := progs[0], progs[1]
	t.Cleanup(func() {
		for _, p := range progs {
			if err := p.Close(); err != nil {
				t.Error(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	if err := pa.serve(ia); err != nil {
		t.Fatal(err)
	}
	if err := pb.serve(ia); err == nil {
		t.Fatal("two slots serve one ifindex: no error")
	}
	if err := pb.serve(ib); err != nil {
		t.Fatal(err)
	}
	if err := pa.SetConfig(Config{Down: true}); err != nil {
		t.Fatal(err)
	}
	f := frame(60)
	if v := run(t, pa, ia, f, nil, 0); v != xdpDrop {
		t.Errorf("xa's frame: verdict %d, want drop (xa is down)", v)
	}
	if v := run(t, pb, ib, f, nil, 0); v != xdpPass {
		t.Errorf("xb's frame: verdict %d, want pass (xb is up, no socket)", v)
	}
	if v := run(t, pb, 1, f, nil, 0); v != xdpPass {
		t.Errorf("lo's frame (no slot): verdict %d, want pass", v)
	}
	ca, err := pa.Counters()
	if err != nil {
		t.Fatal(err)
	}
	cb, err := pb.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if want := (Counters{RX: 1, Down: 1}); ca != want {
		t.Errorf("xa's counters %+v, want %+v", ca, want)
	}
	if want := (Counters{RX: 1, Fallback: 1}); cb != want {
		t.Errorf("xb's counters %+v, want %+v", cb, want)
	}

	// xa's slot given back and taken again: zero counters, the zero
	// config, and xa's frames no longer reach it until it serves xa.
	if err := pa.Close(); err != nil {
		t.Fatal(err)
	}
	if v := run(t, pb, ia, f, nil, 0); v != xdpPass {
		t.Errorf("xa's frame after its slot closed: verdict %d, want pass", v)
	}
	if progs[0], err = s.Program(); err != nil {
		t.Fatal(err)
	}
	pc := progs[0]
	if pc.slot != pa.slot {
		t.Fatalf("new program in slot %d, want the freed slot %d", pc.slot, pa.slot)
	}
	if c, err := pc.Counters(); err != nil || c != (Counters{}) {
		t.Errorf("reused slot's counters %+v (%v), want zero", c, err)
	}
	if err := pc.serve(ia); err != nil {
		t.Fatal(err)
	}
	if v := run(t, pc, ia, f, nil, 0); v != xdpPass {
		t.Errorf("xa's frame in the reused slot: verdict %d, want pass (zero config)", v)
	}
	if c, _ := pc.Counters(); c != (Counters{RX: 1, Fallback: 1}) {
		t.Errorf("reused slot's counters %+v after one frame", c)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Program(); err == nil {
		t.Error("Program of a closed Shared: no error")
	}
	// The programs still work until they close.
	if _, err := pb.Counters(); err != nil {
		t.Errorf("counters after the Shared closed: %v", err)
	}
}
