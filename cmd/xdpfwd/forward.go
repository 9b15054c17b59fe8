//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"

	"github.com/bcfab/bcfab/bpf"
	"github.com/bcfab/bcfab/xdp"
)

// The forwarder's UMEM and rings.
const (
	frameSize = 2048
	ringSize  = 512
	batchSize = 64
)

// forward is the baseline the switch is compared against: frames received
// on a are transmitted on b and vice versa, by descriptor, through one
// shared UMEM, with nothing looked at. It returns when ctx is done.
func forward(ctx context.Context, ifA, ifB string, mode bpf.Mode, ready func()) error {
	umem, err := xdp.NewUMEM(xdp.UMEMConfig{NumFrames: 4096, FrameSize: frameSize, FillSize: ringSize, CompletionSize: ringSize})
	if err != nil {
		return err
	}
	defer umem.Close()
	var socks [2]*xdp.Socket
	for i, name := range []string{ifA, ifB} {
		s, prog, err := openPort(umem, name, mode)
		if err != nil {
			return err
		}
		defer prog.Close()
		defer s.Close()
		socks[i] = s
	}
	w, err := xdp.NewPoller(2)
	if err != nil {
		return err
	}
	defer w.Close()
	for i, s := range socks {
		if err := w.Add(s.FD(), int32(i)); err != nil {
			return err
		}
	}
	var readable []int32
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	stop := context.AfterFunc(ctx, w.Wake)
	defer stop()

	free := make([]uint64, 0, umem.NumFrames())
	for i := 0; i < umem.NumFrames(); i++ {
		free = append(free, umem.FrameAddr(i))
	}
	var descs [batchSize]xdp.Desc
	var addrs [batchSize]uint64
	fill := func(s *xdp.Socket) {
		n := min(s.FillFree(), len(free))
		n = s.Fill(free[len(free)-n:])
		free = free[:len(free)-n]
	}
	fill(socks[0])
	fill(socks[1])
	if ready != nil {
		ready()
	}
	for ctx.Err() == nil {
		moved := 0
		for i, in := range socks {
			out := socks[1-i]
			n := in.Receive(descs[:min(batchSize, out.TxFree())])
			if n > 0 {
				out.Transmit(descs[:n])
				_ = out.Kick()
				moved += n
			}
		}
		for _, s := range socks {
			for n := s.Complete(addrs[:]); n > 0; n = s.Complete(addrs[:]) {
				for _, a := range addrs[:n] {
					free = append(free, umem.Base(a))
				}
			}
			fill(s)
		}
		if moved == 0 {
			if readable, err = w.Wait(-1, readable[:0]); err != nil {
				return err
			}
		}
	}
	return nil
}

// openPort attaches the redirect program to name and binds a socket.
func openPort(umem *xdp.UMEM, name string, mode bpf.Mode) (*xdp.Socket, *bpf.Program, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, nil, fmt.Errorf("xdpfwd: %w", err)
	}
	prog, err := bpf.Load()
	if err != nil {
		return nil, nil, err
	}
	if _, err := prog.Attach(ifi.Index, mode); err != nil {
		return nil, nil, errors.Join(err, prog.Close())
	}
	s, err := umem.NewSocket(xdp.SocketConfig{Ifindex: ifi.Index, RxSize: ringSize, TxSize: ringSize, NeedWakeup: true})
	if err != nil {
		return nil, nil, errors.Join(err, prog.Close())
	}
	if err := prog.Register(0, s.FD()); err != nil {
		return nil, nil, errors.Join(err, s.Close(), prog.Close())
	}
	return s, prog, nil
}
