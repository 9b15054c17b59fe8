#!/usr/bin/env bash
# ack-high-prio.sh DIR NEW: a copy of the simulator checkout DIR (built
# by build.sh) in NEW whose switches, too, send ACKs ahead of data, as
# bcfab's do at every hop: third.cc sets ACK_HIGH_PRIO on the hosts only,
# so the sim's switches queue ACKs with data in priority group 3. The
# copy sets the switches' AckHighPrio attribute from the same key, and
# rebuilds the program (seconds). docs/VALIDATION.md measures what the
# difference does; lab experiment run --ns3 NEW runs the copy.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 DIR NEW   (DIR: a checkout build.sh built; NEW: a new directory for the copy)" >&2
  exit 2
fi
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
copy_checkout ack-high-prio.sh "$1" "$2"
anchor='sw->SetAttribute("EcnEnabled", BooleanValue(enable_qcn));'
if ! grep -qF "$anchor" "$sim/scratch/third.cc"; then
  rm -rf "$new"
  echo "ack-high-prio.sh: $1's scratch/third.cc has no switch set-up line to add to: not the commit fetch.sh takes" >&2
  exit 1
fi
sed -i "/$(printf '%s' "$anchor" | sed 's/[][\.*^$/]/\\&/g')/a\\\\t\\t\\tsw->SetAttribute(\"AckHighPrio\", UintegerValue(ack_high_prio)); // bcfab: ACKs ahead of data at switches too" "$sim/scratch/third.cc"
rebuild ack-high-prio.sh
grep -n 'AckHighPrio' "$sim/scratch/third.cc"
echo "built: $sim/build/scratch/third, switches' ACKs ahead of data; lab experiment run ... --ns3 $new"
