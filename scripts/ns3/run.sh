#!/usr/bin/env bash
# run.sh DIR EXPORT: runs the HPCC simulator built by build.sh in DIR on
# a directory lab ns3 export wrote (EXPORT), in that directory: its
# config.txt names the files beside it, and the simulator writes fct.txt,
# pfc.txt, qlen.txt and mix.tr there. Then lab ns3 compare --sim EXPORT
# --bcfab RECORDS puts its FCTs beside bcfab's. Docker as build.sh
# (NS3_DOCKER=0: on this machine).
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
image=${NS3_IMAGE:-bcfab-hpcc-sim}

if [[ ${NS3_DOCKER:-auto} != 0 ]] && command -v docker >/dev/null; then
  docker run --rm -u "$(id -u):$(id -g)" -e HOME=/tmp -v "$sim:/sim" -v "$exp:/exp" -w /sim "$image" \
    ./waf --run 'scratch/third config.txt' --cwd=/exp
else
  cd "$sim"
  ./waf --run 'scratch/third config.txt' --cwd="$exp"
fi
flows=$(($(wc -l <"$exp/flows.csv") - 1))
completed=$(wc -l <"$exp/fct.txt")
echo "the simulator completed $completed of $flows flows; next: lab ns3 compare --sim $exp --bcfab RECORDS"
