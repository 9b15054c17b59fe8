// Package ns3 bridges a lab to the ns-3 simulator of the HPCC lineage
// (github.com/alibaba-edu/High-Precision-Congestion-Control, "the sim"
// below): it writes the sim's input directory for a lab's fabric and a
// workload's schedule, in the target's units, and reads the sim's
// per-flow output back into bcfab's flow records, so that the two tools
// can be compared flow for flow (docs/VALIDATION.md).
//
// An export (New, then Sim.Write) is a pipeline:
//
//  1. The nodes: a server with one fabric port is a host of the sim; a
//     server with more (BCube's k+1) becomes a relay switch of k+2 ports
//     in front of a host of one NIC, because the sim's hosts have one NIC
//     and forward nothing. Hosts take the ids 0..S-1 of the servers
//     h0..h<S-1>, relays the next ids in the same order, switches the
//     rest in the plan's order.
//  2. The links: every cable at its target rate (the lab's x D) and the
//     target's delay; a host's link to its relay at the rate of the
//     server's fastest port and the least delay at which the sim's PFC
//     headroom keeps that link lossless (hostDelay).
//  3. The flows: the schedule's starts on the target's clock (/ D) after
//     FlowBase, in the order the sim starts them, each with the source
//     port the sim will give it, so that its output joins back.
//  4. The configuration: the scale model's parameters in the sim's keys
//     and units (config.txt), the maps from sim ids back to bcfab's nodes
//     and ports, and a README that says what wrote the directory and
//     what differs between the two tools, with the numbers.
//
// A comparison reads the sim's fct.txt with the export's flows.csv into
// workload.FlowRecords on the target's clock (SimRecords) and sums both
// tools' records up by size bin with package workload (Compare).
package ns3
