package bpf

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
)

// Shared is one loaded copy of the XDP program and its maps, serving up to
// MaxPorts interfaces of one network namespace through the Programs it
// hands out, each in a slot of its own. The loaded objects live until the
// Shared and every Program of it are closed. Safe for concurrent use.
type Shared struct {
	mu     sync.Mutex
	objs   xdpRedirectObjects
	used   [MaxPorts]bool
	users  int  // Programs not yet closed
	closed bool // Close was called
}

// Program serves one interface from a slot of a loaded program: its
// configuration, counters and AF_XDP sockets are its own. It is safe for
// concurrent use to the extent that cilium/ebpf maps are: Register,
// SetConfig and Counters may be called from any goroutine; Attach and
// Close not concurrently with anything else.
type Program struct {
	sh      *Shared
	slot    uint32
	ifindex int       // the interface whose frames the slot gets; 0 none
	link    link.Link // nil until attached
}

// LoadShared loads the program and its maps into the kernel.
//
// It first lifts RLIMIT_MEMLOCK, which kernels before 5.11 charge BPF memory
// to. Failing that (EPERM without CAP_SYS_RESOURCE) is not fatal: loading is
// tried anyway, and the rlimit error is reported only if loading fails too.
func LoadShared() (*Shared, error) {
	memlockErr := rlimit.RemoveMemlock()
	s := &Shared{}
	if err := loadXdpRedirectObjects(&s.objs, nil); err != nil {
		var verr *ebpf.VerifierError
		if errors.As(err, &verr) {
			// %+v prints the whole verifier log.
			err = fmt.Errorf("%w\n%+v", err, verr)
		}
		err = fmt.Errorf("bpf: load xdp_redirect: %w", err)
		if memlockErr != nil {
			err = errors.Join(err, fmt.Errorf("bpf: remove memlock rlimit: %w", memlockErr))
		}
		return nil, err
	}
	return s, nil
}

// Load loads a program of its own for one interface, configured with the
// zero Config; Close releases it.
func Load() (*Program, error) {
	s, err := LoadShared()
	if err != nil {
		return nil, err
	}
	p, err := s.Program()
	return p, errors.Join(err, s.Close())
}

// Program takes a free slot, with zeroed counters, no sockets and the zero
// Config, for one interface.
func (s *Shared) Program() (*Program, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("bpf: program of a closed Shared")
	}
	slot := -1
	for i, u := range s.used {
		if !u {
			slot = i
			break
		}
	}
	if slot < 0 {
		return nil, fmt.Errorf("bpf: the program serves %d interfaces already", MaxPorts)
	}
	p := &Program{sh: s, slot: uint32(slot)}
	// A slot given back may hold a former Program's counts.
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("bpf: clear counters of slot %d: %w", slot, err)
	}
	zero := make([]uint64, cpus)
	for c := range numCounters {
		if err := s.objs.Counters.Update(p.counterKey(c), zero, ebpf.UpdateAny); err != nil {
			return nil, fmt.Errorf("bpf: clear counters of slot %d: %w", slot, err)
		}
	}
	if err := p.SetConfig(Config{}); err != nil {
		return nil, err
	}
	s.used[slot] = true
	s.users++
	return p, nil
}

// Close drops the Shared's own hold on the loaded objects; they are
// released once every Program of it is closed too.
func (s *Shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.releaseLocked()
}

func (s *Shared) releaseLocked() error {
	if !s.closed || s.users > 0 || s.objs.XdpRedirect == nil {
		return nil
	}
	var errs []error
	// Close of a nil *ebpf.Program or *ebpf.Map is a no-op.
	if err := s.objs.XdpRedirect.Close(); err != nil {
		errs = append(errs, fmt.Errorf("bpf: close program: %w", err))
	}
	for _, m := range []struct {
		name string
		m    *ebpf.Map
	}{
		{"ports", s.objs.Ports},
		{"counters", s.objs.Counters},
		{"config", s.objs.Config},
		{"xsks", s.objs.Xsks},
	} {
		if err := m.m.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: close map %s: %w", m.name, err))
		}
	}
	s.objs = xdpRedirectObjects{}
	return errors.Join(errs...)
}

func (p *Program) counterKey(c int) uint32 { return p.slot*numCounters + uint32(c) }

// serve gives the frames of ifindex (in the calling thread's network
// namespace) to p's slot.
func (p *Program) serve(ifindex int) error {
	if ifindex <= 0 {
		return fmt.Errorf("bpf: invalid ifindex %d", ifindex)
	}
	if p.ifindex != 0 {
		return fmt.Errorf("bpf: attach xdp on ifindex %d: program already serves ifindex %d", ifindex, p.ifindex)
	}
	key, slot := uint32(ifindex), p.slot
	if err := p.sh.objs.Ports.Update(key, slot, ebpf.UpdateNoExist); err != nil {
		if errors.Is(err, ebpf.ErrKeyExist) {
			return fmt.Errorf("bpf: attach xdp on ifindex %d: another interface of the shared program has that ifindex (a Shared serves one network namespace)", ifindex)
		}
		return fmt.Errorf("bpf: attach xdp on ifindex %d: %w", ifindex, err)
	}
	p.ifindex = ifindex
	return nil
}

