package workload

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Kind says which part of a workload a flow belongs to.
type Kind string

// The kinds of flows. KindPS and KindMoE are also the two Pattern kinds.
const (
	KindPoisson Kind = "poisson" // background: Poisson arrivals, random pairs (or a permutation), sizes from the CDF
	KindIncast  Kind = "incast"  // N-to-1 incast
	KindPS      Kind = "ps"      // parameter server: push to the server, broadcast back
	KindMoE     Kind = "moe"     // mixture of experts: dispatch to experts, combine back
	KindLong    Kind = "long"    // a long flow through the whole run
)

// ParseKind accepts the names of the kinds.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case KindPoisson, KindIncast, KindPS, KindMoE, KindLong:
		return k, nil
	}
	return "", fmt.Errorf("flow kind %q: want poisson, incast, ps, moe or long", s)
}

// Flow is one flow of a schedule: Size bytes from host Src to host Dst,
// started Start after the run starts.
type Flow struct {
	// ID is the flow's index in the schedule Generate returns; flows are
	// in order of Start.
	ID    int           `json:"id"`
	Src   int           `json:"src"`
	Dst   int           `json:"dst"`
	Size  int64         `json:"size"`
	Start time.Duration `json:"start_ns"`
	Kind  Kind          `json:"kind"`
	// Group numbers the incast or pattern event a flow belongs to, from
	// 1, in order of the events' start; 0 for Poisson flows.
	Group int `json:"group,omitempty"`
	// Phase is 0 for an incast and a pattern's first phase (push,
	// dispatch), 1 for a pattern's second (broadcast, combine); 0 for
	// Poisson flows.
	Phase int `json:"phase,omitempty"`
	// After, if not 0, is the group whose phase-0 flows must all have
	// ended (completed or failed) before this flow starts, and it
	// starts no earlier than Start: a pattern's second phase under
	// Pattern.Wait. A runner that never sees them end never starts it.
	After int `json:"after,omitempty"`
	// Lose lists packets of the flow, by index from 0 in the order of
	// their first transmissions, whose first transmission its NIC drops
	// on purpose (api.RDMARequest.Lose): a hand-made schedule's
	// deterministic loss, for a Go-Back-N or IRN run. Generate never
	// sets it.
	Lose []int `json:"lose,omitempty"`
}

// Basis is the per-host capacity that Config.Load is a fraction of.
type Basis int

const (
	// PerLink: a host's capacity is one host link (the default; see the
	// package documentation for why).
	PerLink Basis = iota
	// PerHost: a host's capacity is all its LinksPerHost links together.
	PerHost
)

func (b Basis) String() string {
	switch b {
	case PerLink:
		return "link"
	case PerHost:
		return "host"
	}
	return fmt.Sprintf("Basis(%d)", int(b))
}

// ParseBasis accepts "link" and "host".
func ParseBasis(s string) (Basis, error) {
	switch s {
	case "link":
		return PerLink, nil
	case "host":
		return PerHost, nil
	}
	return 0, fmt.Errorf("load basis %q: want link or host", s)
}

// DefaultMaxFlows bounds a schedule when Config.MaxFlows is 0; at about
// 80 bytes a flow it is under a gigabyte of memory.
const DefaultMaxFlows = 10_000_000

// Config describes a workload. Hosts are numbered 0..Hosts-1 (BCube
// server indices).
type Config struct {
	Hosts int
	// LinkRate is the rate of one host link in bit/s; LinksPerHost the
	// number of links of a host (k+1 in BCube(n, k)). Where a host's
	// links differ in rate (a Rail-only fabric), LinkRate is the slowest
	// and HostRate all of them together (0: LinksPerHost × LinkRate).
	LinkRate     uint64
	LinksPerHost int
	HostRate     uint64
	// Load is the Poisson background's offered load as a fraction of the
	// hosts' capacity (see Basis), in (0, 1]; 0 means no background,
	// allowed only with an incast or a pattern. Incasts and patterns come
	// on top of it.
	Load  float64
	Basis Basis
	// CDF draws the background flows' sizes; needed when Load > 0.
	CDF *CDF
	// Pairing is how the background's flows pair their hosts: uniform
	// pairs (PairingUniform, ""), or a permutation (PairingRandom,
	// PairingNearWorst) whose destination of each host Perm holds.
	Pairing Pairing `json:",omitempty"`
	// Perm, under a permutation pairing, is every host's destination:
	// host i's background flows all go to Perm[i], a permutation of the
	// hosts without a fixed point. The layer that knows the fabric makes
	// it (which hosts share a rack, how far racks are apart: see
	// RackPermutation); nil under uniform pairs.
	Perm []int `json:",omitempty"`
	// Duration is the window in which flows start: every flow's Start is
	// in [0, Duration).
	Duration time.Duration
	// Seed fixes every random choice: the same Config gives the same
	// flows.
	Seed    uint64
	Incast  *Incast  // optional
	Pattern *Pattern // optional
	Long    *Long    // optional
	// MaxFlows bounds the schedule's length (0: DefaultMaxFlows);
	// Generate fails rather than exceed it.
	MaxFlows int
}

