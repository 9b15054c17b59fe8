//go:build linux

// Command swd is the switch daemon of one BCube switch. lab starts it inside
// the switch's namespace with the config it wrote.
package main

import (
	"github.com/bcfab/bcfab/daemon"
	"github.com/bcfab/bcfab/swd"
)

func main() { daemon.Main("swd", swd.NewDaemon) }
