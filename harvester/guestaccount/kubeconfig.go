package guestaccount

import (
	"context"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/harvester/docker-machine-driver-harvester/harvester/internal/kube"
)

const (
	harvesterSystemNamespace = "harvester-system"
	vipConfigMapName         = "vip" // data.ip: the cluster's virtual IP, which the guests can reach
	harvesterAPIPort         = "6443"
	tokenWaitTimeout         = 30 * time.Second
)

// discoverVIP reads Harvester's virtual IP the way Harvester's kubeconfig endpoint does.
func discoverVIP(ctx context.Context, c kube.Interface) (string, error) {
	cm, err := kube.Get(ctx, c, kube.ConfigMaps, harvesterSystemNamespace, vipConfigMapName)
	if err != nil {
		return "", fmt.Errorf("cannot discover Harvester's VIP from ConfigMap %s/%s (%v); give the server as https://<Harvester VIP>:6443",
			harvesterSystemNamespace, vipConfigMapName, kube.ScrubNotFound(c.Explain("read ConfigMap", harvesterSystemNamespace+"/"+vipConfigMapName, err)))
	}
	ip := cm.Data["ip"]
	if parsed := net.ParseIP(ip); parsed == nil || parsed.IsUnspecified() {
		return "", fmt.Errorf("Harvester's vip ConfigMap holds no usable IP (%q); give the server as https://<Harvester VIP>:6443", ip)
	}
	return "https://" + net.JoinHostPort(ip, harvesterAPIPort), nil
}

// tokenAccess is what waitForToken needs.
var tokenAccess = kube.WaitForSecretAccess

// waitForToken waits until kube-controller-manager has filled the token Secret in, within a deadline (see
// kube.WaitForSecret: a read, then client-go's watch.UntilWithSync from there).
func waitForToken(ctx context.Context, c kube.Interface, ns, name string) (ca, token []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, tokenWaitTimeout)
	defer cancel()
	s, err := c.WaitForSecret(ctx, ns, name, filled)
	switch {
	case err == nil:
		return s.Data["ca.crt"], s.Data["token"], nil
	case ctx.Err() != nil:
		return nil, nil, fmt.Errorf("the token Secret %s/%s was not filled in within %s: is Harvester's kube-controller-manager running?", ns, name, tokenWaitTimeout)
	}
	return nil, nil, c.Explain("read the token Secret", ns+"/"+name, err)
}

func filled(s *corev1.Secret) bool { return len(s.Data["ca.crt"]) > 0 && len(s.Data["token"]) > 0 }

// accountKubeconfig renders the guest cluster's kubeconfig (names as Harvester's endpoint writes them).
func accountKubeconfig(server, namespace string, ca, token []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["default"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["default"] = &clientcmdapi.AuthInfo{Token: string(token)}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "default", AuthInfo: "default", Namespace: namespace}
	cfg.CurrentContext = "default"
	return clientcmd.Write(*cfg)
}
