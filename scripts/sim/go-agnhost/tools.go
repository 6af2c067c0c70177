//go:build tools

// Package tools pins agnhost so `go mod tidy` keeps it in go.sum.
package tools

import _ "k8s.io/kubernetes/test/images/agnhost"
