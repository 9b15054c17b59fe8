package node

// Captures. AF_XDP transmit bypasses the kernel's packet taps, so tcpdump
// on a port would see nothing of what the daemon sends. While a packet
// socket listens on a port (or on all interfaces), that port transmits
// through an AF_PACKET socket instead of its XSK TX ring: the kernel then
// shows every frame to the taps, once, as it would for a real NIC. A watcher
// reads the node namespace's /proc/net/packet once a second to switch
// ports in and out.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

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

// openPacketTable opens the packet-socket table of the calling thread's
// network namespace. It keeps showing that namespace's sockets, read
// again from the start at every look, whatever thread reads it later.
func openPacketTable() (*os.File, error) {
	f, err := os.Open("/proc/thread-self/net/packet")
	if err != nil {
		return nil, fmt.Errorf("packet sockets: %w", err)
	}
	return f, nil
}

// tappedIfindexes returns the interfaces some packet socket receives on,
// from a namespace's packet-socket table; all is true when one listens on
// every interface.
func tappedIfindexes(table *os.File) (set map[int]bool, all bool, err error) {
	set = map[int]bool{}
	sc := bufio.NewScanner(io.NewSectionReader(table, 0, 1<<40))
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

// watchTaps switches ports into and out of capture mode (set) until ctx
// ends.
func watchTaps(ctx context.Context, set func(port int, on bool), table *os.File, ifindexes []int, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		tapped, all, err := tappedIfindexes(table)
		if err == nil {
			for i, idx := range ifindexes {
				set(i, all || tapped[idx])
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
