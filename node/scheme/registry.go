package scheme

import (
	"fmt"
	"strings"

	"github.com/bcfab/bcfab/node/config"
)

// registry is every scheme a node can run, and the names that stand for
// one: the lossy transports, which run without flow control. A scheme's
// row says what it is, how a node makes it from its config, and what
// the words after its name (variants: "bfc:hash:8") set. Adding a scheme
// is a file of its own and a row here.
var registry = []entry{
	{name: NameNone, forms: []string{NameNone + ":drr"}, about: "no flow control: a frame that finds the buffer full is dropped",
		make: newNone, describe: describeNone, variant: relayVariant, knobs: relayKnobs, graph: true},
	{name: NamePortFC, forms: []string{NamePortFC + ":drr"}, about: "PortFC: per-port pauses of A and B classes, relayed by servers",
		make: newPortFC, describe: describePortFC, variant: relayVariant, knobs: relayKnobs, pauses: true},
	{name: NamePFC, about: "PFC (802.1Qbb): per-priority pauses, all data in one lossless priority",
		make: newPFC(false), describe: describePFC(false), pauses: true, overPFC: true, graph: true},
	{name: NamePFCStar, about: "PFC*: PFC with the priority raised by one at every relay",
		make: newPFC(true), describe: describePFC(true), pauses: true, overPFC: true},
	{name: NameBFC, forms: []string{NameBFC + ":Q", NameBFC + ":hash", NameBFC + ":hash:Q"}, about: "BFC: per-flow dynamic queues, upstream queues paused",
		make: newBFC, describe: describeBFC, variant: bfcVariant, knobs: bfcKnobs, pauses: true, graph: true},
	{name: NameICI, about: "ICI: congestion isolation over PFC, ECN marking coordinated with it (victims unmarked)",
		make: newCI(true), describe: describeCI(true), pauses: true, overPFC: true, graph: true},
	{name: NameCI, about: "CI: congestion isolation over PFC, DCQCN marking uncoordinated",
		make: newCI(false), describe: describeCI(false), pauses: true, overPFC: true, graph: true},
	{name: NameIdealFQ, about: "Ideal-FQ: a queue per flow at every egress, round robin by bytes, a buffer no flow fills; no pauses",
		make: newIdealFQ, describe: describeIdealFQ, graph: true, unbounded: true},
	{name: NameSFQ, forms: []string{NameSFQ + ":Q"}, about: "SFQ: flows hashed onto Q queues at every egress, round robin by bytes, a buffer no flow fills; no pauses",
		make: newSFQ, describe: describeSFQ, variant: sfqVariant, knobs: sfqKnobs, graph: true, unbounded: true},
	{name: NameIRN, forms: []string{NameIRN + ":drr"}, is: NameNone, transport: NameIRN, about: "IRN: no flow control, selective retransmission",
		variant: relayVariant, knobs: relayKnobs},
	{name: NameGBN, forms: []string{NameGBN + ":drr"}, is: NameNone, transport: NameGBN, about: "Go-Back-N: no flow control, go-back-N retransmission",
		variant: relayVariant, knobs: relayKnobs},
}

// The names of the registered schemes, and of the lossy transports
// that stand for none (the registry's rows).
const (
	NameNone    = "none"
	NamePortFC  = "portfc"
	NamePFC     = "pfc"
	NamePFCStar = "pfcstar"
	NameBFC     = "bfc"
	NameICI     = "ici"
	NameCI      = "ci"
	NameIdealFQ = "ideal-fq"
	NameSFQ     = "sfq"
	NameIRN     = "irn"
	NameGBN     = "gbn"
)

// entry is one row of the registry.
type entry struct {
	name  string
	about string
	// forms are the name's variants as help lists them.
	forms []string
	// make builds the scheme of the node c describes, at place p; it
	// checks the parts of c the scheme reads.
	make func(c *config.Node, p Place) (Scheme, error)
	// describe says what the scheme does with c's settings, and its
	// thresholds as the nodes' configs have them (perLevel).
	describe func(c *config.Node, perLevel PerLevel) string
	// pauses: the scheme pauses its neighbours.
	pauses bool
	// overPFC: the scheme pauses as PFC (802.1Qbb) does, per priority
	// (PFC, PFC* and congestion isolation over PFC).
	overPFC bool
	// graph: the scheme runs on a fabric given as a graph
	// (config.Node.Fabric), whose switches meet and whose servers do not
	// relay; PortFC's classes and PFC*'s priorities follow BCube's
	// relays. BFC and congestion isolation need only a frame's in and
	// out ports and its flow, which every switch has.
	graph bool
	// variant sets the knob one variant word names (known false: the
	// scheme has no such variant); knobs keeps, of a lab's knobs, those
	// the scheme reads.
	variant func(k *Knobs, word string) (known bool, err error)
	knobs   func(k Knobs) Knobs
	// unbounded: the scheme's nodes have a buffer no flow fills (all of
	// their UMEM; Unbounded), so it needs no flow control to be
	// lossless, and a drop is a failure of the run.
	unbounded bool
	// is and transport: the name stands for scheme is, whose flows
	// recover losses by transport.
	is, transport string
}

func lookup(name string) *entry {
	for i := range registry {
		if registry[i].name == name {
			return &registry[i]
		}
	}
	return nil
}

// Default is the scheme of a node whose config names none.
const Default = NameNone

