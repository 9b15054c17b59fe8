package xdp

// XDP_RING_NEED_WAKEUP, in the flags word of the fill and TX rings.
const ringNeedWakeup = 1

// A Socket is an AF_XDP socket bound to one device queue, with its four
// rings. It is not safe for concurrent use.
type Socket struct {
	umem    *UMEM
	fd      int
	owner   bool // fd belongs to the UMEM and outlives the Socket
	ifindex int
	queueID int

	zeroCopy   bool
	needWakeup bool
	maxKicks   int // sendto calls per Kick: one per 32 TX entries (txBudget), plus one
	txBudget   int // descriptors the kernel sends per sendto, if the socket set it
	sendtos    uint64

	fill ring[uint64] // user space produces
	comp ring[uint64] // user space consumes
	rx   ring[Desc]   // user space consumes
	tx   ring[Desc]   // user space produces

	// txOutstanding counts descriptors produced to TX and not yet seen
	// on the completion ring.
	txOutstanding uint32
	closed        bool
}

// FD returns the socket's file descriptor, to register in an XSKMAP or to
// poll. It stays valid until Close (or, for the first socket of a UMEM,
// until the UMEM is closed).
func (s *Socket) FD() int { return s.fd }

// Ifindex returns the device the socket is bound to.
func (s *Socket) Ifindex() int { return s.ifindex }

// QueueID returns the queue the socket is bound to.
func (s *Socket) QueueID() int { return s.queueID }

// UMEM returns the UMEM the socket uses.
func (s *Socket) UMEM() *UMEM { return s.umem }

// ZeroCopy reports whether the kernel bound the socket in zero-copy mode.
func (s *Socket) ZeroCopy() bool { return s.zeroCopy }

// Receive consumes up to len(descs) received descriptors into descs and
// returns how many. The frames are the caller's until it gives them back
// through Fill or sends them with Transmit.
func (s *Socket) Receive(descs []Desc) int { return s.rx.consume(descs) }

// RxPending reports whether the RX ring holds received frames, by reading
// the kernel's producer index: what readiness on the socket's file
// descriptor says, without a system call. Like Receive, it must be called
// by the ring's consumer.
func (s *Socket) RxPending() bool { return s.rx.available(1) > 0 }

// Transmit posts as many of descs as the TX ring has room for and returns
// how many it posted; Kick then has the kernel send them. The frames are
// the kernel's until Complete returns their addresses. A descriptor that
// is invalid (out of the UMEM, crossing a frame boundary, longer than the
// device allows) is counted in Stats.TxInvalidDescs and never completes.
func (s *Socket) Transmit(descs []Desc) int {
	n := s.tx.produce(descs)
	s.txOutstanding += uint32(n)
	return n
}

// Complete consumes up to len(addrs) completed TX addresses into addrs and
// returns how many. The frames are the caller's again.
func (s *Socket) Complete(addrs []uint64) int {
	n := s.comp.consume(addrs)
	s.txOutstanding -= uint32(n)
	return n
}

// Fill posts as many of addrs as the fill ring has room for and returns
// how many it posted. The frames are the kernel's until Receive returns
// them. Any address within a frame names that frame.
func (s *Socket) Fill(addrs []uint64) int { return s.fill.produce(addrs) }

// FillFree returns the number of free fill ring entries.
func (s *Socket) FillFree() int { return int(s.fill.free(uint32(len(s.fill.entries)))) }

// TxFree returns the number of free TX ring entries.
func (s *Socket) TxFree() int { return int(s.tx.free(uint32(len(s.tx.entries)))) }

// TxPending returns the number of descriptors transmitted and not yet
// completed.
func (s *Socket) TxPending() int { return int(s.txOutstanding) }

// FillNeedsWakeup reports whether the kernel asks for a syscall (poll or
// recvfrom) before it takes more from the fill ring. It is false unless the
// socket uses need-wakeup.
func (s *Socket) FillNeedsWakeup() bool {
	return s.needWakeup && s.fill.flags.Load()&ringNeedWakeup != 0
}

// txNeedsKick reports whether Kick should make a syscall.
func (s *Socket) txNeedsKick() bool {
	if s.tx.unconsumed() == 0 {
		return false
	}
	return !s.needWakeup || s.tx.flags.Load()&ringNeedWakeup != 0
}

// kickBatch is how many TX descriptors the kernel sends per sendto in copy
// mode before it returns EAGAIN.
const kickBatch = 32

// TxBudget is how many descriptors one sendto sends in copy mode: the TX
// ring's size where the kernel lets a socket set it (6.17 on), else
// kickBatch.
func (s *Socket) TxBudget() int {
	if s.txBudget > 0 {
		return s.txBudget
	}
	return kickBatch
}

// Sendtos counts the system calls Kick made.
func (s *Socket) Sendtos() uint64 { return s.sendtos }
