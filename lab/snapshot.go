package lab

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/bcfab/bcfab/api"
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
	b, err := controlGet(ctx, sock, "/classifier")
	if err != nil {
		return nil, err
	}
	var c api.ClassifierStats
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("classifier from %s: %w", sock, err)
	}
	return &c, nil
}
