// Package dataplane is the engine shared by swd and hostd: it owns a
// daemon's UMEM frames and ports, runs the receive -> forward -> egress ->
// transmit loop on one locked OS thread, and exports counters. What to do
// with a frame is the daemon's Handler; how egress queues schedule and
// shape is the queues package's.
package dataplane
