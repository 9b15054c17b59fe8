// Package xdp gives user space the AF_XDP sockets of a port: a UMEM (a
// region of frames shared with the kernel) and sockets bound to a device
// queue, each with four single-producer single-consumer rings:
//
//	fill:       user -> kernel  frames the kernel may receive into
//	rx:         kernel -> user  received frames
//	tx:         user -> kernel  frames to send
//	completion: kernel -> user  frames the kernel has finished sending
//
// Frames move between rings by address only. Sockets on different devices
// may share one UMEM, so a frame received on one port is sent on another by
// handing its descriptor to the other socket's TX ring, without a copy in
// user space.
//
// The ring operations (Receive, Transmit, Fill, Complete) do not allocate
// and make at most one atomic load of the kernel's index and one atomic
// store of ours per call. A Socket is not safe for concurrent use: one
// goroutine drives it, or the caller serialises access.
//
// What copy mode (the only mode veth has) does, as observed on Linux 6.18:
//   - TX happens only in sendto, which Kick issues: at most 32 descriptors
//     per call, EAGAIN while more remain. Frames leave through the driver
//     directly, bypassing the qdisc and packet taps: tcpdump on the sending
//     device does not see them.
//   - There is no flow control towards a receiving socket: a frame that
//     finds its fill ring empty is dropped (Stats.RxFillRingEmpty). Frames
//     an XDP program redirects to a socket are not seen by tcpdump on the
//     receiving device either, in native or generic mode.
//   - With need-wakeup the TX ring's flag is always set, so Kick always
//     makes the syscall, and the fill ring's flag is never set.
package xdp

import (
	"errors"
	"fmt"
)

// ErrNotSupported is returned where AF_XDP does not exist.
var ErrNotSupported = errors.New("xdp: AF_XDP is not supported on this platform")

// Desc describes one frame in a UMEM; it has the layout of struct xdp_desc.
type Desc struct {
	Addr    uint64 // offset of the frame's first byte in the UMEM
	Len     uint32 // length of the frame
	Options uint32 // XDP_PKT_CONTD etc.; 0 for single-buffer frames
}

// BindMode says how a socket moves frames between the driver and the UMEM.
type BindMode int

const (
	// Copy copies frames between skbs or driver buffers and the UMEM. It
	// works on every device, veth included.
	Copy BindMode = iota
	// ZeroCopy has the driver DMA straight into the UMEM; bind fails
	// where the driver lacks support.
	ZeroCopy
	// Auto lets the kernel use zero-copy where it can and copy elsewhere.
	Auto
)

func (m BindMode) String() string {
	switch m {
	case Copy:
		return "copy"
	case ZeroCopy:
		return "zerocopy"
	case Auto:
		return "auto"
	}
	return fmt.Sprintf("BindMode(%d)", int(m))
}

// The kernel reserves this much in front of every received frame
// (XDP_PACKET_HEADROOM), before the UMEM's own headroom.
const kernelHeadroom = 256

// UMEMConfig sizes a UMEM and the fill and completion rings of every socket
// that uses it.
type UMEMConfig struct {
	NumFrames      int // frames in the region
	FrameSize      int // bytes per frame: 2048 or 4096
	Headroom       int // bytes reserved in front of received data; usually 0
	FillSize       int // entries in each socket's fill ring; power of two
	CompletionSize int // entries in each socket's completion ring; power of two
}

// DefaultUMEMConfig returns 4096 frames of 4096 bytes (16 MiB), which holds
// frames of up to 3840 bytes, and rings of 1024 entries.
func DefaultUMEMConfig() UMEMConfig {
	return UMEMConfig{
		NumFrames:      4096,
		FrameSize:      4096,
		FillSize:       1024,
		CompletionSize: 1024,
	}
}

// Validate reports whether the kernel would accept c.
func (c UMEMConfig) Validate() error {
	switch {
	case c.NumFrames <= 0 || c.NumFrames > 1<<24:
		return fmt.Errorf("xdp: UMEM frame count %d: want 1..%d", c.NumFrames, 1<<24)
	case c.FrameSize != 2048 && c.FrameSize != 4096:
		return fmt.Errorf("xdp: UMEM frame size %d is neither 2048 nor 4096", c.FrameSize)
	case c.Headroom < 0 || c.Headroom >= c.FrameSize-kernelHeadroom:
		return fmt.Errorf("xdp: UMEM headroom %d leaves no room in %d-byte frames", c.Headroom, c.FrameSize)
	case !isPow2(c.FillSize):
		return fmt.Errorf("xdp: fill ring size %d is not a power of two", c.FillSize)
	case !isPow2(c.CompletionSize):
		return fmt.Errorf("xdp: completion ring size %d is not a power of two", c.CompletionSize)
	}
	return nil
}

// SocketConfig says where to bind a socket and how large its rings are.
type SocketConfig struct {
	Ifindex int // device, in the calling thread's network namespace
	QueueID int // device receive/transmit queue
	RxSize  int // entries in the RX ring; power of two
	TxSize  int // entries in the TX ring; power of two
	// Mode is the bind mode. Sockets that share a UMEM with an earlier
	// socket inherit its mode; they may ask for Auto or the same mode.
	Mode BindMode
	// NeedWakeup binds with XDP_USE_NEED_WAKEUP: the kernel flags the
	// rings when it needs a syscall to make progress, so Kick can skip
	// the syscall otherwise. Inherited like Mode.
	NeedWakeup bool
}

// DefaultSocketConfig returns a copy-mode socket on ifindex queue 0 with
// rings of 1024 entries.
func DefaultSocketConfig(ifindex int) SocketConfig {
	return SocketConfig{
		Ifindex: ifindex,
		RxSize:  1024,
		TxSize:  1024,
	}
}

// Validate reports whether c is well formed; only binding tells whether the
// device accepts it.
func (c SocketConfig) Validate() error {
	switch {
	case c.Ifindex <= 0:
		return fmt.Errorf("xdp: invalid ifindex %d", c.Ifindex)
	case c.QueueID < 0:
		return fmt.Errorf("xdp: invalid queue %d", c.QueueID)
	case !isPow2(c.RxSize):
		return fmt.Errorf("xdp: RX ring size %d is not a power of two", c.RxSize)
	case !isPow2(c.TxSize):
		return fmt.Errorf("xdp: TX ring size %d is not a power of two", c.TxSize)
	case c.Mode != Copy && c.Mode != ZeroCopy && c.Mode != Auto:
		return fmt.Errorf("xdp: invalid bind mode %v", c.Mode)
	}
	return nil
}

// Stats are a socket's XDP_STATISTICS counters.
type Stats struct {
	RxDropped       uint64 // frames dropped for a reason other than invalid descriptors
	RxInvalidDescs  uint64 // invalid descriptors on the fill ring
	TxInvalidDescs  uint64 // invalid descriptors on the TX ring (never completed)
	RxRingFull      uint64 // frames dropped because the RX ring was full
	RxFillRingEmpty uint64 // times the fill ring was empty when a frame arrived
	TxRingEmpty     uint64 // times the kernel found the TX ring empty
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }
