package xdp

import (
	"sync/atomic"
	"unsafe"
)

// descSize is the size of a descriptor, as of struct xdp_desc.
const descSize = unsafe.Sizeof(Desc{})

// ringOffsets locates a ring's parts within its mapping, as reported by
// getsockopt(XDP_MMAP_OFFSETS).
type ringOffsets struct {
	Producer uint64
	Consumer uint64
	Desc     uint64
	Flags    uint64
}

// ringSize is the length of the mapping of a ring of n entries of size bytes.
func ringSize(off ringOffsets, n int, size uintptr) int {
	return int(off.Desc) + n*int(size)
}

// ringWords returns the shared producer, consumer and flags words of a ring
// mapped at mem. The kernel aligns each word to 4 bytes or more.
func ringWords(mem []byte, off ringOffsets) (producer, consumer, flags *atomic.Uint32) {
	word := func(o uint64) *atomic.Uint32 {
		_ = mem[o+3] // bounds check
		return (*atomic.Uint32)(unsafe.Pointer(&mem[o]))
	}
	return word(off.Producer), word(off.Consumer), word(off.Flags)
}

// ringEntries returns the n-entry array of a ring mapped at mem: frame
// addresses (fill and completion rings) or descriptors (RX and TX rings).
func ringEntries[T uint64 | Desc](mem []byte, off ringOffsets, n int) []T {
	_ = mem[ringSize(off, n, unsafe.Sizeof(*new(T)))-1] // bounds check
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[off.Desc])), n)
}
