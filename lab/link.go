package lab

import (
	"fmt"

	"github.com/bcfab/bcfab/node/api"
)

// Every fabric port's XDP program can drop what the port receives, on
// purpose: at random (loss, in frames per million) or all of it (link
// down). A cable has a program at each end, each impairing one direction.
// A daemon serves its ports' state on GET /link and changes one port on
// POST /link (api.LinkRequest); SetLink drives both ends of a cable.

// LinkDir selects the directions of a cable SetLink changes, as seen from
// the node it names.
type LinkDir string

const (
	// DirBoth is both directions (the default).
	DirBoth LinkDir = "both"
	// DirRx is what the node receives on the port: impaired at the node.
	DirRx LinkDir = "rx"
	// DirTx is what the node sends on the port: impaired where the peer
	// receives it.
	DirTx LinkDir = "tx"
)

// ParseLinkDir parses both, rx or tx; "" is both.
func ParseLinkDir(s string) (LinkDir, error) {
	switch d := LinkDir(s); d {
	case "":
		return DirBoth, nil
	case DirBoth, DirRx, DirTx:
		return d, nil
	}
	return "", fmt.Errorf("link direction %q: want both, rx (what the node receives) or tx (what it sends)", s)
}

// LinkConfig is a change to the impairment of a cable. A nil field keeps
// its value, so a LinkConfig with neither changes nothing and SetLink only
// reports.
type LinkConfig struct {
	// LossPPM drops that many of each million frames, at random, in each
	// direction selected (ParseLoss reads "1%").
	LossPPM *int
	// Down drops every frame in each direction selected.
	Down *bool
	// Dir selects the directions ("": DirBoth).
	Dir LinkDir
}

// LinkEnd is one end of a cable and what its XDP program does to the
// frames it receives from the other end.
type LinkEnd struct {
	Node string `json:"node"`
	api.LinkState
	// From is the other end, "<node> <port>": who sends the frames.
	From string `json:"from"`
	// Changed: SetLink changed this end.
	Changed bool `json:"changed,omitempty"`
}

func (e LinkEnd) String() string {
	s := fmt.Sprintf("%s %s (from %s): loss %s", e.Node, e.Port, e.From, FormatLoss(e.LossPPM))
	if e.Down {
		return s + ", down"
	}
	return s + ", up"
}
