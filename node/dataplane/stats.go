package dataplane

// DropReason says why a frame was dropped. Every drop in the engine is
// counted under exactly one reason.
type DropReason uint8

const (
	DropNone        DropReason = iota
	DropMalformed              // too short or a bad header
	DropUnsupported            // not something this node forwards (non-IPv4, ...)
	DropNoRoute                // destination is not a server of this fabric
	DropHairpin                // would leave by the port it came in on
	DropBufferFull             // egress buffer admission
	DropNoFrames               // UMEM frames held back so receive never starves
	DropTxError                // the kernel refused a frame on the capture path
	DropWatchdog               // discarded by the watchdog's drop action
	numDropReasons
)

var dropNames = [numDropReasons]string{
	DropNone:        "none",
	DropMalformed:   "malformed",
	DropUnsupported: "unsupported",
	DropNoRoute:     "no_route",
	DropHairpin:     "hairpin",
	DropBufferFull:  "buffer_full",
	DropNoFrames:    "no_frames",
	DropTxError:     "tx_error",
	DropWatchdog:    "watchdog",
}

func (r DropReason) String() string {
	if r < numDropReasons {
		return dropNames[r]
	}
	return "unknown"
}
