package lab

import (
	"context"
)

// Snapshot reads the counters of every node of lab name, a few daemons
// at a time, within ctx. A node that does not answer has its Err set;
// the error is for the lab itself (no state).
func Snapshot(ctx context.Context, runRoot, name string) ([]NodeSnapshot, error) {
	st, err := loadDefault(runRoot, name)
	if err != nil {
		return nil, err
	}
	out := make([]NodeSnapshot, len(st.Nodes))
	eachNode(st.Nodes, func(i int, n NodeState) {
		s := NodeSnapshot{Node: n.Name, Kind: n.Kind}
		s.Stats, s.Err = FetchStats(ctx, n.Control)
		if s.Err == nil && n.Kind == KindServer {
			// A daemon without a classifier (an older hostd) has no
			// /classifier: its stats stand alone.
			s.Classifier, _ = FetchClassifier(ctx, n.Control)
		}
		out[i] = s
	})
	return out, nil
}
