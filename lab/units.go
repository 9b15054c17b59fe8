package lab

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// ParseRate parses a link rate in bit/s: a plain number ("1000000000") or a
// number with a decimal SI suffix k, M, G or T ("100M", "2.5G"), optionally
// followed by "bps" or "bit". Rates are decimal, as link speeds are.
func ParseRate(s string) (uint64, error) {
	in := s
	s = strings.TrimSpace(s)
	for _, unit := range []string{"bps", "bit", "b/s"} {
		if strings.HasSuffix(s, unit) {
			s = strings.TrimSuffix(s, unit)
			break
		}
	}
	mult := uint64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1e3
		case 'M':
			mult = 1e6
		case 'G':
			mult = 1e9
		case 'T':
			mult = 1e12
		}
		if mult != 1 {
			s = s[:len(s)-1]
		}
	}
	v, err := parseScaled(s, mult)
	if err != nil {
		return 0, fmt.Errorf("rate %q: want bit/s like 1G, 100M, 2.5G or 1000000000", in)
	}
	return v, nil
}

// ParseSize parses a byte count: a plain number ("1500"), or a number with
// a binary (KiB, MiB, GiB) or decimal (kB, KB, MB, GB) unit, or "B".
// Bare K/M/G are refused as ambiguous.
func ParseSize(s string) (int, error) {
	in := s
	s = strings.TrimSpace(s)
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
		{"B", 1},
	} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	v, err := parseScaled(s, mult)
	if err != nil || v > math.MaxInt32 {
		return 0, fmt.Errorf("size %q: want bytes like 1MiB, 512KiB, 64kB or 1500", in)
	}
	return int(v), nil
}

// parseScaled parses a non-negative decimal number ("2.5") times mult,
// exactly; the product must be a whole number that fits in a uint64.
func parseScaled(s string, mult uint64) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "." || strings.Count(s, ".") > 1 || strings.Trim(s, "0123456789.") != "" {
		return 0, fmt.Errorf("bad number %q", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, fmt.Errorf("bad number %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).SetUint64(mult)))
	if !r.IsInt() || !r.Num().IsUint64() {
		return 0, fmt.Errorf("%q is not a whole number in range", s)
	}
	return r.Num().Uint64(), nil
}

// FormatRate prints a rate in bit/s with the largest decimal unit that
// keeps it readable: 1 Gbit/s, 2.5 Gbit/s, 100 Mbit/s; 0 is "unshaped".
func FormatRate(bps uint64) string {
	if bps == 0 {
		return "unshaped"
	}
	for _, u := range []struct {
		div  float64
		name string
	}{{1e12, "Tbit/s"}, {1e9, "Gbit/s"}, {1e6, "Mbit/s"}, {1e3, "kbit/s"}} {
		if float64(bps) >= u.div {
			return strconv.FormatFloat(float64(bps)/u.div, 'g', 4, 64) + " " + u.name
		}
	}
	return fmt.Sprintf("%d bit/s", bps)
}

// FormatSize prints a byte count with a binary unit when it is a whole
// number of KiB or MiB.
func FormatSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// ParseLoss parses a loss probability into frames per million: a fraction
// ("0.01"), a percentage ("1%", "0.5%") or parts per million ("100ppm"),
// from 0 to 1 (100%). The XDP program draws per million frames, so a
// probability finer than 1 ppm (0.0001%) is refused rather than rounded.
func ParseLoss(s string) (int, error) {
	in := s
	s = strings.TrimSpace(s)
	mult := uint64(1_000_000)
	switch {
	case strings.HasSuffix(s, "%"):
		s, mult = strings.TrimSuffix(s, "%"), 10_000
	case strings.HasSuffix(s, "ppm"):
		s, mult = strings.TrimSuffix(s, "ppm"), 1
	}
	bad := fmt.Errorf("loss %q: want a probability from 0 to 1 like 0.01, 1%% or 100ppm", in)
	s = strings.TrimSpace(s)
	if s == "" || s == "." || strings.Count(s, ".") > 1 || strings.Trim(s, "0123456789.") != "" {
		return 0, bad
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, bad
	}
	r.Mul(r, new(big.Rat).SetInt64(int64(mult)))
	if r.Cmp(big.NewRat(1_000_000, 1)) > 0 {
		return 0, bad
	}
	if !r.IsInt() {
		return 0, fmt.Errorf("loss %q: finer than 1 ppm (0.0001%%), the resolution of the XDP program's draw", in)
	}
	return int(r.Num().Int64()), nil
}

// FormatLoss prints frames per million as a percentage: 1%, 0.01%; 0 is
// "none".
func FormatLoss(ppm int) string {
	if ppm == 0 {
		return "none"
	}
	return strconv.FormatFloat(float64(ppm)/1e4, 'f', -1, 64) + "%"
}
