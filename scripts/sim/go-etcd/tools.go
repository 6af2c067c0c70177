//go:build tools

// Package tools keeps the etcd server's main package in go.sum.
package tools

import _ "go.etcd.io/etcd/server/v3"
