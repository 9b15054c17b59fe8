//go:build linux

package hostd

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/wire/transport"
	"github.com/bcfab/bcfab/xdp"
)

// NewNode returns server n of t as a node to run: fabric ports
// eth0..eth<k> shaped to the link rate, and the application port bc0nic,
// unshaped (it stands for the server's PCIe bus, not a link). Fabric ports
// have the queues of its flow-control scheme (cfg.FC), their DRR quanta
// of cfg.DRRWeights.
//
// A server of a fabric given as a graph (cfg.Fabric) is a server of
// bcube.Star: one port, eth0, to the switch the fabric names (its MACs
// are the fabric's), every other server behind it, nothing relayed (a
// frame for another server that arrives on eth0 is a hairpin, dropped
// and counted).
func NewNode(cfg *config.Node, t bcube.Topology, n bcube.Node, log *slog.Logger) (*node.Spec, error) {
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
	host := NewHost(t, n.Index, policy, fc)
	if policy.ATE {
		if err := host.EnableATE(cfg.ATEP, cfg.ATECap()); err != nil {
			return nil, err
		}
	}
	// The lab's congestion control is every flow's unless its request
	// names another.
	cc, err := cfg.TransportCC()
	if err != nil {
		return nil, err
	}
	if err := host.SetNICQueue(int(cfg.Model().Target.NICQueueBytes)); err != nil {
		return nil, err
	}
	hp := TransportParams(cfg.Model(), cfg.RateBps)
	hp.SetCC(cc)
	if err := host.SetTransport(hp); err != nil {
		return nil, err
	}
	// Flows take their port's line rate and their path's bottleneck BDP
	// (a Rail-only server's ports differ).
	var ports []transport.Params
	for l := 0; l < t.Levels(); l++ {
		p := TransportParams(cfg.Model(), cfg.PortRate(bcube.HostPort(l)))
		p.SetCC(cc)
		ports = append(ports, p)
	}
	if err := host.SetPortTransport(ports); err != nil {
		return nil, err
	}
	d := &node.Spec{Kind: "hostd", Config: cfg, Log: log, Handler: host, Routes: host.routes, HostStats: host.HostStats}
	for l := 0; l < t.Levels(); l++ {
		name := bcube.HostPort(l)
		pq := qc
		pq.ECN = cfg.PortECN(name) // scaled to the port's own rate
		w, p := t.SwitchOf(n.Index, l)
		own, peer := bcube.HostPortMAC(n.Index, l), bcube.SwitchPortMAC(l, w, p)
		if cfg.Fabric != nil {
			own, peer = cfg.Fabric.Ports[l].MACs()
			host.own[l], host.sw[l] = own, peer
		}
		d.Ports = append(d.Ports, node.Port{Ifname: name, RateBps: cfg.PortRate(name), Delay: cfg.LinkDelay(),
			CapBytes: cfg.PortCapBytes, Queues: pq,
			MAC: own, PeerMAC: peer, MaxDelay: cfg.Model().LinkDelay()})
	}
	// The application port is the server's own bus to its kernel: one
	// queue, unshaped.
	d.Ports = append(d.Ports, node.Port{Ifname: bcube.AppPeerIf, CapBytes: cfg.PortCapBytes})
	d.Setup = func() error {
		// The kernel would leave TCP/UDP checksums to an offload that
		// AF_XDP never performs.
		if err := xdp.SetTxChecksum(bcube.AppIf, false); err != nil {
			return fmt.Errorf("turn off tx checksum offload on %s: %w", bcube.AppIf, err)
		}
		// What hostd delivers is taken up by the kernel in batches (GRO)
		// on a NAPI thread of its own, not inside hostd's sendto: the
		// host's network stack must not eat the NIC's time.
		if err := xdp.SetGRO(bcube.AppIf, true); err != nil {
			return fmt.Errorf("turn on gro on %s: %w", bcube.AppIf, err)
		}
		if err := os.WriteFile("/sys/class/net/"+bcube.AppIf+"/threaded", []byte("1"), 0); err != nil {
			log.Warn("threaded NAPI on bc0 not available; the kernel's receive runs in hostd's context", "err", err)
		}
		if err := host.AttachClassifier(cfg.DSCPMap); err != nil {
			log.Warn("no classifier on bc0: kernel traffic rides priority 3, ICMP 6 (lab stats shows it)", "err", err)
		}
		return nil
	}
	d.Teardown = host.DetachClassifier
	return d, nil
}

// routes serves the traffic generator: POST /gen starts a flow (a
// GenRequest), GET /gen reports flows and the sink; and RDMA: POST /rdma
// starts flows (an RDMARequest; the answer lists them), POST /rdma/batch
// starts or schedules those of a list of requests, GET /rdma[?id=1,2]
// reports them (all, with the receivers, without ids), DELETE
// /rdma?id=1,2 aborts them, POST /rdma/stop?id=1,2 ends timed and
// until-stopped ones as their time would; GET /classifier reports the bc0
// classifier.
// serveStart serves POST /rdma, one RDMARequest, or with batch POST
// /rdma/batch, a list of them: unknown fields are refused, and the answer
// lists the flows.
func (h *Host) serveStart(batch bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		reqs := make([]api.RDMARequest, 1)
		var err error
		if batch {
			err = dec.Decode(&reqs)
		} else {
			err = dec.Decode(&reqs[0])
		}
		if err != nil {
			http.Error(w, "rdma: "+err.Error(), http.StatusBadRequest)
			return
		}
		fs, err := h.StartRDMABatch(reqs)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, fs)
	}
}

func (h *Host) routes(mux *http.ServeMux) {
	h.classifierRoutes(mux)
	mux.HandleFunc("POST /rdma", h.serveStart(false))
	mux.HandleFunc("POST /rdma/batch", h.serveStart(true))
	mux.HandleFunc("GET /rdma", func(w http.ResponseWriter, r *http.Request) {
		ids, err := parseIDs(r.URL.Query().Get("id"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, h.RDMA(ids))
	})
	mux.HandleFunc("POST /rdma/stop", func(w http.ResponseWriter, r *http.Request) {
		ids, err := parseIDs(r.URL.Query().Get("id"))
		if err == nil && len(ids) == 0 {
			err = errors.New("rdma: name the flows to stop: ?id=1,2")
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, map[string]int{"stopping": h.StopRDMA(ids)})
	})
	mux.HandleFunc("DELETE /rdma", func(w http.ResponseWriter, r *http.Request) {
		ids, err := parseIDs(r.URL.Query().Get("id"))
		if err == nil && len(ids) == 0 {
			err = errors.New("rdma: name the flows to stop: ?id=1,2")
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, map[string]int{"stopped": h.AbortRDMA(ids)})
	})
	mux.HandleFunc("POST /gen", func(w http.ResponseWriter, r *http.Request) {
		var req api.GenRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "gen: "+err.Error(), http.StatusBadRequest)
			return
		}
		f, err := h.StartFlow(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(f)
	})
	mux.HandleFunc("GET /gen", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(h.Flows())
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
