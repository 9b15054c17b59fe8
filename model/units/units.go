// Package units reads and prints the quantities the project's commands
// and lab files take: byte sizes, bit rates, durations and loss
// probabilities. Every parser of those lives here, so lab, rperf, the
// benchmarks and lab files agree on what "1M" means.
//
// The conventions are iperf3's, whose users are this project's users:
//
//   - A size with a bare K, M, G or T suffix (either case) is 1024-based:
//     64K is 65,536 bytes, 1M 1,048,576 (iperf3's -n, -l, -w). KiB, MiB,
//     GiB and TiB say the same explicitly. Sizes written with an SI byte
//     unit, kB (or KB), MB, GB or TB, are 1000-based: 1MB is 1,000,000
//     bytes, the papers' "1 MB flows" and "K_min 100 KB". iperf3 defines
//     only the bare suffixes; the units with a B keep their standard
//     meaning.
//   - A rate with a K, M, G or T suffix (either case) is 1000-based bits
//     per second: 100M is 100,000,000 bit/s (iperf3's -b), as link speeds
//     are. A trailing "bps", "bit", "bit/s" or "b/s" is allowed.
//   - A duration is Go's syntax ("1.5s", "200ms", "1m30s") or a plain
//     number of seconds ("10", "0.5"), as iperf3's -t and -i.
//
// Numbers are read exactly (no floating point): "1.5M" is 1,572,864
// bytes, and a value that is not a whole number of bytes or bits ("0.1B")
// is refused rather than rounded.
//
// Size, Rate, Duration and Loss are flag values (the Set/String/Type
// methods of github.com/spf13/pflag's Value) and text values
// (encoding.TextMarshaler and TextUnmarshaler, which YAML and JSON
// encoders use), so a flag and a lab file read the same strings.
package units

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// ParseSize reads a byte count: a plain number ("1500"), or a number with
// K, M, G or T (1024-based, either case; also KiB, MiB, GiB, TiB), or
// with kB, KB, MB, GB or TB (1000-based), or B.
func ParseSize(s string) (int64, error) {
	in := s
	s = strings.TrimSpace(s)
	mult := uint64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	v, err := parseScaled(s, mult)
	if err != nil || v > math.MaxInt64 {
		return 0, fmt.Errorf("size %q: want bytes like 1500, 64K, 1M (1024-based), 4MiB or 1MB (1000-based)", in)
	}
	return int64(v), nil
}

// sizeUnits are tried in order: the longest suffixes first.
var sizeUnits = []struct {
	suffix string
	mult   uint64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
	{"k", 1 << 10}, {"K", 1 << 10}, {"m", 1 << 20}, {"M", 1 << 20},
	{"g", 1 << 30}, {"G", 1 << 30}, {"t", 1 << 40}, {"T", 1 << 40},
}

// ParseRate reads a rate in bit/s: a plain number ("1000000000") or a
// number with k, M, G or T (1000-based, either case), optionally followed
// by "bps", "bit", "bit/s" or "b/s".
func ParseRate(s string) (uint64, error) {
	in := s
	s = strings.TrimSpace(s)
	for _, unit := range []string{"bps", "bit/s", "bits/s", "bit", "b/s"} {
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
		case 'm', 'M':
			mult = 1e6
		case 'g', 'G':
			mult = 1e9
		case 't', 'T':
			mult = 1e12
		}
		if mult != 1 {
			s = s[:len(s)-1]
		}
	}
	v, err := parseScaled(s, mult)
	if err != nil {
		return 0, fmt.Errorf("rate %q: want bit/s like 1G, 100M, 2.5G or 1000000000 (1000-based)", in)
	}
	return v, nil
}

// ParseDuration reads Go's duration syntax ("1.5s", "200ms") or a plain
// number of seconds ("10", "0.5"). Negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	in := s
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("duration %q: want seconds like 10 or 0.5, or a Go duration like 1.5s, 200ms or 1m30s", in)
	if s == "" || strings.HasPrefix(s, "-") {
		return 0, bad
	}
	if strings.Trim(s, "0123456789.") == "" {
		ns, err := parseScaled(s, 1e9)
		if err != nil || ns > math.MaxInt64 {
			return 0, bad
		}
		return time.Duration(ns), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, bad
	}
	return d, nil
}

