package bench

import (
	"context"
	"errors"
	"log/slog"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/scheme"
)

// SetScheme applies an experiment's scheme name to a lab spec: a
// registered flow-control scheme with its variants after colons
// (scheme.ParseName: bfc:Q for BFC with Q queues per port, the HQ
// included, bfc:2 a single data queue; bfc:hash for BFC whose flows keep
// a queue chosen by their hash, stochastic fair queueing, bfc:hash:8
// with 8 queues; portfc:drr and portfc:strict for PortFC whose servers
// serve the relay queue in the round robin of a and b, or before them),
// or a lossy transport's name (irn, gbn: no flow control). What a
// scheme does not name keeps the base spec's setting where the scheme
// has it (PortFC's relay queue, BFC's queues and assignment) and is
// cleared where it does not.
func SetScheme(s *lab.Spec, name string) error {
	n, err := scheme.ParseName(name)
	if err != nil {
		return err
	}
	k := n.Over(scheme.Knobs{BFCQueues: s.BFCQueues, BFCAssign: s.BFCAssign, RelayQueue: s.RelayQueue})
	s.FC, s.BFCQueues, s.BFCAssign, s.RelayQueue = n.FC, k.BFCQueues, k.BFCAssign, k.RelayQueue
	return nil
}

// healthSince samples the emulation health of lab name now and returns
// the health of the run from now to the call of the function it returns
// (a failed sample is a problem of that health).
func healthSince(root, name string) func() lab.Health {
	before, err := lab.SampleHealth(root, name)
	return func() lab.Health {
		after, err2 := lab.SampleHealth(root, name)
		if err = errors.Join(err, err2); err != nil {
			return lab.Health{Problems: []string{"health not sampled: " + err.Error()}}
		}
		return after.Since(before, 0, lab.HealthLimits{})
	}
}

// upScheme brings up BCube(n, k) from base under scheme, named name unless
// base has a name, and returns the spec it used and its run root; the
// caller takes it down with lab.Down(root, spec.Name, log).
func upScheme(ctx context.Context, base lab.Spec, n, k int, scheme, name string, log *slog.Logger) (spec lab.Spec, root string, err error) {
	spec = base
	spec.N, spec.K = n, k
	if err := SetScheme(&spec, scheme); err != nil {
		return spec, "", err
	}
	if spec.Name == "" {
		spec.Name = name
	}
	root = runRoot(spec)
	_, err = lab.Up(ctx, spec, log)
	return spec, root, err
}

// runRoot is where the lab of s keeps its run directory.
func runRoot(s lab.Spec) string {
	if s.RunRoot == "" {
		return lab.DefaultRunRoot
	}
	return s.RunRoot
}
