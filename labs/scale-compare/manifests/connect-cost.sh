#!/usr/bin/env bash
# How long does a new TCP connection to a ClusterIP take, from the first worker? Opens N
# connections one after another with bash's /dev/tcp (no process per connection) and times
# each connect with $EPOCHREALTIME, after a few to warm up; prints the median and the 90th
# percentile in microseconds.
#
#   bash scale-compare/connect-cost.sh             # the summary
#   bash scale-compare/connect-cost.sh --median    # only the median, to keep in a variable
#   bash scale-compare/connect-cost.sh --first     # iptables: the Service whose rule comes first
#   bash scale-compare/connect-cost.sh --samples 500 --warm-up 50
#
# Which Service: on iptables a new connection walks KUBE-SERVICES from the top until a rule
# matches its ClusterIP and port, and kube-proxy writes that chain in no fixed order (a Go map's),
# anew on every sync. So the script reads the chain on the node, takes the lab's Service whose
# rule comes last (the most rules ahead of it; --first takes the one with the fewest) and says
# how many rules were ahead, before and after timing. nftables, IPVS and Cilium find a Service
# with one hash lookup, so any Service costs the same there: the script times `web` where the
# namespace has one, else `scale-1`, the first generated Service (both in front of the web pods).
set -euo pipefail

# --- On the node (the script runs itself there: `bash -c <this file> connect-cost on-node …`) ---
if [ "${1:-}" = on-node ]; then
  ns=$2 which=$3 samples=$4 warm=$5 target=${6:-}
  # The rules of KUBE-SERVICES in order, and where the chosen Service's rule is among them.
  position() {
    iptables-save -t nat | grep '^-A KUBE-SERVICES ' | awk -v ns="$ns/" -v which="$which" '
      { n++ }
      index($0, "\"" ns) && / cluster IP"/ && /--dport/ {
        if (which == "first" && pick) next
        pick = n; line = $0
      }
      END {
        if (!pick) exit 1
        name = line; sub(/^.*--comment "/, "", name); sub(/ cluster IP".*$/, "", name)
        ip = line; sub(/^.* -d /, "", ip); sub(/\/32.*$/, "", ip)
        port = line; sub(/^.*--dport /, "", port); sub(/ .*$/, "", port)
        print name, ip, port, pick, n
      }'
  }
  if [ "$target" = iptables ]; then
    read -r name ip port at total < <(position) || { echo "error no ClusterIP rule of $ns in KUBE-SERVICES" >&2; exit 3; }
    echo "target $name $ip $port"
    echo "position $at $total"
  else
    # target is "<ns/name> <ip> <port>", read by the caller from the API server.
    read -r name ip port <<<"$target"
    echo "target $name $ip $port"
  fi
  times=() failed=0 i=0
  while [ "$i" -lt $((warm + samples)) ]; do
    t0=$EPOCHREALTIME
    if { exec 3<>"/dev/tcp/$ip/$port"; } 2>/dev/null; then
      t1=$EPOCHREALTIME
      exec 3>&-
      # $EPOCHREALTIME is seconds with six decimals; without its point it is microseconds.
      [ "$i" -ge "$warm" ] && times+=($((${t1//[.,]/} - ${t0//[.,]/})))
    else
      failed=$((failed + 1))
    fi
    i=$((i + 1))
  done
  [ "$target" = iptables ] && echo "position-after $(position | cut -d' ' -f4-5)"
  echo "failed $failed"
  [ "${#times[@]}" -eq 0 ] || printf 'sample %s\n' "${times[@]}"
  exit 0
fi

# --- On your machine: choose, run on the node, summarise ---
ns=lab-scale-compare
which=last samples=400 warm=50 only=
while [ $# -gt 0 ]; do
  case "$1" in
    --first) which=first ;;
    --median) only=median ;;
    --samples) samples=$2; shift ;;
    --warm-up) warm=$2; shift ;;
    *) echo "usage: bash scale-compare/connect-cost.sh [--first] [--median] [--samples N] [--warm-up N]" >&2; exit 2 ;;
  esac
  shift
done
node="$DPLAB_CLUSTER-worker"
if [ "$DPLAB_MODE" = iptables ]; then
  target=iptables
else
  # A hash finds any Service alike: web where there is one, else the first generated Service.
  for name in web scale-1; do
    addr=$(kubectl -n "$ns" get service "$name" -o jsonpath='{.spec.clusterIP} {.spec.ports[0].port}' 2>/dev/null) && break
  done
  [ -n "${addr:-}" ] || { echo "no Service web or scale-1 in $ns to time: create the Services first (make-services.sh)" >&2; exit 1; }
  target="$ns/$name $addr"
fi
out=$(docker exec "$node" bash -c "$(cat "$0")" connect-cost on-node "$ns" "$which" "$samples" "$warm" "$target")
printf '%s\n' "$out" | awk -v node="$node" -v only="$only" -v warm="$warm" '
  $1 == "target" { name = $2; addr = $3 ":" $4 }
  $1 == "position" { ahead = $2 - 1; total = $3 }
  $1 == "position-after" { after = $2 - 1 }
  $1 == "failed" { failed = $2 }
  $1 == "sample" { t[++n] = $2 }
  END {
    if (!n) { print "no connection succeeded (" failed " failed)" > "/dev/stderr"; exit 1 }
    # sort the samples (insertion sort: a few hundred numbers)
    for (i = 2; i <= n; i++) { v = t[i]; for (j = i - 1; j >= 1 && t[j] > v; j--) t[j + 1] = t[j]; t[j + 1] = v }
    # nearest rank: the median is the ceil(n/2)-th smallest, p90 the ceil(0.9 n)-th
    median = t[int((n + 1) / 2)]
    p90 = t[int((9 * n + 9) / 10)]
    if (only == "median") { print median; exit 0 }
    printf "Timed %d new TCP connections from %s to %s (%s), after %d to warm up", n, node, name, addr, warm
    if (failed) printf "; %d failed", failed
    printf ".\n"
    if (total) {
      printf "KUBE-SERVICES: %d rules ahead of its rule (of %d) before timing, %d after", ahead, total, after
      printf (after == ahead ? ".\n" : " (kube-proxy rewrote the chain meanwhile: time again).\n")
    }
    printf "connect time: median %d µs, p90 %d µs\n", median, p90
  }'
