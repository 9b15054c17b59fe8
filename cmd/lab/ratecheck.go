//go:build linux

package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/units"
)

// What a lab of this machine can emulate (docs/BENCHMARKS.md): a port
// forwards at most about 5.6 Gb/s of full frames (the datapath
// benchmark, swd at 1518 B), and a loaded fabric - the BCube(4,1)
// reference workload - stays valid up to 50 Mb/s links ("Emulation
// capacity"). A link faster than maxShapedRate would run at the
// machine's speed, not its own; one slower than minShapedRate holds a
// full frame on the wire for more than 12 ms, longer than the timers the
// transport and flow control count in one-hop RTTs.
const (
	maxShapedRate   = 10_000_000_000
	minShapedRate   = 1_000_000
	validLoadedRate = 50_000_000
	portForwardGbps = 5.6
)

// checkRates refuses link rates a lab cannot shape meaningfully: each
// level's, and each cable's of a lab file's links. Rate 0 (unshaped) is
// allowed: it asks for the machine's speed.
func checkRates(s lab.Spec) error {
	check := func(what string, r uint64) error {
		switch {
		case r == 0:
			return nil
		case r > maxShapedRate:
			return fmt.Errorf("%s %s: faster than a lab can shape on this machine: a port forwards at most about %.1f Gb/s of full frames; give at most %s (0: unshaped, the machine's speed)",
				what, units.CompactRate(r), portForwardGbps, units.CompactRate(maxShapedRate))
		case r < minShapedRate:
			return fmt.Errorf("%s %s: too slow to emulate: a full frame would take %s on the wire; give at least %s",
				what, units.CompactRate(r), frameTime(r).Round(time.Millisecond), units.CompactRate(minShapedRate))
		}
		return nil
	}
	if len(s.Rates) > 0 {
		for l, r := range s.Rates {
			if err := check(fmt.Sprintf("--rates (level %d)", l), r); err != nil {
				return err
			}
		}
	} else if err := check("--rate", s.RateBps); err != nil {
		return err
	}
	for _, l := range s.Links {
		if err := check(fmt.Sprintf("link %s: rate", strings.Join(l.Endpoints, " ")), l.RateBps); err != nil {
			return err
		}
	}
	if s.Fabric != nil && s.RateBps != 0 {
		// A graph fabric's cables run at their capacity x --rate.
		g, err := s.Fabric.Graph()
		if err != nil {
			return nil // lab.NewPlan says what is wrong with it
		}
		for _, l := range g.Links {
			if l.Capacity == 1 {
				continue
			}
			r := uint64(math.Round(l.Capacity * float64(s.RateBps)))
			if err := check(fmt.Sprintf("--rate x %g, the capacity of %s's cable %s-%s,", l.Capacity, s.Fabric.Kind, g.Nodes[l.A.Node].Name, g.Nodes[l.B.Node].Name), r); err != nil {
				return err
			}
		}
	}
	return nil
}

// frameTime is how long a full frame (1518 B and 24 B of preamble, FCS
// and gap) takes at r bit/s.
func frameTime(r uint64) time.Duration {
	return time.Duration(int64(1542*8) * 1e9 / int64(r))
}

// printCapacity says, when the lab's links are faster than a loaded
// fabric of this machine stays valid at, what it can do: a few flows at
// that rate, and every report's health says when a run fell behind.
func printCapacity(w io.Writer, s lab.Spec) {
	fastest := uint64(0)
	for _, r := range s.LevelRates() {
		if r == 0 {
			fastest = 0
			break
		}
		fastest = max(fastest, r)
	}
	if fastest != 0 && fastest <= validLoadedRate {
		return
	}
	rate := "unshaped links"
	if fastest != 0 {
		rate = units.CompactRate(fastest) + " links"
	}
	fmt.Fprintf(w, "  capacity    %s: this machine keeps up with a few flows; loaded fabrics were valid up to %s (docs/BENCHMARKS.md); every report's health says when a run fell behind\n",
		rate, units.CompactRate(validLoadedRate))
}
