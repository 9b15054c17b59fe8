// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The build constraint keeps the go command from compiling this file with
// cgo; bpf2go compiles it (see gen.go).

//go:build ignore

// xdp_redirect steers every frame of a port to the AF_XDP socket bound to
// the receiving queue. Frames are first subject to two fault injections
// that the lab uses: an administrative link-down switch and random loss.
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
//  4. redirect it to xsks[rx_queue_index] (REDIRECT), or, when no socket is
//     registered for that queue, return the configured fallback verdict
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

// Written by user space, read by the program; keep in sync with bpf.go.
struct config {
	__u32 loss_ppm; // frames dropped per million, 0..1000000
	__u32 down;     // non-zero: drop every frame
	__u32 fallback; // XDP_PASS or XDP_DROP when no socket is registered
	__u32 patched;  // non-zero: the link is patched in memory (stage 0)
	__u32 captured; // with patched: pass the copies to the stack
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COUNTER_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

static __always_inline void count(__u32 idx) {
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);
	if (v)
		(*v)++; // per-CPU slot: no other writer
}

SEC("xdp")
int xdp_redirect(struct xdp_md *ctx) {
	__u32 zero = 0;
	__u64 fallback = XDP_PASS;

	struct config *cfg = bpf_map_lookup_elem(&config, &zero);
	if (cfg && cfg->patched) {
		count(COUNTER_MIRROR);
		return cfg->captured ? XDP_PASS : XDP_DROP;
	}

	count(COUNTER_RX);
	if (cfg) {
		if (cfg->down) {
			count(COUNTER_DOWN);
			return XDP_DROP;
		}
		if (cfg->loss_ppm && bpf_get_prandom_u32() % 1000000 < cfg->loss_ppm) {
			count(COUNTER_LOSS);
			return XDP_DROP;
		}
		// Anything but DROP means PASS: the low bits of the flags are
		// returned verbatim, so never let ABORTED or TX through.
		if (cfg->fallback == XDP_DROP)
			fallback = XDP_DROP;
	}

	int ret = bpf_redirect_map(&xsks, ctx->rx_queue_index, fallback);
	count(ret == XDP_REDIRECT ? COUNTER_REDIRECT : COUNTER_FALLBACK);
	return ret;
}

char __license[] SEC("license") = "Dual BSD/GPL";
