package units

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		// iperf3: a bare suffix is 1024-based, either case.
		{"1M", 1 << 20}, {"1m", 1 << 20}, {"64K", 64 << 10}, {"64k", 64 << 10}, {"1G", 1 << 30}, {"2T", 2 << 40},
		{"1.5M", 3 << 19}, {"0.5K", 512},
		// Explicit binary and SI byte units.
		{"1MiB", 1 << 20}, {"512KiB", 512 << 10}, {"1GiB", 1 << 30}, {"1.5MiB", 3 << 19},
		{"64kB", 64000}, {"64KB", 64000}, {"2MB", 2e6}, {"1GB", 1e9}, {"100B", 100},
		{"1500", 1500}, {"0", 0}, {" 4M ", 4 << 20}, {"5000000000", 5e9},
	} {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "M", "MiB", "-1", "1.5", "0.1B", "x", "1e6", "1..2M", "1Mi", "1 M B", "99999999999T"} {
		if got, err := ParseSize(in); err == nil || !strings.Contains(err.Error(), "size") {
			t.Errorf("ParseSize(%q) = %d, %v; want a size error", in, got, err)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		// iperf3's -b: 1000-based, either case.
		{"1G", 1e9}, {"1g", 1e9}, {"100M", 1e8}, {"100m", 1e8}, {"2.5G", 2.5e9}, {"10k", 1e4}, {"10K", 1e4},
		{"1000000000", 1e9}, {"0", 0}, {"1.1G", 1_100_000_000}, {"40Gbps", 4e10}, {"1T", 1e12}, {" 25G ", 25e9},
		{"0.5M", 500_000}, {"100Mbit", 1e8}, {"100Mbit/s", 1e8}, {"1Gb/s", 1e9},
	} {
		got, err := ParseRate(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "G", "1g2", "-1G", "1e9", "1.5", "0.0000000001G", "fast", "1GiB", "1..2G", "1/2G",
		"99999999999999999999", "20000000T"} {
		if got, err := ParseRate(in); err == nil || !strings.Contains(err.Error(), "rate") {
			t.Errorf("ParseRate(%q) = %d, %v; want a rate error", in, got, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"10", 10 * time.Second}, {"0.5", 500 * time.Millisecond}, {"0", 0}, {"1.5s", 1500 * time.Millisecond},
		{"200ms", 200 * time.Millisecond}, {"1m30s", 90 * time.Second}, {"250us", 250 * time.Microsecond},
		{"0.000000001", 1}, {" 3 ", 3 * time.Second},
	} {
		got, err := ParseDuration(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "-1", "-1s", "x", "1.5.5", "10 s", "0.0000000001", "1d"} {
		if got, err := ParseDuration(in); err == nil || !strings.Contains(err.Error(), "duration") {
			t.Errorf("ParseDuration(%q) = %v, %v; want a duration error", in, got, err)
		}
	}
}

func TestParseLoss(t *testing.T) {
	for in, want := range map[string]int{
		"0": 0, "0.01": 10_000, "1%": 10_000, " 1 % ": 10_000, "0.5%": 5_000, "100%": 1_000_000, "1": 1_000_000,
		"100ppm": 100, "0.000001": 1, "0.0001%": 1, "0%": 0, ".5": 500_000, "1000000ppm": 1_000_000,
	} {
		got, err := ParseLoss(in)
		if err != nil || got != want {
			t.Errorf("ParseLoss(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"": "want a probability", "%": "want a probability", "1.5": "want a probability", "101%": "want a probability",
		"-0.01": "want a probability", "1e-3": "want a probability", "x": "want a probability", "0.01.1": "want a probability",
		"1000001ppm": "want a probability", "0.5ppm": "finer than 1 ppm", "0.0000001": "finer than 1 ppm", "0.00001%": "finer than 1 ppm",
	} {
		if got, err := ParseLoss(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseLoss(%q) = %d, %v; want an error with %q", in, got, err, msg)
		}
	}
}

func TestFormat(t *testing.T) {
	for bps, want := range map[uint64]string{0: "unshaped", 1e9: "1 Gbit/s", 2.5e9: "2.5 Gbit/s", 1e8: "100 Mbit/s", 999: "999 bit/s"} {
		if got := FormatRate(bps); got != want {
			t.Errorf("FormatRate(%d) = %q, want %q", bps, got, want)
		}
	}
	for n, want := range map[int64]string{1 << 20: "1 MiB", 512 << 10: "512 KiB", 1500: "1500 B"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
	for ppm, want := range map[int]string{0: "none", 10_000: "1%", 100: "0.01%", 1: "0.0001%", 1_000_000: "100%", 12_345: "1.2345%"} {
		if got := FormatLoss(ppm); got != want {
			t.Errorf("FormatLoss(%d) = %q, want %q", ppm, got, want)
		}
	}
	for _, c := range []struct {
		got, want string
	}{
		{IperfBytes(0), "0.00 Bytes"}, {IperfBytes(11.9 * (1 << 20)), "11.9 MBytes"}, {IperfBytes(112 * (1 << 20)), " 112 MBytes"},
		{IperfBytes(1.1 * (1 << 30)), "1.10 GBytes"}, {IperfBits(99.8e6), "99.8 Mbits/sec"}, {IperfBits(940e6), " 940 Mbits/sec"},
		{IperfBits(1.5e9), "1.50 Gbits/sec"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// The compact forms read back exactly.
func TestCompactRoundTrip(t *testing.T) {
	for _, n := range []int64{0, 1, 1500, 1024, 4 << 20, 3 << 19, 1e6, 1 << 40, 5e9} {
		s := CompactSize(n)
		if back, err := ParseSize(s); err != nil || back != n {
			t.Errorf("ParseSize(CompactSize(%d) = %q) = %d, %v", n, s, back, err)
		}
	}
	for bps, want := range map[uint64]string{0: "0", 500e6: "500M", 2.5e9: "2.5G", 1e9: "1G", 1234: "1.234K", 999: "999",
		100_000_001: "100000001", 1_500_000: "1.5M", 10e12: "10T"} {
		s := CompactRate(bps)
		if back, err := ParseRate(s); err != nil || back != bps || s != want {
			t.Errorf("CompactRate(%d) = %q (want %q), reads back as %d, %v", bps, s, want, back, err)
		}
	}
	for _, ppm := range []int{0, 1, 100, 5_000, 10_000, 12_345, 1_000_000} {
		s := CompactLoss(ppm)
		if back, err := ParseLoss(s); err != nil || back != ppm {
			t.Errorf("ParseLoss(CompactLoss(%d) = %q) = %d, %v", ppm, s, back, err)
		}
	}
}

func TestValues(t *testing.T) {
	var s Size
	if err := s.Set("1M"); err != nil || s != 1<<20 || s.String() != "1M" || s.Type() != "size" {
		t.Errorf("Size: %d %q %v", s, s.String(), err)
	}
	var r Rate
	if err := r.UnmarshalText([]byte("100M")); err != nil || r != 1e8 {
		t.Errorf("Rate: %d %v", r, err)
	}
	if b, _ := r.MarshalText(); string(b) != "100M" {
		t.Errorf("Rate text %q", b)
	}
	var d Duration
	if err := d.Set("5"); err != nil || d.D() != 5*time.Second || d.String() != "5s" {
		t.Errorf("Duration: %v %v", d, err)
	}
	var l Loss
	if err := l.Set("1%"); err != nil || l != 10_000 || l.String() != "1%" {
		t.Errorf("Loss: %d %v", l, err)
	}
	if err := s.Set("lots"); err == nil {
		t.Error("Size.Set(lots) accepted")
	}
}

func TestRates(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []uint64
		text string
	}{
		{"160M,100M", []uint64{160e6, 100e6}, "160M,100M"},
		{"32M, 20Mbps", []uint64{32e6, 20e6}, "32M,20M"},
		{"1G", []uint64{1e9}, "1G"},
		{"", nil, ""},
		{"10M,,5M", nil, ""},
		{"10M,fast", nil, ""},
	} {
		var r Rates
		err := r.UnmarshalText([]byte(c.in))
		if c.want == nil {
			if err == nil {
				t.Errorf("%q accepted as %v", c.in, r)
			}
			continue
		}
		if err != nil || !slices.Equal(r, c.want) || r.String() != c.text || r.Type() != "rates" {
			t.Errorf("%q: %v %q, %v; want %v %q", c.in, []uint64(r), r.String(), err, c.want, c.text)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1M", "1.5MiB", "64kB", "1500", "0.5K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if back, err := ParseSize(CompactSize(n)); err != nil || back != n {
			t.Fatalf("%q = %d; compact %q reads %d, %v", s, n, CompactSize(n), back, err)
		}
	})
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"1G", "2.5G", "100Mbps", "1000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseRate(s)
		if err != nil {
			return
		}
		if back, err := ParseRate(CompactRate(n)); err != nil || back != n {
			t.Fatalf("%q = %d; compact %q reads %d, %v", s, n, CompactRate(n), back, err)
		}
	})
}
