//go:build tools
package tools
import (
	_ "github.com/cilium/cilium/daemon"
	_ "github.com/cilium/cilium/cilium-dbg"
	_ "github.com/cilium/cilium/cilium-health"
	_ "github.com/cilium/cilium/cilium-health/responder"
	_ "github.com/cilium/cilium/bugtool"
	_ "github.com/cilium/cilium/hubble"
	_ "github.com/cilium/cilium/tools/mount"
	_ "github.com/cilium/cilium/tools/sysctlfix"
	_ "github.com/cilium/cilium/plugins/cilium-cni"
	_ "github.com/cilium/cilium/operator"
	_ "github.com/cilium/cilium/hubble-relay"
)