// Incast is a periodic N-to-1 incast: at Start, Start+Period,
// Start+2·Period, ... (while before the end of the run), one receiver and
// Senders distinct senders, none of them the receiver, all drawn
// uniformly; every sender starts a flow of Size bytes to the receiver at
// that instant.
//
// With Trees > 1 every instant has that many incasts at once (congestion
// trees with distinct roots): Trees distinct receivers, and for each its
// own Senders distinct senders drawn from the hosts that receive none
// (a host may send in more than one tree). Each tree is an event of its
// own (Flow.Group).
type Incast struct {
	Senders int
	Size    int64
	Period  time.Duration
	Start   time.Duration
	// Trees is the number of incasts at each instant (0: 1).
	Trees int `json:",omitempty"`
}

// trees is the number of incasts at each instant.
func (in *Incast) trees() int { return max(1, in.Trees) }

// Long is Flows long flows, each of Size bytes, started at Start between
// 2 x Flows distinct hosts drawn uniformly (Flows sources, then Flows
// destinations): flows that share links with the rest of the workload
// all along, whose throughput (Size over their FCT) tells what the
// scheme leaves a long flow.
type Long struct {
	Flows int
	Size  int64
	Start time.Duration
}

// DefaultIncastShare is the share of one host link of the receiver that
// an incast takes on average with DefaultIncastPeriod.
const DefaultIncastShare = 0.25

// DefaultIncastPeriod is the period that makes a periodic incast of
// senders × size bytes take DefaultIncastShare of one host link of
// linkRate bit/s on average: four times the time that link needs to
// carry the incast's bytes, rounded up to the millisecond. The same
// command then means the same on links of any rate (2.56 s for 8 × 1 MB
// at 100 Mb/s, 25.6 s at 10 Mb/s). 0 if linkRate is 0.
func DefaultIncastPeriod(linkRate uint64, senders int, size int64) time.Duration {
	if linkRate == 0 || senders < 1 || size < 1 {
		return 0
	}
	sec := 8 * float64(senders) * float64(size) / float64(linkRate) / DefaultIncastShare
	return time.Duration(math.Ceil(sec*1e3)) * time.Millisecond
}

// Pattern is a periodic two-phase collective, KindPS or KindMoE. An event
// starts at Start, Start+Period, ... as long as its second phase starts
// before the end of the run; each event draws its hosts anew, uniformly,
// and every flow is Size bytes. The second phase starts Gap after the
// first, whether or not the first has finished (open loop) — unless
// Wait: then it starts once every flow of the first phase has ended,
// and no earlier than Gap after the first (Flow.After names the group
// it waits for), as a MoE layer's combine waits for the experts to have
// all their tokens.
//
// KindPS (parameter server): Few servers (default 1) and Many workers
// (default every other host), disjoint. Phase 0 (push): every worker
// sends Size to every server. Phase 1 (broadcast): every server sends
// Size to every worker. 2·Many·Few flows per event.
//
// KindMoE (mixture of experts): Few experts (default Hosts/4, at least 1)
// and Many token senders (default every other host), disjoint. Phase 0
// (dispatch): every sender picks TopK distinct experts (default 2, at
// most Few) uniformly and sends Size to each. Phase 1 (combine): every
// expert sends Size back to each sender that dispatched to it, in the
// same order. 2·Many·TopK flows per event. With Skew > 0 the experts are
// not equally popular: each event ranks its experts (in the random order
// it drew them) and a sender draws expert r (1..Few) with weight
// 1/r^Skew (Zipf), without replacement; the first expert then gets the
// largest share of the dispatch, and sends the most back.
type Pattern struct {
	Kind   Kind
	Period time.Duration
	Start  time.Duration
	// Gap is the delay from the first phase to the second; 0 means half
	// the period.
	Gap  time.Duration
	Size int64
	// Many and Few are the sizes of the two sides (see above); 0 means
	// the default.
	Many, Few int
	// TopK is, for KindMoE, the number of experts each sender uses; 0
	// means the default.
	TopK int
	// Skew is, for KindMoE, the Zipf exponent of the experts'
	// popularity (0: uniform).
	Skew float64 `json:",omitempty"`
	// Wait makes the second phase wait for the first to end (see
	// above); then Gap 0 means no delay beyond it.
	Wait bool `json:",omitempty"`
}

