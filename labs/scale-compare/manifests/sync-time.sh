#!/bin/sh
# kube-proxy's own measurement of how long its rule syncs take, on the first worker:
# kubeproxy_sync_proxy_rules_duration_seconds counts every sync, full and partial (the
# partial ones rewrite only what changed); kubeproxy_sync_full_proxy_rules_duration_seconds
# counts the full ones alone. Each series carries an ip_family label, one per family kube-proxy
# runs (on kind's IPv4-only nodes an IPv6 one too); the labels are dropped and the families
# added up.
set -eu
docker exec "$DPLAB_CLUSTER-worker" curl -s http://127.0.0.1:10249/metrics |
  awk '/^kubeproxy_sync_(full_)?proxy_rules_duration_seconds_(sum|count)[{ ]/ {
         print; name = $1; sub(/\{.*/, "", name); v[name] += $NF }
       function avg(kind, metric) {
         c = v[metric "_count"]; if (c > 0) printf "%s: %.1f ms on average over %d syncs\n", kind, 1000 * v[metric "_sum"] / c, c }
       END { avg("all syncs", "kubeproxy_sync_proxy_rules_duration_seconds"); avg("full syncs", "kubeproxy_sync_full_proxy_rules_duration_seconds") }'
