package experiment

import "embed"

// defs holds the built-in experiment files, defs/<name>.yaml, embedded so
// that `lab experiment list` and `lab experiment run NAME` work from any
// directory. The files are meant to be read and edited; `lab experiment
// run -f FILE` runs an edited copy.
//
//go:embed defs/*.yaml
var defs embed.FS
