#!/bin/sh
# Make sure N ClusterIP Services named scale-1 … scale-N exist in lab-scale-compare, each in
# front of the three web pods (so each has 3 endpoints), labelled dplab-scale=yes.
# Only the missing ones are created, in batches of 500, four kubectl at a time (kubectl sends
# one request per Service, so one batch after another would take minutes at 10,000); running it
# again with a larger N adds the rest.
set -eu
n="${1:?usage: sh scale-compare/make-services.sh N}"
ns=lab-scale-compare
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kubectl -n "$ns" get services -l dplab-scale=yes -o name >"$tmp/have"
from=1
running=0
while [ "$from" -le "$n" ]; do
  to=$((from + 499))
  [ "$to" -le "$n" ] || to=$n
  # The batch's manifests, leaving out the Services that exist already.
  awk -v from="$from" -v to="$to" '
    { have[$0] = 1 }
    END {
      for (i = from; i <= to; i++) if (!(("service/scale-" i) in have))
        printf "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: scale-%d\n  labels:\n    dplab-scale: \"yes\"\nspec:\n  selector:\n    app: web\n  ports:\n    - port: 80\n      targetPort: 8080\n", i
    }' "$tmp/have" >"$tmp/$from.yaml"
  if [ -s "$tmp/$from.yaml" ]; then
    kubectl -n "$ns" create -f "$tmp/$from.yaml" >/dev/null &
    running=$((running + 1))
  fi
  if [ "$running" -ge 4 ]; then
    wait
    running=0
  fi
  from=$((to + 1))
done
wait
echo "$(kubectl -n "$ns" get services -l dplab-scale=yes -o name | wc -l) generated Services exist."
