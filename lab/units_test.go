package lab

import (
	"strings"
	"testing"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]uint64{
		"1G": 1e9, "100M": 1e8, "2.5G": 2.5e9, "1000000000": 1e9, "0": 0, "10k": 1e4, "10K": 1e4,
		"1.1G": 1_100_000_000, "40Gbps": 4e10, "1T": 1e12, " 25G ": 25e9, "0.5M": 500_000, "100Mbit": 1e8,
	} {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "1g2", "-1G", "1e9", "1.5", "0.0000000001G", "fast", "1GiB", "1..2G", "1/2G", "99999999999999999999", "20000000T"} {
		if got, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) = %d, want an error", in, got)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{
		"1MiB": 1 << 20, "512KiB": 512 << 10, "1500": 1500, "1GiB": 1 << 30, "64kB": 64000, "2MB": 2e6,
		"1.5MiB": 3 << 19, "100B": 100, "0": 0,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1M", "1K", "MiB", "-1", "1.5", "0.1B", "4GiB", "x"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormat(t *testing.T) {
	for bps, want := range map[uint64]string{0: "unshaped", 1e9: "1 Gbit/s", 2.5e9: "2.5 Gbit/s", 1e8: "100 Mbit/s", 999: "999 bit/s"} {
		if got := FormatRate(bps); got != want {
			t.Errorf("FormatRate(%d) = %q, want %q", bps, got, want)
		}
	}
	for n, want := range map[int]string{1 << 20: "1 MiB", 512 << 10: "512 KiB", 1500: "1500 B"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
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
	for ppm, want := range map[int]string{0: "none", 10_000: "1%", 100: "0.01%", 1: "0.0001%", 1_000_000: "100%", 12_345: "1.2345%"} {
		if got := FormatLoss(ppm); got != want {
			t.Errorf("FormatLoss(%d) = %q, want %q", ppm, got, want)
		}
		if ppm != 0 {
			if back, err := ParseLoss(FormatLoss(ppm)); err != nil || back != ppm {
				t.Errorf("ParseLoss(FormatLoss(%d)) = %d, %v", ppm, back, err)
			}
		}
	}
}
