package transport

import (
	"errors"
	"fmt"
	"slices"
)

// Injected loss: a sized flow in Go-Back-N or IRN may be told to lose
// the first transmission of chosen packets (SetLoss), so a test or a
// conformance check meets one loss it placed itself instead of a random
// one (a link's LossPPM). The sender does everything it does for a packet
// it sends — sequence, pacing slot, counters, timers — and hands the
// packet out marked Segment.Drop; its caller drops it instead of
// transmitting it and counts the drop. The receiver never sees that
// transmission, and recovery runs as for a loss on the wire: a NAK for
// the gap the next packet shows, or the timeout when nothing follows.
// Retransmissions are never dropped.

// MaxLoss bounds the packets one flow may lose by SetLoss.
const MaxLoss = 256

// CheckLoss reports why a flow of mode and packets packets (0 or less:
// unbounded) cannot lose the first transmissions of the packets lose
// lists (indices in the flow from 0, the PSN's offset from the first):
// a lossless flow never loses one on purpose, the flow must be sized,
// and the list short, within the flow and without repeats.
func CheckLoss(mode Mode, lose []int, packets int64) error {
	switch {
	case len(lose) == 0:
		return nil
	case mode == Lossless:
		return errors.New("transport: injected loss needs gbn or irn: a lossless flow expects a fabric that loses nothing, and fails at a gap")
	case mode > IRN:
		return fmt.Errorf("transport: invalid mode %d", int(mode))
	case packets <= 0:
		return errors.New("transport: injected loss needs a sized flow (its packets numbered in advance)")
	case len(lose) > MaxLoss:
		return fmt.Errorf("transport: %d packets to lose, at most %d", len(lose), MaxLoss)
	}
	seen := make(map[int]bool, len(lose))
	for _, i := range lose {
		switch {
		case i < 0 || int64(i) >= packets:
			return fmt.Errorf("transport: lose packet %d: the flow's packets are 0..%d", i, packets-1)
		case seen[i]:
			return fmt.Errorf("transport: lose packet %d twice", i)
		}
		seen[i] = true
	}
	return nil
}

// Packets is the number of packets of a sized flow: its size over the
// MTU, rounded up (without SetMessages).
func Packets(size int64, mtu int) int64 {
	if size <= 0 || mtu < 1 {
		return 0
	}
	return (size + int64(mtu) - 1) / int64(mtu)
}

// SetLoss makes the first transmission of every packet of lose an
// injected loss (CheckLoss says which lists are valid): Next hands it
// out with Segment.Drop set and counts it in S.Injected. Call it after
// SetMessages, which changes the packets of a flow, and before the first
// Next.
func (s *Sender) SetLoss(lose []int) error {
	if s.hi > 0 {
		return errors.New("transport: loss set after the first packet")
	}
	if err := CheckLoss(s.mode, lose, s.total); err != nil {
		return err
	}
	s.lose, s.loseNext = make([]int64, len(lose)), 0
	for i, q := range lose {
		s.lose[i] = int64(q)
	}
	// First transmissions go out in order of sequence: one cursor walks
	// the sorted list.
	slices.Sort(s.lose)
	return nil
}

// dropFirst reports whether seq, sent now for the first time, is the next
// injected loss, and passes it.
func (s *Sender) dropFirst(seq int64) bool {
	if s.loseNext < len(s.lose) && s.lose[s.loseNext] == seq {
		s.loseNext++
		return true
	}
	return false
}
