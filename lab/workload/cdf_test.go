package workload

import (
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuiltinCDFs(t *testing.T) {
	if got, want := BuiltinCDFs(), []string{"hadoop", "storage", "websearch"}; !slices.Equal(got, want) {
		t.Fatalf("BuiltinCDFs() = %v, want %v", got, want)
	}
	for _, name := range BuiltinCDFs() {
		c, err := BuiltinCDF(name)
		if err != nil {
			t.Fatal(err)
		}
		ps := c.Points()
		if c.Name() != name || ps[0] != (Point{}) || ps[len(ps)-1].Prob != 1 {
			t.Errorf("%s: name %q, points %v", name, c.Name(), ps)
		}
		// The same file from the shared data parses to the same points.
		if disk, err := LoadCDF(filepath.Join("cdf", name+".cdf")); err != nil || !slices.Equal(disk.Points(), ps) {
			t.Errorf("%s: the embedded file differs from cdf/%s.cdf (%v)", name, name, err)
		}
	}
	for _, name := range []string{"", "nope", "../cdf/hadoop", "hadoop.cdf"} {
		if _, err := BuiltinCDF(name); !errors.Is(err, ErrCDFNoBuiltin) {
			t.Errorf("BuiltinCDF(%q) = %v, want ErrCDFNoBuiltin", name, err)
		}
	}
}

func TestParseCDFErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       error
	}{
		{"one field", "0 0\n100\n", ErrCDFSyntax},
		{"three fields", "0 0\n100 100 3\n", ErrCDFSyntax},
		{"not a number", "0 0\nten 100\n", ErrCDFSyntax},
		{"negative bytes", "0 0\n-5 50\n10 100\n", ErrCDFValue},
		{"infinite bytes", "0 0\n+Inf 100\n", ErrCDFValue},
		{"NaN percent", "0 0\n10 NaN\n", ErrCDFValue},
		{"percent above 100", "0 0\n10 101\n", ErrCDFValue},
		{"percent below 0", "0 -1\n10 100\n", ErrCDFValue},
		{"bytes decrease", "0 0\n100 50\n90 100\n", ErrCDFMonotone},
		{"percent decreases", "0 0\n100 50\n200 40\n300 100\n", ErrCDFMonotone},
		{"starts above 0 bytes", "10 0\n100 100\n", ErrCDFStart},
		{"starts above 0 percent", "0 5\n100 100\n", ErrCDFStart},
		{"ends below 100", "0 0\n100 99.5\n", ErrCDFEnd},
		{"empty", "", ErrCDFTooShort},
		{"only comments", "# nothing\n\n", ErrCDFTooShort},
		{"a single point", "0 0\n", ErrCDFTooShort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseCDF(strings.NewReader(tc.text), "test.cdf")
			if !errors.Is(err, tc.want) {
				t.Fatalf("ParseCDF = %v, %v; want %v", c, err, tc.want)
			}
			if !strings.Contains(err.Error(), "test.cdf") {
				t.Errorf("error %q does not name the source", err)
			}
		})
	}
	// Line numbers count every line, comments and blanks included.
	_, err := ParseCDF(strings.NewReader("# sizes\n0 0\n\n100 50\n90 100\n"), "x")
	if err == nil || !strings.Contains(err.Error(), "line 5") {
		t.Errorf("error %v, want it at line 5", err)
	}
}

