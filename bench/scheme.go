package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/bcfab/bcfab/lab"
)

// SetScheme applies an experiment's scheme name to a lab spec: a
// flow-control scheme (none, portfc, pfc, pfcstar, bfc), or bfc:Q for BFC
// with Q queues per port, the HQ included (bfc:2 is a single data queue);
// bfchash and bfchash:Q are BFC with queues assigned by flow hash
// (stochastic fair queueing) rather than dynamically.
func SetScheme(s *lab.Spec, scheme string) error {
	fc, q, ok := strings.Cut(scheme, ":")
	s.FC, s.BFCQueues, s.BFCHash = fc, 0, false
	if fc == "bfchash" {
		s.FC, s.BFCHash = "bfc", true
	}
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(q)
	if s.FC != "bfc" || err != nil {
		return fmt.Errorf("scheme %q: only bfc takes a queue count (bfc:32, bfc:2)", scheme)
	}
	s.BFCQueues = n
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
