package metrics

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func itoa(i int) string { return strconv.Itoa(i) }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func sortedKeys(m map[string]uint64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

var notName = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// sanitize makes key part of a metric name.
func sanitize(key string) string { return notName.ReplaceAllString(key, "_") }

// signalKey splits a flow-control counter's key, "tx_pause_A",
// "rx_xoff_P3", "relayed_state_B", "tx_resume" (BFC), into its direction,
// type and class; ok is false for keys of no direction ("lost",
// "ignored").
func signalKey(k string) (dir, typ, class string, ok bool) {
	dir, rest, found := strings.Cut(k, "_")
	if !found || (dir != "tx" && dir != "rx" && dir != "relayed") {
		return "", "", "", false
	}
	typ, class, _ = strings.Cut(rest, "_")
	return dir, typ, class, true
}
