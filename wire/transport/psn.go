package transport

// Sequence numbers. The wire carries 24-bit PSNs (the BTH's PSN field);
// inside a Sender or Receiver a packet is known by its 64-bit sequence
// number, its index in the flow from 0. A flow starting at PSN s sends
// packet i as PSN (s + i) mod 2^24; the "extended" PSN s + i never wraps.
// A PSN read off the wire is unwrapped against the extended PSN it is
// expected near; that is unambiguous while fewer than 2^23 packets are
// outstanding, which MaxWindow guarantees.

const (
	// PSNBits is the width of a PSN on the wire.
	PSNBits = 24
	// PSNMask keeps the low PSNBits bits.
	PSNMask = 1<<PSNBits - 1
	// MaxWindow bounds the packets a Sender has outstanding, far below
	// the 2^23 that would make unwrapping ambiguous.
	MaxWindow = 1 << 22
)

// PSNAdd is psn advanced by n (negative n goes back), modulo 2^24.
func PSNAdd(psn uint32, n int64) uint32 {
	return uint32((int64(psn) + n) & PSNMask)
}

// PSNDiff is a - b as the signed distance between two 24-bit PSNs, in
// [-2^23, 2^23): positive when a is after b.
func PSNDiff(a, b uint32) int64 {
	d := int64((a - b) & PSNMask)
	if d >= 1<<(PSNBits-1) {
		d -= 1 << PSNBits
	}
	return d
}

// Unwrap is the extended (64-bit) PSN congruent to psn modulo 2^24 that
// is nearest to ref, an extended PSN the caller expects psn to be close
// to (a receiver's next expected PSN, a sender's oldest unacknowledged).
func Unwrap(psn uint32, ref int64) int64 {
	return ref + PSNDiff(psn&PSNMask, uint32(ref&PSNMask))
}
