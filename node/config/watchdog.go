package config

import (
	"fmt"
	"time"
)

// Watchdog actions.
const (
	WatchdogNone    = "none"
	WatchdogForward = "forward"
	WatchdogDrop    = "drop"
)

// Watchdog configures the watchdog; a zero Detect turns it off.
type Watchdog struct {
	Detect  time.Duration
	Restore time.Duration
	Action  string // none, forward or drop ("" is none)
}

// Validate checks c.
func (c Watchdog) Validate() error {
	switch c.Action {
	case "", WatchdogNone, WatchdogForward, WatchdogDrop:
	default:
		return fmt.Errorf("watchdog action %q: want %s, %s or %s", c.Action, WatchdogNone, WatchdogForward, WatchdogDrop)
	}
	if c.Detect < 0 || (c.Detect > 0 && c.Detect < 4*time.Millisecond) {
		return fmt.Errorf("watchdog detection time %v: want 0 (off) or at least 4ms", c.Detect)
	}
	if c.Detect > 0 && c.Action != "" && c.Action != WatchdogNone && c.Restore <= 0 {
		return fmt.Errorf("watchdog restoration time %v: want more than 0 with action %s", c.Restore, c.Action)
	}
	return nil
}
