// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// The build constraint keeps the go command from compiling this file with
// cgo; bpf2go compiles it (see gen.go).

//go:build ignore

// tc_classify gives the frames the kernel sends through a server's bc0 a
// fabric class, the 802.1Q priority (PCP), from their IPv4 DSCP, as an
// RDMA host that trusts DSCP does. It runs as a TCX program on bc0's
// egress; the tag it pushes is written into the frame by the kernel
// (bc0's tx VLAN offload is off), so hostd, which receives the frame on
// the veth's other end through AF_XDP, sees it and keeps its priority.
//
// Stages, in order:
//  1. a frame that is not IPv4 (ARP, IPv6) is left as it is and counted
//     as untagged;
//  2. its class is dscp_map[DSCP] when the map holds one; otherwise the
//     control priority 6 for ICMP (so ping measures the control path) and
//     best effort, 0, for the rest;
//  3. an 802.1Q tag (VID 0, that PCP) is pushed, and the frame (a GSO
//     frame counts as its segments) and its bytes are counted under the
//     class;
//  4. the frame goes on (TCX_NEXT).

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#ifndef TCX_NEXT
#define TCX_NEXT -1 // linux/bpf.h of kernels before 6.6 lacks it
#endif

// Keep in sync with classifier.go.
#define UNMAPPED 0xff
#define PRIO_BEST_EFFORT 0
#define PRIO_CONTROL 6
#define COUNTER_UNTAGGED 8

struct class_counter {
	__u64 packets;
	__u64 bytes;
};

// Written by user space: DSCP -> priority, UNMAPPED where the map says
// nothing.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u8);
} dscp_map SEC(".maps");

// Per priority 0..7, then the untagged frames.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COUNTER_UNTAGGED + 1);
	__type(key, __u32);
	__type(value, struct class_counter);
} class_counters SEC(".maps");

static __always_inline void count(__u32 idx, struct __sk_buff *skb) {
	struct class_counter *c = bpf_map_lookup_elem(&class_counters, &idx);
	if (c) { // per-CPU slot: no other writer
		c->packets += skb->gso_segs > 1 ? skb->gso_segs : 1;
		c->bytes += skb->len;
	}
}

SEC("tc")
int tc_classify(struct __sk_buff *skb) {
	struct {
		struct ethhdr eth;
		__u8 vhl, tos, pad[7], protocol;
	} __attribute__((packed)) h;

	if (skb->vlan_present || bpf_skb_load_bytes(skb, 0, &h, sizeof(h)) < 0 ||
	    h.eth.h_proto != bpf_htons(ETH_P_IP) || h.vhl >> 4 != 4) {
		count(COUNTER_UNTAGGED, skb);
		return TCX_NEXT;
	}
	__u32 dscp = h.tos >> 2;
	__u32 prio = PRIO_BEST_EFFORT;
	__u8 *mapped = bpf_map_lookup_elem(&dscp_map, &dscp);
	if (mapped && *mapped != UNMAPPED)
		prio = *mapped & 7;
	else if (h.protocol == IPPROTO_ICMP)
		prio = PRIO_CONTROL;
	if (bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), prio << 13) < 0) {
		count(COUNTER_UNTAGGED, skb);
		return TCX_NEXT;
	}
	count(prio, skb);
	return TCX_NEXT;
}

char __license[] SEC("license") = "Dual BSD/GPL";
