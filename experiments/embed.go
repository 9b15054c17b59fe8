// Package experiments holds the experiment files of `lab experiment`, one
// YAML file per experiment, embedded so that `lab experiment list` and
// `lab experiment run NAME` work from any directory. The files are meant
// to be read and edited; `lab experiment run -f FILE` runs an edited copy.
package experiments

import "embed"

// FS holds the experiment files: <name>.yaml.
//
//go:embed *.yaml
var FS embed.FS
