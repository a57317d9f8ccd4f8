package main

// Forwarding: every call the proxy accepts, whatever its service, goes to the upstream runtime
// as the same method, with the caller's metadata, its deadline and its messages as bytes; the
// upstream's header metadata, messages, trailer metadata and status come back unchanged. The
// proxy decodes nothing (rawCodec), so the runtime's answer is the caller's answer byte for byte,
// unless a fault says otherwise (faults.go).
//
// What is not passed on: the headers gRPC itself owns (:authority, content-type, user-agent,
// te, grpc-timeout), which each hop writes for itself; the deadline reaches upstream as the
// context's, so grpc-timeout is re-derived from it. A caller that dials with any :authority
// (the kubelet's "localhost", old crictl's socket path, grpc-js's) is served: Go's gRPC server
// does not check it.
//
// Failure modes: upstream not there (refused, missing) ends the call with UNAVAILABLE, the code a
// direct caller gets from its own channel, in grpc-go's words for the connect error ("dial unix
// PATH: connect: …") rather than the caller's library's; the caller's cancel or deadline cancels
// the upstream call.

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

type proxy struct {
	upstream *grpc.ClientConn
	faults   *faultTable
	// stopping is closed when the proxy begins to stop: held calls then end UNAVAILABLE.
	stopping chan struct{}
	calls    *callCounts
}

var (
	bothWays = &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}
	// oneRequest is every CRI method's shape (unary, or GetContainerEvents' server stream): the
	// request goes upstream with its end of stream in the same frame, as the caller sent it.
	oneRequest = &grpc.StreamDesc{ServerStreams: true, ClientStreams: false}
)

// sendsOneRequest: no CRI method streams its requests (runtime.v1, and the older v1alpha2).
// Other methods are forwarded as bidirectional streams, message by message.
func sendsOneRequest(method string) bool {
	return strings.HasPrefix(method, "/runtime.v1.") || strings.HasPrefix(method, "/runtime.v1alpha2.")
}

// ownHeaders are written by gRPC on each hop; the transport would drop them anyway.
var ownHeaders = map[string]bool{"content-type": true, "user-agent": true, "te": true, "grpc-timeout": true}

// handle serves every call (grpc.UnknownServiceHandler).
func (p *proxy) handle(_ any, in grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(in)
	if !ok {
		return status.Error(codes.Internal, "cri-fault-proxy: no method name on the stream")
	}
	ctx := in.Context()
	userAgent := ""
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if ua := md.Get("user-agent"); len(ua) > 0 {
			userAgent = ua[0]
		}
	}
	f := p.faults.lookup(method, userAgent)
	p.calls.add(method, f != nil)
	if f == nil {
		return p.forward(ctx, method, in, nil)
	}
	switch f.kind {
	case faultFail:
		return status.Error(f.code, f.message)
	case faultHang:
		if err := p.hold(ctx, f); err != nil {
			return err
		}
		return p.forward(ctx, method, in, nil)
	case faultDelay:
		due := time.Now().Add(f.delay)
		return p.forward(ctx, method, in, &answerShaping{due: due})
	case faultGarble:
		return p.forward(ctx, method, in, &answerShaping{garble: true})
	}
	return status.Errorf(codes.Internal, "cri-fault-proxy: fault %q has no behaviour", f.kind)
}

// hold keeps a hung call until its fault ends (nil: go on), the caller gives up, or the proxy stops.
func (p *proxy) hold(ctx context.Context, f *fault) error {
	f.held.Add(1)
	defer f.held.Add(-1)
	select {
	case <-f.released:
		select {
		case <-p.stopping:
			return stoppingError()
		default:
			return nil
		}
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	case <-p.stopping:
		return stoppingError()
	}
}

func stoppingError() error {
	return status.Error(codes.Unavailable, "cri-fault-proxy: stopping")
}

// answerShaping changes what leaves for the caller: no sooner than due, and/or garbled.
type answerShaping struct {
	due    time.Time
	garble bool
}

// wait holds the answer until due; an error when the caller gave up first.
func (s *answerShaping) wait(ctx context.Context) error {
	if s == nil || s.due.IsZero() {
		return nil
	}
	left := time.Until(s.due)
	if left <= 0 {
		return nil
	}
	timer := time.NewTimer(left)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

func (p *proxy) forward(ctx context.Context, method string, in grpc.ServerStream, shaping *answerShaping) error {
	md, _ := metadata.FromIncomingContext(ctx)
	out := metadata.MD{}
	for k, v := range md {
		if strings.HasPrefix(k, ":") || ownHeaders[k] {
			continue
		}
		out[k] = v
	}
	upCtx, cancel := context.WithCancel(metadata.NewOutgoingContext(ctx, out))
	defer cancel()
	desc := bothWays
	if sendsOneRequest(method) {
		desc = oneRequest
	}
	up, err := p.upstream.NewStream(upCtx, desc, method)
	if err != nil {
		if waitErr := shaping.wait(ctx); waitErr != nil {
			return waitErr
		}
		return err
	}

	// Caller → upstream, until the caller half-closes. Ends on its own when the call ends
	// (RecvMsg fails once the handler has returned, SendMsg once upCtx is cancelled). A CRI
	// method's one request goes with its end of stream in one frame, as the kubelet's client
	// sends it: sent apart, an upstream that answered in between would have its finished stream
	// reset by our side (gRPC's client resets a stream it has not half-closed when trailers come).
	go func() {
		if !desc.ClientStreams {
			var f frame
			if err := in.RecvMsg(&f); err != nil {
				if errors.Is(err, io.EOF) {
					_ = up.CloseSend()
				}
				return
			}
			_ = up.SendMsg(&f) // also half-closes: the stream is not client-streaming
			return
		}
		for {
			var f frame
			if err := in.RecvMsg(&f); err != nil {
				if errors.Is(err, io.EOF) {
					_ = up.CloseSend()
				}
				return
			}
			if err := up.SendMsg(&f); err != nil {
				return
			}
		}
	}()

	// Upstream → caller. The header goes with the first message or with the status, after the
	// shaping's wait, so a delayed call shows nothing before its time.
	headerSent := false
	sendHeader := func() error {
		if headerSent {
			return nil
		}
		headerSent = true
		hdr, err := up.Header()
		if err != nil || len(hdr) == 0 {
			return nil
		}
		return in.SendHeader(hdr)
	}
	for {
		var f frame
		recvErr := up.RecvMsg(&f)
		if waitErr := shaping.wait(ctx); waitErr != nil {
			return waitErr
		}
		if recvErr != nil {
			if err := sendHeader(); err != nil {
				return err
			}
			in.SetTrailer(up.Trailer())
			if errors.Is(recvErr, io.EOF) {
				return nil
			}
			return recvErr
		}
		if shaping != nil && shaping.garble {
			f.payload = append(append(make([]byte, 0, len(garblePrefix)+len(f.payload)), garblePrefix...), f.payload...)
		}
		if err := sendHeader(); err != nil {
			return err
		}
		if err := in.SendMsg(&f); err != nil {
			return err
		}
	}
}
