package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/creack/pty"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// executor runs a command in a pod's namespaces: its UTS namespace (hostname = pod name) by
// nsenter, then its network namespace by `ip netns exec`, which also gives the command a mount
// namespace with /etc/netns/<pod>/{resolv.conf,hosts,hostname} over /etc, as the pod has.
type executor struct {
	pods    *podStore
	agnhost string
}

// ExecInContainer implements k8s.io/kubelet/pkg/cri/streaming/remotecommand.Executor. name is
// "<namespace>/<pod>" (set by the route).
func (e *executor) ExecInContainer(ctx context.Context, name string, uid types.UID, container string, cmd []string, in io.Reader, out, stderr io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, timeout time.Duration) error {
	ns, pod, _ := strings.Cut(name, "/")
	rec, err := e.pods.find(ns, pod, string(uid))
	if err != nil {
		return err
	}
	c, err := rec.container(container)
	if err != nil {
		return err
	}
	if len(cmd) == 0 {
		return errors.New("no command given")
	}
	argv := append([]string{"--uts=" + rec.UtsFile, "--", "ip", "netns", "exec", rec.Netns}, e.mapCommand(cmd)...)
	command := exec.CommandContext(ctx, "nsenter", argv...)
	command.Env = containerEnv(c.Env, rec.Name, tty)
	command.Dir = "/"

	var runErr error
	if tty {
		runErr = runWithTTY(command, in, out, resize)
	} else {
		if in != nil {
			command.Stdin = in
		}
		command.Stdout = out
		command.Stderr = stderr
		runErr = command.Run()
	}
	var exitErr *exec.ExitError
	if errors.As(runErr, &exitErr) {
		// ServeExec reports an exit code only for k8s.io/utils/exec ExitErrors.
		return utilexec.CodeExitError{Err: runErr, Code: exitErr.ExitCode()}
	}
	return runErr
}

// mapCommand makes "/agnhost …" (the agnhost image's entrypoint) run the built binary.
func (e *executor) mapCommand(cmd []string) []string {
	out := append([]string(nil), cmd...)
	if e.agnhost != "" && (out[0] == "/agnhost" || out[0] == "agnhost") {
		out[0] = e.agnhost
	}
	return out
}

func containerEnv(env map[string]string, hostname string, tty bool) []string {
	merged := map[string]string{"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOSTNAME": hostname, "HOME": "/root"}
	for k, v := range env {
		merged[k] = v
	}
	if tty {
		merged["TERM"] = "xterm"
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	list := make([]string, 0, len(keys))
	for _, k := range keys {
		list = append(list, k+"="+merged[k])
	}
	return list
}

// runWithTTY gives the command a pseudo-terminal sized by the client's resize events.
func runWithTTY(command *exec.Cmd, in io.Reader, out io.Writer, resize <-chan remotecommand.TerminalSize) error {
	f, err := pty.Start(command)
	if err != nil {
		return fmt.Errorf("starting a terminal: %w", err)
	}
	defer f.Close()
	go func() {
		for size := range resize {
			_ = pty.Setsize(f, &pty.Winsize{Rows: size.Height, Cols: size.Width})
		}
	}()
	if in != nil {
		go func() { _, _ = io.Copy(f, in) }()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if out != nil {
			_, _ = io.Copy(out, f) // ends with EIO once the command and its children are gone
		} else {
			_, _ = io.Copy(io.Discard, f)
		}
	}()
	err = command.Wait()
	// Give the last output a moment to drain from the pty before the stream closes.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(500 * time.Millisecond):
	}
	return err
}
