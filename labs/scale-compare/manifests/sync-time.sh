#!/bin/sh
# kube-proxy's own measurement of how long a full rule sync takes, on the first worker:
# the count and sum of kubeproxy_sync_proxy_rules_duration_seconds, and the average.
set -eu
docker exec "$DPLAB_CLUSTER-worker" curl -s http://127.0.0.1:10249/metrics |
  awk '/^kubeproxy_sync_proxy_rules_duration_seconds_(sum|count)/ { print; v[$1] = $2 }
       END { c = v["kubeproxy_sync_proxy_rules_duration_seconds_count"]; if (c > 0) printf "average: %.1f ms over %d syncs\n", 1000 * v["kubeproxy_sync_proxy_rules_duration_seconds_sum"] / c, c }'
