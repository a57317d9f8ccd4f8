// kubelet-cri: one side of the relist benchmark, the kubelet's own CRI client.
//
// What it is: k8s.io/cri-client's remote runtime service, the client kubelet 1.34 builds its
// runtime manager on, made exactly as kubelet makes it (pkg/kubelet/kubelet.go,
// PreInitRuntimeService): NewRemoteRuntimeService(endpoint, runtimeRequestTimeout, tracer
// provider, logger), with the kubelet's default runtimeRequestTimeout (2 minutes) and, as a
// kubelet without a tracing configuration has, a no-op tracer provider (cmd/kubelet/app,
// newTracerProvider), so the otelgrpc stats handler is on the path as it is in the kubelet. The
// client dials with :authority "localhost", a 16 MiB receive limit and upstream's connect
// backoff, all inside cri-client. One relist is what the PLEG's relist asks the runtime
// (kuberuntime GetPods(all=true)): ListPodSandbox with no filter, then ListContainers with an
// empty filter, one after the other.
//
// The protocol (the same as bench/relist-child.ts, so the harness drives every side alike):
//   - start: connect, make --warmup relists, print ONE JSON line
//     {"side":"kubelet","ready":true,"items":N,"bytes":B}, B being the wire size of the two answers;
//   - each stdin line "run N": N relists back to back, then ONE JSON line
//     {"cpuMs":C,"wallsMs":[…],"items":N,"rssMiB":R,"peakRssMiB":P}, where C is this process's
//     CPU time (user + system, getrusage) since the previous answer (or since the first "run"):
//     so work deferred past a batch (the collector) is still counted, against the next one;
//   - stdin closed, or "exit": the process ends with status 0.
//
// Any failed relist ends the process with status 1 and one line on stderr.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/protobuf/proto"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"
)

// kubelet's default runtimeRequestTimeout (KubeletConfiguration), the deadline of each call.
const runtimeRequestTimeout = 2 * time.Minute

type ready struct {
	Side  string `json:"side"`
	Ready bool   `json:"ready"`
	Items int    `json:"items"`
	Bytes int    `json:"bytes"`
}

type batch struct {
	CPUMs      float64   `json:"cpuMs"`
	WallsMs    []float64 `json:"wallsMs"`
	Items      int       `json:"items"`
	RSSMiB     float64   `json:"rssMiB"`
	PeakRSSMiB float64   `json:"peakRssMiB"`
}

// relist is the PLEG's question: every sandbox, then every container.
func relist(ctx context.Context, svc internalapi.RuntimeService) ([]*runtimeapi.PodSandbox, []*runtimeapi.Container, error) {
	sandboxes, err := svc.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	containers, err := svc.ListContainers(ctx, &runtimeapi.ContainerFilter{})
	if err != nil {
		return nil, nil, err
	}
	return sandboxes, containers, nil
}

func cpuMs() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fail("getrusage: %v", err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fail("getrusage: %v", err)
	}
	return float64(ru.Maxrss) / 1024 // kilobytes on Linux
}

// rssMiB reads VmRSS from /proc/self/status.
func rssMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fail("read /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				fail("VmRSS: %q must be a number of kB", rest)
			}
			return kb / 1024
		}
	}
	fail("/proc/self/status: VmRSS must be present")
	return 0
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kubelet-cri: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	endpoint := flag.String("endpoint", "", "the runtime's CRI endpoint, unix:///path")
	warmup := flag.Int("warmup", 0, "relists before the measured ones")
	flag.Parse()
	if !strings.HasPrefix(*endpoint, "unix://") {
		fail("--endpoint: %q must be a unix:// URL", *endpoint)
	}
	if *warmup < 0 {
		fail("--warmup: %d must be a whole number ≥ 0", *warmup)
	}

	logger := klog.Background()
	svc, err := criclient.NewRemoteRuntimeService(*endpoint, runtimeRequestTimeout, noop.NewTracerProvider(), &logger)
	if err != nil {
		fail("connect: %v", err)
	}
	ctx := context.Background()
	var sandboxes []*runtimeapi.PodSandbox
	var containers []*runtimeapi.Container
	for i := 0; i < *warmup; i++ {
		if sandboxes, containers, err = relist(ctx, svc); err != nil {
			fail("relist: %v", err)
		}
	}
	if *warmup == 0 {
		if sandboxes, containers, err = relist(ctx, svc); err != nil {
			fail("relist: %v", err)
		}
	}
	// The answers' wire size, once, outside any measured batch.
	size := proto.Size(&runtimeapi.ListPodSandboxResponse{Items: sandboxes}) + proto.Size(&runtimeapi.ListContainersResponse{Containers: containers})
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(ready{Side: "kubelet", Ready: true, Items: len(sandboxes) + len(containers), Bytes: size}); err != nil {
		fail("write: %v", err)
	}

	in := bufio.NewScanner(os.Stdin)
	var mark float64
	started := false
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "exit" {
			return
		}
		count, ok := strings.CutPrefix(line, "run ")
		n, convErr := strconv.Atoi(count)
		if !ok || convErr != nil || n < 1 {
			fail("command: %q must be \"run N\" (N ≥ 1) or \"exit\"", line)
		}
		if !started {
			mark = cpuMs()
			started = true
		}
		walls := make([]float64, 0, n)
		items := 0
		for i := 0; i < n; i++ {
			t0 := time.Now()
			s, c, err := relist(ctx, svc)
			walls = append(walls, float64(time.Since(t0).Nanoseconds())/1e6)
			if err != nil {
				fail("relist: %v", err)
			}
			items = len(s) + len(c)
		}
		now := cpuMs()
		result := batch{CPUMs: now - mark, WallsMs: walls, Items: items, RSSMiB: rssMiB(), PeakRSSMiB: peakRSSMiB()}
		mark = now
		if err := out.Encode(result); err != nil {
			fail("write: %v", err)
		}
	}
	if err := in.Err(); err != nil {
		fail("read stdin: %v", err)
	}
}
