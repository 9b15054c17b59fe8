package lab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

// ChoiceError is a spec field that takes one of a few words given one it
// does not take. Key is the field's name as the user writes it: lab up's
// flag without its dashes, which is also its lab file key.
type ChoiceError struct {
	Key, Value string
	Want       []string
}

func (e *ChoiceError) Error() string {
	return fmt.Sprintf("%s %q: want %s", e.Key, e.Value, orList(e.Want))
}

// orList is "a, b or c".
func orList(w []string) string {
	if len(w) < 2 {
		return strings.Join(w, "")
	}
	return strings.Join(w[:len(w)-1], ", ") + " or " + w[len(w)-1]
}

// checkChoices checks the spec's fields that take a word, before any
// node's config is built from them, so that a bad one is named as the
// user wrote it (--fc, or a lab file's fc) rather than as a daemon's
// config field.
func (s Spec) checkChoices() error {
	for _, c := range []struct {
		key, v string
		want   []string
	}{
		{"fc", s.FC, scheme.Names()},
		{"relay-queue", s.RelayQueue, []string{scheme.RelayStrict, scheme.RelayDRR}},
		{"bfc-assign", s.BFCAssign, []string{scheme.BFCAssignDynamic, scheme.BFCAssignHash}},
		{"watchdog-action", s.WatchdogAction, []string{config.WatchdogNone, config.WatchdogForward, config.WatchdogDrop}},
		{"xdp-mode", s.XDPMode, []string{"native", "generic", "auto"}},
	} {
		if c.v != "" && !slices.Contains(c.want, c.v) {
			return &ChoiceError{Key: c.key, Value: c.v, Want: c.want}
		}
	}
	if s.LevelOrder != "" && s.K >= 1 && s.N >= 2 {
		if t, err := bcube.New(s.N, s.K); err == nil {
			if _, err := t.ParsePolicy(s.LevelOrder); err != nil {
				return &ChoiceError{Key: "level-order", Value: s.LevelOrder,
					Want: []string{"hash", "ate", "ascending", "descending", fmt.Sprintf("a permutation of the levels 0..%d (%s)", s.K, t.ParallelPath(s.K))}}
			}
		}
	}
	return nil
}
