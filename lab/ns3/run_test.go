package ns3

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcfab/bcfab/wire/transport"
)

// fakeCheckout is a checkout whose program only says it ran (ran.txt in
// the export), its source third.cc as given.
func fakeCheckout(t *testing.T, source string) string {
	t.Helper()
	dir := t.TempDir()
	prog := filepath.Join(dir, programPath)
	if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho ran > ran.txt\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(programSource)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, programSource), []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Run refuses an export that sets QP_MAX_RATE on a sim that does not
// read it (the stock sim would skip it and run other flows' rates), and
// runs it on one that does; an export without it runs on either.
func TestRunChecksKeys(t *testing.T) {
	stock := `if (key.compare("PINT_PROB") == 0){`
	patched := stock + ` }else if (key.compare("QP_MAX_RATE") == 0){`
	write := func(hl HostLink) string {
		sim, err := New(Input{Plan: plan(t, bcube21()), Flows: threeFlows(), Duration: 10 * time.Millisecond, CC: transport.CCDCQCN, HostLink: hl})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "exp")
		if err := sim.Write(dir, false); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	ran := func(exp string) bool {
		_, err := os.Stat(filepath.Join(exp, "ran.txt"))
		return err == nil
	}
	for _, c := range []struct {
		name   string
		hl     HostLink
		source string
		want   string // the error; "": it runs
	}{
		{"ports on the stock sim", HostLinkPorts, stock, "scripts/ns3/qp-rate.sh"},
		{"ports on qp-rate.sh's", HostLinkPorts, patched, ""},
		{"port on the stock sim", HostLinkPort, stock, ""},
		{"port on qp-rate.sh's", HostLinkPort, patched, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			exp := write(c.hl)
			err := Run(context.Background(), fakeCheckout(t, c.source), exp)
			switch {
			case c.want == "" && (err != nil || !ran(exp)):
				t.Errorf("Run: %v, ran %v; want it run", err, ran(exp))
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || ran(exp)):
				t.Errorf("Run: %v, ran %v; want it refused with %q", err, ran(exp), c.want)
			}
		})
	}
}
