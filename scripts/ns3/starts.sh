#!/usr/bin/env bash
# starts.sh DIR OUT CC [LAB]: the conformance study's long-flow cases of
# congestion control CC (dctcp: N = 2, 4, 8 DCTCP flows into one leaf
# port, 10 ms of the target at C/N; dcqcn-mlx: the DCQCN cases, 45 ms,
# under Mellanox's DCQCN, the simulator's) with their starts apart, in
# the HPCC simulator built by build.sh in DIR and in a bcfab lab, on the
# same flow files (starts/CC/*.csv: all at once, and six draws of starts
# 0-50 µs of the target apart). Writes each export and the sim's output
# under OUT/sim, bcfab's records and reports under OUT/bcfab, and prints
# each file's FCT spread (the greatest FCT over the least, less one) in
# both tools. LAB is the lab binary (default: bin/lab of this checkout).
# It brings up the lab of starts/CC/leafspine.yaml, named sts, and takes
# it down at the end, also on failure: about 25 minutes on 2 cores for
# dctcp (20 Mb/s), 25 for dcqcn-mlx (100 Mb/s).
set -euo pipefail

if [[ $# -lt 3 || $# -gt 4 ]]; then
  echo "usage: $0 DIR OUT CC [LAB]   (DIR: the simulator build.sh built; OUT: a new directory; CC: dctcp or dcqcn-mlx; LAB: the lab binary)" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
files=$here/starts/$3
lab=${4:-$here/../../bin/lab}
if [[ ! -f $files/leafspine.yaml ]]; then
  echo "starts.sh: no flow files for cc $3 (there are: $(ls "$here/starts" | tr '\n' ' '))" >&2
  exit 2
fi
if [[ ! -x $lab ]]; then
  echo "starts.sh: $lab is not an executable lab binary (make build)" >&2
  exit 2
fi
if [[ -e $2 ]]; then
  echo "starts.sh: $2 exists: give a new directory" >&2
  exit 2
fi
mkdir -p "$2/sim" "$2/bcfab"
out=$(cd "$2" && pwd)

for f in "$files"/long-*.csv; do
  name=$(basename "$f" .csv)
  "$lab" ns3 export -f "$files/leafspine.yaml" --flows "$f" -o "$out/sim/$name" >/dev/null
  "$here/run.sh" "$1" "$out/sim/$name"
done

"$lab" up -f "$files/leafspine.yaml" >"$out/bcfab/up.log" 2>&1
trap '"$lab" down --name sts >"$out/bcfab/down.log" 2>&1' EXIT
for f in "$files"/long-*.csv; do
  name=$(basename "$f" .csv)
  "$lab" workload --name sts --flows "$f" --records "$out/bcfab/$name.csv" --progress none >"$out/bcfab/$name.txt"
done

# The sim's fct.txt: its 7th column is the FCT (ns); bcfab's records:
# fct_target_ns, by the header.
spread_sim() { awk '{f=$7; if (NR==1||f<lo) lo=f; if (f>hi) hi=f} END {printf "%.1f", (hi/lo-1)*100}' "$1"; }
spread_bcfab() {
  awk -F, 'NR==1 {for (i=1; i<=NF; i++) if ($i=="fct_target_ns") c=i; next}
    {f=$c; if (NR==2||f<lo) lo=f; if (f>hi) hi=f} END {printf "%.1f", (hi/lo-1)*100}' "$1"
}
echo "FCT spread, %: the greatest FCT over the least, less one (draw 0: all at once)"
shopt -s nullglob
for n in 2 4 8; do
  sim="" bc=""
  for f in "$files"/long-$n-s*.csv; do
    name=$(basename "$f" .csv)
    sim+=" $(spread_sim "$out/sim/$name/fct.txt")"
    valid=""
    grep -q "^emulation health: valid" "$out/bcfab/$name.txt" || valid=" (INVALID)"
    bc+=" $(spread_bcfab "$out/bcfab/$name.csv")$valid"
  done
  [[ -n $sim ]] || continue
  echo "N = $n  sim:  $sim"
  echo "N = $n  bcfab:$bc"
done
