//go:build linux

// Command hostd is the host daemon (the NIC) of one BCube server: lab starts
// it inside the server's namespace with the config it wrote, when each node
// runs in a process of its own (lab up --workers 0). Otherwise bcfabd hosts
// the server on a worker with other nodes.
package main

import (
	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/node"
)

func main() { node.Main("hostd", node.Builders{Server: hostd.NewNode}) }
