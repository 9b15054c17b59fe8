package workload

import (
	"bufio"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The flow-size distributions of the papers' evaluations (WebSearch,
// Hadoop, Storage; origins in cdf/README.md), built into the binary so a
// run needs no file beside it.
//
//go:embed cdf/*.cdf
var builtinFS embed.FS

// Errors of ParseCDF, one per rule; the returned error wraps one of them
// together with the source's name and the line number.
var (
	ErrCDFSyntax    = errors.New("want a line `bytes cumulative-percent`")
	ErrCDFValue     = errors.New("bytes must be finite and >= 0, percent in [0, 100]")
	ErrCDFMonotone  = errors.New("bytes and percent must not decrease")
	ErrCDFStart     = errors.New("first point must be `0 0`")
	ErrCDFEnd       = errors.New("last point must be at 100 percent")
	ErrCDFTooShort  = errors.New("need at least two points")
	ErrCDFNoBuiltin = errors.New("no built-in flow-size distribution by that name")
)

// Point is one point of a CDF: Prob of the flows are at most Bytes long.
type Point struct {
	Bytes float64
	Prob  float64 // in [0, 1]
}

// CDF is a piecewise-linear flow-size distribution. It is immutable once
// parsed and safe for concurrent use.
type CDF struct {
	name   string
	points []Point
	mean   float64
}

// BuiltinCDFs lists the names of the built-in distributions, sorted:
// hadoop, storage, websearch.
func BuiltinCDFs() []string {
	ents, _ := builtinFS.ReadDir("cdf")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".cdf"))
	}
	sort.Strings(names)
	return names
}

// BuiltinCDF returns the built-in distribution called name (see BuiltinCDFs).
func BuiltinCDF(name string) (*CDF, error) {
	var f fs.File
	err := ErrCDFNoBuiltin
	if !strings.ContainsAny(name, "/.") {
		f, err = builtinFS.Open(path.Join("cdf", name+".cdf"))
	}
	if err != nil {
		return nil, fmt.Errorf("cdf %q: %w (have %s)", name, ErrCDFNoBuiltin, strings.Join(BuiltinCDFs(), ", "))
	}
	defer f.Close()
	return ParseCDF(f, name)
}

// LoadCDF reads a distribution from a file in the same format as the
// built-in ones.
func LoadCDF(file string) (*CDF, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("load cdf: %w", err)
	}
	defer f.Close()
	return ParseCDF(f, file)
}

// OpenCDF resolves a command-line argument: the name of a built-in
// distribution, or else the path of a CDF file. A path that names a
// built-in (say a file called "hadoop" in the working directory) is
// reached as "./hadoop".
func OpenCDF(arg string) (*CDF, error) {
	if slices.Contains(BuiltinCDFs(), arg) {
		return BuiltinCDF(arg)
	}
	if _, err := os.Stat(arg); err != nil && !strings.ContainsAny(arg, "/.") {
		// A bare word is more likely a mistyped name than a missing file.
		return nil, fmt.Errorf("cdf %q: neither a built-in (%s) nor a file", arg, strings.Join(BuiltinCDFs(), ", "))
	}
	return LoadCDF(arg)
}

