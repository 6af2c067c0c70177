//go:build tools

// Package tools keeps CoreDNS's main package in go.sum.
package tools

import _ "github.com/coredns/coredns"
