package daemon

// Captures. AF_XDP transmit bypasses the kernel's packet taps, so tcpdump
// on a port would see nothing of what the daemon sends. While a packet
// socket listens on a port (or on all interfaces), that port transmits
// through an AF_PACKET socket instead of its XSK TX ring: the kernel then
// shows every frame to the taps, once, as it would for a real NIC. A watcher
// reads /proc/net/packet a few times a second to switch ports in and out.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/dataplane"
	"golang.org/x/sys/unix"
)

// PacketTX transmits frames through an AF_PACKET socket bound to one
// interface. It receives nothing (protocol 0).
type PacketTX struct {
	fd      int
	ifindex int
}

// NewPacketTX opens the socket for ifindex.
func NewPacketTX(ifindex int) (*PacketTX, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("dataplane: packet socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("dataplane: bind packet socket to %d: %w", ifindex, err)
	}
	return &PacketTX{fd: fd, ifindex: ifindex}, nil
}

// WriteFrame implements FrameWriter.
func (p *PacketTX) WriteFrame(b []byte) error {
	_, err := unix.Write(p.fd, b)
	return err
}

// Close closes the socket.
func (p *PacketTX) Close() error { return unix.Close(p.fd) }

// tappedIfindexes returns the interfaces some packet socket receives on,
// from /proc/net/packet; all is true when one listens on every interface.
func tappedIfindexes() (set map[int]bool, all bool, err error) {
	f, err := os.Open("/proc/net/packet")
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	set = map[int]bool{}
	sc := bufio.NewScanner(f)
	sc.Scan() // header: sk RefCnt Type Proto Iface R Rmem User Inode
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 5 {
			continue
		}
		proto, err1 := strconv.ParseUint(fs[3], 16, 16)
		iface, err2 := strconv.Atoi(fs[4])
		if err1 != nil || err2 != nil || proto == 0 {
			continue // a socket that receives nothing, such as our own PacketTX
		}
		if iface == 0 {
			all = true
		}
		set[iface] = true
	}
	return set, all, sc.Err()
}

// watchTaps switches ports into and out of capture mode until ctx ends.
func watchTaps(ctx context.Context, e *dataplane.Engine, ifindexes []int, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		set, all, err := tappedIfindexes()
		if err == nil {
			for i, idx := range ifindexes {
				e.SetTapped(i, all || set[idx])
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
