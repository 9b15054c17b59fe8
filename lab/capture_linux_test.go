package lab

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"
	"golang.org/x/sys/unix"

	"github.com/bcfab/bcfab/internal/testkit/testns"
	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/signaling"
)

var (
	capSrc = net.HardwareAddr{0x02, 0x20, 0x00, 0x00, 0x00, 0x03}
	capDst = net.HardwareAddr{0x02, 0x10, 0x00, 0x00, 0x03, 0x00}
)

// captureFrames are what the tests send, with the line Capture prints for
// each (after the timestamp); an empty line is a frame only All prints.
func captureFrames() (frames [][]byte, lines []string) {
	add := func(b []byte, line string) {
		frames = append(frames, b)
		lines = append(lines, line)
	}
	prefix := capSrc.String() + " > " + capDst.String() + " "

	b := make([]byte, signaling.FrameLen)
	signaling.PutPortFC(b, capDst, capSrc, signaling.TypePause, signaling.FlagRelayed, 17, signaling.ClassB, 3, 1, 2)
	add(b, prefix+"PortFC pause class=B port=3 origin=s1.2 seq=17 relayed")

	// A data frame: 802.1Q priority 3 / IPv4 / UDP to 4791.
	b = make([]byte, 0, 64)
	b = append(b, capDst...)
	b = append(b, capSrc...)
	b = append(b, 0x81, 0x00, 0x60, 0x00, 0x08, 0x00)
	b = append(b, 0x45, 0x02, 0, 28, 0, 0, 0x40, 0, 64, 17, 0, 0, 198, 18, 0, 0, 198, 18, 0, 15) // ECT(0)
	b = append(b, 0x13, 0x88, 0x12, 0xb7, 0, 8, 0, 0)
	b = append(b, make([]byte, 60-len(b))...)
	add(b, "")

	b = make([]byte, signaling.FrameLen)
	signaling.PutBFC(b, capDst, capSrc, signaling.TypeState, 9, 0, 0x5, 32)
	add(b, prefix+"BFC state bitmap=0x5 queues=32 seq=9")

	// 802.1Qbb: priority 3 paused for 0xffff quanta.
	b = make([]byte, 60)
	copy(b, []byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01})
	copy(b[6:], capSrc)
	binary.BigEndian.PutUint16(b[12:], 0x8808)
	binary.BigEndian.PutUint16(b[14:], 0x0101)
	binary.BigEndian.PutUint16(b[16:], 0x0008)
	binary.BigEndian.PutUint16(b[18+2*3:], 0xffff)
	add(b, capSrc.String()+" > 01:80:c2:00:00:01 PFC enable=0x08 P3=65535")

	// An ARP request, untagged.
	b = append(append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, capSrc...), 0x08, 0x06,
		0, 1, 8, 0, 6, 4, 0, 1)
	b = append(b, capSrc...)
	b = append(b, 198, 18, 0, 0, 0, 0, 0, 0, 0, 0, 198, 18, 0, 1)
	b = append(b, make([]byte, 60-len(b))...)
	add(b, "")

	// A signal of a version this project does not know.
	b = make([]byte, signaling.FrameLen)
	signaling.PutBFC(b, capDst, capSrc, signaling.TypePause, 1, 4, 0, 0)
	b[14] = 2
	add(b, prefix+"malformed flow-control signal: version is not 1")
	return frames, lines
}

// allLines are the lines of the frames only All prints.
var allLines = map[int]string{
	1: capSrc.String() + " > " + capDst.String() + " vlan pcp=3 vid=0 IPv4 198.18.0.0 > 198.18.0.15 udp 5000 > 4791, 60 bytes",
	4: capSrc.String() + " > ff:ff:ff:ff:ff:ff ARP who-has 198.18.0.1 tell 198.18.0.0, 60 bytes",
}

// captureNS gives the test a namespace with a veth whose end ifname is
// the capture's, and a packet socket bound to it to transmit frames.
func captureNS(t *testing.T, ifname string) (send func(frames [][]byte)) {
	t.Helper()
	testtool.Require(t, "tcpdump", "capture")
	testns.New(t)
	testns.DisableIPv6(t)
	a, _ := testns.Veth(t, ifname, ifname+"p")
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0) // send only
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: a.Attrs().Index}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Whatever the test did, no tcpdump is left on the interface.
		if ps := processesWithArg(map[string]bool{ifname: true}); len(ps) > 0 {
			t.Errorf("processes left capturing %s: %v", ifname, ps)
		}
	})
	return func(frames [][]byte) {
		for _, f := range frames {
			if _, err := unix.Write(fd, f); err != nil {
				t.Errorf("send: %v", err)
			}
		}
	}
}

