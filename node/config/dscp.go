package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bcfab/bcfab/signaling"
)

// DSCPMap maps an IPv4 DSCP (0..63) to the fabric class, the 802.1Q
// priority (0..7), that the classifier on a server's bc0 gives the kernel
// traffic carrying it, as an RDMA host trusting DSCP does. What the map
// leaves out rides priority 0 (best effort: lossy under PFC), except ICMP,
// which rides the control priority 6 so ping measures the control path.
// A nil map is DefaultDSCPMap; an empty one maps nothing.
type DSCPMap map[uint8]uint8

// DefaultDSCPMap is RoCEv2's convention: DSCP 26 rides the lossless data
// priority 3.
func DefaultDSCPMap() DSCPMap { return DSCPMap{26: signaling.PCPData} }

// ParseDSCPMap reads "26=3,46=5" (DSCP=priority, comma separated); "none"
// is the empty map.
func ParseDSCPMap(s string) (DSCPMap, error) {
	m := DSCPMap{}
	s = strings.TrimSpace(s)
	if s == "none" {
		return m, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		d, err1 := strconv.ParseUint(strings.TrimSpace(k), 10, 8)
		p, err2 := strconv.ParseUint(strings.TrimSpace(v), 10, 8)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("dscp map %q: want DSCP=priority pairs like 26=3,46=5, or none", s)
		}
		if _, dup := m[uint8(d)]; dup {
			return nil, fmt.Errorf("dscp map %q: DSCP %d mapped twice", s, d)
		}
		m[uint8(d)] = uint8(p)
	}
	return m, m.Validate()
}

// Validate checks every DSCP is 0..63 and every priority 0..7.
func (m DSCPMap) Validate() error {
	for _, d := range m.keys() {
		switch {
		case d > 63:
			return fmt.Errorf("dscp map: DSCP %d: want 0..63", d)
		case m[d] > 7:
			return fmt.Errorf("dscp map: DSCP %d -> priority %d: want 0..7", d, m[d])
		}
	}
	return nil
}

// String is the form ParseDSCPMap reads, sorted by DSCP.
func (m DSCPMap) String() string {
	if len(m) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, d := range m.keys() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d=%d", d, m[d])
	}
	return b.String()
}

func (m DSCPMap) keys() []uint8 {
	ks := make([]uint8, 0, len(m))
	for d := range m {
		ks = append(ks, d)
	}
	slices.Sort(ks)
	return ks
}

// Set and Type make a DSCPMap a command-line flag value.
func (m *DSCPMap) Set(s string) error {
	v, err := ParseDSCPMap(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Type names the value in generated help.
func (m *DSCPMap) Type() string { return "map" }
