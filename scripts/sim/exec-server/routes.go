package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubelet/pkg/cri/streaming/remotecommand"
)

// The kubelet's defaults (KubeletConfiguration.streamingConnectionIdleTimeout, and the CRI
// streaming server's stream creation timeout).
const (
	idleTimeout           = 4 * time.Hour
	streamCreationTimeout = 30 * time.Second
	logPollInterval       = 250 * time.Millisecond
)

func routes(pods *podStore, exec *executor) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	serveExec := func(w http.ResponseWriter, r *http.Request) {
		opts, err := remotecommand.NewOptions(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		name := r.PathValue("ns") + "/" + r.PathValue("pod")
		remotecommand.ServeExec(w, r, exec, name, types.UID(r.PathValue("uid")), r.PathValue("container"), r.URL.Query()["command"], opts, idleTimeout, streamCreationTimeout, remotecommandconsts.SupportedStreamingProtocols)
	}
	for _, p := range []string{"/exec/{ns}/{pod}/{container}", "/exec/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc("GET "+p, serveExec)
		mux.HandleFunc("POST "+p, serveExec)
	}
	serveRun := func(w http.ResponseWriter, r *http.Request) {
		cmd := r.URL.Query()["cmd"]
		if len(cmd) == 0 {
			cmd = r.URL.Query()["command"]
		}
		var out bytes.Buffer
		name := r.PathValue("ns") + "/" + r.PathValue("pod")
		err := exec.ExecInContainer(r.Context(), name, types.UID(r.PathValue("uid")), r.PathValue("container"), cmd, nil, nopCloser{&out}, nopCloser{&out}, false, nil, 0)
		if err != nil && out.Len() == 0 {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(out.Bytes())
	}
	for _, p := range []string{"/run/{ns}/{pod}/{container}", "/run/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc("POST "+p, serveRun)
	}
	mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", func(w http.ResponseWriter, r *http.Request) {
		serveLogs(w, r, pods)
	})
	return mux
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// serveLogs answers `kubectl logs` from the file the stand-in writes a container's output to.
// Supported: follow, tailLines, limitBytes. (The stand-in keeps one file per container run, so
// previous=true reads the run before the current one.)
func serveLogs(w http.ResponseWriter, r *http.Request, pods *podStore) {
	rec, err := pods.find(r.PathValue("ns"), r.PathValue("pod"), "")
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	c, err := rec.container(r.PathValue("container"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	file := c.LogFile
	if q.Get("previous") == "true" {
		if c.RestartCount == 0 {
			http.Error(w, fmt.Sprintf("previous terminated container %q in pod %q not found", c.Name, rec.Name), http.StatusBadRequest)
			return
		}
		file = previousLogFile(c.LogFile, c.RestartCount)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil && n >= 0 {
		data = tailLines(data, n)
	}
	if n, err := strconv.Atoi(q.Get("limitBytes")); err == nil && n >= 0 && n < len(data) {
		data = data[:n]
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write(data)
	if q.Get("follow") != "true" {
		return
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	followFile(r.Context(), w, file, int64(len(data)))
}

func previousLogFile(current string, restartCount int) string {
	// The stand-in names files <dir>/<restartCount>.log.
	dir := current[:len(current)-len(strconv.Itoa(restartCount)+".log")]
	return dir + strconv.Itoa(restartCount-1) + ".log"
}

func tailLines(data []byte, n int) []byte {
	if n == 0 {
		return nil
	}
	lines := 0
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == '\n' && i != len(data)-1 {
			lines++
			if lines == n {
				return data[i+1:]
			}
		}
	}
	return data
}

// followFile streams what is appended to the file until the client goes away.
func followFile(ctx context.Context, w http.ResponseWriter, file string, from int64) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return
	}
	reader := bufio.NewReader(f)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32*1024)
	for {
		n, _ := reader.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(logPollInterval):
		}
	}
}
