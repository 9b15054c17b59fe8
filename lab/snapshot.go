package lab

import (
	"context"
	"fmt"
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// NodeSnapshot is one node's counters at one moment: its daemon's GET
// /stats and, for a server, GET /classifier (the bc0 classifier's); Err
// says why they are missing.
type NodeSnapshot struct {
	Node       string
	Kind       string
	Stats      *api.Stats
	Classifier *api.ClassifierStats
	Err        error
}

// FetchClassifier reads GET /classifier from the server daemon at control
// socket sock.
func FetchClassifier(ctx context.Context, sock string) (*api.ClassifierStats, error) {
	return controlJSON[api.ClassifierStats](ctx, sock, "/classifier")
}

// Classifier fetches GET /classifier from server node of lab name.
func Classifier(runRoot, name, node string) (*api.ClassifierStats, error) {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return nil, err
	}
	n, ok := st.Node(node)
	if !ok || n.Kind != KindServer {
		return nil, fmt.Errorf("lab %s has no server %q", st.Lab, node)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := FetchClassifier(ctx, n.Control)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", node, err)
	}
	return c, nil
}
