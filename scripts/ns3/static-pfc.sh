#!/usr/bin/env bash
# static-pfc.sh DIR NEW BYTES: a copy of the simulator checkout DIR
# (built by build.sh) in NEW whose switches pause an ingress queue at a
# static threshold, as bcfab's do, instead of the sim's dynamic one.
#
# The sim (switch-mmu.cc) counts each ingress port and priority's bytes
# past a 4 KiB reserve and pauses the queue when they reach
# GetPfcThreshold: the switch's free buffer >> a per-port shift (3 for
# its links), about 640 KB on an empty 5 MB switch and lower as the
# buffer fills; it resumes when they are 3 KiB below it. The copy's
# GetPfcThreshold returns BYTES, always. bcfab pauses when a queue's
# ingress bytes reach X_off and resumes at X_on, so BYTES = X_off - 4096
# (the reserve) has both tools pause and resume at the same bytes:
# 651264 for the X_off of 640 KiB the model derives from the sim's
# empty-switch threshold. docs/VALIDATION.md measures what the
# difference does; lab experiment run --ns3 NEW runs the copy.
set -euo pipefail

if [[ $# -ne 3 || ! $3 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 DIR NEW BYTES   (DIR: a checkout build.sh built; NEW: a new directory for the copy; BYTES: the threshold, a positive integer)" >&2
  exit 2
fi
if (($3 >= 1 << 32)); then
  echo "static-pfc.sh: $3 bytes does not fit the sim's 32-bit threshold" >&2
  exit 2
fi
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
copy_checkout static-pfc.sh "$1" "$2"
mmu=$sim/src/point-to-point/model/switch-mmu.cc
body='return (buffer_size - total_hdrm - total_rsrv - shared_used_bytes) >> pfc_a_shift[port];'
if [[ $(grep -cF "$body" "$mmu") -ne 1 ]]; then
  rm -rf "$new"
  echo "static-pfc.sh: $1's switch-mmu.cc has no dynamic threshold to replace: not the commit fetch.sh takes" >&2
  exit 1
fi
sed -i "s|$(printf '%s' "$body" | sed 's/[][\.*^$|]/\\&/g')|return $3u; // bcfab: a static threshold (static-pfc.sh)|" "$mmu"
rebuild static-pfc.sh
grep -n 'static-pfc.sh' "$mmu"
echo "built: $sim/build/scratch/third, PFC at a static $3 bytes; lab experiment run ... --ns3 $new"
