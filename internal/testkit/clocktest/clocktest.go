// Package clocktest checks that a report says on whose clock its times
// and rates are: every time and rate a user reads is labelled as the
// target's or the lab's (package scale, "clock.go").
package clocktest

import (
	"regexp"
	"strings"
)

// quantity matches a time or a rate as the reports print them: Go's
// durations (1.5ms, 1m30s, 10.2µs), iperf3's ("3.01 sec", "18.3
// Mbits/sec"), and rates in bit/s (20 Mbit/s, 100 Gb/s).
var quantity = regexp.MustCompile(`\b\d+(\.\d+)?(h\d+m)?(m\d+(\.\d+)?s|\s*(ns|µs|us|ms|s|sec|seconds?)\b|\s?[kKMGT]?(bit/s|bits/sec|b/s|bps)|\s?[kKMGT]b/sec)`)

// lead labels, before the quantities of a line, say that the line
// describes the target.
var lead = []string{"the target:", "the lab:", "emulates "}

// labels say whose clock a quantity is on; wall time is the lab's
// clock (scale.WallWord).
var labels = []string{"in the target", "of the target", "target's", "(target", "target)", "of lab time", "of wall time", "in the lab", "lab's clock", "the lab's", "(lab", "lab)"}

// Unlabelled is every time or rate of text that no label claims: a
// quantity is labelled when the text after it, up to the next quantity
// or the end of its line, has a label (in either case), or when a line
// above it in its block (lines up to a blank one: a table and its
// header, a section and its title) is a header: a label and no
// quantity, or when the line
// says before it that it describes the target ("emulates the papers'
// network (100 Gb/s, ...)").
func Unlabelled(text string) []string {
	var out []string
	blockLabelled := false
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			blockLabelled = false
			continue
		}
		if hasLabel(line) && !quantity.MatchString(line) {
			blockLabelled = true
		}
		if blockLabelled {
			continue
		}
		locs := quantity.FindAllStringIndex(line, -1)
		for i, l := range locs {
			end := len(line)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			if !hasLabel(line[l[1]:end]) && !hasLead(line[:l[0]]) {
				out = append(out, line[l[0]:l[1]]+" in: "+strings.TrimSpace(line))
			}
		}
	}
	return out
}

func hasLead(s string) bool {
	for _, l := range lead {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

func hasLabel(s string) bool {
	s = strings.ToLower(s)
	for _, l := range labels {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}
