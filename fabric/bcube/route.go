package bcube

import (
	"fmt"
	"strconv"
	"strings"
)

// Order is the sequence in which a flow corrects the digits of its
// destination. Every node computes it from the same inputs (policy and flow
// hash), so a frame needs no source route. It is a value type: computing one
// allocates nothing.
type Order struct {
	lv  [MaxLevels]uint8
	len uint8
}

// Levels returns the order as a slice (for tests and reports; allocates).
func (o Order) Levels() []int {
	s := make([]int, o.len)
	for i := range s {
		s[i] = int(o.lv[i])
	}
	return s
}

func (o Order) String() string {
	parts := make([]string, o.len)
	for i := range parts {
		parts[i] = strconv.Itoa(int(o.lv[i]))
	}
	return strings.Join(parts, ",")
}

// ParallelPath returns the order of BCube's parallel path i (0 <= i <= k):
// levels i, i-1, ..., 0, k, ..., i+1. The k+1 parallel paths between two
// servers that differ in every digit are edge-disjoint (the BCube paper's
// BuildPathSet).
func (t Topology) ParallelPath(i int) Order {
	var o Order
	m := t.k + 1
	o.len = uint8(m)
	if uint(i) >= uint(m) { // a flow's path index is in range: no division
		if i %= m; i < 0 {
			i += m
		}
	}
	for x := 0; x < m; x++ {
		v := i - x
		if v < 0 {
			v += m
		}
		o.lv[x] = uint8(v)
	}
	return o
}

// Policy chooses a flow's level order.
type Policy struct {
	// Fixed, when set, is used for every flow; otherwise a flow takes
	// parallel path FlowHash mod (k+1).
	Fixed *Order
	// ATE marks Asymmetric Traffic Engineering (the PortFC paper's
	// Algorithm 5): a source NIC picks the first-hop domain of each of
	// its RDMA flows by its in-flight bytes (hostd's ATE), and gives the
	// flow a UDP source port whose flow hash names a parallel path that
	// starts in that domain (ParallelPath(l) starts at level l). Every
	// other node, and every
	// other frame, routes as under hash: relays recompute the order from
	// the flow hash, so the choice needs no header of its own.
	ATE bool
}

// String names the policy as ParsePolicy reads it.
func (p Policy) String() string {
	switch {
	case p.Fixed != nil:
		return p.Fixed.String()
	case p.ATE:
		return "ate"
	}
	return "hash"
}

// ParsePolicy parses "hash" (default), "ate", "ascending", "descending",
// or an explicit comma-separated permutation of 0..k such as "1,0".
func (t Topology) ParsePolicy(s string) (Policy, error) {
	switch s {
	case "", "hash":
		return Policy{}, nil
	case "ate":
		return Policy{ATE: true}, nil
	case "ascending":
		o := t.ParallelPath(t.k) // k, k-1... reversed below
		for x := 0; x <= t.k; x++ {
			o.lv[x] = uint8(x)
		}
		return Policy{Fixed: &o}, nil
	case "descending":
		o := t.ParallelPath(t.k)
		return Policy{Fixed: &o}, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != t.k+1 {
		return Policy{}, fmt.Errorf("level order %q: want hash, ate, ascending, descending or a permutation of 0..%d", s, t.k)
	}
	var o Order
	var seen [MaxLevels]bool
	o.len = uint8(t.k + 1)
	for x, p := range parts {
		l, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || l < 0 || l > t.k || seen[l] {
			return Policy{}, fmt.Errorf("level order %q: want a permutation of 0..%d", s, t.k)
		}
		seen[l] = true
		o.lv[x] = uint8(l)
	}
	return Policy{Fixed: &o}, nil
}

// OrderFor returns the level order of a flow with the given hash.
func (t Topology) OrderFor(p *Policy, hash uint32) Order {
	if p.Fixed != nil {
		return *p.Fixed
	}
	return t.ParallelPath(int(hash % uint32(t.k+1)))
}

// FiveTuple identifies a flow. Ports are zero for protocols without them and
// for IP fragments, so all fragments of a datagram follow one path.
type FiveTuple struct {
	Src, Dst     [4]byte
	Proto        uint8
	SPort, DPort uint16
}

// FlowHash is the flow hash every node uses (murmur3's finaliser chained
// over the tuple's words): stable across processes and versions.
func FlowHash(f *FiveTuple) uint32 {
	h := fmix(be32(f.Src) ^ 0x9e3779b9)
	h = fmix(h ^ be32(f.Dst))
	h = fmix(h ^ (uint32(f.SPort)<<16 | uint32(f.DPort)))
	return fmix(h ^ uint32(f.Proto))
}

func be32(b [4]byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func fmix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// FlowOrder is the level order of the flow f under policy p (the hash is
// computed only when the policy needs it).
func (t Topology) FlowOrder(p *Policy, f *FiveTuple) Order {
	if p.Fixed != nil {
		return *p.Fixed
	}
	return t.ParallelPath(int(FlowHash(f) % uint32(t.k+1)))
}
