package bench

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bcfab/bcfab/lab"
)

// SetScheme applies an experiment's scheme name to a lab spec: a
// flow-control scheme (none, portfc, pfc, pfcstar, bfc), or bfc:Q for BFC
// with Q queues per port, the HQ included (bfc:2 is a single data queue).
func SetScheme(s *lab.Spec, scheme string) error {
	fc, q, ok := strings.Cut(scheme, ":")
	s.FC, s.BFCQueues = fc, 0
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(q)
	if fc != "bfc" || err != nil {
		return fmt.Errorf("scheme %q: only bfc takes a queue count (bfc:32, bfc:2)", scheme)
	}
	s.BFCQueues = n
	return nil
}
