#!/bin/sh
# kube-proxy's own measurement of how long a full rule sync takes, on the first worker:
# the count and sum of kubeproxy_sync_proxy_rules_duration_seconds, and the average.
# Since Kubernetes 1.33 each series carries an ip_family label ({ip_family="IPv4"}); the
# labels are dropped from the name and the families added up.
set -eu
docker exec "$DPLAB_CLUSTER-worker" curl -s http://127.0.0.1:10249/metrics |
  awk '/^kubeproxy_sync_proxy_rules_duration_seconds_(sum|count)[{ ]/ {
         print; name = $1; sub(/\{.*/, "", name); v[name] += $NF }
       END { c = v["kubeproxy_sync_proxy_rules_duration_seconds_count"]; if (c > 0) printf "average: %.1f ms over %d syncs\n", 1000 * v["kubeproxy_sync_proxy_rules_duration_seconds_sum"] / c, c }'