// unserve undoes serve.
func (p *Program) unserve() error {
	if p.ifindex == 0 {
		return nil
	}
	err := p.sh.objs.Ports.Delete(uint32(p.ifindex))
	p.ifindex = 0
	if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("bpf: release ifindex: %w", err)
	}
	return nil
}

// Attach attaches the program to the device ifindex of the calling thread's
// network namespace and returns the mode actually used. The device's
// frames go to p's slot from the first one on.
//
// The attachment is a bpf_link owned by this process: it is detached by
// Close, and by the kernel when the process dies, however it dies.
func (p *Program) Attach(ifindex int, mode Mode) (Mode, error) {
	if p.link != nil {
		return 0, fmt.Errorf("bpf: attach xdp on ifindex %d: program already attached", ifindex)
	}
	if mode != ModeNative && mode != ModeGeneric && mode != ModeAuto {
		return 0, fmt.Errorf("bpf: attach xdp on ifindex %d: invalid mode %v", ifindex, mode)
	}
	if err := p.serve(ifindex); err != nil {
		return 0, err
	}
	try := func(m Mode) error {
		flags := link.XDPDriverMode
		if m == ModeGeneric {
			flags = link.XDPGenericMode
		}
		l, err := link.AttachXDP(link.XDPOptions{
			Program:   p.sh.objs.XdpRedirect,
			Interface: ifindex,
			Flags:     flags,
		})
		if err != nil {
			return fmt.Errorf("bpf: attach xdp (%v) on ifindex %d: %w", m, ifindex, err)
		}
		p.link = l
		return nil
	}
	var err error
	switch mode {
	case ModeNative, ModeGeneric:
		if err = try(mode); err == nil {
			return mode, nil
		}
	case ModeAuto:
		errNative := try(ModeNative)
		if errNative == nil {
			return ModeNative, nil
		}
		if err = try(ModeGeneric); err == nil {
			return ModeGeneric, nil
		}
		err = errors.Join(errNative, err)
	}
	return 0, errors.Join(err, p.unserve())
}

func (p *Program) xskKey(queueID int) (uint32, error) {
	if queueID < 0 || queueID >= MaxQueues {
		return 0, fmt.Errorf("bpf: queue %d out of range [0, %d)", queueID, MaxQueues)
	}
	return p.slot*MaxQueues + uint32(queueID), nil
}

// Register directs the frames of queueID to the AF_XDP socket xskFD. The
// map takes its own reference: closing the socket removes the entry.
func (p *Program) Register(queueID int, xskFD int) error {
	key, err := p.xskKey(queueID)
	if err != nil {
		return err
	}
	if err := p.sh.objs.Xsks.Update(key, uint32(xskFD), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("bpf: register socket %d for queue %d: %w", xskFD, queueID, err)
	}
	return nil
}

// Unregister removes the socket of queueID, whose frames then get the
// fallback verdict. Removing an empty entry is not an error.
func (p *Program) Unregister(queueID int) error {
	key, err := p.xskKey(queueID)
	if err != nil {
		return err
	}
	err = p.sh.objs.Xsks.Delete(key)
	if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("bpf: unregister queue %d: %w", queueID, err)
	}
	return nil
}

// SetConfig applies c to the frames that follow. The map value is updated in
// place, so a frame in flight may see some fields old and others new.
func (p *Program) SetConfig(c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	v := xdpRedirectConfig{LossPpm: c.LossPPM, Fallback: xdpPass}
	if c.Down {
		v.Down = 1
	}
	if c.Fallback == Drop {
		v.Fallback = xdpDrop
	}
	if c.Patched {
		v.Patched = 1
	}
	if c.Captured {
		v.Captured = 1
	}
	if err := p.sh.objs.Config.Update(p.slot, &v, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("bpf: set config: %w", err)
	}
	return nil
}

// Counters reads the counters, summed over CPUs. Each counter is read at
// a slightly different time; they are not a consistent snapshot.
func (p *Program) Counters() (Counters, error) {
	var sums [numCounters]uint64
	var perCPU []uint64
	for i := range sums {
		if err := p.sh.objs.Counters.Lookup(p.counterKey(i), &perCPU); err != nil {
			return Counters{}, fmt.Errorf("bpf: read counter %d: %w", i, err)
		}
		for _, v := range perCPU {
			sums[i] += v
		}
	}
	return Counters{
		RX:       sums[counterRX],
		Redirect: sums[counterRedirect],
		Fallback: sums[counterFallback],
		Loss:     sums[counterLoss],
		Down:     sums[counterDown],
		Mirror:   sums[counterMirror],
	}, nil
}

// Close detaches the program from p's interface, if attached, gives the
// slot back (its sockets unregistered) and, if p was the last user of a
// closed Shared (always so for Load's), releases the program and its maps.
// It returns every step's error.
func (p *Program) Close() error {
	if p.sh == nil {
		return nil
	}
	var errs []error
	if p.link != nil {
		if err := p.link.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: detach xdp: %w", err))
		}
		p.link = nil
	}
	errs = append(errs, p.unserve())
	for q := range MaxQueues {
		errs = append(errs, p.Unregister(q))
	}
	s := p.sh
	p.sh = nil
	s.mu.Lock()
	s.used[p.slot] = false
	s.users--
	errs = append(errs, s.releaseLocked())
	s.mu.Unlock()
	return errors.Join(errs...)
}
