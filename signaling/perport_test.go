package signaling

import (
	"testing"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/queues"
)

// Per-port thresholds (a cable overridden, a Rail-only fabric's levels):
// each port of a node signals at its own thresholds, and ports without
// one take the node's.

// PortFC: switch s0.0 of BCube(4,1), port 1 at twice the thresholds of
// the others, pauses there at its own X_off and resumes at its own X_on.
func TestSwitchPerPortThresholds(t *testing.T) {
	tp := bcube.MustNew(4, 1)
	for _, c := range []struct {
		port       int
		xoff, xonA int
	}{{0, 6000, 4000}, {1, 12000, 8000}, {2, 6000, 4000}, {3, 6000, 4000}} {
		env := switchEnv(t, tp)
		pt := th
		pt.PerPort = []PortThresholds{{}, {XoffA: 12000, XonA: 8000, XoffB: 18000, XonB: 6000}}
		s := NewSwitchPortFC(tp, 0, 0, env, pt)
		eg := env.Egress(c.port)
		eg.SetHooks(s.Hooks(c.port))
		pk := queues.Packet{Len: 1000}
		for eg.GroupBytes(0) < c.xoff-1000 {
			eg.Enqueue(0, pk, 0)
		}
		if s.Signalled(c.port, ClassA) {
			t.Fatalf("port %d: paused at %d bytes, below its X_off %d", c.port, eg.GroupBytes(0), c.xoff)
		}
		eg.Enqueue(0, pk, 0)
		if !s.Signalled(c.port, ClassA) || len(env.take(t)) != 3 {
			t.Fatalf("port %d: not paused at its X_off %d", c.port, c.xoff)
		}
		for eg.GroupBytes(0) > c.xonA+1000 {
			eg.Dequeue(0)
		}
		if !s.Signalled(c.port, ClassA) {
			t.Fatalf("port %d: resumed at %d, above its X_on %d", c.port, eg.GroupBytes(0), c.xonA)
		}
		eg.Dequeue(0)
		if s.Signalled(c.port, ClassA) {
			t.Fatalf("port %d: still paused at its X_on %d", c.port, c.xonA)
		}
	}
}

// PFC: ingress port 1 with its own (higher) thresholds asserts and
// releases at those; port 0 at the node's.
func TestPFCPerPortThresholds(t *testing.T) {
	for _, c := range []struct {
		in        int
		xoff, xon int
	}{{0, 5000, 3000}, {1, 8000, 5000}} {
		env := pfcEnv(t)
		f := NewPFC(env, pfcPorts, PFCThresholds{Xoff: 5000, Xon: 3000, Lossless: 1 << 3,
			PerPort: []PFCLimits{{}, {Xoff: 8000, Xon: 5000}}}) // port 0's entry is zero: the node's
		env.eg[2].SetHooks(f.Hooks())
		pk := queues.Packet{Len: 1000, Meta: IngressMeta(c.in, 3)}
		for f.Charged(c.in, 3) < c.xoff-1000 {
			env.eg[2].Enqueue(3, pk, 0)
		}
		if f.Asserted(c.in, 3) {
			t.Fatalf("in %d: X_off at %d, below %d", c.in, f.Charged(c.in, 3), c.xoff)
		}
		env.eg[2].Enqueue(3, pk, 0)
		if !f.Asserted(c.in, 3) {
			t.Fatalf("in %d: no X_off at %d", c.in, c.xoff)
		}
		for f.Charged(c.in, 3) > c.xon+1000 {
			env.eg[2].Dequeue(0)
		}
		if !f.Asserted(c.in, 3) {
			t.Fatalf("in %d: X_on above %d", c.in, c.xon)
		}
		env.eg[2].Dequeue(0)
		if f.Asserted(c.in, 3) {
			t.Fatalf("in %d: no X_on at %d", c.in, c.xon)
		}
	}
}

// BFC: Th of an egress port is its own BDP over its active queues.
func TestBFCPerPortBDP(t *testing.T) {
	for _, c := range []struct {
		name string
		per  []int
		th   int // bytes a queue holds before a joining frame counts
	}{{"node's", nil, 3000}, {"port 1's", []int{0, 6000}, 6000}, {"port 0's only", []int{9000}, 3000}} {
		t.Run(c.name, func(t *testing.T) {
			env := bfcEnv(t)
			cfg := BFCConfig{Queues: 8, TableSize: 800, Sticky: sticky, Refresh: 1_000_000, BDP: 3000, PerPortBDP: c.per}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			b := NewBFC(env, bfcPorts, cfg)
			env.eg[1].SetHooks(b.Hooks(1))
			for queued := 0; ; queued += 1000 {
				q, meta := b.Classify(1, 42, 0, VID(2), env.now)
				counted := meta&bfcCounted != 0
				if counted != (queued > c.th) {
					t.Fatalf("frame joining %d bytes: counted %v, want Th %d", queued, counted, c.th)
				}
				if counted {
					break
				}
				env.eg[1].Enqueue(q, queues.Packet{Len: 1000, Meta: meta}, env.now)
			}
		})
	}
	if (BFCConfig{Queues: 8, TableSize: 8, Refresh: 1, BDP: 1, PerPortBDP: []int{-1}}).Validate() == nil {
		t.Error("a negative per-port BDP validated")
	}
}
