package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		out  string // a substring of stdout
		err  string // a substring of the error
	}{
		{[]string{"--tors", "8", "--ports", "4", "--seed", "2", "--traffic", "permutation", "--eps", "0.1"}, 0, "| FC+(8 ToRs, s=4, v=3, seed 2) | dfksp1 | permutation |", ""},
		{[]string{"--tors", "8", "--ports", "4", "--exact", "--routings", "ksp", "--traffic", "near-worst"}, 0, "| ksp | near-worst |", ""},
		{[]string{"--tors", "7", "--ports", "10", "--virtual", "4"}, 2, "", "tors = 7"},
		{[]string{"--ports", "10", "--virtual", "5"}, 2, "", "virtual = 5"},
		{[]string{"--routings", "updown"}, 2, "", "updown"},
		{[]string{"--traffic", "incast"}, 2, "", "incast"},
		{[]string{"--k", "0"}, 2, "", "k = 0"},
		{[]string{"extra"}, 2, "", "unexpected"},
	} {
		var stdout, stderr strings.Builder
		code, err := run(c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stdout.String(), c.out) || (c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err))) {
			t.Errorf("%v: exit %d, error %v, output:\n%s", c.args, code, err, stdout.String())
		}
	}
}
