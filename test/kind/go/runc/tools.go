//go:build tools
package tools
import _ "github.com/opencontainers/runc"
