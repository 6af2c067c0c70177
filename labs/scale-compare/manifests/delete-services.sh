#!/bin/sh
# Delete every generated Service (label dplab-scale=yes) in lab-scale-compare.
# `kubectl delete -l …` sends one DELETE per Service and waits for each answer before the next,
# so a thousand of them take minutes on a busy laptop; four kubectl processes with a hundred
# names each keep four requests in flight.
set -eu
ns=lab-scale-compare
names="$(kubectl -n "$ns" get services -l dplab-scale=yes -o name)"
if [ -n "$names" ]; then
  printf '%s\n' "$names" | xargs -n 100 -P 4 kubectl -n "$ns" delete --wait=false >/dev/null
fi
echo "$(kubectl -n "$ns" get services -l dplab-scale=yes -o name | wc -l) generated Services left."
