// Package node is the wiring of a node around its engine: a node's
// bring-up inside its network namespace (UMEM, XDP program, AF_XDP and
// packet sockets per port), its control socket (GET /healthz, GET
// /stats, GET and POST /link, and the routes the node adds), the capture
// watcher, and the process main that the daemons (swd, hostd, bcfabd)
// share. What a node does with frames is its handler's (package swd or
// hostd); how frames move is the dataplane package's.
package node
