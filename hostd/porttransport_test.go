package hostd

import (
	"github.com/bcfab/bcfab/model/scale"
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/wire/transport"
)

// A Rail-only server (eth0 160 Mb/s, eth1 100 Mb/s): a flow starts at the
// line rate of the port it leaves by, and IRN's in-flight cap is the
// BDP of the slowest level its path crosses.
func TestPortTransport(t *testing.T) {
	m := scale.Model{Target: scale.Papers(), D: 1000} // 100 Mb/s links
	tp := bcube.MustNew(4, 1)
	fast, slow := TransportParams(m, 160e6), TransportParams(m, 100e6)
	n := newNIC(t, tp, 0, slow)
	if err := n.h.SetPortTransport([]transport.Params{fast}); err == nil {
		t.Error("transport for one port of two accepted")
	}
	if err := n.h.SetPortTransport([]transport.Params{fast, slow}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dst   int
		order string
		port  int
		line  int64
		bdp   int64
		path  int64
	}{
		{1, "0,1", 0, 160e6, fast.BDPBytes, 160e6}, // h0 -> h1: level 0 only
		{4, "0,1", 1, 100e6, slow.BDPBytes, 100e6}, // h0 -> h4: level 1 only
		{5, "0,1", 0, 160e6, slow.BDPBytes, 100e6}, // both levels, eth0 first: the rail is the bottleneck
		{5, "1,0", 1, 100e6, slow.BDPBytes, 100e6},
	} {
		if p := n.h.r.pathParams(c.port, c.dst); p.LineRateBps != c.line || p.BDPBytes != c.bdp {
			t.Errorf("h0 -> h%d by port %d: line %d, BDP cap %d; want %d, %d", c.dst, c.port, p.LineRateBps, p.BDPBytes, c.line, c.bdp)
		}
		off := false
		fs, err := n.h.StartRDMA(api.RDMARequest{Dst: c.dst, Bytes: 1 << 20, Order: c.order, DCQCN: &off})
		if err != nil {
			t.Fatal(err)
		}
		if f := fs[0]; f.Port != c.port || f.RateBps != float64(c.line) || f.PathRateBps != c.path {
			t.Errorf("h0 -> h%d, order %s: port %d at %g bit/s, path %d; want port %d at %d, path %d", c.dst, c.order, f.Port, f.RateBps, f.PathRateBps, c.port, c.line, c.path)
		}
	}
	if fast.BDPBytes <= slow.BDPBytes {
		t.Fatalf("BDP caps %d (160 Mb/s) and %d (100 Mb/s) do not differ: the test shows nothing", fast.BDPBytes, slow.BDPBytes)
	}
}
