package xdp

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// NewUMEM maps a region of cfg.NumFrames frames and registers it with the
// kernel through a new AF_XDP socket, the UMEM's owner. The region is
// populated up front so that the kernel never faults it in on the data path.
//
// A socket belongs to the network namespace of the thread that creates it:
// the owner, which becomes the first Socket, binds to a device of the
// namespace NewUMEM was called in, whatever thread calls NewSocket. Later
// sockets are created by NewSocket, in its caller's namespace.
func NewUMEM(cfg UMEMConfig) (*UMEM, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	region, err := mapUMEM(cfg.NumFrames * cfg.FrameSize)
	if err != nil {
		return nil, err
	}
	u := &UMEM{
		region:    region,
		frameSize: cfg.FrameSize,
		numFrames: cfg.NumFrames,
		headroom:  cfg.Headroom,
		fillSize:  cfg.FillSize,
		compSize:  cfg.CompletionSize,
		fd:        -1,
		sockets:   make(map[*Socket]struct{}),
	}
	if u.fd, err = u.newOwner(); err != nil {
		return nil, errors.Join(err, unix.Munmap(region))
	}
	return u, nil
}

// newOwner opens an AF_XDP socket and registers the region through it.
func (u *UMEM) newOwner() (int, error) {
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("xdp: AF_XDP socket: %w", err)
	}
	reg := unix.XDPUmemReg{
		Len:      uint64(len(u.region)),
		Size:     uint32(u.frameSize),
		Headroom: uint32(u.headroom),
	}
	if err := registerUMEM(fd, u.region, &reg); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("xdp: register UMEM: %w", err)
	}
	return fd, nil
}

// NewSocket creates a socket bound to cfg.Ifindex/cfg.QueueID that receives
// into and sends from u.
//
// The first socket of a UMEM is its owner socket (see NewUMEM for its
// namespace). Every later one is a new socket, in the calling thread's
// namespace, bound with XDP_SHARED_UMEM to the owner, with its own fill and
// completion rings; it may be on any device and queue but the owner's (the
// kernel lets a socket on the owner's queue share only the owner's fill and
// completion rings, which this package does not support). Such sockets
// inherit the owner's bind mode and need-wakeup setting, because the kernel
// refuses those bind flags with XDP_SHARED_UMEM; asking for a different
// setting is an error.
//
// The kernel releases a closed socket's device queue from a workqueue, so
// binding the same queue right after a close fails with EBUSY for a few
// milliseconds; NewSocket retries EBUSY for up to 250 ms. Setup that fails
// part way is undone: nothing of the socket is left, and u can be used
// again.
func (u *UMEM) NewSocket(cfg SocketConfig) (*Socket, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	wrap := func(err error) error {
		return fmt.Errorf("xdp: bind %d/%d: %w", cfg.Ifindex, cfg.QueueID, err)
	}
	if u.fd < 0 {
		return nil, wrap(errors.New("UMEM is closed"))
	}

	s := &Socket{
		umem:       u,
		fd:         u.fd,
		owner:      !u.bound,
		ifindex:    cfg.Ifindex,
		queueID:    cfg.QueueID,
		needWakeup: cfg.NeedWakeup,
		maxKicks:   cfg.TxSize/kickBatch + 1,
	}
	sa := &unix.SockaddrXDP{Ifindex: uint32(cfg.Ifindex), QueueID: uint32(cfg.QueueID)}
	if s.owner {
		switch cfg.Mode {
		case Copy:
			sa.Flags |= unix.XDP_COPY
		case ZeroCopy:
			sa.Flags |= unix.XDP_ZEROCOPY
		}
		if cfg.NeedWakeup {
			sa.Flags |= unix.XDP_USE_NEED_WAKEUP
		}
	} else {
		if cfg.Mode == Copy && u.zeroCopy || cfg.Mode == ZeroCopy && !u.zeroCopy {
			return nil, wrap(fmt.Errorf("mode %v differs from the UMEM's first socket (zero-copy %t)", cfg.Mode, u.zeroCopy))
		}
		if cfg.NeedWakeup != u.needWakeup {
			return nil, wrap(fmt.Errorf("need-wakeup %t differs from the UMEM's first socket", cfg.NeedWakeup))
		}
		fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, wrap(fmt.Errorf("AF_XDP socket: %w", err))
		}
		s.fd = fd
		sa.Flags = unix.XDP_SHARED_UMEM
		sa.SharedUmemFD = uint32(u.fd)
	}

	if err := s.setup(cfg, sa); err != nil {
		err = wrap(err)
		if !s.owner {
			return nil, errors.Join(err, s.release())
		}
		// Ring sizes can be set only once per socket: the owner cannot be
		// bound again. Replace it with a fresh registration.
		relErr := s.release()
		unix.Close(u.fd)
		u.fd, u.bound = -1, false
		fd, ownerErr := u.newOwner()
		if ownerErr == nil {
			u.fd = fd
		}
		return nil, errors.Join(err, relErr, ownerErr)
	}
	if s.owner {
		u.bound = true
		u.ownerSocket = s
		u.zeroCopy, u.needWakeup = s.zeroCopy, cfg.NeedWakeup
	} else {
		s.needWakeup = u.needWakeup
	}
	u.sockets[s] = struct{}{}
	return s, nil
}

