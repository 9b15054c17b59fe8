package bpf

// The classifier (tc_classify.c) runs on a server's bc0 egress and gives
// the kernel's IPv4 frames a fabric class, an 802.1Q priority, from their
// DSCP: the user's DSCP map, else the control priority for ICMP and best
// effort (0) for the rest. It pushes the tag, and counts frames and bytes
// per class. See AttachClassifier.

// Priorities the classifier gives what its map leaves out; keep in sync
// with tc_classify.c.
const (
	ClassifierBestEffort = 0 // unmapped IPv4 but ICMP
	ClassifierControl    = 6 // unmapped ICMP
	classifierUnmapped   = 0xff
	classifierUntagged   = 8 // index of the untagged counter
)

// ClassCount is the frames (a GSO frame counts as its segments) and
// bytes of one class.
type ClassCount struct {
	Packets uint64
	Bytes   uint64
}

// ClassifierCounters are the classifier's counters, summed over CPUs:
// per priority, and the frames it left untagged (not IPv4).
type ClassifierCounters struct {
	Classes  [8]ClassCount
	Untagged ClassCount
}