// ParseCDF reads a distribution: one point per line, `bytes
// cumulative-percent`, separated by blanks; blank lines and lines starting
// with # are skipped. The rules, each with its own error:
//   - every line has exactly two numbers (ErrCDFSyntax);
//   - bytes are finite and non-negative, percent within [0, 100] (ErrCDFValue);
//   - neither column decreases from one line to the next (ErrCDFMonotone);
//     equal bytes on two lines make a jump (a point mass), equal percents
//     a range no flow falls in;
//   - the first point is 0 0 (ErrCDFStart), the last one is at 100
//     (ErrCDFEnd), and there are at least two (ErrCDFTooShort).
//
// Between points the distribution is linear in bytes.
func ParseCDF(r io.Reader, name string) (*CDF, error) {
	c := &CDF{name: name}
	sc := bufio.NewScanner(r)
	line := 0
	bad := func(err error, format string, args ...any) error {
		return fmt.Errorf("cdf %s line %d: %s: %w", name, line, fmt.Sprintf(format, args...), err)
	}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 2 {
			return nil, bad(ErrCDFSyntax, "%q", text)
		}
		b, err1 := strconv.ParseFloat(fields[0], 64)
		p, err2 := strconv.ParseFloat(fields[1], 64)
		if err1 != nil || err2 != nil {
			return nil, bad(ErrCDFSyntax, "%q", text)
		}
		if math.IsNaN(b) || math.IsInf(b, 0) || b < 0 || math.IsNaN(p) || p < 0 || p > 100 {
			return nil, bad(ErrCDFValue, "%q", text)
		}
		if len(c.points) == 0 && (b != 0 || p != 0) {
			return nil, bad(ErrCDFStart, "%q", text)
		}
		if n := len(c.points); n > 0 {
			prev := c.points[n-1]
			if b < prev.Bytes || p/100 < prev.Prob {
				return nil, bad(ErrCDFMonotone, "%q after %g %g", text, prev.Bytes, prev.Prob*100)
			}
		}
		c.points = append(c.points, Point{Bytes: b, Prob: p / 100})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cdf %s: %w", name, err)
	}
	if len(c.points) < 2 {
		return nil, fmt.Errorf("cdf %s: %d points: %w", name, len(c.points), ErrCDFTooShort)
	}
	if last := c.points[len(c.points)-1]; last.Prob != 1 {
		return nil, fmt.Errorf("cdf %s line %d: ends at %g percent: %w", name, line, last.Prob*100, ErrCDFEnd)
	}
	for i := 1; i < len(c.points); i++ {
		a, b := c.points[i-1], c.points[i]
		c.mean += (b.Prob - a.Prob) * (a.Bytes + b.Bytes) / 2
	}
	return c, nil
}

// Name is the built-in name or the file the distribution came from.
func (c *CDF) Name() string { return c.name }

// Points returns a copy of the distribution's points.
func (c *CDF) Points() []Point { return append([]Point(nil), c.points...) }

// Mean is the mean flow size in bytes of the piecewise-linear
// distribution (exact, not sampled).
func (c *CDF) Mean() float64 { return c.mean }

// Max is the largest flow size in bytes.
func (c *CDF) Max() float64 { return c.points[len(c.points)-1].Bytes }

// Prob is the distribution function: the fraction of flows of at most x
// bytes.
func (c *CDF) Prob(x float64) float64 {
	ps := c.points
	// First point beyond x; x lies in the segment that ends there.
	j := sort.Search(len(ps), func(i int) bool { return ps[i].Bytes > x })
	switch {
	case j == 0:
		return 0
	case j == len(ps):
		return 1
	}
	a, b := ps[j-1], ps[j]
	return a.Prob + (b.Prob-a.Prob)*(x-a.Bytes)/(b.Bytes-a.Bytes)
}

// Quantile is the inverse of the distribution function: the size that a
// fraction u in [0, 1) of the flows do not exceed, interpolated linearly
// between points. Quantile(U) for U uniform in [0, 1) is a sample.
func (c *CDF) Quantile(u float64) float64 {
	ps := c.points
	// First point whose probability exceeds u: u lies in the segment
	// ending there. Segments with no probability (equal Prob) are skipped
	// by construction; a jump (equal Bytes) returns that size.
	j := sort.Search(len(ps), func(i int) bool { return ps[i].Prob > u })
	if j == 0 {
		return ps[0].Bytes
	}
	if j == len(ps) {
		return ps[len(ps)-1].Bytes
	}
	a, b := ps[j-1], ps[j]
	return a.Bytes + (b.Bytes-a.Bytes)*(u-a.Prob)/(b.Prob-a.Prob)
}

// Size turns a quantile into a flow size: rounded to whole bytes, and at
// least one byte (a flow carries something).
func (c *CDF) Size(u float64) int64 {
	return max(1, int64(math.Round(c.Quantile(u))))
}

// Sample draws one flow size from r by inverse transform.
func (c *CDF) Sample(r *rand.Rand) int64 { return c.Size(r.Float64()) }
