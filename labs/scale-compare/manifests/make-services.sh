#!/bin/sh
# Make sure N ClusterIP Services named scale-1 … scale-N exist in lab-scale-compare, each in
# front of the three web pods (so each has 3 endpoints), labelled dplab-scale=yes.
# One `kubectl apply` for all of them; running it again with a larger N only adds the rest.
set -eu
n="${1:?usage: sh scale-compare/make-services.sh N}"
i=1
while [ "$i" -le "$n" ]; do
  cat <<YAML
---
apiVersion: v1
kind: Service
metadata:
  name: scale-$i
  labels:
    dplab-scale: "yes"
spec:
  selector:
    app: web
  ports:
    - port: 80
      targetPort: 8080
YAML
  i=$((i + 1))
done | kubectl -n lab-scale-compare apply -f - >/dev/null
echo "$(kubectl -n lab-scale-compare get services -l dplab-scale=yes -o name | wc -l) generated Services exist."
