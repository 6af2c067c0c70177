// Command dplab-runc is the test environment's OCI runtime: it removes the capabilities this
// host cannot grant from a container's spec, then runs the real runc with the same arguments.
//
// Why: on these machines root's capability bounding set lacks CAP_SYS_RESOURCE, and Docker
// (20.10) puts every capability it knows into a privileged container's spec, so runc fails
// with "unable to apply caps: operation not permitted" and no kind node can start. dockerd
// runs this program as its default runtime (`--add-runtime dplab-runc=… --default-runtime
// dplab-runc`); it rewrites the bundle's config.json on `create` and the `--process` file on
// `exec`, dropping only capabilities absent from its own bounding set. Nothing else changes.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// capNames maps capability numbers to the names OCI specs use (linux/capability.h).
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
	"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL",
	"CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
}

// missingCaps are the known capabilities not in this process's bounding set (CapBnd).
func missingCaps() map[string]bool {
	missing := map[string]bool{}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return missing
	}
	for _, line := range strings.Split(string(status), "\n") {
		if !strings.HasPrefix(line, "CapBnd:") {
			continue
		}
		bnd, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, "CapBnd:")), 16, 64)
		if err != nil {
			return missing
		}
		for i, name := range capNames {
			if bnd&(1<<uint(i)) == 0 {
				missing[name] = true
			}
		}
	}
	return missing
}

func stripCaps(process map[string]any, missing map[string]bool) bool {
	caps, _ := process["capabilities"].(map[string]any)
	changed := false
	for set, v := range caps {
		list, ok := v.([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(list))
		for _, c := range list {
			if name, _ := c.(string); missing[name] {
				changed = true
				continue
			}
			kept = append(kept, c)
		}
		caps[set] = kept
	}
	return changed
}

// rewrite drops missing capabilities from a spec (config.json: under "process") or a process file.
func rewrite(path string, spec bool, missing map[string]bool) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	process := doc
	if spec {
		process, _ = doc["process"].(map[string]any)
	}
	if process == nil || !stripCaps(process, missing) {
		return nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, info.Mode().Perm())
}

func main() {
	args := os.Args[1:]
	missing := missingCaps()
	if len(missing) > 0 {
		for i := 0; i+1 < len(args); i++ {
			var err error
			switch args[i] {
			case "--bundle", "-b":
				err = rewrite(filepath.Join(args[i+1], "config.json"), true, missing)
			case "--process", "-p":
				err = rewrite(args[i+1], false, missing)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "dplab-runc: %v\n", err)
				os.Exit(1)
			}
		}
	}
	real := os.Getenv("DPLAB_REAL_RUNC")
	if real == "" {
		real = "/usr/sbin/runc"
	}
	if err := syscall.Exec(real, append([]string{real}, args...), os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "dplab-runc: exec %s: %v\n", real, err)
		os.Exit(1)
	}
}
