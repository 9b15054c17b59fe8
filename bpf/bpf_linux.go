package bpf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
)

// Program is one loaded copy of the XDP program and its maps, attached to at
// most one device. It is safe for concurrent use to the extent that
// cilium/ebpf maps are: Register, SetConfig and Counters may be called from
// any goroutine; Attach and Close not concurrently with anything else.
type Program struct {
	objs xdpRedirectObjects
	link link.Link // nil until attached
}

// Load loads the program and its maps into the kernel, configured with the
// zero Config.
//
// It first lifts RLIMIT_MEMLOCK, which kernels before 5.11 charge BPF memory
// to. Failing that (EPERM without CAP_SYS_RESOURCE) is not fatal: loading is
// tried anyway, and the rlimit error is reported only if loading fails too.
func Load() (*Program, error) {
	memlockErr := rlimit.RemoveMemlock()
	p := &Program{}
	if err := loadXdpRedirectObjects(&p.objs, nil); err != nil {
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
	if err := p.SetConfig(Config{}); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	return p, nil
}

// Attach attaches the program to the device ifindex of the calling thread's
// network namespace and returns the mode actually used.
//
// The attachment is a bpf_link owned by this process: it is detached by
// Close, and by the kernel when the process dies, however it dies.
func (p *Program) Attach(ifindex int, mode Mode) (Mode, error) {
	if p.link != nil {
		return 0, fmt.Errorf("bpf: attach xdp on ifindex %d: program already attached", ifindex)
	}
	try := func(m Mode) error {
		flags := link.XDPDriverMode
		if m == ModeGeneric {
			flags = link.XDPGenericMode
		}
		l, err := link.AttachXDP(link.XDPOptions{
			Program:   p.objs.XdpRedirect,
			Interface: ifindex,
			Flags:     flags,
		})
		if err != nil {
			return fmt.Errorf("bpf: attach xdp (%v) on ifindex %d: %w", m, ifindex, err)
		}
		p.link = l
		return nil
	}
	switch mode {
	case ModeNative, ModeGeneric:
		return mode, try(mode)
	case ModeAuto:
		errNative := try(ModeNative)
		if errNative == nil {
			return ModeNative, nil
		}
		if err := try(ModeGeneric); err != nil {
			return 0, errors.Join(errNative, err)
		}
		return ModeGeneric, nil
	}
	return 0, fmt.Errorf("bpf: attach xdp on ifindex %d: invalid mode %v", ifindex, mode)
}

// Register directs the frames of queueID to the AF_XDP socket xskFD. The
// map takes its own reference: closing the socket removes the entry.
func (p *Program) Register(queueID int, xskFD int) error {
	if err := p.objs.Xsks.Update(uint32(queueID), uint32(xskFD), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("bpf: register socket %d for queue %d: %w", xskFD, queueID, err)
	}
	return nil
}

// Unregister removes the socket of queueID, whose frames then get the
// fallback verdict. Removing an empty entry is not an error.
func (p *Program) Unregister(queueID int) error {
	err := p.objs.Xsks.Delete(uint32(queueID))
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
	if err := p.objs.Config.Update(uint32(0), &v, ebpf.UpdateAny); err != nil {
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
		if err := p.objs.Counters.Lookup(uint32(i), &perCPU); err != nil {
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

// Close detaches the program, if attached, and releases it and its maps.
// It returns every step's error.
func (p *Program) Close() error {
	var errs []error
	if p.link != nil {
		if err := p.link.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: detach xdp: %w", err))
		}
		p.link = nil
	}
	// Close of a nil *ebpf.Program or *ebpf.Map is a no-op.
	if err := p.objs.XdpRedirect.Close(); err != nil {
		errs = append(errs, fmt.Errorf("bpf: close program: %w", err))
	}
	for _, m := range []struct {
		name string
		m    *ebpf.Map
	}{
		{"counters", p.objs.Counters},
		{"config", p.objs.Config},
		{"xsks", p.objs.Xsks},
	} {
		if err := m.m.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: close map %s: %w", m.name, err))
		}
	}
	p.objs = xdpRedirectObjects{}
	return errors.Join(errs...)
}
