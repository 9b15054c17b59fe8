//go:build linux

package swd

import (
	"log/slog"

	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/dataplane"
)

// NewDaemon returns switch n of t as a runnable daemon: ports p0..p<n-1>,
// each with the queues of cfg.Queueing and shaped to the link rate.
func NewDaemon(cfg *dataplane.Config, t bcube.Topology, n bcube.Node, log *slog.Logger) (*dataplane.Daemon, error) {
	policy, err := t.ParsePolicy(cfg.LevelOrder)
	if err != nil {
		return nil, err
	}
	qc, err := dataplane.SwitchEgress(t, cfg.Queueing, cfg.BFCQueues)
	if err != nil {
		return nil, err
	}
	qc.ECN = cfg.ECN()
	sw := NewSwitch(t, n.Level, n.Index, policy, cfg.Queueing)
	switch {
	case cfg.FC == dataplane.FCPortFC:
		sw.EnablePortFC(cfg.Thresholds())
	case dataplane.IsPFC(cfg.FC):
		sw.EnablePFC(cfg.PFCThresholds(), cfg.RateBps)
	case cfg.FC == dataplane.FCBFC:
		sw.EnableBFC(cfg.BFC())
	}
	d := &dataplane.Daemon{Kind: "swd", Config: cfg, Log: log, Handler: sw}
	for p := 0; p < t.N(); p++ {
		d.Ports = append(d.Ports, dataplane.DaemonPort{Ifname: bcube.SwitchPort(p), RateBps: cfg.RateBps, Delay: cfg.Delay.D(),
			CapBytes: cfg.PortCapBytes, Queues: qc})
	}
	return d, nil
}
