// Package throughput bounds what a fabric's routing can carry without
// simulating a packet: the maximum concurrent flow over a fixed set of
// paths. Every commodity (a source, a destination, a demand and the
// paths routing allows it) must get the same fraction λ of its demand,
// split over its paths as the solver likes, within every arc's capacity;
// the answer is the largest λ.
//
// Two solvers:
//
//   - MaxConcurrentFlow, the Garg-Könemann / Fleischer approximation: it
//     routes demand along the currently shortest allowed path under
//     exponential arc lengths, phase after phase, and returns a feasible
//     λ together with an upper bound from the same lengths (LP duality),
//     so every answer carries its own error bar. It stops when the two
//     are within the ε asked for.
//   - Exact, the LP itself by gonum's simplex: dense, so for small
//     instances; the tests check the approximation against it.
//
// traffic.go builds the traffic matrices: all-to-all, a random
// permutation, and a near-worst permutation (the longest matching).
package throughput
