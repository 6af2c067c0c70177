// dplab-exec-server: the kubelet API's streaming half for the sim provider's kubelet stand-in.
// The stand-in (TypeScript) runs pods as network + UTS namespaces; this small server listens on
// <nodeIP>:10250 inside the node's network namespace, where the API server finds a kubelet, and
// serves /exec, /run and /containerLogs for the pods recorded in the stand-in's state folder.
//
// Protocol: in Kubernetes 1.35 the API server still talks SPDY/3.1 to the kubelet. kubectl's
// WebSocket (v5.channel.k8s.io) request ends at the API server, whose stream translator
// (TranslateStreamCloseWebsocketRequests, on by default since 1.30) dials the kubelet with
// spdy.NewRoundTripperWithConfig; a plain SPDY request is passed through by the upgrade-aware
// proxy. KEP-4006's WebSocket leg to the kubelet (ExtendWebSocketsToKubelet) is not in 1.35.
// So SPDY (remotecommand v4…v1) is what must work, and k8s.io/kubelet's ServeExec gives it;
// the same function also answers a WebSocket upgrade, so a later API server would work too.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	listen := flag.String("listen", "", "address to listen on, <nodeIP>:10250")
	stateDir := flag.String("state-dir", "", "the kubelet stand-in's state folder (pods/*.json)")
	agnhost := flag.String("agnhost", "", "path of the agnhost binary (what /agnhost in a command means)")
	certFile := flag.String("cert", "", "serving certificate (PEM); a self-signed one is made when empty")
	keyFile := flag.String("key", "", "serving key (PEM)")
	clientCA := flag.String("client-ca", "", "when set, require a client certificate signed by this CA (the API server's --kubelet-client-certificate)")
	nodeIP := flag.String("node-ip", "", "IP for the self-signed certificate's subject alternative name")
	flag.Parse()
	if *listen == "" || *stateDir == "" {
		fmt.Fprintln(os.Stderr, "dplab-exec-server: --listen and --state-dir are required")
		os.Exit(2)
	}

	cert, err := servingCertificate(*certFile, *keyFile, *nodeIP)
	if err != nil {
		log.Fatalf("dplab-exec-server: serving certificate: %v", err)
	}
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if *clientCA != "" {
		pem, err := os.ReadFile(*clientCA)
		if err != nil {
			log.Fatalf("dplab-exec-server: client CA: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			log.Fatalf("dplab-exec-server: no certificate in %s", *clientCA)
		}
		tlsConfig.ClientCAs = pool
		tlsConfig.ClientAuth = tls.RequireAndVerifyClientCert
	}

	pods := &podStore{dir: *stateDir}
	exec := &executor{pods: pods, agnhost: *agnhost}
	server := &http.Server{
		Addr:              *listen,
		Handler:           routes(pods, exec),
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
	}
	log.Printf("dplab-exec-server: listening on https://%s (client certificates %s)", *listen, map[bool]string{true: "required", false: "not required"}[*clientCA != ""])
	if err := server.ListenAndServeTLS("", ""); err != nil {
		log.Fatalf("dplab-exec-server: %v", err)
	}
}
