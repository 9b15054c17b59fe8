//go:build linux

// Command bcfabd is a worker of a lab: one process whose engine thread
// hosts many nodes — switches (swd's logic) and servers (hostd's) — each
// still in its own namespace with its own veths, AF_XDP sockets, XDP
// programs, control socket and counters. lab starts one per worker (lab
// up --workers N) as
//
//	bcfabd --worker <run dir>/w<i>.json
//
// from the root namespace; it enters each node's namespace to bring it
// up.
package main

import (
	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/node"
	"github.com/bcfab/bcfab/swd"
)

func main() {
	node.Main("bcfabd", node.Builders{Switch: swd.NewNode, Server: hostd.NewNode})
}
