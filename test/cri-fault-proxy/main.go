// cri-fault-proxy: a CRI socket that forwards every call to a real runtime's socket, and hangs,
// delays, fails or garbles the methods it is told to. A test tool: nodepulse never ships or
// imports it (test/support/cri-fault-proxy.ts builds and drives it).
//
// Why Go: the kubelet is a Go gRPC client that dials with :authority "localhost", and old crictl
// dials with the socket path as :authority, which a Node (nghttp2) gRPC server refuses before any
// handler runs. Go's gRPC server, the runtime's own stack, serves both, and grpc-js clients too.
//
// Usage:
//
//	cri-fault-proxy --listen /run/containerd/containerd.sock \
//	    --upstream /run/containerd-real/containerd.sock --control /tmp/x/control.sock
//
// --listen is made mode 0660, owned by root's group or by --listen-gid, as containerd makes its own
// socket (its `[grpc] gid`); so a client without that group meets EACCES here as it would there.
// A stale socket there (nothing answering) is replaced, a live one or any other file is refused. The control endpoint
// (control.go) is bound after the CRI socket, so once it answers the proxy serves.
//
// Logs: JSON lines on stderr, one per command, one when a fault first applies and one with its
// counts when it ends, none per call. SIGTERM or SIGINT: held calls end UNAVAILABLE, calls in
// flight get up to stopGrace to finish, the sockets are removed, and the exit code is 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
)

const (
	// maxMessageBytes bounds one message either way. Above any CRI client's own limit (the
	// kubelet's and nodepulse's are 16 MiB), so the caller's limit is the one that applies.
	maxMessageBytes = 128 << 20
	// reconnectMaxDelay caps the upstream channel's backoff: a restarted runtime is reached
	// within about a second, as the agent's own channel reaches it.
	reconnectMaxDelay = time.Second
	// stopGrace is how long calls in flight may take to finish on SIGTERM.
	stopGrace = 5 * time.Second
	// staleDialTimeout bounds the check that nothing serves a socket file left at --listen.
	staleDialTimeout = time.Second
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	listen := flag.String("listen", "", "unix socket path to serve CRI on, e.g. /run/containerd/containerd.sock")
	upstream := flag.String("upstream", "", "unix socket path of the real runtime")
	control := flag.String("control", "", "unix socket path of the control endpoint (HTTP, JSON)")
	listenGID := flag.Int("listen-gid", -1, "group of the --listen socket, as containerd's [grpc] gid (default: the proxy's own)")
	flag.Parse()
	problems := checkFlags(*listen, *upstream, *control, flag.Args())
	if *listenGID < -1 {
		problems = append(problems, fmt.Sprintf("--listen-gid: %d must be a group id (0 or more)", *listenGID))
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "cri-fault-proxy:", p)
		}
		os.Exit(2)
	}
	if err := run(log, *listen, *upstream, *control, *listenGID); err != nil {
		log.Error("Proxy failed", "err", err.Error())
		os.Exit(1)
	}
}

func checkFlags(listen, upstream, control string, rest []string) []string {
	var problems []string
	for _, f := range []struct{ name, value string }{{"listen", listen}, {"upstream", upstream}, {"control", control}} {
		if !filepath.IsAbs(f.value) {
			problems = append(problems, fmt.Sprintf("--%s: %q must be an absolute socket path", f.name, f.value))
		}
	}
	if listen != "" && (listen == upstream || listen == control) {
		problems = append(problems, fmt.Sprintf("--listen: %q must differ from --upstream and --control", listen))
	}
	if upstream != "" && upstream == control {
		problems = append(problems, fmt.Sprintf("--control: %q must differ from --upstream", control))
	}
	if len(rest) > 0 {
		problems = append(problems, fmt.Sprintf("arguments: %q must be empty (flags only)", rest))
	}
	return problems
}

func run(log *slog.Logger, listenPath, upstreamPath, controlPath string, listenGID int) error {
	conn, err := grpc.NewClient("unix://"+upstreamPath,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{}), grpc.MaxCallRecvMsgSize(maxMessageBytes), grpc.MaxCallSendMsgSize(maxMessageBytes)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: reconnectMaxDelay},
			MinConnectTimeout: 5 * time.Second,
		}),
	)
	if err != nil {
		return fmt.Errorf("upstream %s: %w", upstreamPath, err)
	}
	defer conn.Close()

	p := &proxy{upstream: conn, faults: newFaultTable(log), stopping: make(chan struct{}), calls: newCallCounts()}
	server := grpc.NewServer(
		grpc.UnknownServiceHandler(p.handle),
		grpc.ForceServerCodec(rawCodec{}),
		grpc.MaxRecvMsgSize(maxMessageBytes),
		grpc.MaxSendMsgSize(maxMessageBytes),
	)
	criListener, err := listenUnix(listenPath, 0o660, listenGID)
	if err != nil {
		return err
	}
	controlListener, err := listenUnix(controlPath, 0o600, -1)
	if err != nil {
		criListener.Close()
		return err
	}
	controlServer := &http.Server{Handler: controlHandler(p, log), ReadHeaderTimeout: 5 * time.Second}

	served := make(chan error, 2)
	go func() { served <- server.Serve(criListener) }()
	go func() { served <- controlServer.Serve(controlListener) }()
	log.Info("Proxy serving", "listen", listenPath, "listenGid", listenGID, "upstream", upstreamPath, "control", controlPath, "pid", os.Getpid())

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	var failure error
	select {
	case sig := <-signals:
		log.Info("Proxy stopping", "signal", sig.String())
	case err := <-served:
		failure = fmt.Errorf("serving: %w", err)
	}

	close(p.stopping)
	ended := p.faults.clear(nil, "stopping")
	stopped := make(chan struct{})
	go func() {
		server.GracefulStop()
		close(stopped)
	}()
	grace := time.NewTimer(stopGrace)
	select {
	case <-stopped:
		grace.Stop()
	case <-grace.C:
		log.Warn("Calls still in flight after the grace; ending them", "graceMs", stopGrace.Milliseconds())
		server.Stop()
		<-stopped
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := controlServer.Shutdown(shutdownCtx); err != nil {
		controlServer.Close()
	}
	// Closing a unix listener removes its socket file; make sure, for a listener closed early.
	for _, path := range []string{listenPath, controlPath} {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("Socket left behind", "path", path, "err", err.Error())
		}
	}
	counts := p.calls.view()
	log.Info("Proxy stopped", "forwarded", counts.Forwarded, "faulted", counts.Faulted, "faultsEnded", len(ended))
	return failure
}

// listenUnix binds a unix socket at path with the given mode and group (-1: unchanged),
// replacing a stale socket file.
func listenUnix(path string, mode os.FileMode, gid int) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o711); err != nil {
		return nil, fmt.Errorf("%s: its folder must be creatable: %w", path, err)
	}
	if info, err := os.Lstat(path); err == nil {
		if info.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s: a %s must not be there (only a stale socket is replaced)", path, info.Mode().Type())
		}
		if c, err := net.DialTimeout("unix", path, staleDialTimeout); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: a socket that answers must not be there (something serves it)", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("%s: the stale socket must be removable: %w", path, err)
		}
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("%s: must be bindable: %w", path, err)
	}
	if err := os.Chmod(path, mode); err != nil {
		l.Close()
		return nil, fmt.Errorf("%s: mode %o must be settable: %w", path, mode, err)
	}
	if gid >= 0 {
		if err := os.Chown(path, -1, gid); err != nil {
			l.Close()
			return nil, fmt.Errorf("%s: group %d must be settable: %w", path, gid, err)
		}
	}
	return l, nil
}
