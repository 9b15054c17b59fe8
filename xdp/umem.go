package xdp

import "sync"

// A UMEM is a region of equal-sized frames that the kernel receives into and
// sends from, and the AF_XDP socket that registered it with the kernel (the
// owner). Frames are named by their offset in the region, their address.
//
// The accessors are safe for concurrent use; what the frames hold, and who
// may touch which frame, is the caller's business.
type UMEM struct {
	region    []byte
	frameSize int
	numFrames int
	headroom  int
	fillSize  int
	compSize  int

	mu sync.Mutex // guards the fields below; taken by setup and teardown only
	// fd is the owner socket; -1 once closed.
	fd int
	// ownerSocket is the Socket that uses fd, if any. Once bound, fd stays
	// bound to that device queue until the UMEM is closed.
	ownerSocket *Socket
	// bound reports fd bound. Later sockets share the UMEM through it and
	// inherit its zeroCopy and needWakeup.
	bound      bool
	zeroCopy   bool
	needWakeup bool
	// sockets are the open sockets, owner included.
	sockets map[*Socket]struct{}
}

// Bytes returns the whole region.
func (u *UMEM) Bytes() []byte { return u.region }

// Frame returns the n bytes at addr: u.Bytes()[addr:addr+n].
func (u *UMEM) Frame(addr uint64, n int) []byte {
	return u.region[addr : addr+uint64(n) : addr+uint64(n)]
}

// FrameSize returns the size of a frame (a chunk, in kernel terms).
func (u *UMEM) FrameSize() int { return u.frameSize }

// NumFrames returns the number of frames in the region.
func (u *UMEM) NumFrames() int { return u.numFrames }

// FrameAddr returns the address of frame i.
func (u *UMEM) FrameAddr(i int) uint64 { return uint64(i) * uint64(u.frameSize) }

// Base returns the address of the frame that contains addr. Received
// descriptors point past the headroom; the fill ring accepts either.
func (u *UMEM) Base(addr uint64) uint64 { return addr &^ uint64(u.frameSize-1) }

// MaxFrameLen returns the longest frame the kernel receives into a frame:
// the frame size less the kernel's 256-byte headroom and the UMEM's own.
func (u *UMEM) MaxFrameLen() int { return u.frameSize - kernelHeadroom - u.headroom }

// Headroom returns the UMEM headroom: received data starts at
// Base(addr) + 256 + Headroom().
func (u *UMEM) Headroom() int { return u.headroom }
