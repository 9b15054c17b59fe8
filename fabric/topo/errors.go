package topo

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error about a generator's parameters.
var ErrInvalid = errors.New("invalid topology")

// ParamError names the parameter at fault, its value and what it needs.
// It wraps ErrInvalid.
type ParamError struct {
	Topology string // the generator: "expander", "fattree", ...
	Param    string // the parameter as a flag names it: "degree", "k", ...
	Value    any
	Need     string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s: %s %s = %v: %s", ErrInvalid, e.Topology, e.Param, e.Value, e.Need)
}

func (e *ParamError) Unwrap() error { return ErrInvalid }

func paramErr(topology, param string, value any, format string, a ...any) error {
	return &ParamError{Topology: topology, Param: param, Value: value, Need: fmt.Sprintf(format, a...)}
}
