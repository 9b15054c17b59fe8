#!/usr/bin/env bash
# build.sh DIR: builds the HPCC simulator cloned by fetch.sh into DIR
# (its simulation/ tree: ns-3.17 with the paper's RDMA models, waf).
#
# Its waf needs Python 2 and its code a gcc no newer than 5 (its
# README). With docker on the PATH the build runs in an Ubuntu 16.04
# image made from this directory's Dockerfile (gcc 5.4, Python 2.7),
# the checkout mounted into it, as the calling user; NS3_DOCKER=0 builds
# on this machine instead, with CC and CXX (default gcc-5 and g++-5) and
# the python on the PATH, which must be Python 2.
set -euo pipefail

dir=${1:-}
if [[ -z $dir || $# -ne 1 ]]; then
  echo "usage: $0 DIR   (DIR: the checkout fetch.sh made)" >&2
  exit 2
fi
sim=$(cd "$dir" && pwd)/simulation
if [[ ! -x $sim/waf || ! -f $sim/scratch/third.cc ]]; then
  echo "build.sh: $sim has no waf or scratch/third.cc: not the HPCC simulator (see fetch.sh)" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
image=${NS3_IMAGE:-bcfab-hpcc-sim}

if [[ ${NS3_DOCKER:-auto} != 0 ]] && command -v docker >/dev/null; then
  docker build -t "$image" "$here"
  docker run --rm -u "$(id -u):$(id -g)" -e HOME=/tmp -v "$sim:/sim" -w /sim "$image" \
    sh -c './waf configure -d optimized && ./waf build'
else
  if ! python -c 'import sys; sys.exit(sys.version_info[0] != 2)' 2>/dev/null; then
    echo "build.sh: python is not Python 2, which the simulator's waf needs (or use docker)" >&2
    exit 1
  fi
  cd "$sim"
  CC=${CC:-gcc-5} CXX=${CXX:-g++-5} ./waf configure -d optimized
  ./waf build
fi
echo "built: $sim/build/scratch/third; next: $here/run.sh $dir EXPORT_DIR"
