// Package bpf holds the XDP program that hands a port's frames to its AF_XDP
// sockets, and the Go API that loads, attaches and configures it.
//
// The program (xdp_redirect.c) counts every frame, drops it when the port is
// administratively down or by injected random loss, and otherwise redirects
// it to the AF_XDP socket registered for the receiving queue. Frames for a
// queue without a socket get the fallback verdict: passed to the kernel
// stack (the default) or dropped.
//
// A Program serves one interface: its slot of the loaded program's maps is
// that port's configuration, counters and sockets. Load loads a program of
// its own; a Shared loads one copy that the Programs it hands out share,
// one interface each, up to MaxPorts interfaces of one network namespace
// (a node's ports). Sharing makes a node's bring-up and removal cheaper:
// the kernel's XDP dispatcher changes, and waits for an RCU grace period
// under the RTNL lock, only when the first interface attaches a program
// and when the last one leaves it.
package bpf

import (
	"errors"
	"fmt"
)

// ErrNotSupported is returned where XDP does not exist.
var ErrNotSupported = errors.New("bpf: XDP is not supported on this platform")

// Mode is how the program is attached to a device.
type Mode int

const (
	// ModeNative runs the program in the driver (XDP_FLAGS_DRV_MODE).
	ModeNative Mode = iota
	// ModeGeneric runs the program on the skb path (XDP_FLAGS_SKB_MODE);
	// it works on every device, more slowly.
	ModeGeneric
	// ModeAuto tries native and falls back to generic.
	ModeAuto
)

// ParseMode parses "native", "generic" or "auto".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "native":
		return ModeNative, nil
	case "generic":
		return ModeGeneric, nil
	case "auto":
		return ModeAuto, nil
	}
	return 0, fmt.Errorf("bpf: unknown XDP mode %q (want native, generic or auto)", s)
}

func (m Mode) String() string {
	switch m {
	case ModeNative:
		return "native"
	case ModeGeneric:
		return "generic"
	case ModeAuto:
		return "auto"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Verdict is what happens to a frame that no socket takes.
type Verdict int

const (
	// Pass hands the frame to the kernel network stack (XDP_PASS).
	Pass Verdict = iota
	// Drop discards it (XDP_DROP).
	Drop
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Drop:
		return "drop"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Config is the program's run-time configuration. The zero value passes
// every frame without loss.
type Config struct {
	// LossPPM drops that many frames per million, at random; 1000000
	// drops all.
	LossPPM uint32
	// Down drops every frame, as if the link were cut.
	Down bool
	// Fallback is the verdict for frames of a queue with no socket.
	Fallback Verdict
	// Patched says the port's link is patched in memory: every frame on
	// the interface is a copy written for captures, counted (Mirror) and
	// passed to the stack while Captured, else dropped. LossPPM and Down
	// are then applied by the patch (package patch), not here.
	Patched  bool
	Captured bool
}

// MaxLossPPM is the LossPPM that drops every frame.
const MaxLossPPM = 1000000

// Validate reports whether c can be applied.
func (c Config) Validate() error {
	if c.LossPPM > MaxLossPPM {
		return fmt.Errorf("bpf: loss %d ppm out of range [0, %d]", c.LossPPM, MaxLossPPM)
	}
	if c.Fallback != Pass && c.Fallback != Drop {
		return fmt.Errorf("bpf: invalid fallback verdict %v", c.Fallback)
	}
	return nil
}

// Counters are the program's counters, summed over CPUs.
type Counters struct {
	RX       uint64 // frames seen
	Redirect uint64 // frames handed to an AF_XDP socket
	Fallback uint64 // frames of a queue without socket, given the fallback verdict
	Loss     uint64 // frames dropped by injected loss
	Down     uint64 // frames dropped because the link is down
	Mirror   uint64 // copies of a patched link's frames (Config.Patched)
}

// MaxPorts is how many interfaces one loaded program serves, and
// MaxQueues how many receive queues of each can have a socket; as in
// xdp_redirect.c.
const (
	MaxPorts  = 64
	MaxQueues = 8
)

// Indices of the counters map, as in xdp_redirect.c.
const (
	counterRX = iota
	counterRedirect
	counterFallback
	counterLoss
	counterDown
	counterMirror
	numCounters
)

// XDP actions, from linux/bpf.h.
const (
	xdpDrop = 1
	xdpPass = 2
)
