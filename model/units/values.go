package units

import (
	"fmt"
	"strings"
	"time"
)

// Size is a byte count that reads and prints itself as ParseSize and
// CompactSize do: a flag value (pflag.Value) and a text value (lab
// files).
type Size int64

func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = Size(n)
	return nil
}

func (s Size) String() string { return CompactSize(int64(s)) }

// Type names the value in generated help.
func (s Size) Type() string { return "size" }

func (s Size) MarshalText() ([]byte, error)  { return []byte(s.String()), nil }
func (s *Size) UnmarshalText(b []byte) error { return s.Set(string(b)) }

// Rate is a bit rate that reads and prints itself as ParseRate and
// CompactRate do.
type Rate uint64

func (r *Rate) Set(v string) error {
	n, err := ParseRate(v)
	if err != nil {
		return err
	}
	*r = Rate(n)
	return nil
}

func (r Rate) String() string { return CompactRate(uint64(r)) }

// Type names the value in generated help.
func (r Rate) Type() string { return "rate" }

func (r Rate) MarshalText() ([]byte, error)  { return []byte(r.String()), nil }
func (r *Rate) UnmarshalText(b []byte) error { return r.Set(string(b)) }

// Duration is a duration that reads itself as ParseDuration does (Go's
// syntax or plain seconds) and prints in Go's syntax.
type Duration time.Duration

func (d *Duration) Set(v string) error {
	n, err := ParseDuration(v)
	if err != nil {
		return err
	}
	*d = Duration(n)
	return nil
}

// String is Go's syntax, and "0" for zero (which help omits as a
// default).
func (d Duration) String() string {
	if d == 0 {
		return "0"
	}
	return time.Duration(d).String()
}

// Type names the value in generated help.
func (d Duration) Type() string { return "duration" }

// D is d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) MarshalText() ([]byte, error)  { return []byte(d.String()), nil }
func (d *Duration) UnmarshalText(b []byte) error { return d.Set(string(b)) }

// Loss is a loss probability in frames per million that reads itself as
// ParseLoss does and prints as CompactLoss.
type Loss int

func (l *Loss) Set(v string) error {
	n, err := ParseLoss(v)
	if err != nil {
		return err
	}
	*l = Loss(n)
	return nil
}

func (l Loss) String() string { return CompactLoss(int(l)) }

// Type names the value in generated help.
func (l Loss) Type() string { return "probability" }

func (l Loss) MarshalText() ([]byte, error)  { return []byte(l.String()), nil }
func (l *Loss) UnmarshalText(b []byte) error { return l.Set(string(b)) }

// Rates is a list of bit rates, one per level of a fabric, that reads
// itself as comma-separated rates ("160M,100M") and prints the same way.
type Rates []uint64

// ParseRates reads comma-separated rates, each as ParseRate does.
func ParseRates(s string) ([]uint64, error) {
	var out []uint64
	for _, f := range strings.Split(s, ",") {
		r, err := ParseRate(f)
		if err != nil {
			return nil, fmt.Errorf("rates %q: %w", s, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func (r *Rates) Set(v string) error {
	rs, err := ParseRates(v)
	if err != nil {
		return err
	}
	*r = rs
	return nil
}

func (r Rates) String() string {
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = CompactRate(v)
	}
	return strings.Join(parts, ",")
}

// Type names the value in generated help.
func (r Rates) Type() string { return "rates" }

func (r Rates) MarshalText() ([]byte, error)  { return []byte(r.String()), nil }
func (r *Rates) UnmarshalText(b []byte) error { return r.Set(string(b)) }
