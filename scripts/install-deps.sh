#!/usr/bin/env bash
# Installs what building, running and testing the project needs on a Debian
# machine: the tools the lab and its tests call (ip, ping, iperf3, tcpdump,
# tshark, ethtool) and the eBPF toolchain `make generate` uses. Idempotent:
# when everything is present it changes nothing.
set -euo pipefail

pkgs=(iproute2 iputils-ping iperf3 tcpdump tshark ethtool clang llvm libbpf-dev make)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture; answer for it.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v go >/dev/null 2>&1 && [[ ! -x /usr/local/go/bin/go ]]; then
  echo "install-deps: Go is not installed (expected at /usr/local/go or on PATH)" >&2
  exit 1
fi
echo "install-deps: ok"
