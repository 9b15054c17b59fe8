package lab

import (
	"fmt"
	"math"

	"github.com/bcfab/bcfab/model/units"
)

// The lab's quantities are read and printed by package units (iperf3's
// conventions: a bare K/M/G is 1024-based for sizes and 1000-based for
// rates). These are its functions with the types the Spec uses.

// ParseRate is units.ParseRate.
func ParseRate(s string) (uint64, error) { return units.ParseRate(s) }

// ParseSize is units.ParseSize for a Spec's byte fields, which are ints
// below 2 GiB.
func ParseSize(s string) (int, error) {
	n, err := units.ParseSize(s)
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("size %q: at most %s", s, units.FormatSize(math.MaxInt32))
	}
	return int(n), nil
}

// ParseLoss is units.ParseLoss.
func ParseLoss(s string) (int, error) { return units.ParseLoss(s) }

// FormatRate is units.FormatRate.
func FormatRate(bps uint64) string { return units.FormatRate(bps) }

// FormatSize is units.FormatSize.
func FormatSize(n int) string { return units.FormatSize(int64(n)) }

// FormatLoss is units.FormatLoss.
func FormatLoss(ppm int) string { return units.FormatLoss(ppm) }
