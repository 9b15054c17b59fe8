//go:build linux

// Package bench measures the datapath: an AF_XDP traffic blaster, a sink
// that counts in XDP, and the orchestration that runs swd, the Linux
// bridge and the bare forwarder (cmd/xdpfwd, the xdp package with no logic
// at all) between the same namespaces in one run.
package bench

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/bcfab/bcfab/xdp"
)

// The blaster's UMEM and rings.
const (
	frameSize = 2048
	ringSize  = 512
	batchSize = 64
)

// Blast transmits copies of frame on ifname as fast as the kernel takes
// them until ctx is done, adding to *sent as it goes (read it atomically).
func Blast(ctx context.Context, ifname string, frame []byte, sent *counter) error {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	umem, err := xdp.NewUMEM(xdp.UMEMConfig{NumFrames: 2 * ringSize, FrameSize: frameSize, FillSize: ringSize, CompletionSize: ringSize})
	if err != nil {
		return err
	}
	defer umem.Close()
	s, err := umem.NewSocket(xdp.SocketConfig{Ifindex: ifi.Index, RxSize: ringSize, TxSize: ringSize, NeedWakeup: true})
	if err != nil {
		return err
	}
	defer s.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	free := make([]uint64, 0, umem.NumFrames())
	for i := 0; i < umem.NumFrames(); i++ {
		a := umem.FrameAddr(i)
		copy(umem.Frame(a, len(frame)), frame)
		free = append(free, a)
	}
	var descs [batchSize]xdp.Desc
	var addrs [batchSize]uint64
	for ctx.Err() == nil {
		n := min(batchSize, len(free), s.TxFree())
		for i := 0; i < n; i++ {
			descs[i] = xdp.Desc{Addr: free[len(free)-1-i], Len: uint32(len(frame))}
		}
		free = free[:len(free)-n]
		s.Transmit(descs[:n])
		if err := s.Kick(); err != nil {
			time.Sleep(10 * time.Microsecond)
		}
		done := 0
		for c := s.Complete(addrs[:]); c > 0; c = s.Complete(addrs[:]) {
			free = append(free, addrs[:c]...)
			done += c
		}
		sent.Add(uint64(done))
	}
	return nil
}

type counter = atomic.Uint64