// ParseLoss reads a loss probability into frames per million: a fraction
// ("0.01"), a percentage ("1%", "0.5%") or parts per million ("100ppm"),
// from 0 to 1 (100%). Loss is drawn per million frames, so a probability
// finer than 1 ppm (0.0001%) is refused rather than rounded.
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
	r, err := parseRat(s)
	if err != nil {
		return 0, bad
	}
	r.Mul(r, new(big.Rat).SetInt64(int64(mult)))
	if r.Cmp(big.NewRat(1_000_000, 1)) > 0 {
		return 0, bad
	}
	if !r.IsInt() {
		return 0, fmt.Errorf("loss %q: finer than 1 ppm (0.0001%%), the resolution of the injected loss", in)
	}
	return int(r.Num().Int64()), nil
}

// parseScaled reads a non-negative decimal number ("2.5") times mult,
// exactly; the product must be a whole number that fits in a uint64.
func parseScaled(s string, mult uint64) (uint64, error) {
	r, err := parseRat(s)
	if err != nil {
		return 0, err
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).SetUint64(mult)))
	if !r.IsInt() || !r.Num().IsUint64() {
		return 0, fmt.Errorf("%q is not a whole number in range", s)
	}
	return r.Num().Uint64(), nil
}

// parseRat reads a non-negative decimal number without exponent.
func parseRat(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "." || strings.Count(s, ".") > 1 || strings.Trim(s, "0123456789.") != "" {
		return nil, fmt.Errorf("bad number %q", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("bad number %q", s)
	}
	return r, nil
}

// FormatRate prints a rate in bit/s with the largest decimal unit that
// keeps it readable: 1 Gbit/s, 2.5 Gbit/s, 100 Mbit/s; 0 is "unshaped"
// (a link rate of 0 is an unshaped link).
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
// number of KiB or MiB: 4 MiB, 512 KiB, 1500 B.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// FormatLoss prints frames per million as a percentage: 1%, 0.01%; 0 is
// "none".
func FormatLoss(ppm int) string {
	if ppm == 0 {
		return "none"
	}
	return strconv.FormatFloat(float64(ppm)/1e4, 'f', -1, 64) + "%"
}

// CompactSize prints n bytes the shortest way ParseSize reads back
// exactly: 4M, 512K, 1500 (for lab files and command lines).
func CompactSize(n int64) string {
	for _, u := range []struct {
		mult int64
		s    string
	}{{1 << 40, "T"}, {1 << 30, "G"}, {1 << 20, "M"}, {1 << 10, "K"}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// CompactRate prints bit/s the shortest way ParseRate reads back
// exactly: 500M, 2.5G, 1000.
func CompactRate(bps uint64) string {
	for _, u := range []struct {
		mult uint64
		s    string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "K"}} {
		// Up to three decimals: a whole number of the next unit down.
		whole, frac := bps/u.mult, bps%u.mult/(u.mult/1000)
		if whole > 0 && (whole < 1000 || u.s == "T") && bps%(u.mult/1000) == 0 {
			if frac == 0 {
				return strconv.FormatUint(whole, 10) + u.s
			}
			return strconv.FormatUint(whole, 10) + "." + strings.TrimRight(fmt.Sprintf("%03d", frac), "0") + u.s
		}
	}
	return strconv.FormatUint(bps, 10)
}

// CompactLoss prints frames per million the way ParseLoss reads back: 1%,
// 0.5%, 100ppm for what is finer than 0.01%.
func CompactLoss(ppm int) string {
	if ppm == 0 {
		return "0"
	}
	if ppm%100 != 0 {
		return strconv.Itoa(ppm) + "ppm"
	}
	return FormatLoss(ppm)
}

// IperfBytes is iperf3's adaptive byte count: 1024-based, three
// significant digits ("11.9 MBytes").
func IperfBytes(v float64) string {
	return adaptive(v, 1024, []string{"Bytes", "KBytes", "MBytes", "GBytes", "TBytes"})
}

// IperfBits is iperf3's adaptive bit rate: 1000-based ("99.8 Mbits/sec").
func IperfBits(v float64) string {
	return adaptive(v, 1000, []string{"bits/sec", "Kbits/sec", "Mbits/sec", "Gbits/sec", "Tbits/sec"})
}

func adaptive(v, base float64, units []string) string {
	i := 0
	for v >= base && i < len(units)-1 {
		v /= base
		i++
	}
	switch {
	case v < 9.995:
		return fmt.Sprintf("%4.2f %s", v, units[i])
	case v < 99.95:
		return fmt.Sprintf("%4.1f %s", v, units[i])
	}
	return fmt.Sprintf("%4.0f %s", v, units[i])
}
