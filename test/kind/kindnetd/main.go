// Command kindnetd is the test environment's stand-in for kind's default CNI daemon (the
// docker.io/kindest/kindnetd image, whose source is a nested Go module the module proxy does not
// serve). It does what the labs see kindnet do on a node, written here from its observable
// behaviour: it writes the node's CNI config (ptp + host-local on the node's pod CIDR, portmap),
// routes every other node's pod CIDR via that node's InternalIP, and keeps kind's masquerade
// rules (chain KIND-MASQ-AGENT in the nat table: pod-network destinations RETURN, the rest
// MASQUERADE, jumped to from POSTROUTING for non-LOCAL destinations). Network policies, IPv6 and
// NRI are not done here. It uses the iptables and ip tools of its image.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	cniConfigPath = "/etc/cni/net.d/10-kindnet.conflist"
	masqChain     = "KIND-MASQ-AGENT"
	resync        = 10 * time.Second
	masqResync    = 60 * time.Second
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s kindnetd: %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
}

func run(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// ensureRule appends a rule unless `iptables -C` finds it already.
func ensureRule(chain string, rule ...string) error {
	if _, err := run("iptables", append([]string{"-t", "nat", "-C", chain}, rule...)...); err == nil {
		return nil
	}
	_, err := run("iptables", append([]string{"-t", "nat", "-A", chain}, rule...)...)
	return err
}

func syncMasquerade(noMasq []string) error {
	if _, err := run("iptables", "-t", "nat", "-S", masqChain); err != nil {
		if _, err := run("iptables", "-t", "nat", "-N", masqChain); err != nil {
			return err
		}
	}
	for _, cidr := range noMasq {
		if err := ensureRule(masqChain, "-d", cidr, "-m", "comment", "--comment", "kind-masq-agent: local traffic is not subject to MASQUERADE", "-j", "RETURN"); err != nil {
			return err
		}
	}
	if err := ensureRule(masqChain, "-m", "comment", "--comment", "kind-masq-agent: outbound traffic is subject to MASQUERADE (must be last in chain)", "-j", "MASQUERADE"); err != nil {
		return err
	}
	return ensureRule("POSTROUTING", "-m", "addrtype", "!", "--dst-type", "LOCAL", "-m", "comment", "--comment", "kind-masq-agent: ensure nat POSTROUTING directs all non-LOCAL destination traffic to our custom KIND-MASQ-AGENT chain", "-j", masqChain)
}

func eth0MTU() int {
	if i, err := net.InterfaceByName("eth0"); err == nil {
		return i.MTU
	}
	return 0
}

func cniConfig(podCIDR string, mtu int) string {
	mtuField := ""
	if mtu > 0 {
		mtuField = fmt.Sprintf(",\n\t\t\"mtu\": %d", mtu)
	}
	return fmt.Sprintf(`{
	"cniVersion": "0.3.1",
	"name": "kindnet",
	"plugins": [
	{
		"type": "ptp",
		"ipMasq": false,
		"ipam": {
			"type": "host-local",
			"dataDir": "/run/cni-ipam-state",
			"routes": [ { "dst": "0.0.0.0/0" } ],
			"ranges": [ [ { "subnet": "%s" } ] ]
		}%s
	},
	{
		"type": "portmap",
		"capabilities": { "portMappings": true }
	}
	]
}
`, podCIDR, mtuField)
}

// writeCNIConfig writes through a temporary name the runtime ignores, then renames, so the
// runtime never reads half a file.
func writeCNIConfig(content string) error {
	if old, err := os.ReadFile(cniConfigPath); err == nil && string(old) == content {
		return nil
	}
	tmp := cniConfigPath + ".temp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	logf("writing %s", cniConfigPath)
	return os.Rename(tmp, cniConfigPath)
}

func internalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && net.ParseIP(a.Address).To4() != nil {
			return a.Address
		}
	}
	return ""
}

func reconcile(ctx context.Context, client kubernetes.Interface, hostIP string, mtu int) error {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		ip := internalIP(n)
		if n.Spec.PodCIDR == "" || ip == "" {
			continue
		}
		if ip == hostIP {
			if err := writeCNIConfig(cniConfig(n.Spec.PodCIDR, mtu)); err != nil {
				return err
			}
			continue
		}
		if out, err := run("ip", "route", "show", n.Spec.PodCIDR); err == nil && strings.Contains(out, "via "+ip+" ") {
			continue
		}
		logf("route %s via %s (node %s)", n.Spec.PodCIDR, ip, n.Name)
		if _, err := run("ip", "route", "replace", n.Spec.PodCIDR, "via", ip); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	hostIP := os.Getenv("HOST_IP")
	podSubnets := strings.Split(strings.TrimSpace(os.Getenv("POD_SUBNET")), ",")
	if hostIP == "" || podSubnets[0] == "" {
		logf("HOST_IP and POD_SUBNET must be set")
		os.Exit(1)
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		logf("in-cluster config: %v", err)
		os.Exit(1)
	}
	if ep := os.Getenv("CONTROL_PLANE_ENDPOINT"); ep != "" {
		if c, err := net.DialTimeout("tcp", ep, 2*time.Second); err == nil {
			c.Close()
			cfg.Host = "https://" + ep
		}
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		logf("client: %v", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	mtu := eth0MTU()
	logf("node %s, pod subnets %v, mtu %d, api %s", hostIP, podSubnets, mtu, cfg.Host)

	lastMasq := time.Time{}
	failures := 0
	for {
		if time.Since(lastMasq) >= masqResync {
			if err := syncMasquerade(podSubnets); err != nil {
				logf("masquerade rules: %v", err)
			} else {
				lastMasq = time.Now()
			}
		}
		if err := reconcile(ctx, client, hostIP, mtu); err != nil {
			failures++
			logf("reconcile (%d in a row): %v", failures, err)
			if failures > 30 {
				os.Exit(1)
			}
		} else {
			failures = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(resync):
		}
	}
}
