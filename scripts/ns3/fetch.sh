#!/usr/bin/env bash
# fetch.sh DIR: clones the HPCC simulator (the ns-3 simulator of the HPCC
# paper, alibaba-edu/High-Precision-Congestion-Control) into DIR, a
# directory of the user's choice outside this repository, at the commit
# lab ns3 export writes for. Nothing of it enters bcfab's tree.
set -euo pipefail

# NS3_REPO: another place to clone it from (a mirror, a local clone);
# the commit is the same.
repo=${NS3_REPO:-https://github.com/alibaba-edu/High-Precision-Congestion-Control.git}
commit=9f4be2a9ead8a90e8bf732c66bd758c00e58e5be # master of 2021-03-11, the last

dir=${1:-}
if [[ -z $dir || $# -ne 1 ]]; then
  echo "usage: $0 DIR   (clone the HPCC simulator into DIR, outside this repository)" >&2
  exit 2
fi
if [[ -e $dir ]]; then
  echo "fetch.sh: $dir exists: give a new directory" >&2
  exit 2
fi
top=$(cd "$(dirname "$0")/../.." && pwd -P)
abs=$(realpath -m "$dir")
case $abs/ in
"$top"/*)
  echo "fetch.sh: $dir is inside the bcfab checkout $top: give a directory outside it" >&2
  exit 2
  ;;
esac

git clone "$repo" "$abs"
git -C "$abs" checkout --quiet "$commit"
echo "HPCC simulator at $commit in $abs; next: $(dirname "$0")/build.sh $abs"
