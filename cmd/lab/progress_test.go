//go:build linux

package main

import (
	"bytes"
	"testing"

	"github.com/bcfab/bcfab/internal/progress"
	"github.com/bcfab/bcfab/study/experiment"
)

// An experiment's progress: auto on a pipe is plain lines, a line per
// point and the state both through the printer; none keeps only the
// labs' logs (-v).
func TestExperimentProgressModes(t *testing.T) {
	for _, c := range []struct {
		mode    progress.Mode
		verbose bool
		want    progress.Mode
		shown   bool
	}{
		{progress.Auto, false, progress.Plain, true},
		{progress.Bar, true, progress.Bar, true},
		{progress.Plain, false, progress.Plain, true},
		{progress.None, true, progress.None, false},
	} {
		var o experiment.RunOptions
		var stderr bytes.Buffer
		pr := experimentProgress(&o, &stderr, c.mode, &common{verbose: c.verbose})
		if pr.Mode() != c.want || (o.Progress != nil) != c.shown || (o.Status != nil) != c.shown || (o.Log != nil) != c.verbose {
			t.Errorf("--progress %v, -v %v: mode %v, lines %v, state %v, logs %v", c.mode, c.verbose, pr.Mode(), o.Progress != nil, o.Status != nil, o.Log != nil)
		}
		if o.Log != nil {
			o.Log.Info("lab up")
			_ = pr.Close()
			if !bytes.Contains(stderr.Bytes(), []byte("msg=\"lab up\"\n")) {
				t.Errorf("--progress %v: the log line is not on stderr: %q", c.mode, stderr.String())
			}
		}
		_ = pr.Close()
	}
}
