// Package bcube is the single home of BCube(n, k) addressing: server digits,
// switch identities, interface and namespace names, IPv4 and MAC addresses,
// and server-side routing (which level to correct next). Every other package
// imports it; nothing here is computed anywhere else.
//
// Conventions (DESIGN §2):
//
//   - Server i has digits a_j = (i / n^j) mod n, j = 0..k, and is named h<i>.
//     Its port j (interface eth<j>) connects to a level-j switch.
//   - A level-l switch is identified by the server digits other than digit l,
//     read as a base-n number lowest level first: w in [0, n^k). It is named
//     s<l>.<w>; its port p (interface p<p>) connects to the server whose digit
//     l is p and whose other digits are w.
//   - Server i has IPv4 198.18.0.0 + i.
package bcube

import (
	"errors"
	"fmt"
	"math/bits"
	"net"
	"net/netip"
)

// Limits of what this package addresses. MaxLevels bounds k+1 so that a
// level order fits in a fixed array (no allocation on the data path).
const (
	MaxLevels  = 8
	MaxServers = 1 << 16 // fits the /15 and the MAC encoding with room to spare
)

// Base is the first server address; the fabric lives in 198.18.0.0/15, the
// block reserved for benchmarking network devices (RFC 2544).
var (
	Base   = netip.AddrFrom4([4]byte{198, 18, 0, 0})
	Prefix = netip.PrefixFrom(Base, 15)
)

// Topology is a validated BCube(n, k). The zero value is not usable; build
// one with New.
type Topology struct {
	n, k int
	pow  [MaxLevels + 1]int // pow[j] = n^j
	// rpow[j] is 2^64 / pow[j], rounded up (0 for pow[j] = 1): i / pow[j]
	// is the high word of rpow[j] * i for every i < 2^32 (Lemire, Kaser
	// and Kurz, "Faster remainder by direct computation", 2019). A switch
	// takes a server's digits for every frame it forwards; a multiply
	// costs a few cycles where a division costs tens.
	rpow [MaxLevels + 1]uint64
}

// ErrInvalid is wrapped by every validation error of New.
var ErrInvalid = errors.New("invalid BCube topology")

// New validates (n, k) and returns the topology.
func New(n, k int) (Topology, error) {
	var t Topology
	switch {
	case n < 2:
		return t, fmt.Errorf("%w: n = %d, need n >= 2 (ports per switch)", ErrInvalid, n)
	case k < 1:
		return t, fmt.Errorf("%w: k = %d, need k >= 1 (BCube(n,0) is a single switch)", ErrInvalid, k)
	case k+1 > MaxLevels:
		return t, fmt.Errorf("%w: k = %d, at most %d levels are supported", ErrInvalid, k, MaxLevels)
	case n > 255:
		return t, fmt.Errorf("%w: n = %d, at most 255 ports per switch", ErrInvalid, n)
	}
	t.n, t.k = n, k
	t.pow[0] = 1
	for j := 1; j <= k+1; j++ {
		t.pow[j] = t.pow[j-1] * n
		if t.pow[j] > MaxServers {
			return Topology{}, fmt.Errorf("%w: BCube(%d,%d) has more than %d servers", ErrInvalid, n, k, MaxServers)
		}
		t.rpow[j] = reciprocal(t.pow[j])
	}
	return t, nil
}

// Star returns BCube(n,0): n servers on one switch, which New refuses as
// a fabric of its own. It is how a single-homed server of a
// switch-to-switch fabric (package topo's leaf-spine, fat-tree,
// expander) sees that fabric: servers 0..n-1 at the usual addresses, one
// port (level 0) behind which every other server is, nothing to relay.
// The switch it names is not the fabric's: such a server is told its
// neighbour's MAC. n may exceed a BCube switch's 255 ports.
func Star(n int) (Topology, error) {
	var t Topology
	switch {
	case n < 2:
		return t, fmt.Errorf("%w: %d servers, need at least 2", ErrInvalid, n)
	case n > MaxServers:
		return t, fmt.Errorf("%w: %d servers, at most %d", ErrInvalid, n, MaxServers)
	}
	t.n, t.k = n, 0
	t.pow[0], t.pow[1] = 1, n
	t.rpow[1] = reciprocal(n)
	return t, nil
}

// MustNew is New for constants in tests and examples.
func MustNew(n, k int) Topology {
	t, err := New(n, k)
	if err != nil {
		panic(err)
	}
	return t
}

func (t Topology) N() int      { return t.n }
func (t Topology) K() int      { return t.k }
func (t Topology) Levels() int { return t.k + 1 }

// Servers is n^(k+1).
func (t Topology) Servers() int { return t.pow[t.k+1] }

// SwitchesPerLevel is n^k.
func (t Topology) SwitchesPerLevel() int { return t.pow[t.k] }

// Switches is (k+1)·n^k.
func (t Topology) Switches() int { return (t.k + 1) * t.pow[t.k] }

// Links is the number of server-switch cables, (k+1)·n^(k+1).
func (t Topology) Links() int { return (t.k + 1) * t.Servers() }

func (t Topology) String() string { return fmt.Sprintf("BCube(%d,%d)", t.n, t.k) }

// Digit returns digit j of server i.
func (t Topology) Digit(i, j int) int { return t.quo(i, j) - t.quo(i, j+1)*t.n }

// reciprocal is 2^64 / d rounded up, for d > 1.
func reciprocal(d int) uint64 { return ^uint64(0)/uint64(d) + 1 }

