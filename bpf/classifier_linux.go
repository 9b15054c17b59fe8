package bpf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
)

// Classifier is the loaded classifier program, attached to one device's
// egress. Its methods may be called from any goroutine; Close not
// concurrently with them.
type Classifier struct {
	objs tcClassifyObjects
	link link.Link // nil until attached
}

// loadClassifier loads the program and its maps with dscpMap (DSCP ->
// priority), without attaching it.
func loadClassifier(dscpMap map[uint8]uint8) (*Classifier, error) {
	memlockErr := rlimit.RemoveMemlock()
	c := &Classifier{}
	if err := loadTcClassifyObjects(&c.objs, nil); err != nil {
		var verr *ebpf.VerifierError
		if errors.As(err, &verr) {
			err = fmt.Errorf("%w\n%+v", err, verr)
		}
		err = fmt.Errorf("bpf: load tc_classify: %w", err)
		if memlockErr != nil {
			err = errors.Join(err, fmt.Errorf("bpf: remove memlock rlimit: %w", memlockErr))
		}
		return nil, err
	}
	if err := c.SetMap(dscpMap); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// AttachClassifier loads the classifier with dscpMap (DSCP 0..63 ->
// priority 0..7; DSCPs it leaves out get ClassifierBestEffort, or
// ClassifierControl for ICMP) and attaches it to the egress of device
// ifindex of the calling thread's network namespace.
//
// The attachment is a TCX link owned by this process: it is detached by
// Close, and by the kernel when the process dies, however it dies. The
// tag it pushes reaches the frame's bytes only when the device's tx VLAN
// offload is off (see xdp.SetTxVLAN); otherwise it stays in the kernel's
// metadata, which AF_XDP does not carry.
func AttachClassifier(ifindex int, dscpMap map[uint8]uint8) (*Classifier, error) {
	c, err := loadClassifier(dscpMap)
	if err != nil {
		return nil, err
	}
	l, err := link.AttachTCX(link.TCXOptions{Interface: ifindex, Program: c.objs.TcClassify, Attach: ebpf.AttachTCXEgress})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("bpf: attach tcx egress on ifindex %d: %w", ifindex, err), c.Close())
	}
	c.link = l
	return c, nil
}

// SetMap replaces the DSCP map; frames in flight may see either.
func (c *Classifier) SetMap(dscpMap map[uint8]uint8) error {
	keys := make([]uint32, 64)
	vals := make([]uint8, 64)
	for d := range keys {
		keys[d], vals[d] = uint32(d), classifierUnmapped
	}
	for d, p := range dscpMap {
		if d > 63 || p > 7 {
			return fmt.Errorf("bpf: dscp map: DSCP %d -> priority %d: want DSCP 0..63, priority 0..7", d, p)
		}
		vals[d] = p
	}
	if _, err := c.objs.DscpMap.BatchUpdate(keys, vals, nil); err != nil {
		// Kernels without batch ops on arrays: one by one.
		for d := range keys {
			if err := c.objs.DscpMap.Update(keys[d], vals[d], ebpf.UpdateAny); err != nil {
				return fmt.Errorf("bpf: set dscp map: %w", err)
			}
		}
	}
	return nil
}

// Counters reads the counters, summed over CPUs (each read at a slightly
// different time).
func (c *Classifier) Counters() (ClassifierCounters, error) {
	var out ClassifierCounters
	var perCPU []tcClassifyClassCounter
	for i := 0; i <= classifierUntagged; i++ {
		if err := c.objs.ClassCounters.Lookup(uint32(i), &perCPU); err != nil {
			return out, fmt.Errorf("bpf: read class counter %d: %w", i, err)
		}
		var sum ClassCount
		for _, v := range perCPU {
			sum.Packets += v.Packets
			sum.Bytes += v.Bytes
		}
		if i == classifierUntagged {
			out.Untagged = sum
		} else {
			out.Classes[i] = sum
		}
	}
	return out, nil
}

// Attached reports whether the program is attached.
func (c *Classifier) Attached() bool { return c != nil && c.link != nil }

// Close detaches the program, if attached, and releases it and its maps;
// it returns every step's error.
func (c *Classifier) Close() error {
	var errs []error
	if c.link != nil {
		if err := c.link.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: detach tc_classify: %w", err))
		}
		c.link = nil
	}
	if err := c.objs.Close(); err != nil {
		errs = append(errs, fmt.Errorf("bpf: close tc_classify: %w", err))
	}
	c.objs = tcClassifyObjects{}
	return errors.Join(errs...)
}
