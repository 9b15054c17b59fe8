//go:build linux

// Command hostd is the host daemon (the NIC) of one BCube server. lab starts
// it inside the server's namespace with the config it wrote.
package main

import (
	"github.com/bcfab/bcfab/daemon"
	"github.com/bcfab/bcfab/hostd"
)

func main() { daemon.Main("hostd", hostd.NewDaemon) }
