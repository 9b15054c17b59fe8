// Package topo is a fabric's topology as data: a graph of servers and
// switches joined by cables between numbered ports, the generators that
// build the fabrics bcfab knows (BCube and its Rail-only variant,
// leaf-spine, k-ary fat-tree, random regular expanders), and the routing
// computed from the graph alone: ECMP next hops over shortest paths, K
// shortest paths under an optional turn budget, and per-node tables that
// let every node pick the same path for a flow from its hash.
//
// Conventions every generator follows:
//
//   - Servers come first (node indices 0..S-1, named h<i>), switches after.
//   - A server's port j is interface eth<j>; a switch's port p is p<p>.
//   - A switch numbers its ports toward lower tiers first (servers, then
//     the tier above).
//   - A cable is full duplex; each direction is an Arc with the cable's
//     capacity, in units of a standard link (1; a Rail-only fabric's
//     faster level has more).
//
// BCube keeps package bcube as the single home of its addressing: the
// BCube generator here lays the graph out by bcube's numbering, so the
// graph and the digit rule agree node for node and port for port.
//
// Nothing here knows about flow control; package fcplus adds the virtual
// layers and deadlock-free routing of FC+ on top of these graphs.
package topo
