// Package workload generates the traffic of a workload run and sums up its
// per-flow results (DESIGN §7): flow sizes from the WebSearch, Hadoop or
// Storage distributions, Poisson arrivals at a target load of the host
// links between uniformly random pairs, a periodic N-to-1 incast, and the
// parameter-server and mixture-of-experts patterns; then per-flow records
// (FCT, ideal FCT, slowdown, retransmissions) and their summary by size
// bin. It is pure computation: no network, no goroutines, no clock.
//
// # Load
//
// Config.Load is the offered load of the Poisson background as a fraction
// of the hosts' capacity. The aggregate arrival rate over the fabric is
//
//	λ = Load × Hosts × Capacity / (8 × mean flow size)   flows/s
//
// where Capacity is, by default (Basis PerLink), the rate of ONE host
// link, not of all k+1 links of a BCube host. The reasons:
//
//   - A flow is one connection on one path (the level order is a function
//     of the flow), so a single flow never sends faster than one link;
//     one link's rate is the NIC rate that a host's offered load is
//     naturally measured against, as in the single-NIC evaluations these
//     three workloads come from.
//   - In BCube a flow between hosts whose addresses differ in d digits
//     crosses d host links out of servers (its source's, then d-1 relays')
//     and d switch links into servers. For uniformly random pairs the
//     mean is E[d] = (k+1)(n-1)n^k / (n^(k+1)-1): 1.6 in BCube(4,1), 1.78
//     in BCube(8,1). With one link as the capacity the mean utilisation
//     of the host links, out of and into servers alike, is
//     Load × E[d] / (k+1) <= Load, so every Load in (0, 1] is feasible on
//     average and Load stays an upper bound of the real link utilisation.
//     With all k+1 links as the capacity it would be Load × E[d], which
//     overloads the fabric from Load = 1/E[d] (0.625 in BCube(4,1)) on:
//     half the range would be meaningless.
//
// Basis PerHost (Capacity = LinksPerHost × LinkRate) is there for
// comparison with set-ups that count a host's every link.
//
// Where the levels' links differ in rate (a Rail-only fabric, whose
// level 0 is faster than its rails), LinkRate is the slowest level's
// rate and PerHost's capacity the sum of the host's links (HostRate).
// Random pairs and a flow-hashed level order put as many flows on a
// slow link as on a fast one, so the slowest link is the one whose
// utilisation Load bounds: with the slowest rate as the capacity, Load
// stays an upper bound of every link's utilisation, as above.
//
// Load 0 means no background and is allowed only with an incast or a
// pattern. The incast and pattern flows come on top of the background;
// they are not counted in Load.
//
// # Schedule
//
// Generate returns the flows sorted by start, Flow.ID being the index.
// Background: a Poisson process of rate λ over [0, Duration)
// (exponential inter-arrival times), each arrival from a source drawn
// uniformly among the hosts to a destination drawn uniformly among the
// others, of a size drawn from the CDF by inverse transform. Under a
// permutation pairing (Config.Pairing: random or near-worst, the FC+
// paper's two permutations) every flow of a source goes to its image in
// Config.Perm instead; the uniform destination is still drawn and
// dropped, so a permutation changes the destinations and nothing else.
// The permutation comes from the layer that knows the fabric
// (lab.FabricSpec.Permutation: the racks permuted without a fixed
// point, server i of a rack sending to server i of its rack's image;
// random on this package's own stream, RandomDerangement, near-worst
// the ToRs' longest matching by hop distance). Incast and
// patterns: see Incast and Pattern. The same Config and Seed give the
// same flows, bit for bit, on any platform and Go release: every random
// number comes from math/rand/v2's PCG, whose output is defined, through
// this package's own derivations; the background, the incast and the
// pattern each have their own stream, so adding one leaves the others
// unchanged.
//
// # Results
//
// A FlowRecord holds what a run measured of a flow; Ideal gives the ideal
// FCT of a flow alone at line rate over a path of store-and-forward hops
// (see its formula), and Summarize groups records by size bins (default
// <=10KB, 10KB-100KB, 100KB-1MB, >1MB) with the mean and the nearest-rank
// p50/p95/p99/p99.9 of FCT and slowdown, plus goodput and the completed,
// failed and incomplete counts. Records are written as CSV or JSON lines;
// a Summary as a text table or JSON. A schedule is written as CSV
// (WriteFlows, lab workload --dry-run's) and read back (ReadFlows), a
// generated one or one made by hand.
package workload
