package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// StartFlow starts a generated flow at server node of lab name (hostd's
// traffic generator: it obeys flow control and never overruns its NIC).
func StartFlow(runRoot, name, node string, req api.GenRequest) (*api.GenFlow, error) {
	sock, explain, err := server(runRoot, name, node)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := controlDo(ctx, sock, http.MethodPost, "/gen", bytes.NewReader(body))
	if err != nil {
		return nil, explain(err)
	}
	var f api.GenFlow
	if err := json.Unmarshal(out, &f); err != nil {
		return nil, fmt.Errorf("%s: gen answer: %w", node, err)
	}
	return &f, nil
}

// Flows reports the generated flows of server node and what its sink
// counted.
func Flows(runRoot, name, node string) (*api.GenReport, error) {
	sock, explain, err := server(runRoot, name, node)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := controlGet(ctx, sock, "/gen")
	if err != nil {
		return nil, explain(err)
	}
	var r api.GenReport
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("%s: gen report: %w", node, err)
	}
	return &r, nil
}

// server is the control socket of server node of lab name, and a
// function that explains a request to it that failed: when the process
// hosting node is not running, that (one line for the process, whatever
// the request met), else node and err.
func server(runRoot, name, node string) (sock string, explain func(error) error, err error) {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return "", nil, err
	}
	n, ok := st.Node(node)
	if !ok || n.Kind != KindServer {
		return "", nil, fmt.Errorf("lab %s has no server %q (servers are h0..h%d)", st.Lab, node, serverCount(st.Spec)-1)
	}
	explain = func(err error) error {
		if d := hostOf(st, node); d != nil {
			return fmt.Errorf("lab %s: %w", st.Lab, d)
		}
		return fmt.Errorf("%s: %w", node, err)
	}
	return n.Control, explain, nil
}

// StartRDMA starts the one RDMA flow of req at server node of lab name
// (its NIC: a reliable-connected flow with the request's loss recovery).
func StartRDMA(runRoot, name, node string, req api.RDMARequest) (*api.RDMAFlow, error) {
	sock, explain, err := server(runRoot, name, node)
	if err != nil {
		return nil, err
	}
	fs, err := startRDMA(context.Background(), sock, []api.RDMARequest{req})
	if err != nil {
		return nil, explain(err)
	}
	return &fs[0], nil
}

// RDMAFlows reports every RDMA flow server node of lab name sent and
// received (GET /rdma).
func RDMAFlows(runRoot, name, node string) (*api.RDMAReport, error) {
	sock, explain, err := server(runRoot, name, node)
	if err != nil {
		return nil, err
	}
	r, err := rdmaFlows(sock, nil)
	if err != nil {
		return nil, explain(err)
	}
	return r, nil
}
