//go:build linux

// Command xdpfwd is a bare AF_XDP forwarder between two interfaces: every
// frame received on one is transmitted on the other, by descriptor, with no
// look at its contents. It is the baseline of the datapath benchmark: what
// the project's xdp package does with no switch logic at all.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/bcfab/bcfab/bpf"
)

func main() {
	a := flag.String("a", "p0", "first `interface`")
	b := flag.String("b", "p1", "second `interface`")
	m := flag.String("xdp-mode", "native", "native, generic or auto")
	flag.Parse()
	mode, err := bpf.ParseMode(*m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "xdpfwd:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := forward(ctx, *a, *b, mode, func() { fmt.Println("ready") }); err != nil {
		fmt.Fprintln(os.Stderr, "xdpfwd:", err)
		os.Exit(1)
	}
}