// quo is i / pow[j] for 0 <= i < 2^32 (indices of servers and switches
// are below MaxServers).
func (t Topology) quo(i, j int) int {
	if t.rpow[j] == 0 {
		return i
	}
	q, _ := bits.Mul64(t.rpow[j], uint64(i))
	return int(q)
}

// SwitchOf returns the switch w at level l that server i connects to through
// its port l, and the switch port p it lands on.
func (t Topology) SwitchOf(i, l int) (w, p int) {
	p = t.Digit(i, l)
	lo := i - t.quo(i, l)*t.pow[l] // digits below l
	hi := t.quo(i, l+1)            // digits above l
	w = lo + hi*t.pow[l]           // remove digit l, keep order lowest first
	return w, p
}

// ServerAt returns the server on port p of switch (l, w).
func (t Topology) ServerAt(l, w, p int) int {
	hi := t.quo(w, l)
	lo := w - hi*t.pow[l]
	return lo + p*t.pow[l] + hi*t.pow[l+1]
}

// NextLevel returns the level whose digit server self corrects next for
// traffic to dst, following order, or -1 when self is dst.
func (t Topology) NextLevel(self, dst int, order *Order) int {
	for x := 0; x < int(order.len); x++ {
		l := int(order.lv[x])
		if t.Digit(self, l) != t.Digit(dst, l) {
			return l
		}
	}
	return -1
}

// Hops is the number of NIC traversals between two servers: 2 per differing
// digit (server->switch, switch->server).
func (t Topology) Hops(a, b int) int {
	h := 0
	for j := 0; j <= t.k; j++ {
		if t.Digit(a, j) != t.Digit(b, j) {
			h += 2
		}
	}
	return h
}

// Names and interfaces.

func HostName(i int) string      { return fmt.Sprintf("h%d", i) }
func SwitchName(l, w int) string { return fmt.Sprintf("s%d.%d", l, w) }
func HostPort(j int) string      { return fmt.Sprintf("eth%d", j) }
func SwitchPort(p int) string    { return fmt.Sprintf("p%d", p) }

// AppIf is the application interface of a server namespace: the kernel's
// side, carrying the server's address. AppPeerIf is the other end of the
// veth, driven by hostd over AF_XDP.
const (
	AppIf     = "bc0"
	AppPeerIf = "bc0nic"
)

// ParseNode parses a node name: h<i> or s<l>.<w>.
func (t Topology) ParseNode(name string) (Node, error) {
	var a, b int
	if _, err := fmt.Sscanf(name, "h%d", &a); err == nil && HostName(a) == name {
		if a < 0 || a >= t.Servers() {
			return Node{}, fmt.Errorf("node %q: %s has servers h0..h%d", name, t, t.Servers()-1)
		}
		return Node{Switch: false, Index: a}, nil
	}
	if _, err := fmt.Sscanf(name, "s%d.%d", &a, &b); err == nil && SwitchName(a, b) == name {
		if a < 0 || a > t.k || b < 0 || b >= t.SwitchesPerLevel() {
			return Node{}, fmt.Errorf("node %q: %s has switches s0.0..s%d.%d", name, t, t.k, t.SwitchesPerLevel()-1)
		}
		return Node{Switch: true, Level: a, Index: b}, nil
	}
	return Node{}, fmt.Errorf("node %q: want h<i> or s<level>.<index>", name)
}

// Node identifies a server (Index = i) or a switch (Level, Index = w).
type Node struct {
	Switch bool
	Level  int
	Index  int
}

func (n Node) String() string {
	if n.Switch {
		return SwitchName(n.Level, n.Index)
	}
	return HostName(n.Index)
}

// Addresses.

// ServerIP is 198.18.0.0 + i.
func ServerIP(i int) netip.Addr {
	b := Base.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(i)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// ServerIndex maps an IPv4 destination (network byte order) to a server
// index, or -1 when it is not a server of t.
func (t Topology) ServerIndex(ip [4]byte) int {
	v := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 | uint32(ip[3])
	i := int(v - 0xC6120000) // 198.18.0.0
	if v < 0xC6120000 || i >= t.Servers() {
		return -1
	}
	return i
}

// MAC kinds, byte 1 of every lab MAC (byte 0 is 0x02: locally administered,
// unicast).
const (
	macHostPort   = 0x10
	macSwitchPort = 0x20
	macApp        = 0x30 // bc0, the kernel side
	macAppNIC     = 0x31 // bc0nic, hostd's side
)

// HostPortMAC is the MAC of server i's fabric port j: 02:10:ii:ii:ii:jj.
func HostPortMAC(i, j int) net.HardwareAddr {
	return net.HardwareAddr{0x02, macHostPort, byte(i >> 16), byte(i >> 8), byte(i), byte(j)}
}

// SwitchPortMAC is the MAC of port p of switch (l, w): 02:20:ll:ww:ww:pp.
func SwitchPortMAC(l, w, p int) net.HardwareAddr {
	return net.HardwareAddr{0x02, macSwitchPort, byte(l), byte(w >> 8), byte(w), byte(p)}
}

// AppMAC is the MAC of server i's bc0.
func AppMAC(i int) net.HardwareAddr {
	return net.HardwareAddr{0x02, macApp, byte(i >> 16), byte(i >> 8), byte(i), 0}
}

// AppNICMAC is the MAC of the hostd side of server i's bc0 veth; the kernel
// resolves every fabric address to it.
func AppNICMAC(i int) net.HardwareAddr {
	return net.HardwareAddr{0x02, macAppNIC, byte(i >> 16), byte(i >> 8), byte(i), 0}
}
