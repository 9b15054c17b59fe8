// Package fcplus builds FC+ fabrics and their deadlock-free routing, after
// "FC+: Near-optimal Deadlock-free Expander Data Center Networks" (and
// its predecessor FC, Flattened Clos, NSDI 2023): an expander of ToRs
// whose cabling is drawn from a multi-layer virtual Clos, and paths chosen
// so that the channel dependencies of each lossless priority form no
// cycle.
//
// The stages, each in its own file:
//
//  1. layers.go: split every ToR's s fabric ports into v virtual switches
//     placed in k = (s-2)/2 + 2 virtual layers, and cable adjacent layers
//     at random (seeded), never a ToR to itself. FC's uniform layering is
//     the special case of one virtual switch per layer.
//  2. turns.go: rank every arc by the virtual layers it joins; a step
//     from one arc to the next whose rank does not rise is a down-up
//     turn. With two lossless priorities a packet moves from priority 1
//     to 2 at its turn, which a ToR recognises by (in port, out port).
//  3. routing.go: DF-KSP (paths in order of length, kept while their
//     down-up turns number at most N_lp-1), FC's edge-disjoint up-down
//     paths, and plain K shortest paths as the baseline that deadlocks.
//  4. cdg.go: the channel dependency graph of a route set, per priority,
//     and its cycle when there is one.
//  5. scenario.go: a small named fabric on which plain KSP's channel
//     dependencies close a cycle and DF-KSP's do not.
package fcplus