// setup sizes and maps the rings of s.fd and binds it with sa. On failure
// s.release undoes the mappings.
func (s *Socket) setup(cfg SocketConfig, sa *unix.SockaddrXDP) error {
	u := s.umem
	for _, o := range []struct {
		name string
		opt  int
		n    int
	}{
		{"fill", unix.XDP_UMEM_FILL_RING, u.fillSize},
		{"completion", unix.XDP_UMEM_COMPLETION_RING, u.compSize},
		{"RX", unix.XDP_RX_RING, cfg.RxSize},
		{"TX", unix.XDP_TX_RING, cfg.TxSize},
	} {
		if err := unix.SetsockoptInt(s.fd, unix.SOL_XDP, o.opt, o.n); err != nil {
			return fmt.Errorf("size %s ring to %d: %w", o.name, o.n, err)
		}
	}
	off, err := mmapOffsets(s.fd)
	if err != nil {
		return fmt.Errorf("ring offsets: %w", err)
	}
	mapRing := func(name string, pgoff int64, ro ringOffsets, n int, size uintptr) ([]byte, error) {
		mem, err := unix.Mmap(s.fd, pgoff, ringSize(ro, n, size),
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return nil, fmt.Errorf("map %s ring: %w", name, err)
		}
		return mem, nil
	}
	mem, err := mapRing("fill", unix.XDP_UMEM_PGOFF_FILL_RING, off.fill, u.fillSize, 8)
	if err != nil {
		return err
	}
	s.fill.init(mem, off.fill, u.fillSize, produces)
	if mem, err = mapRing("completion", unix.XDP_UMEM_PGOFF_COMPLETION_RING, off.comp, u.compSize, 8); err != nil {
		return err
	}
	s.comp.init(mem, off.comp, u.compSize, consumes)
	if mem, err = mapRing("RX", unix.XDP_PGOFF_RX_RING, off.rx, cfg.RxSize, descSize); err != nil {
		return err
	}
	s.rx.init(mem, off.rx, cfg.RxSize, consumes)
	if mem, err = mapRing("TX", unix.XDP_PGOFF_TX_RING, off.tx, cfg.TxSize, descSize); err != nil {
		return err
	}
	s.tx.init(mem, off.tx, cfg.TxSize, produces)

	if err := bind(s.fd, sa); err != nil {
		return err
	}
	opts, err := unix.GetsockoptInt(s.fd, unix.SOL_XDP, unix.XDP_OPTIONS)
	if err != nil {
		return fmt.Errorf("read options: %w", err)
	}
	s.zeroCopy = opts&unix.XDP_OPTIONS_ZEROCOPY != 0
	// Copy mode sends kickBatch descriptors per sendto unless the
	// socket asks for more (XDP_MAX_TX_SKB_BUDGET, kernels from 6.17):
	// one call then sends what the ring holds.
	if !s.zeroCopy {
		if err := unix.SetsockoptInt(s.fd, unix.SOL_XDP, xdpMaxTxSkbBudget, cfg.TxSize); err == nil {
			s.txBudget = cfg.TxSize
			s.maxKicks = 2
		}
	}
	return nil
}

// xdpMaxTxSkbBudget is the socket option XDP_MAX_TX_SKB_BUDGET: how many
// descriptors one sendto sends in copy mode (default kickBatch).
const xdpMaxTxSkbBudget = 9

// bindBusyTimeout bounds how long bind retries EBUSY. The kernel frees a
// closed socket's hold on its device queue from a workqueue, so binding the
// queue again right after a close fails with EBUSY for a while (about 15 ms
// on an idle machine).
const bindBusyTimeout = 250 * time.Millisecond

