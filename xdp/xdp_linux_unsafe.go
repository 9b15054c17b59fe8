//go:build linux

package xdp

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Desc must match struct xdp_desc, which the kernel writes to and reads from
// the RX and TX rings.
var _ [unsafe.Sizeof(unix.XDPDesc{})]struct{} = [descSize]struct{}{}

// registerUMEM registers region with the socket fd (XDP_UMEM_REG).
func registerUMEM(fd int, region []byte, reg *unix.XDPUmemReg) error {
	reg.Addr = uint64(uintptr(unsafe.Pointer(&region[0])))
	_, _, errno := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_XDP, unix.XDP_UMEM_REG,
		uintptr(unsafe.Pointer(reg)), unsafe.Sizeof(*reg), 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// getsockopt reads option opt of level SOL_XDP into *v and returns the
// length the kernel wrote.
func getsockopt[T any](fd, opt int, v *T) (int, error) {
	n := uint32(unsafe.Sizeof(*v))
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_XDP, uintptr(opt),
		uintptr(unsafe.Pointer(v)), uintptr(unsafe.Pointer(&n)), 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

type socketOffsets struct {
	rx, tx, fill, comp ringOffsets
}

// mmapOffsets returns where the parts of each ring of fd lie in its mapping.
func mmapOffsets(fd int) (socketOffsets, error) {
	var off unix.XDPMmapOffsets
	n, err := getsockopt(fd, unix.XDP_MMAP_OFFSETS, &off)
	if err != nil {
		return socketOffsets{}, err
	}
	if n != int(unsafe.Sizeof(off)) {
		// Kernels before 5.4 lack the flags words; they are too old for
		// this package in other ways too.
		return socketOffsets{}, unix.EPROTO
	}
	conv := func(o unix.XDPRingOffset) ringOffsets {
		return ringOffsets{Producer: o.Producer, Consumer: o.Consumer, Desc: o.Desc, Flags: o.Flags}
	}
	return socketOffsets{rx: conv(off.Rx), tx: conv(off.Tx), fill: conv(off.Fr), comp: conv(off.Cr)}, nil
}

// statistics returns XDP_STATISTICS of fd. Older kernels fill only a prefix;
// the rest reads as zero.
func statistics(fd int) (unix.XDPStatistics, error) {
	var st unix.XDPStatistics
	_, err := getsockopt(fd, unix.XDP_STATISTICS, &st)
	return st, err
}
