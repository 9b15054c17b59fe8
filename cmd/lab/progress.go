//go:build linux

package main

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/internal/progress"
)

// --progress says how a command shows its output, not what a lab is: it
// is no knob of the table (lab/knob.go), as --json is none
// (docs/USAGE.md, "Progress on a terminal").

// progressFlag adds --progress to cmd.
func progressFlag(cmd *cobra.Command) *progress.Mode {
	m := new(progress.Mode)
	cmd.Flags().Var(m, "progress", "how progress shows on stderr: auto (a bar redrawn in place on a terminal, plain lines elsewhere and when TERM=dumb or NO_COLOR is set), bar, plain or none")
	completeWords(cmd, "progress", progress.ModeNames()...)
	return m
}

// newProgress is the printer of a run's progress on stderr in mode m,
// with plain lines no more often than every (0: a line at every
// update).
func newProgress(stderr io.Writer, m progress.Mode, every time.Duration) *progress.Printer {
	return progress.New(stderr, progress.Options{Mode: m, Every: every})
}
