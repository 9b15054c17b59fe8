// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The build constraint keeps the go command from compiling this file with
// cgo; bpf2go compiles it (see gen.go).

//go:build ignore

// xdp_redirect steers every frame of a port to the AF_XDP socket bound to
// the receiving queue. Frames are first subject to two fault injections
// that the lab uses: an administrative link-down switch and random loss.
//
// One loaded copy serves up to MAX_PORTS interfaces of one network
// namespace (a node's ports): ports maps an interface's ifindex to its
// slot, and each slot has its own configuration, counters and sockets.
// The interfaces share the program, so attaching it to the second and
// later ones does not change the kernel's XDP dispatcher, whose every
// change waits for an RCU grace period under the RTNL lock. A frame of an
// interface that has no slot is passed to the stack, uncounted.
//
// A port whose link is patched in memory (package patch) receives its
// frames there; what reaches its interface are copies the sender writes
// for packet captures. Such a copy is counted (MIRROR) and passed to the
// stack, where the taps see it, while the port is captured, or dropped;
// it is not link traffic and counts nowhere else.
//
// Stages, in order:
//  0. a patched port's copy: MIRROR, then PASS when captured, else DROP;
//  1. count the frame (RX);
//  2. drop it if the port is down (DOWN);
//  3. drop it with probability loss_ppm / 10^6 (LOSS);
//  4. redirect it to the socket of its slot and receiving queue (REDIRECT),
//     or, when none is registered, return the configured fallback verdict
//     (FALLBACK).

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

// Indices of the counters map; keep in sync with bpf.go.
enum {
	COUNTER_RX = 0,
	COUNTER_REDIRECT = 1,
	COUNTER_FALLBACK = 2,
	COUNTER_LOSS = 3,
	COUNTER_DOWN = 4,
	COUNTER_MIRROR = 5,
	COUNTER_MAX,
};

// Slots and queues; keep in sync with bpf.go.
#define MAX_PORTS 64
#define MAX_QUEUES 8

// Written by user space, read by the program; keep in sync with bpf.go.
struct config {
	__u32 loss_ppm; // frames dropped per million, 0..1000000
	__u32 down;     // non-zero: drop every frame
	__u32 fallback; // XDP_PASS or XDP_DROP when no socket is registered
	__u32 patched;  // non-zero: the link is patched in memory (stage 0)
	__u32 captured; // with patched: pass the copies to the stack
};

// ifindex -> slot.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} ports SEC(".maps");

// slot * COUNTER_MAX + counter.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_PORTS * COUNTER_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, struct config);
} config SEC(".maps");

// slot * MAX_QUEUES + queue -> socket. Sizes, not BTF types: the kernel
// refuses BTF on an XSKMAP, and a loader that offers it first pays for a
// map created and freed (an RCU grace period) before it retries without.
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MAX_PORTS * MAX_QUEUES);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} xsks SEC(".maps");

static __always_inline void count(__u32 slot, __u32 idx) {
	__u32 key = slot * COUNTER_MAX + idx;
	__u64 *v = bpf_map_lookup_elem(&counters, &key);
	if (v)
		(*v)++; // per-CPU slot: no other writer
}

SEC("xdp")
int xdp_redirect(struct xdp_md *ctx) {
	__u32 ifindex = ctx->ingress_ifindex;
	__u64 fallback = XDP_PASS;

	__u32 *slotp = bpf_map_lookup_elem(&ports, &ifindex);
	if (!slotp)
		return XDP_PASS;
	__u32 slot = *slotp;
	if (slot >= MAX_PORTS)
		return XDP_PASS;

	struct config *cfg = bpf_map_lookup_elem(&config, &slot);
	if (cfg && cfg->patched) {
		count(slot, COUNTER_MIRROR);
		return cfg->captured ? XDP_PASS : XDP_DROP;
	}

	count(slot, COUNTER_RX);
	if (cfg) {
		if (cfg->down) {
			count(slot, COUNTER_DOWN);
			return XDP_DROP;
		}
		if (cfg->loss_ppm && bpf_get_prandom_u32() % 1000000 < cfg->loss_ppm) {
			count(slot, COUNTER_LOSS);
			return XDP_DROP;
		}
		// Anything but DROP means PASS: the low bits of the flags are
		// returned verbatim, so never let ABORTED or TX through.
		if (cfg->fallback == XDP_DROP)
			fallback = XDP_DROP;
	}

	int ret = (int)fallback;
	__u32 queue = ctx->rx_queue_index;
	if (queue < MAX_QUEUES)
		ret = bpf_redirect_map(&xsks, slot * MAX_QUEUES + queue, fallback);
	count(slot, ret == XDP_REDIRECT ? COUNTER_REDIRECT : COUNTER_FALLBACK);
	return ret;
}

char __license[] SEC("license") = "Dual BSD/GPL";