// Resolved returns p with its zero fields replaced by their defaults for
// a fabric of the given number of hosts.
func (p Pattern) Resolved(hosts int) Pattern {
	if p.Gap == 0 && !p.Wait {
		p.Gap = p.Period / 2
	}
	if p.Few == 0 {
		p.Few = 1
		if p.Kind == KindMoE {
			p.Few = max(1, hosts/4)
		}
	}
	if p.Many == 0 {
		p.Many = hosts - p.Few
	}
	if p.Kind == KindMoE && p.TopK == 0 {
		p.TopK = min(2, p.Few)
	}
	return p
}

// flowsPerEvent is the number of flows one event of the resolved p makes.
func (p Pattern) flowsPerEvent() int {
	if p.Kind == KindMoE {
		return 2 * p.Many * p.TopK
	}
	return 2 * p.Many * p.Few
}

// Capacity is one host's capacity in bit/s under the load basis.
func (c *Config) Capacity() float64 {
	if c.Basis == PerHost {
		if c.HostRate != 0 {
			return float64(c.HostRate)
		}
		return float64(c.LinkRate) * float64(c.LinksPerHost)
	}
	return float64(c.LinkRate)
}

// Lambda is the background's aggregate arrival rate in flows per second
// over the whole fabric:
//
//	λ = Load × Hosts × Capacity / (8 × CDF.Mean)
//
// so that the offered bytes per second, λ × mean size, are Load of the
// hosts' capacity. 0 without background.
func (c *Config) Lambda() float64 {
	if c.Load == 0 || c.CDF == nil {
		return 0
	}
	return c.Load * float64(c.Hosts) * c.Capacity() / (8 * c.CDF.Mean())
}

