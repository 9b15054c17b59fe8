//go:build !linux

package bpf

// Program is the XDP program; on this platform it cannot be loaded.
type Program struct{}

// Load returns ErrNotSupported.
func Load() (*Program, error) { return nil, ErrNotSupported }

// Shared is the program loaded once for several interfaces; on this
// platform it cannot be loaded.
type Shared struct{}

// LoadShared returns ErrNotSupported.
func LoadShared() (*Shared, error) { return nil, ErrNotSupported }

func (s *Shared) Program() (*Program, error) { return nil, ErrNotSupported }
func (s *Shared) Close() error               { return nil }

func (p *Program) Attach(ifindex int, mode Mode) (Mode, error) { return 0, ErrNotSupported }
func (p *Program) Register(queueID int, xskFD int) error       { return ErrNotSupported }
func (p *Program) Unregister(queueID int) error                { return ErrNotSupported }
func (p *Program) SetConfig(c Config) error                    { return ErrNotSupported }
func (p *Program) Counters() (Counters, error)                 { return Counters{}, ErrNotSupported }
func (p *Program) Close() error                                { return nil }

// Classifier is the bc0 classifier; on this platform it cannot be loaded.
type Classifier struct{}

// AttachClassifier returns ErrNotSupported.
func AttachClassifier(ifindex int, dscpMap map[uint8]uint8) (*Classifier, error) {
	return nil, ErrNotSupported
}

func (c *Classifier) SetMap(map[uint8]uint8) error { return ErrNotSupported }
func (c *Classifier) Counters() (ClassifierCounters, error) {
	return ClassifierCounters{}, ErrNotSupported
}
func (c *Classifier) Attached() bool { return false }
func (c *Classifier) Close() error   { return nil }
