//go:build linux

package xdp

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// ethtoolValueReq is struct ethtool_value.
type ethtoolValueReq struct {
	cmd  uint32
	data uint32
}

// ifreqData is struct ifreq with ifr_data: a name and a pointer, padded to
// the size of the union. The pointer is a real pointer so that the
// garbage collector keeps its target alive during the ioctl.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

func ioctlEthtoolValue(fd int, ifname string, cmd uint32, v *uint32) error {
	req := ethtoolValueReq{cmd: cmd, data: *v}
	ifr := ifreqData{data: unsafe.Pointer(&req)}
	copy(ifr.name[:], ifname)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	if errno != 0 {
		return errno
	}
	*v = req.data
	return nil
}
