//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"
)

// lab status without --name, when no lab of the default name runs,
// lists the labs that do.
func TestStatusListsLabs(t *testing.T) {
	root := fakeLab(t, "tb")
	var out bytes.Buffer
	code, err := run([]string{"status", "--run-root", root}, &out, &bytes.Buffer{})
	if code != 1 || err == nil || !strings.Contains(err.Error(), "give --name, as in lab status --name tb") {
		t.Errorf("status: exit %d, %v", code, err)
	}
	if !strings.Contains(out.String(), "no lab named bc (the default --name); the labs on this machine:") || !strings.Contains(out.String(), "\ntb ") {
		t.Errorf("status does not list the labs:\n%s", out.String())
	}
	// With none (but the namespaces of others' labs this machine may
	// run, which lab list shows too).
	out.Reset()
	code, err = run([]string{"status", "--run-root", t.TempDir()}, &out, &bytes.Buffer{})
	if code != 1 || err == nil || !strings.Contains(err.Error(), "no other lab on this machine") && !strings.Contains(err.Error(), "give --name") {
		t.Errorf("status with no lab: exit %d, %v, %q", code, err, out.String())
	}
}