func timestampless(out string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if _, rest, ok := strings.Cut(l, " "); ok {
			lines = append(lines, rest)
		} else if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// The signals, PFC and malformed signals are printed, data frames are
// not; -w keeps the same frames byte for byte; Count stops the capture.
func TestCaptureSignals(t *testing.T) {
	send := captureNS(t, "bccap0")
	frames, lines := captureFrames()
	var want []string
	var wantFrames [][]byte
	for i, l := range lines {
		if l != "" {
			want = append(want, l)
			wantFrames = append(wantFrames, frames[i])
		}
	}
	file := filepath.Join(t.TempDir(), "c.pcap")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	err := captureInterface(ctx, "bccap0", CaptureOptions{
		File: file, Count: len(want),
		OnListening: func() { go send(frames) },
	}, &out)
	if err != nil {
		t.Fatalf("capture: %v\n%s", err, out.String())
	}
	if got := timestampless(out.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Count did not stop the capture promptly: %v", took)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		data, _, err := r.ReadPacketData()
		if err != nil {
			if i != len(wantFrames) {
				t.Errorf("file has %d frames, want %d (%v)", i, len(wantFrames), err)
			}
			break
		}
		if i >= len(wantFrames) || !bytes.Equal(data, wantFrames[i]) {
			t.Errorf("file frame %d: % x", i, data)
		}
	}
}

// With All, every frame gets a line.
func TestCaptureAll(t *testing.T) {
	send := captureNS(t, "bccap1")
	frames, lines := captureFrames()
	for i, l := range allLines {
		lines[i] = l
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := captureInterface(ctx, "bccap1", CaptureOptions{
		All: true, Count: len(frames),
		OnListening: func() { go send(frames) },
	}, &out)
	if err != nil {
		t.Fatalf("capture: %v\n%s", err, out.String())
	}
	if got := timestampless(out.String()); strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Errorf("printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(lines, "\n"))
	}
}

// Duration and the caller's context stop a capture that sees nothing, and
// tcpdump is gone afterwards (captureNS checks).
func TestCaptureStops(t *testing.T) {
	t.Run("duration", func(t *testing.T) {
		captureNS(t, "bccap2")
		var out bytes.Buffer
		var listening atomic.Bool
		start := time.Now()
		err := captureInterface(t.Context(), "bccap2", CaptureOptions{Duration: 300 * time.Millisecond,
			OnListening: func() { listening.Store(true) }}, &out)
		if err != nil || out.Len() != 0 || !listening.Load() {
			t.Errorf("capture = %v, listening %v, printed %q", err, listening.Load(), out.String())
		}
		if took := time.Since(start); took < 300*time.Millisecond || took > 3*time.Second {
			t.Errorf("a 300ms capture took %v", took)
		}
	})
	t.Run("count under load", func(t *testing.T) {
		// tcpdump still writing when the reader is done must not hold
		// the capture up until the SIGKILL grace.
		send := captureNS(t, "bccap5")
		frames, _ := captureFrames()
		stop := make(chan struct{})
		done := make(chan struct{})
		flood := func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
					send(frames)
				}
			}
		}
		start := time.Now()
		err := captureInterface(t.Context(), "bccap5", CaptureOptions{All: true, Count: 100,
			OnListening: func() { go flood() }}, &bytes.Buffer{})
		took := time.Since(start)
		close(stop)
		<-done
		if err != nil || took >= killGrace {
			t.Errorf("capture = %v after %v", err, took)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		captureNS(t, "bccap3")
		ctx, cancel := context.WithCancel(t.Context())
		err := captureInterface(ctx, "bccap3", CaptureOptions{OnListening: cancel}, &bytes.Buffer{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("capture = %v, want context.Canceled", err)
		}
	})
	t.Run("no such interface", func(t *testing.T) {
		captureNS(t, "bccap4")
		file := filepath.Join(t.TempDir(), "x.pcap")
		err := captureInterface(t.Context(), "bccap9", CaptureOptions{File: file, Duration: 5 * time.Second}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "tcpdump failed") || !strings.Contains(err.Error(), "bccap9") {
			t.Errorf("capture on a missing interface = %v", err)
		}
		if _, err := os.Stat(file); err == nil {
			t.Error("a failed capture left its file")
		}
	})
}

func TestCaptureOptions(t *testing.T) {
	for _, c := range []struct {
		port string
		opts CaptureOptions
		err  string
	}{
		{"p0", CaptureOptions{Count: -1}, "count"},
		{"p0", CaptureOptions{Duration: -time.Second}, "duration"},
		{"-w", CaptureOptions{}, "bad port name"},
		{"", CaptureOptions{}, "bad port name"},
		{"a/b", CaptureOptions{}, "bad port name"},
	} {
		err := Capture(t.Context(), "bc", "h0", c.port, c.opts, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("Capture(%q, %+v) = %v, want %q", c.port, c.opts, err, c.err)
		}
	}
	if err := Capture(t.Context(), "bc", "x9", "p0", CaptureOptions{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "node") {
		t.Errorf("Capture on node x9 = %v", err)
	}
}

func TestDescribeFrameRunt(t *testing.T) {
	if _, ok := describeFrame([]byte{1, 2, 3}, false, nil); ok {
		t.Error("a runt is not flow control")
	}
	if l, ok := describeFrame([]byte{1, 2, 3}, true, nil); !ok || !strings.Contains(l, "runt") {
		t.Errorf("runt with All: %q", l)
	}
	pfc := make([]byte, 20)
	binary.BigEndian.PutUint16(pfc[12:], 0x8808)
	binary.BigEndian.PutUint16(pfc[14:], 0x0101)
	if l, _ := describeFrame(pfc, false, nil); !strings.HasSuffix(l, "malformed PFC frame: shorter than opcode, class-enable vector and eight times") {
		t.Errorf("short PFC: %q", l)
	}
	binary.BigEndian.PutUint16(pfc[14:], 0x0001)
	if l, _ := describeFrame(pfc, false, nil); !strings.HasSuffix(l, "PAUSE quanta=0") {
		t.Errorf("802.3x PAUSE: %q", l)
	}
}
