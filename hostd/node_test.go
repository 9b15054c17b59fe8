//go:build linux

package hostd

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/queues"
)

// A server's DRR weights reach its fabric ports' queues as quanta, in
// queue order (PortFC's a0..a2, b0..b2, RQ), the HQ skipped; its
// application port keeps its one queue. The relay queue, strict unless
// relay_queue drr, takes no weight but 1. It needs no root: NewNode only
// plans the node.
func TestNewNodeDRRWeights(t *testing.T) {
	const d = queues.DefaultQuantum
	for _, c := range []struct {
		name, relay string
		weights     []int
		want        []int  // every fabric port's quanta
		wantErr     string // in part
	}{
		{"relay drr", scheme.RelayDRR, []int{1, 1, 1, 2, 2, 2, 4}, []int{d, d, d, 2 * d, 2 * d, 2 * d, 4 * d, d}, ""},
		{"relay strict, its weight 1", scheme.RelayStrict, []int{3, 1, 1, 1, 1, 1, 1}, []int{3 * d, d, d, d, d, d, d, d}, ""},
		{"a short list", "", []int{1, 2}, []int{d, 2 * d, d, d, d, d, d, d}, ""},
		{"relay strict weighed", scheme.RelayStrict, []int{1, 1, 1, 1, 1, 1, 4}, nil, "weight 4 of queue RQ: a strict queue"},
		{"too many", scheme.RelayDRR, []int{1, 1, 1, 1, 1, 1, 1, 1}, nil, "8 weights for 7 data queues"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Node{Node: "h5", N: 4, K: 1, Control: "/x.sock", RateBps: 1e9, FC: scheme.NamePortFC,
				RelayQueue: c.relay, DRRWeights: c.weights}
			cfg.SetDefaults()
			tp, n, err := cfg.Validate()
			if err != nil {
				t.Fatal(err)
			}
			spec, err := NewNode(&cfg, tp, n, slog.New(slog.DiscardHandler))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(spec.Ports) != tp.Levels()+1 {
				t.Fatalf("%d ports", len(spec.Ports))
			}
			for _, p := range spec.Ports {
				want := c.want
				if p.Ifname == bcube.AppPeerIf {
					want = nil
				}
				if !slices.Equal(p.Queues.Quantum, want) {
					t.Errorf("port %s: quanta %v, want %v", p.Ifname, p.Queues.Quantum, want)
				}
			}
		})
	}
}
