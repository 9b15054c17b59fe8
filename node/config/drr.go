package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bcfab/bcfab/queues"
)

// ParseDRRWeights reads DRR weights (Node.DRRWeights) as a lab gives
// them: "1,3", positive whole numbers, comma separated, one per data
// queue in queue order.
func ParseDRRWeights(s string) ([]int, error) {
	var w []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("drr weights %q: want whole numbers 1..%d, comma separated, one per data queue: 1,3", s, queues.MaxWeight)
		}
		w = append(w, n)
	}
	if err := checkDRRWeights(w); err != nil {
		return nil, fmt.Errorf("drr weights %q: %w", s, err)
	}
	return w, nil
}

// FormatDRRWeights is w as ParseDRRWeights reads it.
func FormatDRRWeights(w []int) string {
	s := make([]string, len(w))
	for i, n := range w {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// checkDRRWeights checks what weights are, whatever the egress: each
// 1..queues.MaxWeight (the first that is not says it), and no more than
// an egress can have data queues.
// Whether they fit a port's layout is its scheme's to check
// (scheme.New).
func checkDRRWeights(w []int) error {
	if len(w) > queues.MaxQueues-1 {
		return fmt.Errorf("%d weights: an egress has at most %d data queues", len(w), queues.MaxQueues-1)
	}
	for i, n := range w {
		if n < 1 || n > queues.MaxWeight {
			return fmt.Errorf("weight %d of data queue %d: want 1..%d", n, i, queues.MaxWeight)
		}
	}
	return nil
}
