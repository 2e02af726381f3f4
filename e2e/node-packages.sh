#!/usr/bin/env bash
# Installs what the real-node end-to-end test runs beside the binaries of e2e/build.sh, when
# missing: containerd and runc (the container runtime kubelet talks to over CRI), Debian's CNI
# plugins (the pods' bridge and addresses), iproute2 (the test's veth pair and network namespaces)
# and iptables (only read, to check that the test leaves no rule behind). Debian's packages, as
# root; a no-op when everything is there. Takes no arguments.
set -euo pipefail
case "${1:-}" in
  "") ;;
  -h | --help) sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "node-packages.sh: takes no arguments, not $1 (--help says what it does)" >&2; exit 2 ;;
esac

need=()
command -v containerd >/dev/null 2>&1 || need+=(containerd)
command -v ctr >/dev/null 2>&1 || need+=(containerd)
command -v runc >/dev/null 2>&1 || need+=(runc)
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] || need+=(containernetworking-plugins)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v iptables-save >/dev/null 2>&1 || need+=(iptables)
if [[ ${#need[@]} -eq 0 ]]; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  echo "e2e/node-packages.sh: missing ${need[*]}; install them (Debian: apt-get install ${need[*]})" >&2
  exit 2
fi
echo "e2e/node-packages.sh: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
