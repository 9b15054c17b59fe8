package lab

import (
	"testing"
	"time"
)

// The calibration's burst: a tenth of the probe interval apart, as many
// rounds as the calibration's samples need with one to spare.
func TestCalibrateBurst(t *testing.T) {
	for _, c := range []struct {
		interval  time.Duration
		links     int
		every     time.Duration
		n         int
		perLinkAt int // the samples the n-1 rounds give at least
	}{
		{0, 8, 10 * time.Millisecond, 8, 100},   // BCube(2,1): 16 ports, 7 rounds for 100
		{0, 32, 10 * time.Millisecond, 3, 100},  // BCube(4,1): 64 ports
		{0, 128, 10 * time.Millisecond, 2, 256}, // BCube(8,1): two a link
		{50 * time.Millisecond, 8, 5 * time.Millisecond, 8, 100},
	} {
		every, n := calibrateBurst(Spec{ProbeInterval: c.interval}, c.links)
		if every != c.every || n != c.n {
			t.Errorf("interval %v, %d links: %d probes every %v, want %d every %v", c.interval, c.links, n, every, c.n, c.every)
		}
		if got := (n - 1) * 2 * c.links; got < c.perLinkAt {
			t.Errorf("interval %v, %d links: %d rounds give %d samples, want %d", c.interval, c.links, n-1, got, c.perLinkAt)
		}
	}
}