func TestParseCDFAccepts(t *testing.T) {
	// Comments, blank lines, tabs, a jump (equal bytes) and a flat part
	// (equal percent) are all fine.
	c, err := ParseCDF(strings.NewReader("# comment\n0\t0\n\n100 50\n100 60\n200 60\n300 100\n"), "ok")
	if err != nil {
		t.Fatal(err)
	}
	// Mean: 0.5×50 + 0.1×100 (the jump) + 0 + 0.4×250.
	if got, want := c.Mean(), 0.5*50+0.1*100+0.4*250; math.Abs(got-want) > 1e-9 {
		t.Errorf("Mean = %g, want %g", got, want)
	}
	for _, tc := range []struct{ u, want float64 }{
		{0, 0}, {0.25, 50}, {0.5, 100}, {0.55, 100}, {0.6, 200}, {0.8, 250}, {0.999999, 300},
	} {
		if got := c.Quantile(tc.u); math.Abs(got-tc.want) > 1e-3 {
			t.Errorf("Quantile(%g) = %g, want %g", tc.u, got, tc.want)
		}
	}
	for _, tc := range []struct{ x, want float64 }{
		{-1, 0}, {0, 0}, {50, 0.25}, {100, 0.6}, {150, 0.6}, {250, 0.8}, {300, 1}, {1e9, 1},
	} {
		if got := c.Prob(tc.x); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Prob(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
	if c.Size(0) != 1 {
		t.Errorf("Size(0) = %d, want the 1-byte minimum", c.Size(0))
	}
}

// TestBuiltinMeans checks Mean against a numerical integral of the
// quantile function (E[X] = ∫ Q(u) du), independent of the formula.
func TestBuiltinMeans(t *testing.T) {
	for _, name := range BuiltinCDFs() {
		c, _ := BuiltinCDF(name)
		const steps = 1 << 20
		var sum float64
		for i := range steps {
			sum += c.Quantile((float64(i) + 0.5) / steps)
		}
		if got := sum / steps; math.Abs(got-c.Mean()) > 1e-4*c.Mean() {
			t.Errorf("%s: Mean = %.1f, integral of the quantile %.1f", name, c.Mean(), got)
		}
		t.Logf("%s: mean %.0f bytes", name, c.Mean())
	}
}

// TestSampleKS draws many sizes with a fixed seed and checks them against
// the distribution with the Kolmogorov-Smirnov statistic, and their mean.
// Sizes are rounded to whole bytes, so the empirical distribution at an
// integer x is compared with the distribution at x+0.5.
func TestSampleKS(t *testing.T) {
	const n = 200_000
	// The KS critical value at 0.1 % for n samples is 1.95/sqrt(n).
	crit := 1.95 / math.Sqrt(n)
	for _, name := range BuiltinCDFs() {
		c, _ := BuiltinCDF(name)
		r := rand.New(rand.NewPCG(1, 2))
		xs := make([]int64, n)
		var sum float64
		for i := range xs {
			xs[i] = c.Sample(r)
			sum += float64(xs[i])
		}
		slices.Sort(xs)
		var d float64
		below := 0.0 // empirical distribution just below xs[i]
		for i := 0; i < n; {
			j := i
			for j < n && xs[j] == xs[i] {
				j++
			}
			x := float64(xs[i])
			d = max(d, math.Abs(below-c.Prob(x-0.5)), math.Abs(float64(j)/n-c.Prob(x+0.5)))
			below = float64(j) / n
			i = j
		}
		if d > crit {
			t.Errorf("%s: KS statistic %.5f, above %.5f", name, d, crit)
		}
		// The standard error of the mean of these heavy-tailed sizes is
		// under 0.6 % at this n; allow 2 %.
		if m := sum / n; math.Abs(m-c.Mean()) > 0.02*c.Mean() {
			t.Errorf("%s: sample mean %.0f, distribution mean %.0f", name, m, c.Mean())
		}
		t.Logf("%s: KS %.5f (critical %.5f), sample mean %.0f vs %.0f", name, d, crit, sum/n, c.Mean())
	}
}

func TestOpenCDF(t *testing.T) {
	c, err := OpenCDF("websearch")
	if err != nil || c.Name() != "websearch" {
		t.Fatalf("OpenCDF(websearch) = %v, %v", c, err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.cdf")
	if err := os.WriteFile(file, []byte("0 0\n1000 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = OpenCDF(file)
	if err != nil || c.Name() != file || c.Mean() != 500 {
		t.Fatalf("OpenCDF(%s) = %v, %v", file, c, err)
	}
	if _, err := OpenCDF("webserch"); err == nil || !strings.Contains(err.Error(), "neither a built-in") {
		t.Errorf("OpenCDF(webserch) = %v, want a hint at the built-ins", err)
	}
	if _, err := OpenCDF(filepath.Join(dir, "missing.cdf")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenCDF(missing) = %v, want fs.ErrNotExist", err)
	}
	bad := filepath.Join(dir, "bad.cdf")
	if err := os.WriteFile(bad, []byte("0 0\n1000 90\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCDF(bad); !errors.Is(err, ErrCDFEnd) {
		t.Errorf("LoadCDF(bad) = %v, want ErrCDFEnd", err)
	}
}

func BenchmarkSample(b *testing.B) {
	c, _ := BuiltinCDF("websearch")
	r := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		c.Sample(r)
	}
}
