#!/usr/bin/env bash
# The main job in one go: bring up BCube(4,1) (16 hostd, 8 swd, each in its
# own namespace), ping and iperf3 from h0 to h15 — a 4-hop path through a
# relay server — show what the fabric counted, and tear it all down.
set -euo pipefail
cd "$(dirname "$0")/.."
LAB=${LAB:-demo}
RATE=${RATE:-500M}
lab=./bin/lab

cleanup() { "$lab" down --name "$LAB" >/dev/null 2>&1 || true; }
trap cleanup EXIT INT TERM

echo "== lab up: BCube(4,1), links at $RATE"
"$lab" up bcube --n 4 --k 1 --name "$LAB" --rate "$RATE"

echo
echo "== ping h0 -> h15 (198.18.0.15): 4 hops, relayed by h3 or h12"
"$lab" exec --name "$LAB" h0 -- ping -c 3 -i 0.2 198.18.0.15

echo
echo "== iperf3 h0 -> h15, 5 s"
"$lab" exec --name "$LAB" h15 -- iperf3 -s -1 -D
sleep 0.3
"$lab" exec --name "$LAB" h0 -- iperf3 -c 198.18.0.15 -t 5 -f m

echo
echo "== what the fabric counted"
"$lab" status --name "$LAB"

echo
echo "== lab down"
"$lab" down --name "$LAB"
trap - EXIT
echo "done: no namespace, veth, BPF program or daemon of lab $LAB is left"
