package swd

import (
	"log/slog"

	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/dataplane"
)

// NewDaemon returns switch n of t as a runnable daemon: ports p0..p<n-1>,
// each shaped to the configured link rate.
func NewDaemon(cfg *dataplane.Config, t bcube.Topology, n bcube.Node, log *slog.Logger) (*dataplane.Daemon, error) {
	d := &dataplane.Daemon{Kind: "swd", Config: cfg, Log: log, Handler: NewSwitch(t, n.Level, n.Index)}
	for p := 0; p < t.N(); p++ {
		d.Ports = append(d.Ports, dataplane.DaemonPort{Ifname: bcube.SwitchPort(p), RateBps: cfg.RateBps, Delay: cfg.Delay.D(), BufferBytes: cfg.BufferBytes})
	}
	return d, nil
}
