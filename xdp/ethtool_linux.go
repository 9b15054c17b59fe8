package xdp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// SetTxChecksum turns TX checksum offload of device ifname, in the calling
// thread's network namespace, on or off (ETHTOOL_STXCSUM).
//
// Kernel TCP and UDP sending through a veth leave the checksum for the
// device to finish (CHECKSUM_PARTIAL), and veth never does: a frame that
// reaches an AF_XDP socket carries only the pseudo-header sum, and the host
// that finally receives it drops it as corrupt. With the offload off on the
// sending device the kernel computes the checksum before transmitting.
func SetTxChecksum(ifname string, on bool) error {
	var v uint32
	if on {
		v = 1
	}
	if err := ethtoolValue(ifname, unix.ETHTOOL_STXCSUM, &v); err != nil {
		return fmt.Errorf("xdp: set tx checksum offload of %s to %t: %w", ifname, on, err)
	}
	return nil
}

// TxChecksum reports whether TX checksum offload of ifname is on
// (ETHTOOL_GTXCSUM).
func TxChecksum(ifname string) (bool, error) {
	var v uint32
	if err := ethtoolValue(ifname, unix.ETHTOOL_GTXCSUM, &v); err != nil {
		return false, fmt.Errorf("xdp: get tx checksum offload of %s: %w", ifname, err)
	}
	return v != 0, nil
}

// ethFlagTxVLAN is ETH_FLAG_TXVLAN of ETHTOOL_GFLAGS/SFLAGS: the device
// inserts 802.1Q tags on transmit.
const ethFlagTxVLAN = 1 << 7

// SetTxVLAN turns tx VLAN offload (tx-vlan-hw-insert) of ifname on or off.
// Off, a tag the kernel's stack or a tc program pushes is written into the
// frame's bytes before the device sends it: on a veth, what the peer's
// AF_XDP socket receives then carries the tag, where on it stays in
// metadata that AF_XDP does not carry.
func SetTxVLAN(ifname string, on bool) error {
	var v uint32
	if err := ethtoolValue(ifname, unix.ETHTOOL_GFLAGS, &v); err != nil {
		return fmt.Errorf("xdp: get flags of %s: %w", ifname, err)
	}
	if on {
		v |= ethFlagTxVLAN
	} else {
		v &^= ethFlagTxVLAN
	}
	if err := ethtoolValue(ifname, unix.ETHTOOL_SFLAGS, &v); err != nil {
		return fmt.Errorf("xdp: set tx vlan offload of %s to %t: %w", ifname, on, err)
	}
	return nil
}

// TxVLAN reports whether tx VLAN offload of ifname is on.
func TxVLAN(ifname string) (bool, error) {
	var v uint32
	if err := ethtoolValue(ifname, unix.ETHTOOL_GFLAGS, &v); err != nil {
		return false, fmt.Errorf("xdp: get flags of %s: %w", ifname, err)
	}
	return v&ethFlagTxVLAN != 0, nil
}

// ethtoolValue issues a SIOCETHTOOL request whose argument is a struct
// ethtool_value, passing *v in and out.
func ethtoolValue(ifname string, cmd uint32, v *uint32) error {
	if len(ifname) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q too long", ifname)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return ioctlEthtoolValue(fd, ifname, cmd, v)
}

// SetGRO turns generic receive offload of ifname on or off (ETHTOOL_SGRO).
// On a veth it also switches receive to NAPI, so frames an AF_XDP socket
// transmits into its peer are taken up by the kernel in batches (and, with
// threaded NAPI, on a kernel thread of their own) instead of inside the
// transmitting process's sendto.
func SetGRO(ifname string, on bool) error {
	var v uint32
	if on {
		v = 1
	}
	if err := ethtoolValue(ifname, unix.ETHTOOL_SGRO, &v); err != nil {
		return fmt.Errorf("xdp: set gro of %s to %t: %w", ifname, on, err)
	}
	return nil
}

// GRO reports whether generic receive offload of ifname is on.
func GRO(ifname string) (bool, error) {
	var v uint32
	if err := ethtoolValue(ifname, unix.ETHTOOL_GGRO, &v); err != nil {
		return false, fmt.Errorf("xdp: get gro of %s: %w", ifname, err)
	}
	return v != 0, nil
}
