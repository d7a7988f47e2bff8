package controlplane

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"

	proc "github.com/harvester/docker-machine-driver-harvester/e2e/internal/process"

	"github.com/harvester/docker-machine-driver-harvester/e2e/internal/kubeconfig"
)

func (cp *ControlPlane) startEtcd(ctx context.Context) error {
	client := fmt.Sprintf("http://127.0.0.1:%d", cp.etcdPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", cp.etcdPeerPort)
	args := []string{
		"--name=default",
		"--data-dir=" + cp.path("etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		// The peer port is set too: the default (2380) would collide between control planes of parallel packages.
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		"--unsafe-no-fsync", // throw-away data: durability costs seconds per test and buys nothing
		"--log-level=warn",
	}
	p, err := startProcess("etcd", cp.binary("etcd"), args, cp.path("etcd.log"))
	if err != nil {
		return err
	}
	cp.etcd = p
	return pollReady(ctx, p, func(ctx context.Context) error {
		return proc.GetOK(ctx, http.DefaultClient, client+"/health")
	})
}

func (cp *ControlPlane) apiserverArgs() []string {
	return []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", cp.etcdPort),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", cp.apiPort),
		"--tls-cert-file=" + cp.pki.certFile,
		"--tls-private-key-file=" + cp.pki.keyFile,
		"--cert-dir=" + cp.path("certs"),
		"--token-auth-file=" + cp.path("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + cp.pki.saPubFile,
		"--service-account-signing-key-file=" + cp.pki.saKeyFile,
		"--service-cluster-ip-range=10.96.0.0/24",
		// No pods are ever created, and the plugin needs no default service account.
		"--disable-admission-plugins=ServiceAccount",
		// There is no node network: do not publish 127.0.0.1 as the endpoints of the "kubernetes" Service.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
}

func (cp *ControlPlane) startControllerManager(ctx context.Context) error {
	kc, err := kubeconfig.Token(cp.URL(), cp.pki.caPEM, cp.adminToken, "")
	if err != nil {
		return err
	}
	kcPath := cp.path("kube-controller-manager.kubeconfig")
	if err := os.WriteFile(kcPath, kc, 0o600); err != nil {
		return err
	}
	args := []string{
		"--kubeconfig=" + kcPath,
		// garbage-collector: foreground deletion of a VM removes its VMI and cloud-init Secret (ownerReferences).
		// serviceaccount-token: fills kubernetes.io/service-account-token Secrets (Harvester's kubeconfig endpoint).
		// serviceaccount: creates each namespace's "default" account; its appearance tells us kcm is up.
		// namespace: deleting a test namespace deletes what is in it.
		// persistentvolumeclaim-protection: kube-apiserver's StorageObjectInUseProtection admission puts the
		// kubernetes.io/pvc-protection finalizer on every PVC; this controller lifts it once no pod uses the claim
		// (there are no pods here), without it no PVC could ever be deleted.
		// resourcequota: fills each ResourceQuota's status.hard and status.used, which the driver's pre-flight and
		// Harvester's validator read and kube-apiserver's ResourceQuota admission enforces.
		"--controllers=garbage-collector-controller,serviceaccount-token-controller,serviceaccount-controller," +
			"namespace-controller,persistentvolumeclaim-protection-controller,resourcequota-controller",
		"--service-account-private-key-file=" + cp.pki.saKeyFile,
		"--root-ca-file=" + cp.pki.caFile,
		"--leader-elect=false",
		"--secure-port=0", // nothing scrapes it
	}
	p, err := startProcess("kube-controller-manager", cp.binary("kube-controller-manager"), args, cp.path("kube-controller-manager.log"))
	if err != nil {
		return err
	}
	cp.mu.Lock()
	cp.kcm = p
	cp.mu.Unlock()
	return waitControllers(ctx, p, cp.AdminConfig())
}

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
