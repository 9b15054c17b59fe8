package lab

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/bcfab/bcfab/model/scale"
)

// ResolveTarget is the target named by s: papers, native (at rateBps), or
// the path of a target file. A target file is YAML whose keys are
// scale.Target's (link-rate, link-delay, buffer, xoff-bdps, dcqcn: {...},
// ...), laid over the papers' network: a file that says only
//
//	name: slow-links
//	link-rate: 25000000000
//
// is the papers' network with 25 Gb/s links. An unknown key is an error.
func ResolveTarget(s string, rateBps uint64) (scale.Target, error) {
	switch s {
	case scale.PapersName, scale.NativeName, "":
		return scale.ByName(s, rateBps)
	}
	b, err := os.ReadFile(s)
	if err != nil {
		return scale.Target{}, fmt.Errorf("target %q: not papers or native, and not a readable target file: %w", s, err)
	}
	t := scale.Papers()
	t.Name = s
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&t); err != nil && !errors.Is(err, io.EOF) {
		return scale.Target{}, fmt.Errorf("target file %s: %w", s, err)
	}
	if err := t.Validate(); err != nil {
		return scale.Target{}, fmt.Errorf("target file %s: %w", s, err)
	}
	return t, nil
}
