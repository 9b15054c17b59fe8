//go:build linux

// Command swd is the switch daemon of one BCube switch: lab starts it inside
// the switch's namespace with the config it wrote, when each node runs in
// a process of its own (lab up --workers 0). Otherwise bcfabd hosts the
// switch on a worker with other nodes.
package main

import (
	"github.com/bcfab/bcfab/node"
	"github.com/bcfab/bcfab/swd"
)

func main() { node.Main("swd", node.Builders{Switch: swd.NewNode}) }
