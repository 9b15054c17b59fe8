#!/usr/bin/env bash
# build.sh DIR: builds the HPCC simulator cloned by fetch.sh into DIR
# (its simulation/ tree: ns-3.17 with the paper's RDMA models, waf), the
# modules its program scratch/third needs and nothing else:
# point-to-point, internet, applications and what they need, optimized,
# without Python bindings, tests or examples.
#
# Its waf needs Python 2, and its README asks for gcc 5. On this
# machine's kind (Debian 12, gcc 12, Python 2.7 from pyenv) it builds in
# about two minutes with gcc 12 in C++11 mode, warnings off (its code
# trips -Werror and a few C++17 rules, nothing more):
#   CXXFLAGS="-std=gnu++11 -O2 -w -fpermissive"
# build.sh sets those unless CXXFLAGS is set, and finds a Python 2 in
# $PYTHON, python2.7, python2, python, or pyenv's 2.x. With a running
# docker engine and NS3_DOCKER=1 it builds instead in an Ubuntu 16.04
# image from this directory's Dockerfile (gcc 5.4, Python 2.7), the
# checkout mounted into it, as the calling user.
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
# shellcheck source=lib.sh
. "$here/lib.sh"
image=${NS3_IMAGE:-bcfab-hpcc-sim}
configure=(configure -d optimized --enable-modules=point-to-point,internet,applications
  --disable-python --disable-tests --disable-examples)

if [[ ${NS3_DOCKER:-0} == 1 ]]; then
  docker build -t "$image" "$here"
  docker run --rm -u "$(id -u):$(id -g)" -e HOME=/tmp -v "$sim:/sim" -w /sim "$image" \
    sh -c "./waf ${configure[*]} && ./waf build"
else
  if ! find_python2; then
    echo "build.sh: no Python 2, which the simulator's waf needs: set PYTHON, or install one (pyenv install 2.7.18)" >&2
    exit 1
  fi
  cd "$sim"
  CXXFLAGS=${CXXFLAGS:--std=gnu++11 -O2 -w -fpermissive} "${py[@]}" ./waf "${configure[@]}"
  "${py[@]}" ./waf build
fi
if [[ ! -x $sim/build/scratch/third ]]; then
  echo "build.sh: the build made no $sim/build/scratch/third" >&2
  exit 1
fi
echo "built: $sim/build/scratch/third; next: lab experiment run ns3-leafspine --ns3 $dir, or $here/run.sh $dir EXPORT_DIR"
