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
src=$(cd "$1" && pwd)
if [[ -e $2 ]]; then
  echo "ack-high-prio.sh: $2 exists: give a new directory" >&2
  exit 2
fi
if [[ ! -x $src/simulation/build/scratch/third ]]; then
  echo "ack-high-prio.sh: $src is not built: run $(dirname "$0")/build.sh $1" >&2
  exit 2
fi
cp -a "$src" "$2"
new=$(cd "$2" && pwd)
sim=$new/simulation
anchor='sw->SetAttribute("EcnEnabled", BooleanValue(enable_qcn));'
if ! grep -qF "$anchor" "$sim/scratch/third.cc"; then
  echo "ack-high-prio.sh: $sim/scratch/third.cc has no switch set-up line to add to: not the commit fetch.sh takes" >&2
  exit 1
fi
sed -i "/$(printf '%s' "$anchor" | sed 's/[][\.*^$/]/\\&/g')/a\\\\t\\t\\tsw->SetAttribute(\"AckHighPrio\", UintegerValue(ack_high_prio)); // bcfab: ACKs ahead of data at switches too" "$sim/scratch/third.cc"
# waf keeps the checkout's path in its lock file and cache: the copy's.
sed -i "s#$src/#$new/#g" "$sim"/.lock-waf* "$sim"/build/c4che/*.py
# A Python 2 for waf's incremental build, found as build.sh finds one.
is2() { "$@" -c 'import sys; sys.exit(sys.version_info[0] != 2)' >/dev/null 2>&1; }
py=()
for c in ${PYTHON:-} python2.7 python2 python; do
  if command -v "$c" >/dev/null && is2 "$c"; then py=("$c"); break; fi
done
if [[ ${#py[@]} -eq 0 ]] && command -v pyenv >/dev/null; then
  v=$(pyenv versions --bare 2>/dev/null | grep -E '^2\.[0-9]+' | tail -1 || true)
  [[ -n $v ]] && py=(env PYENV_VERSION="$v" python)
fi
if [[ ${#py[@]} -eq 0 ]]; then
  echo "ack-high-prio.sh: no Python 2 for waf (set PYTHON)" >&2
  exit 1
fi
(cd "$sim" && "${py[@]}" ./waf build >/dev/null)
grep -n 'AckHighPrio' "$sim/scratch/third.cc"
echo "built: $sim/build/scratch/third, switches' ACKs ahead of data; lab experiment run ... --ns3 $new"
