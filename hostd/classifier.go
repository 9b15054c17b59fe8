package hostd

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"

	"github.com/bcfab/bcfab/bpf"
	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/xdp"
)

// AttachClassifier attaches the classifier (bpf.AttachClassifier) to the
// egress of the namespace's bc0 with dscpMap (nil: config.DefaultDSCPMap):
// from then on the kernel's IPv4 frames reach the NIC tagged with the
// class their DSCP names, and the NIC keeps it (fromApp). It turns bc0's
// tx VLAN offload off first, so the tag is in the frame's bytes when the
// AF_XDP socket of bc0nic receives it. Call it in the server's namespace
// once bc0 exists; the program is a TCX link of this process, detached
// by DetachClassifier or, however the process ends, by the kernel.
func (h *Host) AttachClassifier(dscpMap config.DSCPMap) error {
	if dscpMap == nil {
		dscpMap = config.DefaultDSCPMap()
	}
	if err := xdp.SetTxVLAN(bcube.AppIf, false); err != nil {
		return fmt.Errorf("classifier: %w", err)
	}
	ifi, err := net.InterfaceByName(bcube.AppIf)
	if err != nil {
		return fmt.Errorf("classifier: %w", err)
	}
	c, err := bpf.AttachClassifier(ifi.Index, dscpMap)
	if err != nil {
		return fmt.Errorf("classifier: %w", err)
	}
	h.cls, h.clsMap = c, dscpMap
	return nil
}

// DetachClassifier detaches the classifier, if attached.
func (h *Host) DetachClassifier() error {
	if h.cls == nil {
		return nil
	}
	err := h.cls.Close()
	h.cls = nil
	return err
}

// ClassifierStats is what GET /classifier answers.
func (h *Host) ClassifierStats() api.ClassifierStats {
	s := api.ClassifierStats{Attached: h.cls.Attached(), DSCPMap: h.clsMap.String()}
	if h.cls == nil {
		return s
	}
	c, err := h.cls.Counters()
	if err != nil {
		return s
	}
	for i, cc := range c.Classes {
		s.Classes[i] = api.ClassCounters{Packets: cc.Packets, Bytes: cc.Bytes}
	}
	s.Untagged = api.ClassCounters{Packets: c.Untagged.Packets, Bytes: c.Untagged.Bytes}
	return s
}

// classifierRoutes serves GET /classifier.
func (h *Host) classifierRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /classifier", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(h.ClassifierStats())
	})
}
