#!/usr/bin/env bash
# Installs what building, running and testing the project needs on a Debian
# machine: the tools the lab and its tests call (ip, ping, iperf3, tcpdump,
# tshark, ethtool, and tmux, a terminal for the progress bar's test), Open
# vSwitch (a device of `lab bench datapath`) and the eBPF toolchain `make
# generate` uses. Idempotent: when everything is
# present it changes nothing.
set -euo pipefail

pkgs=(iproute2 iputils-ping iperf3 tcpdump tshark ethtool tmux clang llvm libbpf-dev make openvswitch-switch bash-completion)
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
  # The benchmark runs a private Open vSwitch per run; the system-wide one
  # the package may have just started (and enabled) must not run beside it.
  # Only when we installed it: an OVS that was here before is the owner's.
  if [[ " ${missing[*]} " == *" openvswitch-switch "* ]]; then
    if [[ -d /run/systemd/system ]]; then
      systemctl disable --now openvswitch-switch.service ovs-vswitchd.service ovsdb-server.service >/dev/null 2>&1 || true
    elif /etc/init.d/openvswitch-switch status >/dev/null 2>&1; then
      /etc/init.d/openvswitch-switch stop >/dev/null
      update-rc.d openvswitch-switch disable >/dev/null 2>&1 || true
    fi
  fi
fi

if ! command -v go >/dev/null 2>&1 && [[ ! -x /usr/local/go/bin/go ]]; then
  echo "install-deps: Go is not installed (expected at /usr/local/go or on PATH)" >&2
  exit 1
fi
echo "install-deps: ok"
