#!/usr/bin/env bash
# run.sh DIR EXPORT: runs the HPCC simulator built by build.sh in DIR on
# a directory lab ns3 export wrote (EXPORT), in that directory: its
# config.txt names the files beside it, and the simulator writes fct.txt,
# pfc.txt, qlen.txt and mix.tr there, and what it prints to sim.log.
# Then lab ns3 compare --sim EXPORT --bcfab RECORDS puts its FCTs beside
# bcfab's. It runs the program as lab experiment run does for an ns3:
# scheme: directly, its libraries by LD_LIBRARY_PATH, no waf or Python.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 DIR EXPORT   (DIR: the simulator build.sh built; EXPORT: lab ns3 export's -o)" >&2
  exit 2
fi
sim=$(cd "$1" && pwd)/simulation
exp=$(cd "$2" && pwd)
if [[ ! -f $exp/config.txt || ! -f $exp/flows.csv ]]; then
  echo "run.sh: $exp has no config.txt and flows.csv: not an export of lab ns3 export" >&2
  exit 2
fi
if [[ ! -x $sim/build/scratch/third ]]; then
  echo "run.sh: $sim/build/scratch/third is not built: run $(dirname "$0")/build.sh $1" >&2
  exit 2
fi
if grep -q '^QP_MAX_RATE ' "$exp/config.txt" && ! grep -qF '"QP_MAX_RATE"' "$sim/scratch/third.cc"; then
  echo "run.sh: $exp sets QP_MAX_RATE (host links at the servers' whole capacity), which the sim in $1 does not read: make a copy that does with $(dirname "$0")/qp-rate.sh $1 NEW" >&2
  exit 2
fi
cd "$exp"
if ! LD_LIBRARY_PATH=$sim/build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$sim/build/scratch/third" config.txt >sim.log 2>&1; then
  echo "run.sh: the simulator failed; its output: $exp/sim.log" >&2
  exit 1
fi
flows=$(($(wc -l <"$exp/flows.csv") - 1))
completed=$(wc -l <"$exp/fct.txt")
echo "the simulator completed $completed of $flows flows; next: lab ns3 compare --sim $exp --bcfab RECORDS"
