#!/bin/sh
# Print one number: how big this cluster's Service dataplane is on its first worker, counted
# the same way the lab's check counts it (scripts/labs/checks/scale.ts, ENTRY_COUNTS).
# With --settled it counts every 3 s until two counts agree (at most a minute), for a baseline:
# just after the lab's setup, kube-proxy may still be writing web's rules.
set -eu
if [ "${1:-}" = --settled ]; then
  last=$(sh "$0")
  tries=0
  while [ "$tries" -lt 20 ]; do
    sleep 3
    now=$(sh "$0")
    [ "$now" = "$last" ] && break
    last=$now
    tries=$((tries + 1))
  done
  echo "$last"
  exit 0
fi
node="$DPLAB_CLUSTER-worker"
case "$DPLAB_MODE" in
  iptables) docker exec "$node" sh -c "iptables-save | grep -c '^-A KUBE-'" ;;
  nftables) docker exec "$node" sh -c 'nft list table ip kube-proxy | wc -l' ;;
  ipvs) docker exec "$node" sh -c "a=\$(ip -4 -o addr show dev kube-ipvs0) && printf '%s\\n' \"\$a\" | grep -c ' inet '" ;;
  cilium) kubectl -n kube-system exec ds/cilium -c cilium-agent -- sh -c "cilium-dbg service list | grep -cE '^[0-9]'" ;;
  *) echo "unknown DPLAB_MODE '$DPLAB_MODE'" >&2; exit 2 ;;
esac
