// kubelet-leases: N kubelets' node-lease heartbeats, as the kubelet sends them, for the scale
// measurement's comparison with nodepulse's own lease traffic (test/scale/).
//
// Each simulated kubelet runs the kubelet's own lease controller
// (k8s.io/component-helpers/apimachinery/lease, the one pkg/kubelet wires up): a Lease named after
// the node in kube-node-lease, leaseDurationSeconds 40, renewed every 40 × 0.25 = 10 s with 4 %
// jitter, each renewal an Update (PUT) of the whole Lease it last read back, carrying its
// resourceVersion. Each kubelet has its own identity and connection, as a kubelet does: a client
// certificate of the cluster's CA for system:node:<name> in system:nodes (minted here from the
// CA's key, so the Node authorizer and NodeRestriction judge each write as a real kubelet's), a
// clientset of its own, protobuf content (the kubelet's --kube-api-content-type default), client
// rate limiting off and a timeout of 10 s (the kubelet's heartbeat client), HTTP/2 as client-go
// negotiates it. The owner reference to the Node is set as the kubelet's SetNodeOwnerFunc sets
// it: a GET of the Node until the Lease carries one.
//
// Usage:
//
//	kubelet-leases -server https://H:P -ca ca.crt -ca-key ca.key -nodes 1000 [-name-format node-%05d] [-first 0]
//
// It prints one line `kubelets: N running` once every controller is started, and runs until
// SIGTERM or SIGINT. Exit 2 on bad flags, 1 when it cannot start.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// The kubelet's defaults: nodeLeaseDurationSeconds 40, renewed at 0.25 of it.
	leaseDurationSeconds = 40
	renewFraction        = 0.25
	// The kubelet's heartbeat client times out at min(nodeStatusUpdateFrequency, lease duration) = 10 s.
	heartbeatTimeout = 10 * time.Second
	namespace        = corev1.NamespaceNodeLease
)

func main() {
	server := flag.String("server", "", "the API server's URL")
	caFile := flag.String("ca", "", "the cluster CA's certificate (PEM)")
	caKeyFile := flag.String("ca-key", "", "the cluster CA's private key (PEM), to mint each kubelet's client certificate")
	nodes := flag.Int("nodes", 0, "how many kubelets")
	first := flag.Int("first", 0, "the index of the first node")
	nameFormat := flag.String("name-format", "node-%05d", "the node name of index i, a Printf format")
	flag.Parse()
	if *server == "" || *caFile == "" || *caKeyFile == "" || *nodes <= 0 {
		fmt.Fprintln(os.Stderr, "kubelet-leases: -server, -ca, -ca-key and -nodes (more than 0) are required")
		os.Exit(2)
	}
	if err := run(*server, *caFile, *caKeyFile, *nodes, *first, *nameFormat); err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-leases: %v\n", err)
		os.Exit(1)
	}
}

func run(server, caFile, caKeyFile string, nodes, first int, nameFormat string) error {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	ca, caKey, err := loadCA(caPEM, caKeyFile)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// A failed renewal is the kubelet's to log; the measurement reads failures from the API server.
	klog.SetOutput(os.Stderr)
	var wg sync.WaitGroup
	for i := first; i < first+nodes; i++ {
		name := fmt.Sprintf(nameFormat, i)
		certPEM, keyPEM, err := nodeCertificate(ca, caKey, name)
		if err != nil {
			return err
		}
		config := &rest.Config{
			Host:            server,
			TLSClientConfig: rest.TLSClientConfig{CAData: caPEM, CertData: certPEM, KeyData: keyPEM},
			ContentConfig: rest.ContentConfig{
				ContentType:        runtime.ContentTypeProtobuf,
				AcceptContentTypes: runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON,
			},
			QPS:       -1,
			Timeout:   heartbeatTimeout,
			UserAgent: "kubelet/v1.34.4 (linux/amd64) kubernetes/scale",
		}
		client, err := kubernetes.NewForConfig(config)
		if err != nil {
			return err
		}
		renewInterval := time.Duration(float64(leaseDurationSeconds*time.Second) * renewFraction)
		controller := lease.NewController(clock.RealClock{}, client, name, leaseDurationSeconds, nil, renewInterval, name, namespace, setNodeOwner(client, name))
		wg.Add(1)
		go func() {
			defer wg.Done()
			controller.Run(ctx)
		}()
	}
	fmt.Printf("kubelets: %d running\n", nodes)
	<-ctx.Done()
	wg.Wait()
	return nil
}

// setNodeOwner: the kubelet's SetNodeOwnerFunc (pkg/kubelet/util/nodelease.go) in effect: while
// the Lease has no owner reference, GET the Node for its uid and set one.
func setNodeOwner(client kubernetes.Interface, name string) func(*coordinationv1.Lease) error {
	return func(l *coordinationv1.Lease) error {
		if len(l.OwnerReferences) > 0 {
			return nil
		}
		node, err := client.CoreV1().Nodes().Get(context.TODO(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: node.UID}}
		return nil
	}
}

func loadCA(caPEM []byte, keyFile string) (*x509.Certificate, any, error) {
	block, _ := pem.Decode(caPEM)
	if block == nil {
		return nil, nil, errors.New("ca: no PEM certificate")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, nil, errors.New("ca-key: no PEM key")
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		if ec, ecErr := x509.ParseECPrivateKey(kb.Bytes); ecErr == nil {
			return ca, ec, nil
		}
		return nil, nil, err
	}
	return ca, key, nil
}

// nodeCertificate: what the kubelet's bootstrap gets signed: CN system:node:<name>, O system:nodes.
func nodeCertificate(ca *x509.Certificate, caKey any, name string) ([]byte, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
