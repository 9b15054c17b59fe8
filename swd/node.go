//go:build linux

package swd

import (
	"fmt"
	"log/slog"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

// NewNode returns switch n of t as a node to run: ports p0..p<n-1>,
// each with the queues of its flow-control scheme (cfg.FC), their DRR
// quanta of cfg.DRRWeights, and shaped to the link rate.
//
// A switch of a fabric given as a graph (cfg.Fabric) forwards by its
// tables instead (TableSwitch), its ports those the fabric names.
func NewNode(cfg *config.Node, t bcube.Topology, n bcube.Node, log *slog.Logger) (*node.Spec, error) {
	if cfg.Fabric != nil {
		return newTableNode(cfg, log)
	}
	policy, err := t.ParsePolicy(cfg.LevelOrder)
	if err != nil {
		return nil, err
	}
	fc, err := scheme.New(cfg, scheme.Place{T: t, Node: n, Policy: policy})
	if err != nil {
		return nil, err
	}
	qc, err := fc.Egress().Weighted(cfg.DRRWeights)
	if err != nil {
		return nil, fmt.Errorf("config for %s: drr_weights: %w", cfg.Node, err) // scheme.New checked them
	}
	sw := NewSwitch(t, n.Level, n.Index, fc)
	d := &node.Spec{Kind: "swd", Config: cfg, Log: log, Handler: sw}
	for p := 0; p < t.N(); p++ {
		name := bcube.SwitchPort(p)
		pq := qc
		pq.ECN = cfg.PortECN(name) // scaled to the port's own rate
		peer := t.ServerAt(n.Level, n.Index, p)
		d.Ports = append(d.Ports, node.Port{Ifname: name, RateBps: cfg.PortRate(name), Delay: cfg.LinkDelay(),
			CapBytes: cfg.PortCapBytes, Queues: pq,
			MAC: bcube.SwitchPortMAC(n.Level, n.Index, p), PeerMAC: bcube.HostPortMAC(peer, n.Level), MaxDelay: cfg.Model().LinkDelay()})
	}
	return d, nil
}

// newTableNode returns the switch of a graph fabric that cfg describes.
func newTableNode(cfg *config.Node, log *slog.Logger) (*node.Spec, error) {
	fc, err := scheme.New(cfg, scheme.Place{Node: bcube.Node{Switch: true}})
	if err != nil {
		return nil, err
	}
	sw, err := NewTableSwitch(cfg.Fabric, fc)
	if err != nil {
		return nil, err
	}
	qc, err := fc.Egress().Weighted(cfg.DRRWeights)
	if err != nil {
		return nil, fmt.Errorf("config for %s: drr_weights: %w", cfg.Node, err)
	}
	d := &node.Spec{Kind: "swd", Config: cfg, Log: log, Handler: sw}
	for _, p := range cfg.Fabric.Ports {
		pq := qc
		pq.ECN = cfg.PortECN(p.Name)
		own, peer := p.MACs()
		d.Ports = append(d.Ports, node.Port{Ifname: p.Name, RateBps: cfg.PortRate(p.Name), Delay: cfg.LinkDelay(),
			CapBytes: cfg.PortCapBytes, Queues: pq, MAC: own, PeerMAC: peer, MaxDelay: cfg.Model().LinkDelay()})
	}
	return d, nil
}
