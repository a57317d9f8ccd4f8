// cri-client-probe: reads a CRI socket with a Go gRPC client and prints what it read as one JSON
// object, so a TypeScript test can compare a Go client's reading with its own.
//
// Two clients, by --client:
//   - kubelet: the kubelet's own CRI client, k8s.io/cri-client (NewRemoteRuntimeService and
//     NewRemoteImageService), which dials with :authority "localhost" and first validates the
//     connection with a Version call;
//   - crictl: the generated CRI clients over a connection whose :authority is the socket path,
//     as crictl 1.26 dials (the case a Node gRPC server refuses).
//
// Output: {"client", "authority", "version", "status", "pods", "containers", "images"}; each
// reading is either its value or {"error": {"code": "UNAVAILABLE", "message": "…"}}. Timestamps
// are decimal strings (nanoseconds do not fit a JSON number exactly). Exit code 0 whenever the
// JSON was written, whatever the calls answered; 2 on bad flags; 1 when no client could be made.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"
)

type callError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type reading struct {
	Value any        `json:"value,omitempty"`
	Error *callError `json:"error,omitempty"`
}

type pod struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`
	Attempt   uint32 `json:"attempt"`
	State     string `json:"state"`
	CreatedAt string `json:"createdAt"`
}

type container struct {
	ID           string `json:"id"`
	PodSandboxID string `json:"podSandboxId"`
	Name         string `json:"name"`
	Attempt      uint32 `json:"attempt"`
	State        string `json:"state"`
	CreatedAt    string `json:"createdAt"`
	Image        string `json:"image"`
}

type condition struct {
	Type   string `json:"type"`
	Status bool   `json:"status"`
	Reason string `json:"reason"`
}

type image struct {
	ID       string   `json:"id"`
	RepoTags []string `json:"repoTags"`
}

// reader is what both clients offer the probe.
type reader interface {
	version(ctx context.Context) (*runtimeapi.VersionResponse, error)
	status(ctx context.Context) (*runtimeapi.StatusResponse, error)
	pods(ctx context.Context) ([]*runtimeapi.PodSandbox, error)
	containers(ctx context.Context) ([]*runtimeapi.Container, error)
	images(ctx context.Context) ([]*runtimeapi.Image, error)
}

func main() {
	endpoint := flag.String("endpoint", "", "unix:///path/to/socket")
	client := flag.String("client", "kubelet", "kubelet (k8s.io/cri-client) or crictl (:authority = the socket path)")
	timeout := flag.Duration("timeout", 10*time.Second, "deadline of each call, and of the kubelet client's connection")
	flag.Parse()
	path, ok := strings.CutPrefix(*endpoint, "unix://")
	if !ok || !strings.HasPrefix(path, "/") {
		fmt.Fprintf(os.Stderr, "cri-client-probe: --endpoint: %q must be unix:///absolute/path\n", *endpoint)
		os.Exit(2)
	}
	var r reader
	var authority string
	var err error
	switch *client {
	case "kubelet":
		authority = "localhost"
		r, err = kubeletReader(*endpoint, *timeout)
	case "crictl":
		authority = path
		r, err = crictlReader(path)
	default:
		fmt.Fprintf(os.Stderr, "cri-client-probe: --client: %q must be kubelet or crictl\n", *client)
		os.Exit(2)
	}
	out := map[string]any{"client": *client, "authority": authority}
	if err != nil {
		out["connect"] = reading{Error: toCallError(err)}
		_ = json.NewEncoder(os.Stdout).Encode(out)
		os.Exit(1)
	}
	call := func(name string, f func(ctx context.Context) (any, error)) {
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		defer cancel()
		v, err := f(ctx)
		if err != nil {
			out[name] = reading{Error: toCallError(err)}
		} else {
			out[name] = reading{Value: v}
		}
	}
	call("version", func(ctx context.Context) (any, error) {
		v, err := r.version(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]string{"runtimeName": v.RuntimeName, "runtimeVersion": v.RuntimeVersion, "runtimeApiVersion": v.RuntimeApiVersion}, nil
	})
	call("status", func(ctx context.Context) (any, error) {
		s, err := r.status(ctx)
		if err != nil {
			return nil, err
		}
		conditions := []condition{}
		for _, c := range s.GetStatus().GetConditions() {
			conditions = append(conditions, condition{Type: c.Type, Status: c.Status, Reason: c.Reason})
		}
		return conditions, nil
	})
	call("pods", func(ctx context.Context) (any, error) {
		items, err := r.pods(ctx)
		if err != nil {
			return nil, err
		}
		pods := []pod{}
		for _, p := range items {
			md := p.GetMetadata()
			pods = append(pods, pod{ID: p.Id, Name: md.GetName(), Namespace: md.GetNamespace(), UID: md.GetUid(), Attempt: md.GetAttempt(), State: p.State.String(), CreatedAt: strconv.FormatInt(p.CreatedAt, 10)})
		}
		return pods, nil
	})
	call("containers", func(ctx context.Context) (any, error) {
		items, err := r.containers(ctx)
		if err != nil {
			return nil, err
		}
		containers := []container{}
		for _, c := range items {
			md := c.GetMetadata()
			containers = append(containers, container{ID: c.Id, PodSandboxID: c.PodSandboxId, Name: md.GetName(), Attempt: md.GetAttempt(), State: c.State.String(), CreatedAt: strconv.FormatInt(c.CreatedAt, 10), Image: c.GetImage().GetImage()})
		}
		return containers, nil
	})
	call("images", func(ctx context.Context) (any, error) {
		items, err := r.images(ctx)
		if err != nil {
			return nil, err
		}
		images := []image{}
		for _, i := range items {
			tags := append([]string{}, i.RepoTags...)
			images = append(images, image{ID: i.Id, RepoTags: tags})
		}
		return images, nil
	})
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "cri-client-probe: writing the result:", err)
		os.Exit(1)
	}
}

func toCallError(err error) *callError {
	var s interface{ GRPCStatus() *status.Status }
	if errors.As(err, &s) {
		st := s.GRPCStatus()
		return &callError{Code: strings.ToUpper(snake(st.Code().String())), Message: st.Message()}
	}
	return &callError{Code: "NOT_GRPC", Message: err.Error()}
}

// snake turns grpc-go's code names (DeadlineExceeded) into the canonical ones (DEADLINE_EXCEEDED).
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// kubeletClient reads through k8s.io/cri-client, as the kubelet does.
type kubeletClient struct {
	runtime internalapi.RuntimeService
	image   internalapi.ImageManagerService
}

func kubeletReader(endpoint string, timeout time.Duration) (reader, error) {
	rt, err := remote.NewRemoteRuntimeService(endpoint, timeout, nil, nil)
	if err != nil {
		return nil, err
	}
	img, err := remote.NewRemoteImageService(endpoint, timeout, nil, nil)
	if err != nil {
		return nil, err
	}
	return &kubeletClient{runtime: rt, image: img}, nil
}

func (k *kubeletClient) version(ctx context.Context) (*runtimeapi.VersionResponse, error) {
	return k.runtime.Version(ctx, "v1")
}
func (k *kubeletClient) status(ctx context.Context) (*runtimeapi.StatusResponse, error) {
	return k.runtime.Status(ctx, false)
}
func (k *kubeletClient) pods(ctx context.Context) ([]*runtimeapi.PodSandbox, error) {
	return k.runtime.ListPodSandbox(ctx, nil)
}
func (k *kubeletClient) containers(ctx context.Context) ([]*runtimeapi.Container, error) {
	return k.runtime.ListContainers(ctx, nil)
}
func (k *kubeletClient) images(ctx context.Context) ([]*runtimeapi.Image, error) {
	return k.image.ListImages(ctx, nil)
}

// crictlClient reads through the generated clients, :authority the socket path.
type crictlClient struct {
	runtime runtimeapi.RuntimeServiceClient
	image   runtimeapi.ImageServiceClient
}

func crictlReader(path string) (reader, error) {
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", addr)
	}
	conn, err := grpc.NewClient("passthrough:///"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dial),
		grpc.WithAuthority(path),
	)
	if err != nil {
		return nil, err
	}
	return &crictlClient{runtime: runtimeapi.NewRuntimeServiceClient(conn), image: runtimeapi.NewImageServiceClient(conn)}, nil
}

func (c *crictlClient) version(ctx context.Context) (*runtimeapi.VersionResponse, error) {
	return c.runtime.Version(ctx, &runtimeapi.VersionRequest{Version: "v1"})
}
func (c *crictlClient) status(ctx context.Context) (*runtimeapi.StatusResponse, error) {
	return c.runtime.Status(ctx, &runtimeapi.StatusRequest{})
}
func (c *crictlClient) pods(ctx context.Context) ([]*runtimeapi.PodSandbox, error) {
	r, err := c.runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	return r.GetItems(), err
}
func (c *crictlClient) containers(ctx context.Context) ([]*runtimeapi.Container, error) {
	r, err := c.runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	return r.GetContainers(), err
}
func (c *crictlClient) images(ctx context.Context) ([]*runtimeapi.Image, error) {
	r, err := c.image.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	return r.GetImages(), err
}
