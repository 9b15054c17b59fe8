#!/usr/bin/env bash
# qp-rate.sh DIR NEW: a copy of the simulator checkout DIR (built by
# build.sh) in NEW that reads one more key of config.txt, QP_MAX_RATE (a
# rate, as RATE_AI's): every flow (QP) of the sim starts at and never
# exceeds the lower of it and its NIC's rate. The stock sim starts every
# flow at its NIC's rate and caps it there (rdma-hw.cc's AddQueuePair),
# and ignores keys it does not know, value and all.
#
# An export with host links at the servers' whole capacity (lab ns3
# export --host-link ports; an experiment's ns3: {host_link: ports})
# writes the key: its BCube hosts' links to their relays run at the sum
# of the server's ports, as bcfab's NIC sends and receives on all of
# them at once, while each flow, as in bcfab, runs at one port's rate.
# lab refuses to run such an export on a sim without the key.
# docs/VALIDATION.md measures what the difference does; lab experiment
# run --ns3 NEW runs the copy.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 DIR NEW   (DIR: a checkout build.sh built; NEW: a new directory for the copy)" >&2
  exit 2
fi
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
copy_checkout qp-rate.sh "$1" "$2"
third=$sim/scratch/third.cc
hw=$sim/src/point-to-point/model/rdma-hw.cc
key='}else if (key.compare("PINT_PROB") == 0){'
ns='namespace ns3{'
init='DataRate m_bps = m_nic[nic_idx].dev->GetDataRate();'
use='using namespace ns3;'
if [[ $(grep -cF "$key" "$third") -ne 1 || $(grep -c "^$use" "$third") -ne 1 || $(grep -cxF "$ns" "$hw") -ne 1 || $(grep -cF "$init" "$hw") -ne 1 ]] ||
  grep -qF QP_MAX_RATE "$third"; then
  rm -rf "$new"
  echo "qp-rate.sh: $1 is not the commit fetch.sh takes, or has QP_MAX_RATE already" >&2
  exit 1
fi
esc() { printf '%s' "$1" | sed 's/[][\.*^$|/]/\\&/g'; }
# The cap, one variable of the sim's library, set by third.cc.
sed -i "/^$(esc "$ns")\$/a\\
uint64_t bcfab_qp_max_bps = 0; // bcfab (qp-rate.sh): QP_MAX_RATE, 0 for none" "$hw"
sed -i "/$(esc "$init")/a\\
\\tif (bcfab_qp_max_bps > 0 \\&\\& m_bps.GetBitRate() > bcfab_qp_max_bps) m_bps = DataRate(bcfab_qp_max_bps); // bcfab (qp-rate.sh)" "$hw"
sed -i "s|$(esc "$key")|}else if (key.compare(\"QP_MAX_RATE\") == 0){ std::string v; conf >> v; bcfab_qp_max_bps = DataRate(v).GetBitRate(); std::cout << \"QP_MAX_RATE\\\\t\\\\t\\\\t\\\\t\" << v << '\\\\n'; // bcfab (qp-rate.sh)\n\\t\\t\\t$key|" "$third"
sed -i "/^$(esc "$use")/a\\
namespace ns3 { extern uint64_t bcfab_qp_max_bps; } // bcfab (qp-rate.sh)" "$third"
rebuild qp-rate.sh
grep -n 'qp-rate.sh' "$third" "$hw"
echo "built: $sim/build/scratch/third, flows capped at QP_MAX_RATE; lab experiment run ... --ns3 $new"