// Validate checks c, including its incast and pattern.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Hosts < 2 {
		bad("hosts %d: need at least 2", c.Hosts)
	}
	if c.LinksPerHost < 1 {
		bad("links per host %d: need at least 1", c.LinksPerHost)
	}
	if c.Duration <= 0 {
		bad("duration %v: must be positive", c.Duration)
	}
	if c.Basis != PerLink && c.Basis != PerHost {
		bad("load basis %v: want link or host", c.Basis)
	}
	if c.MaxFlows < 0 {
		bad("max flows %d: must not be negative", c.MaxFlows)
	}
	switch {
	case math.IsNaN(c.Load) || c.Load < 0 || c.Load > 1:
		bad("load %g: want a fraction in (0, 1]", c.Load)
	case c.Load > 0 && c.CDF == nil:
		bad("load %g: needs a flow-size distribution", c.Load)
	case c.Load > 0 && c.LinkRate == 0:
		bad("load %g: needs the host link rate", c.Load)
	case c.Load == 0 && c.Incast == nil && c.Pattern == nil && c.Long == nil:
		bad("no traffic: load 0 and no incast, pattern or long flow")
	}
	if err := c.checkPairing(); err != nil {
		errs = append(errs, err)
	}
	if in := c.Incast; in != nil {
		switch {
		case in.Trees < 0 || in.Trees > c.Hosts-1:
			bad("incast trees %d: want 1..%d (each a receiver, leaving a sender)", in.Trees, c.Hosts-1)
		case in.Senders < 1 || in.Senders > c.Hosts-in.trees():
			bad("incast senders %d: want 1..%d (hosts less the %d receivers)", in.Senders, c.Hosts-in.trees(), in.trees())
		}
		if in.Size < 1 {
			bad("incast size %d: must be positive", in.Size)
		}
		if in.Period <= 0 {
			bad("incast period %v: must be positive", in.Period)
		}
		if in.Start < 0 {
			bad("incast start %v: must not be negative", in.Start)
		} else if in.Start >= c.Duration {
			bad("incast start %v: not within the run's %v", in.Start, c.Duration)
		}
	}
	if l := c.Long; l != nil {
		switch {
		case l.Flows < 1 || 2*l.Flows > c.Hosts:
			bad("long flows %d: want 1..%d (a source and a destination each, all distinct)", l.Flows, c.Hosts/2)
		case l.Size < 1:
			bad("long flow size %d: must be positive", l.Size)
		case l.Start < 0 || l.Start >= c.Duration:
			bad("long flow start %v: not within the run's %v", l.Start, c.Duration)
		}
	}
	if c.Pattern != nil {
		p := c.Pattern.Resolved(c.Hosts)
		if p.Kind != KindPS && p.Kind != KindMoE {
			bad("pattern %q: want ps or moe", p.Kind)
		}
		if p.Period <= 0 {
			bad("pattern period %v: must be positive", p.Period)
		}
		if p.Start < 0 || p.Gap < 0 {
			bad("pattern start %v, gap %v: must not be negative", p.Start, p.Gap)
		} else if p.Start+p.Gap >= c.Duration {
			bad("pattern start %v + gap %v: no event fits in the run's %v", p.Start, p.Gap, c.Duration)
		}
		if p.Size < 1 {
			bad("pattern size %d: must be positive", p.Size)
		}
		if p.Few < 1 || p.Many < 1 || p.Few+p.Many > c.Hosts {
			bad("pattern %s: %d and %d hosts on its two sides, want at least 1 each and %d in all", p.Kind, p.Many, p.Few, c.Hosts)
		}
		if p.Kind == KindMoE && (p.TopK < 1 || p.TopK > p.Few) {
			bad("pattern moe: top-k %d, want 1..%d (the experts)", p.TopK, p.Few)
		}
		if math.IsNaN(p.Skew) || p.Skew < 0 || p.Skew > 10 {
			bad("pattern skew %g: want a Zipf exponent in [0, 10]", p.Skew)
		} else if p.Skew > 0 && p.Kind != KindMoE {
			bad("pattern skew: only moe has experts to skew")
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	return nil
}

// events counts the instants start, start+period, ... before end.
func events(start, period, end time.Duration) int {
	if start >= end {
		return 0
	}
	return int((end-start-1)/period) + 1
}

// Expected is the expected length of the schedule of a valid c: the mean
// number of background flows plus the incast and pattern flows.
func (c *Config) Expected() float64 {
	n := c.Lambda() * c.Duration.Seconds()
	if in := c.Incast; in != nil {
		n += float64(events(in.Start, in.Period, c.Duration) * in.Senders * in.trees())
	}
	if c.Long != nil {
		n += float64(c.Long.Flows)
	}
	if c.Pattern != nil {
		p := c.Pattern.Resolved(c.Hosts)
		n += float64(events(p.Start, p.Period, c.Duration-p.Gap) * p.flowsPerEvent())
	}
	return n
}

// Generate builds the schedule of c. Its stages:
//
//  1. Validate c and check the expected schedule fits in MaxFlows.
//  2. Background: arrivals of a Poisson process of rate Lambda over
//     [0, Duration) (exponential inter-arrival times), each with a source
//     drawn uniformly, a destination drawn uniformly from the other hosts
//     and a size drawn from the CDF; under a permutation the destination
//     is the source's in Perm (the uniform one is drawn all the same, so
//     the arrivals, sources and sizes are those of uniform pairs).
//  3. Incast events, then pattern events, as their types describe.
//  4. Sort by Start (stable: at equal times background before incast
//     before pattern, each in the order generated), number the flows
//     0.. and the events 1.. in that order.
//
// Each of stages 2 and 3 draws from its own stream seeded from Seed, so
// adding an incast or a pattern leaves the background unchanged.
func Generate(c Config) ([]Flow, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	limit := c.MaxFlows
	if limit == 0 {
		limit = DefaultMaxFlows
	}
	if e := c.Expected(); e > float64(limit) {
		return nil, fmt.Errorf("workload: about %.0f flows expected, more than the limit of %d", e, limit)
	}
	flows := make([]Flow, 0, int(c.Expected()*1.01)+16)

	if lam := c.Lambda(); lam > 0 {
		s := newStream(c.Seed, streamPoisson)
		end := c.Duration.Seconds()
		for t := s.exp() / lam; t < end; t += s.exp() / lam {
			if len(flows) >= limit {
				return nil, fmt.Errorf("workload: more than the limit of %d flows", limit)
			}
			src := s.intN(c.Hosts)
			dst := s.intN(c.Hosts - 1)
			if dst >= src {
				dst++
			}
			if c.Perm != nil {
				dst = c.Perm[src]
			}
			start := min(time.Duration(t*1e9), c.Duration-1)
			flows = append(flows, Flow{Src: src, Dst: dst, Size: c.CDF.Size(s.float64()), Start: start, Kind: KindPoisson})
		}
	}

	pool := make([]int, c.Hosts)
	reset := func() []int {
		for i := range pool {
			pool[i] = i
		}
		return pool
	}
	group := 0
	if in := c.Incast; in != nil {
		s := newStream(c.Seed, streamIncast)
		trees := in.trees()
		for t := in.Start; t < c.Duration; t += in.Period {
			hosts := reset()
			recvs := s.choose(hosts, trees)
			for _, recv := range recvs {
				group++
				for _, src := range s.choose(hosts[trees:], in.Senders) {
					flows = append(flows, Flow{Src: src, Dst: recv, Size: in.Size, Start: t, Kind: KindIncast, Group: group})
				}
			}
		}
	}
	if c.Pattern != nil {
		p := c.Pattern.Resolved(c.Hosts)
		s := newStream(c.Seed, streamPattern)
		var pairs [][2]int // phase 0 (src, dst) of one event
		var z *zipf
		if p.Kind == KindMoE && p.Skew > 0 {
			z = newZipf(p.Few, p.Skew)
		}
		for t := p.Start; t+p.Gap < c.Duration; t += p.Period {
			group++
			hosts := reset()
			few := s.choose(hosts, p.Few)
			many := s.choose(hosts[p.Few:], p.Many)
			pairs = pairs[:0]
			for _, m := range many {
				targets := few
				switch {
				case z != nil:
					targets = z.choose(s, few, p.TopK)
				case p.Kind == KindMoE:
					// few is only reordered: it stays the set of experts.
					targets = s.choose(few, p.TopK)
				}
				for _, f := range targets {
					pairs = append(pairs, [2]int{m, f})
				}
			}
			for _, pr := range pairs {
				flows = append(flows, Flow{Src: pr[0], Dst: pr[1], Size: p.Size, Start: t, Kind: p.Kind, Group: group})
			}
			after := 0
			if p.Wait {
				after = group
			}
			for _, pr := range pairs {
				flows = append(flows, Flow{Src: pr[1], Dst: pr[0], Size: p.Size, Start: t + p.Gap, Kind: p.Kind, Group: group, Phase: 1, After: after})
			}
		}
	}
	if l := c.Long; l != nil {
		s := newStream(c.Seed, streamLong)
		hosts := s.choose(reset(), 2*l.Flows)
		for i := range l.Flows {
			flows = append(flows, Flow{Src: hosts[i], Dst: hosts[l.Flows+i], Size: l.Size, Start: l.Start, Kind: KindLong})
		}
	}
	if len(flows) > limit {
		return nil, fmt.Errorf("workload: %d flows, more than the limit of %d", len(flows), limit)
	}

	slices.SortStableFunc(flows, func(a, b Flow) int { return cmp.Compare(a.Start, b.Start) })
	renumber := make(map[int]int, group)
	for i := range flows {
		f := &flows[i]
		f.ID = i
		if f.Group != 0 {
			g, ok := renumber[f.Group]
			if !ok {
				g = len(renumber) + 1
				renumber[f.Group] = g
			}
			f.Group = g
		}
		if f.After != 0 {
			// Its group's phase 0 sorts before it (it starts no later,
			// and was generated first), so the group has its number.
			f.After = renumber[f.After]
		}
	}
	return flows, nil
}

// zipf draws experts by rank with Zipf weights: rank r (1..n) has weight
// 1/r^s.
type zipf struct {
	w    []float64 // by rank
	pool []int     // scratch: the candidates left
	pw   []float64 // scratch: their weights
	out  []int
}

func newZipf(n int, s float64) *zipf {
	z := &zipf{w: make([]float64, n), pool: make([]int, n), pw: make([]float64, n), out: make([]int, 0, n)}
	for r := range z.w {
		z.w[r] = 1 / math.Pow(float64(r+1), s)
	}
	return z
}

// choose draws k distinct elements of ranked (ranked[0] the most
// popular) by their weights, one at a time among those left, and
// returns them in the order drawn; ranked is left as it is. The result
// is valid until the next call.
func (z *zipf) choose(s *stream, ranked []int, k int) []int {
	n := len(ranked)
	pool, pw := z.pool[:n], z.pw[:n]
	copy(pool, ranked)
	copy(pw, z.w[:n])
	total := 0.0
	for _, w := range pw {
		total += w
	}
	out := z.out[:0]
	for i := range k {
		// Draw among pool[i:], then move the drawn one to i.
		x := s.float64() * total
		j := i
		for ; j < n-1; j++ {
			if x < pw[j] {
				break
			}
			x -= pw[j]
		}
		total -= pw[j]
		pool[i], pool[j] = pool[j], pool[i]
		pw[i], pw[j] = pw[j], pw[i]
		out = append(out, pool[i])
	}
	z.out = out
	return out
}