// New makes the scheme c names (c.FC; empty: Default) for the node at
// place p: it checks what c sets of it and resolves its defaults,
// thresholds and layout, and that c's DRR weights fit the layout (the
// node sets its ports' quanta from them: queues.EgressConfig.Weighted).
// The scheme is bound to the node's datapath later (Bind).
func New(c *config.Node, p Place) (Scheme, error) {
	name := c.FC
	if name == "" {
		name = Default
	}
	e := lookup(name)
	if e == nil || e.make == nil {
		return nil, fmt.Errorf("config for %s: fc %q: want %s", c.Node, c.FC, orList(Names()))
	}
	if c.Fabric != nil && !e.graph {
		return nil, fmt.Errorf("config for %s: fc %s runs on BCube fabrics, whose servers relay; on %s want %s", c.Node, name, c.Fabric.Topology, orList(GraphNames()))
	}
	s, err := e.make(c, p)
	if err == nil {
		err = checkWeights(c, s, p)
	}
	if err != nil {
		return nil, fmt.Errorf("config for %s: %w", c.Node, err)
	}
	return s, nil
}

// Names are the schemes a node runs (config.Node.FC), in the registry's
// order.
func Names() []string {
	var out []string
	for _, e := range registry {
		if e.make != nil {
			out = append(out, e.name)
		}
	}
	return out
}

// GraphNames are the schemes a node of a fabric given as a graph runs
// (config.Node.Fabric), in the registry's order.
func GraphNames() []string {
	var out []string
	for _, e := range registry {
		if e.make != nil && e.graph {
			out = append(out, e.name)
		}
	}
	return out
}

// Forms are every name ParseName takes, variants as patterns
// ("bfc:Q"), in the registry's order.
func Forms() []string {
	var out []string
	for _, e := range registry {
		out = append(out, e.name)
		out = append(out, e.forms...)
	}
	return out
}

// About is a line on what scheme name is ("" for a name not
// registered).
func About(name string) string {
	if e := lookup(name); e != nil {
		return e.about
	}
	return ""
}

// List is Names as a sentence: "none, portfc, pfc, pfcstar, bfc, ici or ci".
func List() string { return orList(Names()) }

// Pauses reports whether scheme name (empty: Default) pauses its
// neighbours: whether a lab of it has pauses to show.
func Pauses(name string) bool {
	if name == "" {
		name = Default
	}
	e := lookup(name)
	return e != nil && e.pauses
}

// OverPFC reports whether scheme name pauses as PFC (802.1Qbb) does,
// per priority: PFC, PFC* and congestion isolation over PFC.
func OverPFC(name string) bool {
	e := lookup(name)
	return e != nil && e.overPFC
}

// Unbounded reports whether scheme name's nodes have a buffer no flow
// fills (ideal-fq, sfq): a lab gives them all of their UMEM as buffer,
// and a run of theirs with any drop is invalid.
func Unbounded(name string) bool {
	e := lookup(name)
	return e != nil && e.unbounded
}

// Describe says what the scheme c names does with c's settings, and the
// thresholds its nodes run with (perLevel reads them from their
// configs), for a lab's summary.
func Describe(c *config.Node, perLevel PerLevel) string {
	name := c.FC
	if name == "" {
		name = Default
	}
	e := lookup(name)
	if e == nil || e.describe == nil {
		return name
	}
	return e.describe(c, perLevel)
}

// Named is a scheme as an experiment or a flag names it: a registered
// scheme with its variants after colons ("bfc:hash:8", "portfc:drr"), or
// a name that stands for one (the lossy transports "irn" and "gbn": no
// flow control).
type Named struct {
	// FC is the scheme a node runs (config.Node.FC).
	FC string
	// Transport is the loss recovery the name implies for the flows
	// ("irn", "gbn"), or "" when it implies none.
	Transport string
	// Knobs are what the variants set (zero: not named).
	Knobs Knobs
	e     *entry
}

// ParseName reads a scheme's name with its variants.
func ParseName(s string) (Named, error) {
	base, rest, hasRest := strings.Cut(s, ":")
	e := lookup(base)
	if e == nil {
		return Named{}, fmt.Errorf("scheme %q: flow control %q: want %s", s, base, orList(Forms()))
	}
	n := Named{FC: e.name, Transport: e.transport, e: e}
	if e.is != "" {
		n.FC = e.is
	}
	if !hasRest {
		return n, nil
	}
	for _, w := range strings.Split(rest, ":") {
		known, err := false, error(nil)
		if e.variant != nil {
			known, err = e.variant(&n.Knobs, w)
		}
		switch {
		case !known:
			return Named{}, fmt.Errorf("scheme %q: %s has no variant %q: only %s have variants", s, base, w, orList(withVariants()))
		case err != nil:
			return Named{}, fmt.Errorf("scheme %q: %w", s, err)
		}
	}
	return n, nil
}

// Over is a lab's knobs base as n's scheme takes them: the knobs it
// does not read cleared, those n's variants name set.
func (n Named) Over(base Knobs) Knobs {
	var k Knobs
	if n.e != nil && n.e.knobs != nil {
		k = n.e.knobs(base)
	}
	if n.Knobs.BFCQueues != 0 {
		k.BFCQueues = n.Knobs.BFCQueues
	}
	if n.Knobs.BFCAssign != "" {
		k.BFCAssign = n.Knobs.BFCAssign
	}
	if n.Knobs.RelayQueue != "" {
		k.RelayQueue = n.Knobs.RelayQueue
	}
	return k
}

// withVariants are the schemes whose names take variants, with theirs.
func withVariants() []string {
	var out []string
	for _, e := range registry {
		if e.variant != nil {
			out = append(out, fmt.Sprintf("%s (%s)", e.name, strings.Join(e.forms, ", ")))
		}
	}
	return out
}

// orList is "a, b or c".
func orList(w []string) string {
	if len(w) < 2 {
		return strings.Join(w, "")
	}
	return strings.Join(w[:len(w)-1], ", ") + " or " + w[len(w)-1]
}