func bind(fd int, sa *unix.SockaddrXDP) error {
	deadline := time.Now().Add(bindBusyTimeout)
	for {
		err := unix.Bind(fd, sa)
		if err != unix.EBUSY || time.Now().After(deadline) {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// release unmaps the rings and closes the socket unless the UMEM owns it.
func (s *Socket) release() error {
	var errs []error
	for _, mem := range [][]byte{s.fill.mem, s.comp.mem, s.rx.mem, s.tx.mem} {
		if mem != nil {
			if err := unix.Munmap(mem); err != nil {
				errs = append(errs, fmt.Errorf("xdp: unmap ring: %w", err))
			}
		}
	}
	s.fill, s.comp, s.rx, s.tx = ring[uint64]{}, ring[uint64]{}, ring[Desc]{}, ring[Desc]{}
	if !s.owner && s.fd >= 0 {
		if err := unix.Close(s.fd); err != nil {
			errs = append(errs, fmt.Errorf("xdp: close socket: %w", err))
		}
	}
	s.fd = -1
	return errors.Join(errs...)
}

// Kick asks the kernel to send what Transmit posted. It makes no syscall
// when the kernel has taken every posted descriptor, or when the socket uses
// need-wakeup and the kernel does not ask for one.
//
// In copy mode each sendto sends at most TxBudget descriptors (the whole
// ring where the kernel lets the socket ask for it, else 32) and returns
// EAGAIN if more remain; Kick repeats it while the kernel makes progress,
// at most once per TxBudget TX ring entries. EAGAIN without progress (the device or the
// completion ring is full), EBUSY (the device dropped a frame) and ENOBUFS
// mean "try later" and return nil: descriptors left on the ring go out on a
// later Kick. Other errors, such as ENETDOWN, are returned wrapped.
//
// Kick does not allocate unless it returns an error.
func (s *Socket) Kick() error {
	for range s.maxKicks {
		if !s.txNeedsKick() {
			return nil
		}
		before := s.tx.consumer.Load()
		// MSG_DONTWAIT: the call never blocks, so it skips the Go
		// scheduler's syscall bookkeeping (and the monitor's hand-off
		// of the worker's P to another thread while it runs).
		_, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
		s.sendtos++
		switch errno {
		case 0:
		case unix.EAGAIN, unix.EBUSY, unix.ENOBUFS:
			if s.tx.consumer.Load() == before {
				return nil // no progress: try later
			}
		case unix.EINTR:
		default:
			return fmt.Errorf("xdp: kick %d/%d: %w", s.ifindex, s.queueID, errno)
		}
	}
	return nil
}

// Stats returns the socket's XDP_STATISTICS counters.
func (s *Socket) Stats() (Stats, error) {
	st, err := statistics(s.fd)
	if err != nil {
		return Stats{}, fmt.Errorf("xdp: statistics %d/%d: %w", s.ifindex, s.queueID, err)
	}
	return Stats{
		RxDropped:       st.Rx_dropped,
		RxInvalidDescs:  st.Rx_invalid_descs,
		TxInvalidDescs:  st.Tx_invalid_descs,
		RxRingFull:      st.Rx_ring_full,
		RxFillRingEmpty: st.Rx_fill_ring_empty_descs,
		TxRingEmpty:     st.Tx_ring_empty_descs,
	}, nil
}

// Close unmaps the socket's rings and closes it, which also removes it from
// any XSKMAP. The first socket of a UMEM is the exception: its file
// descriptor is the UMEM's registration and stays open, bound and in its
// XSKMAPs until the UMEM is closed; frames redirected to it meanwhile are
// counted as RX drops. Frames the socket held are not returned anywhere:
// the caller knows which addresses it had posted.
func (s *Socket) Close() error {
	u := s.umem
	u.mu.Lock()
	defer u.mu.Unlock()
	return s.closeLocked()
}

func (s *Socket) closeLocked() error {
	if s.closed {
		return nil
	}
	s.closed = true
	delete(s.umem.sockets, s)
	return s.release()
}

// Close closes every socket of the UMEM that is still open, then the owner
// socket, and unmaps the region. Frames of the region must not be used
// afterwards. It returns every step's error.
func (u *UMEM) Close() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	var errs []error
	for s := range u.sockets {
		errs = append(errs, s.closeLocked())
	}
	if u.fd >= 0 {
		if err := unix.Close(u.fd); err != nil {
			errs = append(errs, fmt.Errorf("xdp: close UMEM socket: %w", err))
		}
		u.fd = -1
	}
	if u.region != nil {
		if err := unix.Munmap(u.region); err != nil {
			errs = append(errs, fmt.Errorf("xdp: unmap UMEM: %w", err))
		}
		u.region = nil
	}
	return errors.Join(errs...)
}

// mapUMEM maps n bytes for a UMEM and populates it, so that no frame's
// first use faults a page in while a lab runs. The pages are the
// kernel's small ones: transparent huge pages made no difference to the
// reference workload's CPU a frame-hop that alternated runs could show,
// while their allocation (compacting memory for 2 MB pages) made a
// BCube(4,1) lab's bring-up take up to 2 s where small pages take 0.4 s
// (docs/BENCHMARKS.md, "A UMEM in small pages").
func mapUMEM(n int) ([]byte, error) {
	region, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("xdp: map UMEM of %d bytes: %w", n, err)
	}
	// Small pages where the kernel gives every mapping huge ones too
	// (transparent_hugepage/enabled "always"); EINVAL where THP is not
	// built in, which leaves small pages all the same.
	_ = unix.Madvise(region, unix.MADV_NOHUGEPAGE)
	switch err := unix.Madvise(region, unix.MADV_POPULATE_WRITE); {
	case errors.Is(err, unix.EINVAL):
		// Kernels before 5.14: touch every page instead.
		for i := 0; i < n; i += os.Getpagesize() {
			region[i] = 0
		}
	case err != nil:
		return nil, errors.Join(fmt.Errorf("xdp: populate UMEM of %d bytes: %w", n, err), unix.Munmap(region))
	}
	return region, nil
}
