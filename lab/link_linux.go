package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
)

// SetLink changes the impairment of the cable at node's port in lab name
// (runRoot "" means DefaultRunRoot) as c says, and returns both ends
// after the change, node's first. Both daemons are asked for their state
// before anything changes; if the second end refuses the change, the
// first is put back, so a SetLink that fails leaves the cable as it was.
func SetLink(runRoot, name, node, port string, c LinkConfig) ([]LinkEnd, error) {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return nil, err
	}
	peerOf, err := st.Spec.PeerFunc()
	if err != nil {
		return nil, err
	}
	self, ok := st.Node(node)
	if !ok {
		switches := "s<level>.<index>"
		if st.Spec.Fabric != nil {
			switches = "and its switches"
		}
		return nil, fmt.Errorf("lab %s has no node %q (%s: h0..h%d, %s)",
			st.Lab, node, topoString(st.Spec), serverCount(st.Spec)-1, switches)
	}
	peer, peerPort, ok := peerOf(node, port)
	if !ok {
		if port == bcube.AppPeerIf || port == bcube.AppIf {
			return nil, fmt.Errorf("%s %s is the server's application port: it stands for the server's own bus and has no cable to impair", node, port)
		}
		return nil, fmt.Errorf("%s has no fabric port %q (%s)", node, port, portRange(st.Spec.NodePorts(node)))
	}
	other, ok := st.Node(peer)
	if !ok {
		return nil, fmt.Errorf("lab %s has no node %s, the peer of %s %s", st.Lab, peer, node, port)
	}
	dir, err := ParseLinkDir(string(c.Dir))
	if err != nil {
		return nil, err
	}
	if c.LossPPM != nil && (*c.LossPPM < 0 || *c.LossPPM > config.MaxLossPPM) {
		return nil, fmt.Errorf("loss %d ppm: want 0..%d", *c.LossPPM, config.MaxLossPPM)
	}
	ends := []struct {
		node, port, sock string
	}{{node, port, self.Control}, {peer, peerPort, other.Control}}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var states [2]api.LinkState
	for i, e := range ends {
		if states[i], err = getLink(ctx, e.sock, e.port); err != nil {
			return nil, fmt.Errorf("%s: %w", e.node, err)
		}
	}
	var change []int
	if c.LossPPM != nil || c.Down != nil {
		switch dir {
		case DirBoth:
			change = []int{0, 1}
		case DirRx:
			change = []int{0}
		case DirTx:
			change = []int{1}
		}
	}
	old := states
	var changed [2]bool
	for _, i := range change {
		e := ends[i]
		ls, err := postLink(ctx, e.sock, api.LinkRequest{Port: e.port, LossPPM: c.LossPPM, Down: c.Down})
		if err != nil {
			err = fmt.Errorf("%s: %w", e.node, err)
			for j := range changed {
				if changed[j] {
					o := old[j]
					if _, rerr := postLink(ctx, ends[j].sock, api.LinkRequest{Port: o.Port, LossPPM: &o.LossPPM, Down: &o.Down}); rerr != nil {
						err = errors.Join(err, fmt.Errorf("put %s %s back: %w", ends[j].node, ends[j].port, rerr))
					}
				}
			}
			return nil, err
		}
		states[i], changed[i] = ls, true
	}
	return []LinkEnd{
		{Node: node, LinkState: states[0], From: peer + " " + peerPort, Changed: changed[0]},
		{Node: peer, LinkState: states[1], From: node + " " + port, Changed: changed[1]},
	}, nil
}

// getLink reads the state of port from GET /link on the daemon at sock.
func getLink(ctx context.Context, sock, port string) (api.LinkState, error) {
	b, err := controlGet(ctx, sock, "/link")
	if err != nil {
		return api.LinkState{}, err
	}
	var all []api.LinkState
	if err := json.Unmarshal(b, &all); err != nil {
		return api.LinkState{}, fmt.Errorf("link state from %s: %w", sock, err)
	}
	for _, ls := range all {
		if ls.Port == port {
			return ls, nil
		}
	}
	return api.LinkState{}, fmt.Errorf("daemon at %s reports no port %s", sock, port)
}

// postLink applies r with POST /link on the daemon at sock and returns the
// port's new state.
func postLink(ctx context.Context, sock string, r api.LinkRequest) (api.LinkState, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return api.LinkState{}, err
	}
	b, err := controlDo(ctx, sock, http.MethodPost, "/link", bytes.NewReader(body))
	if err != nil {
		return api.LinkState{}, err
	}
	var ls api.LinkState
	if err := json.Unmarshal(b, &ls); err != nil {
		return api.LinkState{}, fmt.Errorf("link state from %s: %w", sock, err)
	}
	return ls, nil
}

// portRange names a node's fabric ports as a range, p0..p3 (none: "none").
func portRange(ports []string) string {
	switch len(ports) {
	case 0:
		return "none"
	case 1:
		return ports[0]
	}
	return ports[0] + ".." + ports[len(ports)-1]
}
